"""A citation string read again, once a source's record says what its title is.

The parser guesses where a title ends and where the names stop; a record of the
cited work settles it. Evidence gathering and the verdict ask for the reading
only where the record's title is spelled in the string (`recognise`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from refaudit.models import Person, Reference
from refaudit.parsing.citenames import read_authors, whole_names
from refaudit.parsing.freetext import BARE_YEAR, read_locator, read_style, without_identifiers
from refaudit.parsing.marks import YEAR, clean, clean_venue
from refaudit.parsing.records import normalize_pages

# Words of a citation string without their punctuation: "directions.Inf" is two.
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_YEAR_IN_BRACKETS = re.compile(rf"\(\s*{YEAR}[a-z]?\s*\)")
# Where a venue read after a title ends: its year, volume, pages or a bracket.
_VENUE_THEN = re.compile(
    rf"(?P<venue>.+?)(?=[.,;]?\s*{YEAR}\b|;|,\s*(?:[Vv]ol\b|\d)|\s+\d|\s*\(|\.?\s*$)"
)
# What follows a word inside a sentence: a space and the next word.
_MID_SENTENCE = re.compile(r"\s+[^\W_]")
#: How closely the words at the parsed title's place must spell a record's title (0–100).
REREAD_TITLE_RATIO = 92


def reread_names(reference: Reference, names: tuple[str, ...]) -> list[Person] | None:
    """The cited names read again, each of `names` (a record's names written in one
    field) kept whole; None when the citation's names hold none of them.

    No reader can split "USDOE Office of Electricity (OE), Bieler, S., National
    Association of Regulatory Utility Commissioners, Washington, DC (United
    States), …" into names alone; the record that writes those names says where.
    """
    text = reference.free_text
    parts = read_style(text) if text and names else None
    if parts is None or not parts.authors:
        return None
    if not whole_names(" ".join(clean(parts.authors).split()), names):
        return None
    return read_authors(parts.authors, parts.style, names)[0] or None


@dataclass(frozen=True)
class _Reread:
    """What `reread_with_title` reads around a record's title (strings only: cached)."""

    title: str
    venue: str | None
    year: int | None
    locator: tuple[tuple[str, str], ...]
    #: Where the names end when the title starts after where the parser put it.
    names_end: int | None


def reread_with_title(
    reference: Reference, title: str, names: tuple[str, ...] = ()
) -> Reference | None:
    """The citation re-read with a record's `title` where the parser saw its title.

    Where a title ends is the parser's guess: a title may hold a full stop of its
    own ("… Commemoration. The Case of …"), and a lost space glues it to the journal
    ("… directions.Inf. Fusion"). Starting where the parsed title starts, the
    words that spell `title` (allowing a few misread letters) are the title, and
    what follows them is read again as venue, year, volume and pages. When the
    parser took the last names for the title ("Arsenia C. Domingo Petronila E.
    Florendo. Oyster Culture …"), the title starts a few words later, and
    everything before it is read again as names, keeping the record's `names`
    written whole (see `reread_names`). None when `title` is not there or the
    reading would not change.
    """
    text, cited = reference.free_text, reference.title
    if not (text and cited):
        return None
    found = _reread(text, cited, title)
    if found is None:
        return None
    locator = dict(found.locator)
    reread = replace(
        reference,
        title=found.title,
        venue=found.venue,
        year=found.year or reference.year,
        volume=locator.get("volume", reference.volume),
        number=locator.get("number", reference.number),
        pages=normalize_pages(locator["pages"]) if "pages" in locator else reference.pages,
    )
    if found.names_end is not None:
        head = _YEAR_IN_BRACKETS.sub(" ", text[: found.names_end])
        authors, truncated = read_authors(head, read_style(text).style, names)
        if authors:
            reread.authors, reread.authors_truncated = authors, truncated
    return reread


@functools.lru_cache(maxsize=4096)
def _reread(text: str, cited: str, title: str) -> _Reread | None:
    """`reread_with_title`'s reading: the same string and title recur across records."""
    # Only the evidence stage re-reads, with matching loaded already: parsing stays light.
    from rapidfuzz import fuzz

    from refaudit.match.text import normalize_text

    start = text.find(cited)
    if start < 0:
        return None
    wanted = normalize_text(title)
    size = len(wanted.split())
    words = list(_WORD.finditer(text, start))

    def spelled(first: int) -> tuple[float, int]:
        """The best ratio, and the word count, of the words from `first` spelling `title`."""
        best: tuple[float, int] = (0.0, 0)
        for count in range(max(1, size - 3), min(len(words) - first, size + 3) + 1):
            run = normalize_text(" ".join(word.group(0) for word in words[first : first + count]))
            best = max(best, (fuzz.ratio(run, wanted), count))
        return best

    # The parser may have taken the last names for the title: the record's title
    # then starts at a later word of the parsed title, or at the first word after it.
    inside = sum(1 for word in words if word.start() < start + len(cited))
    first, (ratio, count) = 0, spelled(0)
    for later in range(1, min(inside, len(words) - 1) + 1):
        if (found := spelled(later))[0] > ratio:
            first, (ratio, count) = later, found
    if ratio < REREAD_TITLE_RATIO or (first == 0 and words[count - 1].end() == start + len(cited)):
        return None
    begin, end = words[first].start(), words[first + count - 1].end()
    if end < start + len(cited) and _MID_SENTENCE.match(text, end):
        # Words the parser read in the title stay in it: a title shorter than the
        # record's by its last words ("… in convolutional models" for "… networks") is
        # that title changed, not a title that ended early.
        return None
    after = without_identifiers(text[end:]).lstrip(" .,;:”’\"')]")
    venue = _VENUE_THEN.match(after)
    if venue is None:
        return None
    tail = after[venue.end() :]
    year_at = BARE_YEAR.search(tail)
    year = int(year_at.group(1)) if year_at else None
    # What follows the year is the locator; the year is not a volume.
    locator = read_locator(tail[year_at.end() :] if year_at else tail, year)
    return _Reread(
        title=text[begin:end],
        venue=clean_venue(venue.group("venue")),
        year=year,
        locator=tuple(locator.items()),
        names_end=begin if first else None,
    )
