"""Short forms of venue names: ISO 4 abbreviations and acronyms, by rule rather than by table.

Journals are cited by their ISO 4 abbreviation ("J. Phys. A", "Eur. Phys. J. C")
and conferences by an acronym ("ICRA", "NeurIPS", "SIGMOD"). Both are derived
here from the full name: ISO 4 through pyiso4, which implements the List of
Title Word Abbreviations (LTWA) that ISSN centres maintain, and acronyms by
taking letters in order from the name's words. Neither needs a list of venues.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from typing import Literal

from refaudit.match.text import NORMALIZE_CACHE_SIZE, normalize_text, ocr_form

logger = logging.getLogger(__name__)

# Words an ISO 4 abbreviation drops, and words that only say "proceedings of",
# in the languages journal titles are most often written in.
_ISO4_DROPPED = frozenset(
    "the a an of and for in on at to by with from proc proceedings proceeding "
    "la le les l de des du et el los las del il di della der die das den und fur für "
    "sect section part ser series".split()
)
# Years, ordinals and edition numbers: "38th", "2021", "'19", "forty-second" is rare.
_YEARISH = re.compile(r"^(?:1[89]|20)\d\d$|^\d+(?:st|nd|rd|th)$|^'\d\d$")
_ORDINAL_WORDS = frozenset(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split()
)
# Words an acronym may skip for free: function words and words naming the kind of venue.
_ACRONYM_OPTIONAL = frozenset(
    "a an the of on in and for at to with from proceedings proceeding proc annual "
    "international conference symposium workshop workshops companion findings meeting "
    "journal transactions letters ieee acm cvf joint".split()
)
# An acronym that leaves more content words of the name unused than this is only a
# loose fit: "NAACL" skips "Chapter", "KDD" skips "Mining"; more skips and almost
# any few letters would fit a long name.
ACRONYM_MAX_SKIPPED_WORDS = 1
_ACRONYM = re.compile(r"^[A-Za-z][A-Za-z0-9&\-+]{1,14}$")

AcronymFit = Literal["strict", "loose", "none"]


def warm() -> None:
    """Build the LTWA abbreviator now, so that processes forked from this one share it.

    A mirror-only audit's fork server calls this before it forks the workers
    (`refaudit.mirror.preload`): each worker would otherwise spend a second or
    more of CPU building its own copy at its first venue comparison.
    """
    _abbreviator()


def _abbreviator() -> object | None:
    """pyiso4's LTWA abbreviator, built by the first caller while the others wait.

    Verdicts are reached in worker threads: without the lock, each of the threads
    comparing a venue at the start of a run built its own (six at once seen on gen),
    and their seconds of CPU held the event loop's paced requests back for as long.
    """
    with _BUILDING:
        return _build_abbreviator()


_BUILDING = threading.Lock()


@functools.cache
def _build_abbreviator() -> object | None:
    """Load the LTWA (about a second of CPU, so only once)."""
    try:
        from pyiso4.ltwa import Abbreviate
    except ImportError:  # pragma: no cover - pyiso4 is a dependency
        logger.warning("pyiso4 is not installed: ISO 4 abbreviations are not recognised")
        return None
    return Abbreviate.create()


# A series designation closing a name ("Physical Review E", "Annalen der Physik 4"):
# the LTWA lists single letters such as "e" as words to drop, so it is kept aside.
_SERIES_SUFFIX = re.compile(r"\s+(?:[A-Z]|[IVX]{1,4}|\d{1,2})$")


def _key_words(text: str) -> tuple[str, ...]:
    words = normalize_text(text.replace(".", " ")).split()
    return tuple(
        word
        for word in words
        if word not in _ISO4_DROPPED and not _YEARISH.match(word) and word not in _ORDINAL_WORDS
    )


@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def iso4_key(name: str) -> tuple[str, ...]:
    """The words of `name`'s ISO 4 abbreviation, in a form spellings agree on.

    Dots, spaces, case, accents, "The", "&"/"and", "Proceedings of", years and
    ordinals do not count, so "Int. Conf. Mach. Learn." and "International
    Conference on Machine Learning" share one key.
    """
    abbreviator = _abbreviator()
    head = name.split(":", 1)[0] if ":" in name else name
    series = _SERIES_SUFFIX.search(head.strip())
    body = name[: series.start()] if series and head == name else name
    abbreviated = body
    if abbreviator is not None:
        try:
            abbreviated = abbreviator(body, remove_part=True)  # type: ignore[operator]
        except Exception:  # noqa: BLE001 - pyiso4 fails on some Unicode; keep the name
            abbreviated = body
    if series and head == name:
        abbreviated += series.group(0)
    return _key_words(abbreviated)


def contracts(short: str, full: str) -> bool:
    """ "Environ" for "environ", "Intell" for "intell": the same word, or a contraction of it
    (its first letter, then some of its other letters in order)."""
    if short == full:
        return True
    letters = iter(full[1:])
    return short[0] == full[0] and len(short) <= len(full) and all(c in letters for c in short[1:])


def _abbreviates_key(cited: str, found: str) -> bool:
    """Whether `cited`, as written, abbreviates `found`'s ISO 4 form word by word."""
    cited_words, found_key = _key_words(cited), iso4_key(found)
    if not cited_words or len(cited_words) != len(found_key):
        return False
    pairs = zip(cited_words, found_key, strict=True)
    return all(contracts(c, f) or contracts(ocr_form(c), ocr_form(f)) for c, f in pairs)


def same_iso4(cited: str, found: str) -> bool:
    """Whether either name is an ISO 4 abbreviation of the other (or both of one name).

    An abbreviation is compared as written (running the LTWA over an already
    abbreviated title mangles it); a full name through its ISO 4 form.
    """
    cited_key, found_key = iso4_key(cited), iso4_key(found)
    if cited_key and cited_key == found_key:
        return True
    return _abbreviates_key(cited, found) or _abbreviates_key(found, cited)


def acronym_letters(text: str) -> str | None:
    """The letters of `text` when it is written as an acronym ("NeurIPS", "NAACL-HLT", "CHI '19").

    Leading "Proc." / "Proceedings of" / "In" and trailing years are allowed; an
    acronym has at least two capitals and no spaces otherwise.
    """
    words = [
        word
        for word in re.split(r"[\s,]+", text.strip())
        if word and not _YEARISH.match(normalize_text(word) or word)
    ]
    while len(words) > 1 and normalize_text(words[0]) in ("proc", "proceedings", "in", "of"):
        words.pop(0)
    if len(words) != 1 or not _ACRONYM.match(words[0]):
        return None
    word = words[0]
    if sum(char.isupper() for char in word) < 2:
        return None
    return "".join(char for char in word.lower() if char.isalnum())


def _name_words(name: str) -> list[tuple[str, bool]]:
    """(word, optional) pairs of a venue name, years and ordinals removed."""
    return [
        (word, word in _ACRONYM_OPTIONAL)
        for word in normalize_text(name).split()
        if not _YEARISH.match(word) and word not in _ORDINAL_WORDS and not word.isdigit()
    ]


def acronym_skips(letters: str, name: str) -> tuple[str, ...] | None:
    """The content words of `name` an acronym's letters leave unused; None when they do not fit.

    Each word gives nothing or a leading piece of itself ("Neur" of Neural in
    NeurIPS, "Co"+"Ling" in COLING, a whole "ACM" or "SAE" in an acronym built on
    it). Function words and words naming the kind of venue are skipped for free;
    of the spellings, the one skipping the fewest content words is kept.
    """
    words = _name_words(name)
    if not letters or not words:
        return None

    @functools.cache
    def fewest_skips(position: int, index: int) -> tuple[str, ...] | None:
        """Content words skipped to spell letters[position:] from words[index:], fewest first."""
        if position == len(letters):
            return tuple(word for word, optional in words[index:] if not optional)
        if index == len(words):
            return None
        word, optional = words[index]
        rest = fewest_skips(position, index + 1)
        best = rest if rest is None or optional else (word, *rest)
        length = 1
        while (
            position + length <= len(letters)
            and length <= len(word)
            and word[:length] == letters[position : position + length]
        ):
            taken = fewest_skips(position + length, index + 1)
            if taken is not None and (best is None or len(taken) < len(best)):
                best = taken
            length += 1
        return best

    return fewest_skips(0, 0)


def acronym_fit(skipped: tuple[str, ...] | None) -> AcronymFit:
    """How well an acronym's letters are taken, in order, from the words of a name,
    given the content words `acronym_skips` says they leave unused.

    "strict" when at most ACRONYM_MAX_SKIPPED_WORDS content words are skipped,
    "loose" when more are, "none" when the letters cannot be taken in order at all.
    """
    if skipped is None:
        return "none"
    return "strict" if len(skipped) <= ACRONYM_MAX_SKIPPED_WORDS else "loose"
