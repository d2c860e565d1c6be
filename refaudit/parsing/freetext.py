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

import re
from dataclasses import dataclass, field

from refaudit.identifiers import (
    arxiv_id_from_doi,
    find_arxiv_id,
    find_dois,
    find_pmcid,
    find_pmid,
    normalize_isbn,
    parse_arxiv_id,
)
from refaudit.models import Reference
from refaudit.names import PARTICLES, is_organisation_name
from refaudit.parsing.citenames import (
    CAP,
    ET_AL,
    SPACED_NAME,
    UPPER_NAME,
    VANCOUVER_NAME,
    read_authors,
)
from refaudit.parsing.marks import (
    EMPH_CLOSE,
    EMPH_OPEN,
    LETTER,
    NEWBLOCK,
    YEAR,
    clean,
    clean_venue,
    decode,
)
from refaudit.parsing.records import latex_url, normalize_pages
from refaudit.parsing.sentences import VENUE_END, Sentences, names_end, read_marked, read_plain
from refaudit.text import latex_to_text, unwrap_href

_QUOTED = re.compile(r"(?:“|``|\"|‘‘)(?P<title>.+?)(?:”|''|\"|’’)")
_APA = re.compile(
    rf"^(?P<authors>.+?)\s*\((?P<year>{YEAR})[a-z]?(?:,\s*[^)]*)?\)\.?\s+(?P<rest>.+)$"
)
_INITIALS_GROUP = rf"[{CAP}]\.(?:\s?-?[{CAP}]\.)*"
_NATURE_NAME = rf"[^\W\d_][\w'’\-]*(?:\s[^\W\d_][\w'’\-]*)*,\s{_INITIALS_GROUP}"
_NATURE = re.compile(
    rf"^(?P<authors>{_NATURE_NAME}(?:(?:,\s*|,?\s*&\s*|,?\s+and\s+){_NATURE_NAME})*"
    rf"(?:,?\s*et\s+al\.)?)\s+(?P<rest>[^(].+?)\s*\((?P<year>{YEAR})\)\.?$"
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
_CHICAGO_HEAD = re.compile(rf"^(?P<authors>.+?)(?:\.?\s+|\.)(?P<year>{YEAR})[a-z]?\.\s*$")
# A page range closing what was read as a title ("… (1946–7)., 459–528") is a locator.
_TITLE_PAGES = re.compile(r"[.,;:]\s*(?:pp?\.\s*)?(?P<pages>\d+\s*[–-]\s*\d+)$")
# Volume, number and pages are bare tokens, never a URL's pieces ("https://doi. org/…").
_LISTING_TAIL = re.compile(
    rf"\.\s+(?P<venue>[^.]+?)\.\s+(?P<year>{YEAR})\.\s*(?P<volume>[^.\s/:]*)\s*\.\s*"
    r"(?P<number>[^.\s/:]*)\s*\.\s*(?P<pages>[^.\s/:]*)\s*\.?\s*$"
)
# Given names and initials with full stops ("Diederik P.", "John C. S."), or one bare
# initial: the only Vancouver-looking heads that may instead begin names in reading
# order ("Diederik P. Kingma and Jimmy Ba."). "Lovich JE" and lists of names may not.
_READING_ORDER_HEAD = re.compile(
    rf"[^\W\d_][\w'’\-]*(?:\s[^\W\d_][\w'’\-]*)?\s+(?:(?:[{CAP}]\.\s?){{1,3}}|[{CAP}])"
)
_FAMILY_AND_INITIALS = re.compile(rf"[^\W\d_][\w'’\-]*\s[{CAP}]{{1,3}}")
_VANCOUVER = re.compile(
    rf"^(?P<authors>(?:{UPPER_NAME}(?:\s+{UPPER_NAME})+"
    rf"|{VANCOUVER_NAME}(?:(?:\s+{SPACED_NAME})+|(?:,\s*{VANCOUVER_NAME})*))"
    rf"(?:,?\s*et\s+al)?)\.?\s+(?P<rest>\S.+)$"
)
# Physics styles (AIP, APS) print no title: `A. Author, B. Author, Venue 87, 69 (2016).`
# The initials are matched once (an atomic group): "S. " read as "S." and " " two ways
# made a long list of names that is no titleless citation take minutes to refuse.
# After the initials, a particle cut short ("S. M. C. d. Santos") and a family name of up
# to three words ("S. van de Goor", "P. de Vries Albertin", "L. M. Diele Viegas").
_NAME_WORD = r"[^\W\d_][\w'’\-]*"
_INITIALS_NAME = (
    rf"(?>(?:[{CAP}]\.[\s\-]?)+\s?)(?:[a-z]{{1,2}}\.\s)?{_NAME_WORD}(?:\s{_NAME_WORD}){{0,2}}"
)


# Someone known by one name ("N. N. Win, T. Ito, Ismail, T. Kodama") among the others.
_MONONYM = rf"[{CAP}][^\W\d_][\w'’\-]*"


def _names(name: str, between: str, et_al: str, later: str | None = None) -> str:
    """The `authors` group of a title-less style: `name`s cut by `between` (after the
    first, also a `later` form), then an optional `et_al`."""
    then = f"(?:{name}|{later})" if later else name
    return rf"(?P<authors>{name}(?:{between}{then})*(?:{et_al})?)"


_TITLELESS = re.compile(
    "^" + _names(_INITIALS_NAME, r",\s*(?:and\s+)?", r",?\s+et\s+al\.", _MONONYM) + r",\s+"
    rf"(?P<venue>[^\d,“”{EMPH_OPEN}{EMPH_CLOSE}]+?)\s*(?P<tail>\d[^()]*?)?\s*\((?P<year>{YEAR})\)\.?$"
)
# A word cut short with a full stop and followed by more of the name: "Surv. Geophys.".
_ABBREVIATED_NAME = re.compile(r"\b[^\W\d_]{2,8}\.(?:\s+[^\W\d_]|$)")
# A journal's name is shorter than this: a venue that may hold commas stops looking for
# the year after it here, not at the end of a long list of names.
VENUE_CHARS = 300
# Chemistry (RSC) styles print no title and put the year first:
# `A. Author and B. Author, Venue, 2012, 35, 1937.` (volume and pages may be left out;
# a work without a venue is cited by names and year alone: `A. Author, 2020.`)
_TITLELESS_RSC = re.compile(
    "^" + _names(_INITIALS_NAME, r"(?:,\s*|,?\s+and\s+)", r",?\s+et\s+al\.?", _MONONYM) + ","
    rf"(?:\s+{EMPH_OPEN}?(?P<venue>[^\d“”{EMPH_OPEN}{EMPH_CLOSE}]{{1,{VENUE_CHARS}}}?"
    rf"(?:,\s*\d{{1,2}})?){EMPH_CLOSE}?,)?\s*(?P<year>{YEAR})"
    r"(?:,\s*(?P<tail>\d[^()]*?))?\.?$"
)
# ACS prints no title and inverts every name, names cut by semicolons:
# `Family, I. J.; Family, K. J. Food Sci. 1986, 51, 1–5.` (an issue may follow the
# volume: `2017, 9(45), 101–114`)
_ACS_NAME = rf"[^\W\d_][\w'’\-]*(?:\s[^\W\d_][\w'’\-]*){{0,2}},\s[{CAP}]\.(?:\s?-?[{CAP}]\.)*"
_TITLELESS_ACS = re.compile(
    "^" + _names(_ACS_NAME, r";\s", r";?\s+et\s+al\.") + r"\s+"
    rf"(?P<venue>[^\d;“”{EMPH_OPEN}{EMPH_CLOSE}]+?)\s+(?P<year>{YEAR}),?\s*"
    r"(?P<tail>(?:[^()]|\(\d+\))*?)\.?$"
)
# Words after an ACS year, where the volume (in digits or Roman numerals: "1943, XI,
# 104–106") belongs: a title ("Smith, J. 2015. A title. Venue (2015).").
_WORDS_AFTER_YEAR = re.compile(r"[\s.,;:]*(?![IVXLCDM]+,)[^\W\d_]")
_PAGES_ALONE = re.compile(r"(?P<pages>\d+\s*[–-]\s*\d+)")
# A journal's abbreviation keeps at most one unabbreviated lower-case word ("Z. fur
# Psychosom. Med."); a title has more.
_LOWER_WORD = re.compile(r"(?:^|\s)[a-z][^\s.]*(?=\s|$)")
# A lone capital before the period is an initial; any other one-letter word (a symbol,
# "ϕ") can end a title.
_LOOSE_SENTENCE_END = re.compile(rf"(?<=\S\S|\s[^\s{CAP}])[.?!]\s+(?=\S)")
_SENTENCE_END = re.compile(rf"(?<=[^\s.{CAP}])[.?!]\s+(?=\S)|(?<=[a-z]{{2}}[A-Z])\.\s+(?=\S)")
_APA_VENUE = re.compile(r"^(?P<venue>[^.,]{2,}(?:\.[^.,\d]+)*?),\s*(?:\d|\(|[A-Z]\d)")
_VANCOUVER_VENUE_END = re.compile(rf"\.\s+(?={YEAR}\b)|\.\s*$|;|,\s*(?:[Vv]ol\b|\d)|\.\s+doi")
# JHEP-style `[\\eprint{1207.7214}]`: the macro is the only sign the number is an arXiv id.
_EPRINT_COMMAND = re.compile(r"\\(?:eprint|arxiv)\s*(?=\{)", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s<>\"{}]+")
_ISBN = re.compile(r"ISBN(?:-1[03])?:?\s*([\dXx][\d\s-]{8,16}[\dXx])")
_LOCATOR = (
    # Physics styles: `Phys. Lett. B 716 (2012) 1`, the bracket holding the year.
    re.compile(
        rf"^[\s,.;]*(?P<volume>\d+)\s*\({YEAR}\)\s*,?\s*"
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
        rf"^[\s,.;]*(?P<volume>\d+)\s*(?:\((?!{YEAR}\))(?P<number>[^)]{{1,12}})\))?\s*[,:]\s*"
        r"(?P<pages>[A-Za-z]?\d+(?:\s*[–-]\s*[A-Za-z]?\d+)?)"
    ),
    re.compile(
        rf"^[\s,.;]*(?P<volume>\d+)\s*(?:\((?!{YEAR}\))(?P<number>[^)]{{1,12}})\))?"
        r"(?=[\s,:;(]|$)"
    ),
)


#: A year not inside a number or after a dot (a DOI's "10.1000/2019").
_YEAR_NOT_NUMBER = re.compile(rf"(?<![\d.])({YEAR})(?![\d])")
#: A year standing alone: not inside a number, a page range or a DOI.
BARE_YEAR = re.compile(rf"(?<![\d.–-])({YEAR})(?![\d–-])")
# A number a locator names ("pp. 2049", "vol. 1999", "no. 2017"): never the year.
_LOCATOR_NUMBER = re.compile(r"\b(?:pp?|vol|no|art|ch)\.\s*\d+", re.IGNORECASE)


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
    marked = decode(text)
    plain = clean(marked)
    parts = read_style(marked)
    reference = Reference(key=key, entry_type="misc", file=file, line=line, free_text=plain)
    reference.title = clean(parts.title) if parts.title else None
    title_pages = _TITLE_PAGES.search(reference.title or "")
    if reference.title and title_pages:
        reference.title = clean(reference.title[: title_pages.start()])
        parts.locator = parts.locator or {"pages": title_pages.group("pages")}
    if reference.title and len(reference.title) < 4:
        reference.title = None
    reference.venue = clean_venue(parts.venue) if parts.venue else None
    if parts.authors:
        reference.authors, reference.authors_truncated = read_authors(parts.authors, parts.style)
    outside_title = plain.replace(reference.title, " ") if reference.title else plain
    reference.year = parts.year or _fallback_year(outside_title)
    locator = parts.locator or read_locator(parts.tail, reference.year)
    reference.volume = locator.get("volume") or None
    reference.number = locator.get("number") or None
    reference.pages = normalize_pages(locator.get("pages")) if locator.get("pages") else None
    _add_identifiers(reference, latex_url(unwrap_href(text, keep_url=True)), outside_title)
    if reference.arxiv_id and reference.venue is None and "arxiv" in plain.lower():
        reference.entry_type = "misc"
    elif reference.venue:
        reference.entry_type = "inproceedings" if _is_proceedings(reference.venue) else "article"
    return reference


def read_style(text: str) -> _Parts:
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
    # Volume and pages follow a titleless venue; words there, or no locator at all ("A.
    # Author, Is it robust? (2021).") mean the "venue" was a title, unless it is written
    # as a journal's abbreviation ("Y. Wen, G. Hug, Electr. Power Syst. Res. (2024)").
    tail = titleless.group("tail") if titleless else None
    venue = titleless.group("venue") if titleless else None
    if (
        titleless
        and (tail or not venue or _is_abbreviation(venue) or _set_as_journal(titleless))
        and not re.search(r"[^\W\d_]{3}", tail or "")
    ):
        return _Parts(
            authors=titleless.group("authors"),
            style="natural",
            venue=titleless.group("venue"),
            year=int(titleless.group("year")),
            tail=titleless.group("tail") or "",
        )
    # ACS sets the journal and volume in italics: the marks only get in the way here.
    # Words after the year are a title, and the "venue" before it was more names.
    acs = _TITLELESS_ACS.match(re.sub(f"[{EMPH_OPEN}{EMPH_CLOSE}]", "", bare))
    if (
        acs
        and _is_abbreviation(acs.group("venue"), whole=True)
        and not _WORDS_AFTER_YEAR.match(acs.group("tail"))
    ):
        return _read_acs(acs)
    marked = read_marked(bare)
    if marked:
        return _from_sentences(marked)
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
    # "Diederik P. Kingma and Jimmy Ba. Title." and "Thomas W. Anthony, Tom Eccles, and
    # Yoram Bachrach. Title." are names in reading order, not "Diederik P." and a title.
    # Only given names and initials can be the head of names in reading order: a
    # list of several ("Zhu M, Chen T, Wang Z.", "Doran JC Horst TW.") or initials
    # without full stops ("Lovich JE.") is Vancouver whatever its title's first words are.
    # "The CMS Collaboration. Title." is a group, not a Mr The with initials C. M. S.
    if (
        vancouver
        and (
            not _READING_ORDER_HEAD.fullmatch(vancouver.group("authors").strip())
            or not _names_go_on(vancouver.group("rest"))
        )
        and not _organisation_leads(text.split(". ", 1)[0])
    ):
        return _read_vancouver(vancouver)
    plain = read_plain(bare)
    return _from_sentences(plain) if plain else _Parts()


def _organisation_leads(head: str) -> bool:
    """The names begin with a group's ("The CMS Collaboration", "Meta AI"); in a list of
    Vancouver names, "Zia AI" is a family name and its initials."""
    names = re.split(r",\s*", head)
    if len(names) == 1:
        return is_organisation_name(head)
    return any(
        is_organisation_name(name) and not _FAMILY_AND_INITIALS.fullmatch(name) for name in names
    )


def _set_as_journal(found: re.Match[str]) -> bool:
    """The words were set in italics, as RSC sets the journal: "\\emph{Sensors}, 2024"."""
    start = found.start("venue")
    italic = start > 0 and found.string[start - 1] == EMPH_OPEN
    return italic and not _LOWER_WORD.search(found.group("venue"))


def _is_abbreviation(venue: str, *, whole: bool = False) -> bool:
    """A journal's name as styles abbreviate it: at most one unabbreviated lower-case
    word, and (unless `whole`, where the style prints only names, venue and year) a
    word cut short before more of the name, or two words at most."""
    if len(_LOWER_WORD.findall(venue)) > 1:
        return False
    # Or a journal's short name, which has no lower-case word: "PNAS Nexus", "Virus res.".
    short = len(venue.split()) <= 2 and not _LOWER_WORD.search(venue)
    return whole or short or _ABBREVIATED_NAME.search(venue) is not None


def _read_acs(match: re.Match[str]) -> _Parts:
    """The names, venue and year of an ACS citation; a last "J." is the journal's."""
    authors, venue = match.group("authors"), match.group("venue")
    # "Huang, E. J. Gen. Virol.": "J." starts "Journal", as in most abbreviations.
    journal = re.search(r"(?<=\.)\s(J\.)$", authors)
    if journal and not ET_AL.search(authors):
        authors, venue = authors[: journal.start()], f"J. {venue}"
    tail = match.group("tail") or ""
    # A page range alone after the year is a chapter's pages in a book ("Crofts, T.; Lee,
    # M. Sexting Young People 2015, 75–90"), not a volume.
    chapter = _PAGES_ALONE.fullmatch(clean(tail))
    return _Parts(
        authors=authors.replace(";", " and"),
        style="family-first",
        venue=venue,
        year=int(match.group("year")),
        tail=tail,
        locator={"pages": chapter.group("pages")} if chapter else {},
    )


def _names_go_on(rest: str) -> bool:
    """The text up to where names end is more names: "Kingma and Jimmy Ba", a list of
    capitalised words cut by commas and "and" ("Anthony, Tom Eccles, and Yoram Bachrach"),
    or a family name closed by "et al." ("Dorner et al."). A title in title case
    ("Turtles, Tortoises and Terrapins: A Natural History") is not: it has a colon, or
    single words where whole names would stand between its commas."""
    end = names_end(rest)
    head = rest[: end.start()] if end else rest
    if ":" in head:
        return False
    words = [w for w in re.findall(r"[^\W\d_][\w'’\-.]*", head) if w not in ("and", "et", "al")]
    # Names hold no lower-case word but a particle: "Sex and Gender Differences in
    # Pharmacology" is a title.
    if re.match(r"[^\W\d_][\w'’\-]*\s+and\s", rest):
        return all(w[0].isupper() or w.lower() in PARTICLES for w in words)
    later_names = [part.split() for part in re.split(r",\s*(?:and\s+)?|\s+and\s+", head)[1:]]
    separated = (head.count(",") >= 2 or (head.count(",") >= 1 and " and " in head)) and all(
        len(name) >= 2 for name in later_names if name
    )
    closed = ET_AL.search(head) is not None and 1 <= len(words) <= 2
    return (closed or (separated and len(words) >= 3)) and all(w[0].isupper() for w in words)


def _from_sentences(found: Sentences) -> _Parts:
    return _Parts(**vars(found))


def _stated_year(text: str) -> int | None:
    """The last year that stands alone after the title: not a page range, a page, a
    volume or an issue ("in NIPS, 2017, pp. 1772–1783" is 2017), nor part of a DOI."""
    text = _LOCATOR_NUMBER.sub(" ", without_identifiers(text))
    years = BARE_YEAR.findall(text)
    return int(years[-1]) if years else None


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
    parts.year = _stated_year(rest)
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
        parts.style = "chicago" if before.endswith(".") and not ET_AL.search(before) else "natural"
        parts.authors = before.rstrip(" ,")
        parts.year = _stated_year(after)
    venue_text = re.sub(r"^[\s,.]*(?:in\s+)?", "", after)
    if venue_text.startswith(EMPH_OPEN):
        end = venue_text.find(EMPH_CLOSE)
        parts.venue = venue_text[1:end] if end > 0 else None
        parts.tail = venue_text[end + 1 :] if end > 0 else after
    elif venue_text and not venue_text.lower().startswith(("http", "doi", "arxiv")):
        venue_end = VENUE_END.search(venue_text)
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
    years = _YEAR_NOT_NUMBER.findall(without_identifiers(tail))
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
        (end for end in _LOOSE_SENTENCE_END.finditer(rest) if LETTER.search(rest[: end.start()])),
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
        rf"(?<![\d.])({YEAR})(?:\s+[A-Z][a-z]{{2}}(?:\s+\d+)?)?\s*[;:.]", parts.tail + "."
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


def read_locator(tail: str, year: int | None) -> dict[str, str]:
    """Volume, number and pages from the text after the venue.

    The citation's `year` alone is not a volume ("…, University of Southampton, 2017.").
    """
    text = clean(without_identifiers(tail)) if tail else ""
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


def without_identifiers(text: str) -> str:
    text = _URL.sub(" ", text)
    return re.sub(r"(?:doi:?\s*)?10\.\d{4,9}/\S+|arXiv:\s*\S+", " ", text, flags=re.IGNORECASE)


def _fallback_year(text: str) -> int | None:
    """The last plausible year outside identifiers and page ranges, preferring "(1995)"."""
    text = without_identifiers(text)
    bracketed = re.findall(rf"\(({YEAR})[a-z]?\)", text)
    if bracketed:
        return int(bracketed[-1])
    years = BARE_YEAR.findall(text)
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
