"""One free-text citation string → a `Reference` with what can be read from it reliably.

`\\bibitem` texts and citation strings handed to the MCP server come in many
styles. The common ones are recognised by their shape:

    APA        Family, I., & Family, I. (2019). Title. *Venue*, 12(3), 1–9. https://doi.org/…
    Chicago    Family, Given, and Given Family. 2019. "Title." *Venue* 12 (3): 1–9.
    IEEE       I. Family and I. Family, "Title," in *Proc. Venue*, vol. 1, pp. 1–9, 2019.
    Vancouver  Family I, Family I. Title. Venue. 2019;12(3):1-9. doi:…
    listing    Family, Given, Family, Given. Title. Venue. 2019. 12. 3. 1-9

Anything else (OCR noise, unusual styles) keeps only its identifiers and year:
a field is left empty rather than guessed, because the verifier searches with
these fields and a wrong title costs more than a missing one.
"""

from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass, field, replace

from refaudit.braces import latex_closing
from refaudit.identifiers import (
    arxiv_id_from_doi,
    find_arxiv_id,
    find_dois,
    find_pmcid,
    find_pmid,
    normalize_isbn,
    parse_arxiv_id,
)
from refaudit.models import Person, Reference
from refaudit.names import PARTICLES, parse_person
from refaudit.parsing.records import latex_url, normalize_pages
from refaudit.text import latex_to_text, unwrap_href

# Private-use characters mark where \emph{…}/\textit{…} spans were, through LaTeX decoding.
EMPH_OPEN = "\ue000"
EMPH_CLOSE = "\ue001"
NEWBLOCK = "\ue002"
_EMPH_COMMAND = re.compile(r"\\(?:emph|textit|textsl|it|em)\s*\{")
_OLD_EMPH = re.compile(r"\{\\(?:em|it|sl)\s+")

# Capitals an initial can be: "É." in "Bruera, É." is as much an initial as "E.".
_CAP = "A-ZÀ-ÖØ-Þ\u0100-\u017f\u0391-\u03a9\u0410-\u042f"
_YEAR = r"(?:1[5-9]\d\d|20\d\d)"
_QUOTED = re.compile(r"(?:“|``|\"|‘‘)(?P<title>.+?)(?:”|''|\"|’’)")
_APA = re.compile(
    rf"^(?P<authors>.+?)\s*\((?P<year>{_YEAR})[a-z]?(?:,\s*[^)]*)?\)\.?\s+(?P<rest>.+)$"
)
_INITIALS_GROUP = rf"[{_CAP}]\.(?:\s?-?[{_CAP}]\.)*"
_NATURE_NAME = rf"[^\W\d_][\w'’\-]*(?:\s[^\W\d_][\w'’\-]*)*,\s{_INITIALS_GROUP}"
_NATURE = re.compile(
    rf"^(?P<authors>{_NATURE_NAME}(?:(?:,\s*|,?\s*&\s*|,?\s+and\s+){_NATURE_NAME})*"
    rf"(?:,?\s*et\s+al\.)?)\s+(?P<rest>[^(].+?)\s*\((?P<year>{_YEAR})\)\.?$"
)
_NATURE_VENUE = re.compile(r"^(?P<venue>[^.\d]+(?:\.[^.\d]+)*?)\s+\d+[A-Z]?\s*,")
# Names, then an italic title and an italic venue followed by its volume: no quotes anywhere.
_ITALIC_PAIR = re.compile(
    rf"^(?P<authors>[^\d{EMPH_OPEN}{EMPH_CLOSE}“”]+?),\s*"
    rf"{EMPH_OPEN}(?P<title>[^{EMPH_OPEN}{EMPH_CLOSE}]{{4,}}){EMPH_CLOSE}[\s,.]*(?:in\s+)?"
    rf"{EMPH_OPEN}(?P<venue>[^{EMPH_OPEN}{EMPH_CLOSE}\d]+){EMPH_CLOSE}"
    rf"(?P<tail>\s*(?:vol\.\s*)?\d.*)$",
    re.DOTALL,
)
# OCR may drop the space after the names' full stop ("Turing, A..1987.").
_CHICAGO_HEAD = re.compile(rf"^(?P<authors>.+?)(?:\.?\s+|\.)(?P<year>{_YEAR})[a-z]?\.\s*$")
# A page range closing what was read as a title ("… (1946–7)., 459–528") is a locator.
_TITLE_PAGES = re.compile(r"[.,;:]\s*(?:pp?\.\s*)?(?P<pages>\d+\s*[–-]\s*\d+)$")
# Volume, number and pages are bare tokens, never a URL's pieces ("https://doi. org/…").
_LISTING_TAIL = re.compile(
    rf"\.\s+(?P<venue>[^.]+?)\.\s+(?P<year>{_YEAR})\.\s*(?P<volume>[^.\s/:]*)\s*\.\s*"
    r"(?P<number>[^.\s/:]*)\s*\.\s*(?P<pages>[^.\s/:]*)\s*\.?\s*$"
)
# Dotted initials first, so "Muller K. R." keeps its "R." instead of starting the title.
_VANCOUVER_NAME = (
    rf"[^\W\d_][\w'’\-]*(?:\s[^\W\d_][\w'’\-]*)?\s(?:(?:[{_CAP}]\.\s?){{1,3}}|[{_CAP}]{{1,3}})"
)
# Names are separated by commas, or (in some reference managers' output) by spaces only;
# then each family name must be written in capitalised letters, so that an upper-case
# title ("THE EFFECT OF …") is not read as more names (unless every name is in capitals).
# A family name may follow or hold particles ("van Enk S", "d’Amato C", "Palmero da
# Cruz J") and any hyphen ("Kris‐Etherton PM"); initials may keep a particle's
# lower-case letter ("Castro FAdS").
_PARTICLE = "|".join(sorted(PARTICLES, key=len, reverse=True))
_SPACED_FAMILY_WORD = rf"(?:[dl][’'])?[{_CAP}][^\W\d_]*[a-zß-ÿ][^\W\d_'’\-‐]*(?:[\-‐'’][^\W\d_]+)*"
_SPACED_INITIALS = rf"[{_CAP}](?:[{_CAP}]|[a-z](?=[{_CAP}])){{0,3}}"
_SPACED_NAME = (
    rf"(?:(?:{_PARTICLE})\s)*{_SPACED_FAMILY_WORD}(?:\s(?:(?:{_PARTICLE})\s)?{_SPACED_FAMILY_WORD})?"
    rf"\s{_SPACED_INITIALS}"
)
# Some exports write every family name in capitals ("GAUTHIER M BELLEMARE R", a former
# name in brackets: "YOSHIZAKI(OBANA) Y"): read so only when the whole list is, so that
# a capitalised title stays a title.
_UPPER_FAMILY = rf"[{_CAP}]{{2,}}(?:[\-‐'’][{_CAP}]+)*(?:\([{_CAP}]{{2,}}\))?"
_UPPER_NAME = rf"{_UPPER_FAMILY}(?:\s{_UPPER_FAMILY})?\s[{_CAP}]{{1,3}}"
_VANCOUVER = re.compile(
    rf"^(?P<authors>(?:{_UPPER_NAME}(?:\s+{_UPPER_NAME})+"
    rf"|{_VANCOUVER_NAME}(?:(?:\s+{_SPACED_NAME})+|(?:,\s*{_VANCOUVER_NAME})*))"
    rf"(?:,?\s*et\s+al)?)\.?\s+(?P<rest>\S.+)$"
)
_VANCOUVER_PERSONS = (
    re.compile(rf"{_SPACED_NAME}(?=[\s,;]|$)"),
    re.compile(rf"{_UPPER_NAME}(?=\s|$)"),
)
# Physics styles (AIP, APS) print no title: `A. Author, B. Author, Venue 87, 69 (2016).`
_INITIALS_NAME = rf"(?:[{_CAP}]\.[\s\-]?)+\s?[^\W\d_][\w'’\-]*(?:\s[^\W\d_][\w'’\-]*)?"
_TITLELESS = re.compile(
    rf"^(?P<authors>{_INITIALS_NAME}(?:,\s*(?:and\s+)?{_INITIALS_NAME})*(?:,?\s+et\s+al\.)?),\s+"
    rf"(?P<venue>[^\d,“”{EMPH_OPEN}{EMPH_CLOSE}]+?)\s*(?P<tail>\d[^()]*?)?\s*\((?P<year>{_YEAR})\)\.?$"
)
# Chemistry (RSC) styles print no title and put the year first:
# `A. Author and B. Author, Venue, 2012, 35, 1937.`
_TITLELESS_RSC = re.compile(
    rf"^(?P<authors>{_INITIALS_NAME}(?:(?:,\s*|,?\s+and\s+){_INITIALS_NAME})*"
    rf"(?:,?\s+et\s+al\.?)?),\s+{EMPH_OPEN}?(?P<venue>[^\d“”{EMPH_OPEN}{EMPH_CLOSE}]+?"
    rf"(?:,\s*\d{{1,2}})?){EMPH_CLOSE}?,\s*(?P<year>{_YEAR}),"
    r"\s*(?P<tail>\d[^()]*?)\.?$"
)
# A lone capital before the period is an initial; any other one-letter word (a symbol,
# "ϕ") can end a title.
_LOOSE_SENTENCE_END = re.compile(rf"(?<=\S\S|\s[^\s{_CAP}])[.?!]\s+(?=\S)")
_SENTENCE_END = re.compile(rf"(?<=[^\s.{_CAP}])[.?!]\s+(?=\S)|(?<=[a-z]{{2}}[A-Z])\.\s+(?=\S)")
_APA_VENUE = re.compile(r"^(?P<venue>[^.,]{2,}(?:\.[^.,\d]+)*?),\s*(?:\d|\(|[A-Z]\d)")
_CHICAGO_VENUE_END = re.compile(r"\s+\d|\s*\(|:|\.\s+https?:|\.\s*$|,")
_VANCOUVER_VENUE_END = re.compile(rf"\.\s+(?={_YEAR}\b)|\.\s*$|;|,\s*(?:[Vv]ol\b|\d)|\.\s+doi")
# JHEP-style `[\\eprint{1207.7214}]`: the macro is the only sign the number is an arXiv id.
_EPRINT_COMMAND = re.compile(r"\\(?:eprint|arxiv)\s*(?=\{)", re.IGNORECASE)
_GROUP_AUTHOR = re.compile(r"\b(?:collaboration|consortium)\b", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s<>\"{}]+")
_ISBN = re.compile(r"ISBN(?:-1[03])?:?\s*([\dXx][\d\s-]{8,16}[\dXx])")
# A particle keeps its lower-case initial among the others ("Almeida, R. R. d." for
# Renata Rodrigues de Almeida).
_INITIALS = re.compile(
    rf"^[{_CAP}][a-z]?\.?[\s-]?(?:(?:[{_CAP}][a-z]?\.?|[a-z]\.)[\s-]?){{0,5}}$|^[{_CAP}]{{1,3}}$"
    # One letter of a script without capitals and a full stop: "本田, 博.".
    r"|^[^\W\d_]\.$"
)
# "et aI": OCR reads the l of "al" as a capital I or a one.
_ET_AL = re.compile(r"(?:,\s*|\s+)et\.?\s*a[lI1]\.?\s*$", re.IGNORECASE)
_ELLIPSIS = re.compile(r"(?:,\s*)?(?:…|\.\s?\.\s?\.)\s*(?:,\s*)?")
_AND = re.compile(r"\s*(?:,\s*)?(?:\band\b|&)\s*")
_LOCATOR = (
    # Physics styles: `Phys. Lett. B 716 (2012) 1`, the bracket holding the year.
    re.compile(
        rf"^[\s,.;]*(?P<volume>\d+)\s*\({_YEAR}\)\s*,?\s*"
        r"(?P<pages>[A-Za-z]?\d+(?:\s*[–-]\s*[A-Za-z]?\d+)?)(?![\w])"
    ),
    re.compile(r"\bvol\.\s*(?P<volume>[\w-]+)", re.IGNORECASE),
    re.compile(r"\bno\.\s*(?P<number>[\w-]+)", re.IGNORECASE),
    re.compile(r"\bpp?\.\s*(?P<pages>\w+(?:\s*[–-]\s*\w+)?)"),
    re.compile(r"\)\s*:\s*(?P<pages>\w+(?:\s*[–-]\s*\w+)?)"),
    re.compile(
        r"^[\s,.;]*(?P<volume>\d+)\s*,\s*(?P<pages>[A-Za-z]?\d+(?:\s*[–-]\s*[A-Za-z]?\d+)?)"
    ),
    re.compile(
        rf"^[\s,.;]*(?P<volume>\d+)\s*(?:\((?!{_YEAR}\))(?P<number>[^)]{{1,12}})\))?\s*[,:]\s*"
        r"(?P<pages>[A-Za-z]?\d+(?:\s*[–-]\s*[A-Za-z]?\d+)?)"
    ),
    re.compile(
        rf"^[\s,.;]*(?P<volume>\d+)\s*(?:\((?!{_YEAR}\))(?P<number>[^)]{{1,12}})\))?"
        r"(?=[\s,:;(]|$)"
    ),
)


# Words of a citation string without their punctuation: "directions.Inf" is two.
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_LETTER = re.compile(r"[^\W\d_]")
#: A year not inside a number or after a dot (a DOI's "10.1000/2019").
_YEAR_NOT_NUMBER = re.compile(rf"(?<![\d.])({_YEAR})(?![\d])")
#: A year standing alone: not inside a number, a page range or a DOI.
_BARE_YEAR = re.compile(rf"(?<![\d.–-])({_YEAR})(?![\d–-])")
_YEAR_IN_BRACKETS = re.compile(rf"\(\s*{_YEAR}[a-z]?\s*\)")
# Where a venue read after a title ends: its year, volume, pages or a bracket.
_VENUE_THEN = re.compile(
    rf"(?P<venue>.+?)(?=[.,;]?\s*{_YEAR}\b|;|,\s*(?:[Vv]ol\b|\d)|\s+\d|\s*\(|\.?\s*$)"
)
#: How closely the words at the parsed title's place must spell a record's title (0–100).
REREAD_TITLE_RATIO = 92


@dataclass
class _Parts:
    """What one style reader found; None means "could not tell"."""

    authors: str | None = None
    style: str = "unknown"
    title: str | None = None
    year: int | None = None
    venue: str | None = None
    tail: str = ""
    locator: dict[str, str] = field(default_factory=dict)


def parse_freetext(
    text: str, *, key: str, file: str | None = None, line: int | None = None
) -> Reference:
    """Read one citation string; fields that cannot be read reliably stay None."""
    marked = _decode(text)
    plain = _clean(marked)
    parts = _read_style(marked)
    reference = Reference(key=key, entry_type="misc", file=file, line=line, free_text=plain)
    reference.title = _clean(parts.title) if parts.title else None
    title_pages = _TITLE_PAGES.search(reference.title or "")
    if reference.title and title_pages:
        reference.title = _clean(reference.title[: title_pages.start()])
        parts.locator = parts.locator or {"pages": title_pages.group("pages")}
    if reference.title and len(reference.title) < 4:
        reference.title = None
    reference.venue = _clean_venue(parts.venue) if parts.venue else None
    if parts.authors:
        reference.authors, reference.authors_truncated = _read_authors(parts.authors, parts.style)
    outside_title = plain.replace(reference.title, " ") if reference.title else plain
    reference.year = parts.year or _fallback_year(outside_title)
    locator = parts.locator or _read_locator(parts.tail, reference.year)
    reference.volume = locator.get("volume") or None
    reference.number = locator.get("number") or None
    reference.pages = normalize_pages(locator.get("pages")) if locator.get("pages") else None
    _add_identifiers(reference, latex_url(unwrap_href(text, keep_url=True)), outside_title)
    if reference.arxiv_id and reference.venue is None and "arxiv" in plain.lower():
        reference.entry_type = "misc"
    elif reference.venue:
        reference.entry_type = "inproceedings" if _is_proceedings(reference.venue) else "article"
    return reference


def _decode(text: str) -> str:
    """LaTeX → Unicode, keeping \\emph spans as EMPH_OPEN…EMPH_CLOSE.

    Citations pasted from web pages bring HTML entities ("Ch&apos;ng") along.
    """
    marked = _mark_emphasis(html.unescape(text))
    marked = re.sub(r"\\newblock\b\s*", NEWBLOCK, marked.replace("\\\\", " "))
    return latex_to_text(marked).replace("``", "“").replace("''", "”")


def _mark_emphasis(text: str) -> str:
    out: list[str] = []
    index = 0
    for match in list(_EMPH_COMMAND.finditer(text)) + list(_OLD_EMPH.finditer(text)):
        if match.start() < index:
            continue
        close = latex_closing(
            text, match.end() - 1 if text[match.end() - 1] == "{" else match.start()
        )
        if close is None:
            continue
        out.append(text[index : match.start()])
        out.append(EMPH_OPEN + "{" + text[match.end() : close] + "}" + EMPH_CLOSE)
        index = close + 1
    out.append(text[index:])
    return "".join(out)


def _clean(value: str) -> str:
    text = value.replace(EMPH_OPEN, "").replace(EMPH_CLOSE, "").replace(NEWBLOCK, " ")
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" ,;:").removesuffix(".").strip() if text else ""


def _clean_venue(value: str) -> str | None:
    """Like `_clean`, but an abbreviated last word ("Eng.", "Proc.") keeps its period."""
    text = re.sub(r"\s+", " ", value.replace(EMPH_OPEN, "").replace(EMPH_CLOSE, "")).strip(" ,;:")
    if text.endswith(".") and len(text.rsplit(" ", 1)[-1]) > 6:
        text = text[:-1]
    # A year or a page number where the venue would be is not a venue.
    if not _LETTER.search(text):
        return None
    return text or None


def _read_style(text: str) -> _Parts:
    """Try each known style; the first whose shape matches wins."""
    if NEWBLOCK in text:
        return _read_newblocks(text)
    quoted = _quoted_title(text)
    if quoted:
        return _read_quoted(text, quoted)
    italic_pair = _ITALIC_PAIR.match(text)
    if italic_pair:
        return _read_italic_pair(italic_pair)
    bare = _URL.sub("", text).strip()
    titleless = _TITLELESS.match(bare) or _TITLELESS_RSC.match(bare)
    if titleless:
        return _Parts(
            authors=titleless.group("authors"),
            style="natural",
            venue=titleless.group("venue"),
            year=int(titleless.group("year")),
            tail=titleless.group("tail") or "",
        )
    nature = _NATURE.match(text)
    if nature:
        return _read_nature(nature)
    apa = _APA.match(text)
    if apa and not re.search(rf"[“\d{EMPH_OPEN}]", apa.group("authors")):
        return _read_apa(apa)
    listing = _LISTING_TAIL.search(text)
    if listing:
        parts = _read_listing(text, listing)
        if parts.title:
            return parts
    vancouver = _VANCOUVER.match(text)
    if vancouver:
        return _read_vancouver(vancouver)
    return _Parts()


@dataclass
class _Quoted:
    start: int
    end: int
    title: str


def _quoted_title(text: str) -> _Quoted | None:
    """The quoted span that is a title (IEEE, Chicago), not a phrase quoted inside one.

    A quoted title follows the names or the year and their punctuation; a quotation
    inside an APA or Vancouver title ("Constructing “Lighting-UP” Switches") follows a
    word. Curly quotes nest, so a quoted title may itself quote a phrase.
    """
    for quoted in _QUOTED.finditer(text):
        before = text[: quoted.start()].rstrip()
        if not before or before[-1] not in ",.)]":
            continue
        if text[quoted.start()] != "“":
            return _Quoted(quoted.start(), quoted.end(), quoted.group("title"))
        depth = 0
        for position in range(quoted.start(), len(text)):
            depth += {"“": 1, "”": -1}.get(text[position], 0)
            if depth == 0:
                return _Quoted(quoted.start(), position + 1, text[quoted.start() + 1 : position])
        return None
    return None


def _read_newblocks(text: str) -> _Parts:
    """BibTeX-generated items (.bbl): `authors \\newblock title \\newblock venue, year`."""
    blocks = [block.strip() for block in text.split(NEWBLOCK)]
    parts = _Parts(authors=blocks[0], style="natural")
    if len(blocks) < 2:
        return parts
    parts.title = blocks[1]
    rest = " ".join(blocks[2:])
    years = _YEAR_NOT_NUMBER.findall(_without_identifiers(rest))
    parts.year = int(years[-1]) if years else None
    if rest.startswith(EMPH_OPEN):
        end = rest.find(EMPH_CLOSE)
        parts.venue = rest[1:end] if end > 0 else None
        parts.tail = rest[end + 1 :] if end > 0 else ""
    elif rest.lower().startswith("in "):
        emph = re.search(f"{EMPH_OPEN}(.*?){EMPH_CLOSE}", rest)
        parts.venue = emph.group(1) if emph else None
        parts.tail = rest[emph.end() :] if emph else ""
    return parts


def _read_quoted(text: str, quoted: _Quoted) -> _Parts:
    """IEEE and Chicago: the title is the quoted span after the names."""
    before = text[: quoted.start].strip()
    after = text[quoted.end :]
    parts = _Parts(title=quoted.title, tail=after)
    chicago = _CHICAGO_HEAD.match(before)
    if chicago:
        parts.style = "chicago"
        parts.authors = chicago.group("authors")
        parts.year = int(chicago.group("year"))
    else:
        # Chicago notes style ends the names with a period, IEEE with a comma.
        parts.style = "chicago" if before.endswith(".") and not _ET_AL.search(before) else "natural"
        parts.authors = before.rstrip(" ,")
        years = _YEAR_NOT_NUMBER.findall(_without_identifiers(after))
        parts.year = int(years[-1]) if years else None
    venue_text = re.sub(r"^[\s,.]*(?:in\s+)?", "", after)
    if venue_text.startswith(EMPH_OPEN):
        end = venue_text.find(EMPH_CLOSE)
        parts.venue = venue_text[1:end] if end > 0 else None
        parts.tail = venue_text[end + 1 :] if end > 0 else after
    elif venue_text and not venue_text.lower().startswith(("http", "doi", "arxiv")):
        venue_end = _CHICAGO_VENUE_END.search(venue_text)
        parts.venue = venue_text[: venue_end.start()] if venue_end else venue_text
        parts.tail = venue_text[venue_end.start() :] if venue_end else ""
    return parts


def _read_apa(match: re.Match[str]) -> _Parts:
    rest = match.group("rest")
    parts = _Parts(
        authors=match.group("authors"), style="family-first", year=int(match.group("year"))
    )
    emph = rest.find(EMPH_OPEN)
    if emph == 0:
        # An italic title right after the year: a book or report, not an article.
        end = rest.find(EMPH_CLOSE)
        parts.title = rest[1:end] if end > 0 else None
        return parts
    if emph > 0:
        parts.title = rest[:emph]
        end = rest.find(EMPH_CLOSE, emph)
        parts.venue = rest[emph + 1 : end] if end > 0 else None
        parts.tail = rest[end + 1 :] if end > 0 else ""
        return parts
    rest = _URL.sub("", rest).strip()
    boundaries = [m for m in _SENTENCE_END.finditer(rest)]
    for boundary in reversed(boundaries):
        venue = _APA_VENUE.match(rest[boundary.end() :])
        if venue:
            parts.title = rest[: boundary.start() + 1]
            parts.venue = venue.group("venue")
            parts.tail = rest[boundary.end() + venue.end("venue") :]
            return parts
    if len(boundaries) <= 1:
        parts.title = rest[: boundaries[0].start() + 1] if boundaries else rest
        parts.venue = rest[boundaries[0].end() :] if boundaries else None
    return parts


def _read_italic_pair(match: re.Match[str]) -> _Parts:
    """`A. Author, *Title*, *Journal* 38 (1999) 1113` (JHEP, INSPIRE and other physics styles)."""
    tail = match.group("tail")
    years = _YEAR_NOT_NUMBER.findall(_without_identifiers(tail))
    return _Parts(
        authors=match.group("authors"),
        style="natural",
        title=match.group("title"),
        venue=match.group("venue"),
        year=int(years[0]) if years else None,
        tail=tail,
    )


def _read_nature(match: re.Match[str]) -> _Parts:
    """`Family, I. & Family, I. Title. Venue 521, 436–444 (2015).`"""
    rest = match.group("rest")
    parts = _Parts(
        authors=match.group("authors"), style="family-first", year=int(match.group("year"))
    )
    emph = rest.find(EMPH_OPEN)
    if emph > 0:
        end = rest.find(EMPH_CLOSE, emph)
        parts.title = rest[:emph]
        parts.venue = rest[emph + 1 : end] if end > 0 else None
        parts.tail = rest[end + 1 :] if end > 0 else ""
        return parts
    for boundary in reversed(list(_SENTENCE_END.finditer(rest))):
        venue = _NATURE_VENUE.match(rest[boundary.end() :])
        if venue:
            parts.title = rest[: boundary.start() + 1]
            parts.venue = venue.group("venue")
            parts.tail = rest[boundary.end() + venue.end("venue") :]
            break
    return parts


def _read_listing(text: str, match: re.Match[str]) -> _Parts:
    """`Family, Given, Family, Given. Title. Venue. 2010. 112. 5. 20-26`."""
    head = text[: match.start()]
    double = head.find(".. ")
    if double > 0:
        authors, title = head[: double + 1], head[double + 3 :]
    else:
        end = re.search(r"(?<=[^\W\d_]{2})\.\s+", head)
        if end is None:
            return _Parts()
        authors, title = head[: end.start()], head[end.end() :]
    return _Parts(
        authors=authors,
        style="pairs",
        title=title,
        year=int(match.group("year")),
        venue=match.group("venue"),
        locator={
            name: match.group(name) for name in ("volume", "number", "pages") if match.group(name)
        },
    )


def _read_vancouver(match: re.Match[str]) -> _Parts:
    rest = match.group("rest")
    parts = _Parts(authors=match.group("authors"), style="vancouver")
    # A numbered title ("705. CARPINUS FANGIANA.") does not end at its number.
    boundary = next(
        (end for end in _LOOSE_SENTENCE_END.finditer(rest) if _LETTER.search(rest[: end.start()])),
        None,
    )
    if boundary is None:
        return parts
    parts.title = rest[: boundary.start() + 1]
    after = rest[boundary.end() :]
    end = _VANCOUVER_VENUE_END.search(after)
    parts.venue = after[: end.start()] if end else after
    parts.tail = after[end.start() :] if end else ""
    year = re.search(
        rf"(?<![\d.])({_YEAR})(?:\s+[A-Z][a-z]{{2}}(?:\s+\d+)?)?\s*[;:.]", parts.tail + "."
    )
    parts.year = int(year.group(1)) if year else None
    if year:
        # What follows the year is the locator ("2014;9:e111229"); the year is not a volume.
        parts.tail = parts.tail[year.end(1) :]
    vancouver_locator = re.search(
        r";\s*(?P<volume>[\w-]+)\s*(?:\((?P<number>[^)]+)\))?\s*:\s*(?P<pages>[\w]+(?:[–-][\w]+)?)",
        parts.tail,
    )
    if vancouver_locator:
        parts.locator = {k: v for k, v in vancouver_locator.groupdict().items() if v}
    return parts


def _read_locator(tail: str, year: int | None) -> dict[str, str]:
    """Volume, number and pages from the text after the venue.

    The citation's `year` alone is not a volume ("…, University of Southampton, 2017.").
    """
    text = _clean(_without_identifiers(tail)) if tail else ""
    found: dict[str, str] = {}
    for pattern in _LOCATOR:
        match = pattern.search(text)
        if match:
            for name, value in match.groupdict().items():
                if value and name not in found:
                    found[name] = value.strip()
    if found == {"volume": str(year)}:
        del found["volume"]
    return found


def _read_authors(text: str, style: str, whole: tuple[str, ...] = ()) -> tuple[list[Person], bool]:
    """Names in the order the style writes them; "et al." marks a truncated list.

    Each of `whole` (names a record writes in one field) found in `text` is one
    name, whatever commas or initials it holds: "National Association of
    Regulatory Utility Commissioners, Washington, DC (United States)".
    """
    text = re.sub(r"\s+", " ", text.replace(EMPH_OPEN, "").replace(EMPH_CLOSE, "")).strip(" ,;")
    truncated = bool(_ET_AL.search(text))
    text = _ET_AL.sub("", text).strip(" ,")
    spans = _whole_names(text, whole)
    if spans:
        return _around_whole_names(text, style, spans), truncated
    # APA 7 lists the first nineteen names, an ellipsis and the last: a cut, not a name.
    if _ELLIPSIS.search(text):
        truncated = True
        text = _ELLIPSIS.sub(", ", text).strip(" ,")
    text = re.sub(r"(?<=[^\W\d_]{2})\.$", "", text)
    # An initial glued to its family name ("A.Brown", a dropped space) is still an
    # initial, also when OCR read the name's "l" as "I" ("N.AIdridge").
    text = re.sub(rf"\b([{_CAP}]\.)(?=[{_CAP}]I?[a-z])", r"\1 ", text)
    if not text or any(char.isdigit() for char in text):
        return [], truncated
    if style == "vancouver":
        names = re.split(r",\s*", text) if "," in text else _space_separated(text)
        found = [_vancouver_person(name) for name in names if name.strip()]
        return [person for person in found if person], truncated
    if style == "family-first" and "," not in text and " " in text and not _has_initials(text):
        # "World Health Organization. (2020)." — a group author, not given + family names.
        return [Person(family=text, is_organisation=True)], truncated
    # "&" and "and" end a name: "OpenAI, & Wijayagunawardhana, W. A. H. N." is two names.
    chunks: list[str] = []
    after_and: set[int] = set()
    for group in re.split(r"\s*(?:&|\band\b)\s*", text):
        after_and.add(len(chunks))
        chunks += [chunk.strip() for chunk in re.split(r",\s*", group) if chunk.strip()]
    if style == "natural":
        return [_natural_person(name) for name in chunks], truncated
    people: list[Person] = []
    index = 0
    while index < len(chunks):
        # APA and listings invert every name ("Family, I."); Chicago only the first one.
        inverted = style in ("family-first", "pairs") or not people
        partner = chunks[index + 1] if index + 1 < len(chunks) else None
        partner = None if index + 1 in after_and else partner
        if inverted and partner and (style == "pairs" or not people or _INITIALS.match(partner)):
            people.append(parse_person(f"{chunks[index]}, {partner}"))
            index += 2
        else:
            people.append(parse_person(chunks[index]))
            index += 1
    return [p for p in people if p.family], truncated


def _around_whole_names(text: str, style: str, spans: list[tuple[int, int, str]]) -> list[Person]:
    """Each name of `spans` as one person, the text between them read as the style says."""
    people: list[Person] = []
    index = 0
    for begin, end, name in [*spans, (len(text), len(text), "")]:
        if _LETTER.search(text[index:begin]):
            people += _read_authors(text[index:begin], style)[0]
        if name:
            people.append(Person(family=name, is_organisation=True))
        index = end
    return people


def _whole_names(text: str, whole: tuple[str, ...]) -> list[tuple[int, int, str]]:
    """(start, end, name) of each of `whole` written in `text`, in order, not overlapping."""
    folded = text.casefold()
    spans: list[tuple[int, int, str]] = []
    for name in sorted(whole, key=len, reverse=True):
        needle = " ".join(name.split()).casefold()
        at = folded.find(needle)
        if at >= 0 and all(at >= end or at + len(needle) <= begin for begin, end, _ in spans):
            spans.append((at, at + len(needle), name))
    return sorted(spans)


def _natural_person(name: str) -> Person:
    """ "ATLAS Collaboration" is a group author, not Mr Collaboration."""
    if _GROUP_AUTHOR.search(name):
        return Person(family=name, is_organisation=True)
    return parse_person(name)


def _has_initials(text: str) -> bool:
    return bool(re.search(rf"\b[{_CAP}]\.", text))


def _space_separated(text: str) -> list[str]:
    """ "Ali MM Balash DG Kanich C": each family name ends where its initials do."""
    for pattern in _VANCOUVER_PERSONS:
        names = [match.group(0) for match in pattern.finditer(text)]
        if "".join(names).replace(" ", "") == text.replace(" ", ""):
            return names
    return [text]


def _vancouver_person(name: str) -> Person | None:
    """ "Hinton G", "Hinton G." or "Ångström AJ" → Person(family, initials).

    Not `names.display_name_to_person(medline_order=True)`, which reads PubMed's API
    names: those always have undotted ASCII capitals for initials, while a Vancouver
    list typed into a paper dots them or not and starts names in any alphabet (`_CAP`),
    and the list was already cut into names here by the same pattern. The family name
    keeps its particle ("van der Berg"), as the style writes it.
    """
    match = re.match(
        rf"^(?P<family>.+?)\s+(?P<initials>{_SPACED_INITIALS}|(?:[{_CAP}]\.\s?){{1,3}})$",
        name.strip(),
    )
    if not match:
        return Person(family=name.strip()) if name.strip() else None
    initials = match.group("initials").strip()
    # "Hinton G" and "Hinton G." are the same person; keep bare initials.
    if re.fullmatch(rf"[{_CAP}]\.", initials):
        initials = initials[0]
    return Person(family=match.group("family"), given=initials)


def _without_identifiers(text: str) -> str:
    text = _URL.sub(" ", text)
    return re.sub(r"(?:doi:?\s*)?10\.\d{4,9}/\S+|arXiv:\s*\S+", " ", text, flags=re.IGNORECASE)


def _fallback_year(text: str) -> int | None:
    """The last plausible year outside identifiers and page ranges, preferring "(1995)"."""
    text = _without_identifiers(text)
    bracketed = re.findall(rf"\(({_YEAR})[a-z]?\)", text)
    if bracketed:
        return int(bracketed[-1])
    years = _BARE_YEAR.findall(text)
    return int(years[-1]) if years else None


def _add_identifiers(reference: Reference, raw: str, outside_title: str) -> None:
    raw = _EPRINT_COMMAND.sub("arXiv:", raw)
    text = latex_to_text(raw) if "\\" in raw else raw
    dois = find_dois(text)
    reference.doi = dois[0] if dois else None
    arxiv = find_arxiv_id(text)
    if arxiv is None and reference.doi:
        datacite = arxiv_id_from_doi(reference.doi)
        arxiv = parse_arxiv_id(datacite) if datacite else None
    if arxiv:
        reference.arxiv_id, reference.arxiv_version = arxiv
    reference.pmid = find_pmid(text)
    reference.pmcid = find_pmcid(text)
    isbn = _ISBN.search(outside_title)
    reference.isbn = normalize_isbn(isbn.group(1)) if isbn else None
    for url in _URL.findall(text):
        url = url.rstrip(".,;")
        if not re.search(r"doi\.org/", url, re.IGNORECASE):
            reference.url = url
            break


def _is_proceedings(venue: str) -> bool:
    return bool(
        re.search(r"\b(?:proc\.?|proceedings|conference|conf\.?|workshop|symposium)\b", venue, re.I)
        or re.search(
            r"\b(?:ICLR|ICML|NeurIPS|NIPS|CVPR|ICCV|ECCV|ACL|EMNLP|AAAI|IJCAI|KDD)\b", venue
        )
    )


def reread_names(reference: Reference, names: tuple[str, ...]) -> list[Person] | None:
    """The cited names read again, each of `names` (a record's names written in one
    field) kept whole; None when the citation's names hold none of them.

    No reader can split "USDOE Office of Electricity (OE), Bieler, S., National
    Association of Regulatory Utility Commissioners, Washington, DC (United
    States), …" into names alone; the record that writes those names says where.
    """
    text = reference.free_text
    parts = _read_style(text) if text and names else None
    if parts is None or not parts.authors:
        return None
    if not _whole_names(" ".join(_clean(parts.authors).split()), names):
        return None
    return _read_authors(parts.authors, parts.style, names)[0] or None


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
        authors, truncated = _read_authors(head, _read_style(text).style, names)
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
    after = _without_identifiers(text[end:]).lstrip(" .,;:”’\"')]")
    venue = _VENUE_THEN.match(after)
    if venue is None:
        return None
    tail = after[venue.end() :]
    year_at = _BARE_YEAR.search(tail)
    year = int(year_at.group(1)) if year_at else None
    # What follows the year is the locator; the year is not a volume.
    locator = _read_locator(tail[year_at.end() :] if year_at else tail, year)
    return _Reread(
        title=text[begin:end],
        venue=_clean_venue(venue.group("venue")),
        year=year,
        locator=tuple(locator.items()),
        names_end=begin if first else None,
    )
