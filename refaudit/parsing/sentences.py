"""The reference styles BibTeX's common .bst files print, read from their plain text
(a PDF's reference list, where no `\\newblock` or italics mark the parts).

    LNCS (splncs04)      Family, I., Family, I.: Title. In: Venue. pp. 1–9 (2021)
    ACM / author-date    Given Family and Given Family. 2021. Title. In Venue, Vol. 3. 1–9.
    natbib (plainnat)    Given Family and Given Family. Title. In Venue, pages 1–9, 2021.
    APS (apsrev4-2)      I. Family and I. Family, Title, in Venue (2021).
                         I. Family, Title, Journal 12, 345 (2021).

Each reader returns the parts it is sure of; the caller (`freetext.read_style`) tries
them after the styles it recognises by quotes, brackets or italics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from refaudit.parsing.citenames import CAP
from refaudit.parsing.marks import YEAR

# A sentence ends after a word (not after an initial such as "R." or "T.-Y."), or after
# ? and !.
_SENTENCE_END = re.compile(r"(?<=[^\s.]{2})(?<!-[^\W\d_])\.\s+(?=\S)|[?!]\s+(?=\S)")
_INITIAL = rf"[{CAP}][a-z]?\."
_INITIALS = rf"{_INITIAL}(?:-?\s?{_INITIAL})*"
_NAME_SEPARATOR = re.compile(r",\s+(?:and\s+)?|\s+and\s+")
_TWO_LETTER_INITIAL = re.compile(rf"\b[{CAP}]\.\s?[{CAP}][a-z]$")
_NAMES_GO_ON = re.compile(rf"[{CAP}][\w'’\-]*\.?(?:\s[{CAP}][\w'’\-]*\.?)*(?:,\s|\s+and\s)")
_LNCS_NAME = rf"[^\W\d_][^,:]{{0,60}},\s(?:{_INITIALS})"
# Names whose parts a style could not invert ("Chiara Rossi, David Kim, M.L.C.:") still
# end with initials and a colon: every part is capitalised words or initials.
_LNCS_PART = rf"(?:{_INITIALS}|[{CAP}][\w'’\-]+(?:\s[{CAP}][\w'’\-]+){{0,2}})"
_LNCS = re.compile(
    rf"^(?P<authors>{_LNCS_NAME}(?:,\s{_LNCS_NAME})*(?:,?\s+et\s+al\.)?"
    rf"|(?:{_LNCS_PART},\s)+{_INITIALS})"
    rf":\s+(?P<rest>\S.+)$"
)
_AUTHOR_DATE = re.compile(
    rf"^(?P<authors>[^\d]{{3,}}?)\.\s+(?P<year>{YEAR})[a-z]?\.\s+(?P<rest>\S.+)$"
)
_APS_NAME = (
    rf"(?>(?:{_INITIAL}[\s-]?)+\s?)(?:(?:van|von|der|de|den|da|di|le|la|du)\s)*"
    rf"(?:[dl][’'])?[{CAP}][\w'’\-]+(?:\s[{CAP}][\w'’\-]+)?"
)
_APS = re.compile(
    rf"^(?P<authors>{_APS_NAME}(?:(?:,\s|,?\s+and\s){_APS_NAME})*(?:,?\s+et\s+al\.)?),\s+"
    rf"(?!and\s|et\s+al\b|{_APS_NAME}(?:,|\s+and\s|\.\s))(?P<rest>\S.+)$"
)
_APS_JOURNAL = re.compile(
    rf",\s+(?P<venue>[^,]+?)\s+(?P<tail>[A-Z]?\d+[A-Z]?,\s+\S+\s+\((?:[^()]*\s)?{YEAR}\))\.?\s*$"
)
_TITLE_THEN_YEAR = re.compile(
    rf"^(?P<title>[^()]+?)\s*(?P<year>\((?:[^()]*\s)?{YEAR}[a-z]?\))\.?(?:\s|$)"
)
# A report's author list may run to a hundred names of three words.
_MOST_NAME_WORDS = 400
_TITLE_COMMA_YEAR = re.compile(rf"^(?P<title>.+?),\s*(?P<year>{YEAR})[a-z]?\.?$")
_BRACKET_YEAR = re.compile(rf"\((?:[^()]*\s)?(?P<year>{YEAR})[a-z]?\)")
# Where a printed venue ends: at its volume, number, pages, date or year; at a full stop
# after a whole word that ends the text or leads to a publisher, a link or "[Online]"
# (other full stops end abbreviations: "Int. J. Hydrogen Energy", "Proc. CVPR"); at a
# bracket, unless it holds letters alone, part of the name ("Biochimica et Biophysica
# Acta (BBA) - Bioenergetics", "Sensors (Basel)").
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
_PUBLISHER = (
    r"(?:[\w.&' -]{0,40}\b(?:Press|Publish\w*|Springer|Elsevier|Wiley|IEEE|ACM|PMLR|"
    r"OpenReview|Curran|Association|Society|Inc|Ltd|GmbH|Verlag|Technologies|University|"
    r"Institute|Foundation|Academic|Routledge|Taylor|Sage|Oxford|Cambridge)\b|[A-Z]{2,6}\b)"
)
_LOCATOR_OR_LINK = r"(?:(?i:pp?|vol|no)\.|\d|\[Online\]|Available|https?:|doi|URL|arXiv)"
VENUE_END = re.compile(
    rf",\s*(?=(?i:vol\.?\s|volume\s|no\.\s|number\s|pp?\.\s|pages?\s|art\.|ch\.|chapter\s)"
    rf"|\d|{_MONTH}\s|[A-Z][a-z]+\s+\d{{4}}|In:?\s)"
    rf"|(?:(?<=[^\W\d_]{{5}})|(?<=\d{{4}}))\.\s+(?={_PUBLISHER})|\.\s+(?={_LOCATOR_OR_LINK})|\.\s*$|\s\((?![^\W\d_]+\))|\s\d+\s*[,(:]|\s\d+\.?$|;\s|,\s*$"
)
_BARE_YEAR = re.compile(rf"(?<![\d.–/-])({YEAR})[a-z]?(?![\d–-])")
_IDENTIFIER = re.compile(r"https?://\S+|doi:\s*\S+|\b10\.\d{4,9}/\S+|arXiv:\s*\S+", re.I)


@dataclass
class Sentences:
    """What a reader found: the names as printed, how they are written (for
    `citenames.read_authors`), the title, year, venue and the text after the venue."""

    authors: str
    style: str
    title: str | None
    year: int | None
    venue: str | None
    tail: str


def names_end(text: str) -> re.Match[str] | None:
    """Where the names at the head of `text` end: the first sentence end that is not
    inside a name.

    A full stop after a name's only word so far ("Md. Nazrul Islam", a given name
    printed "Caoxian.") or after a two-letter initial ("A. Yu. Zyuzin") ends no
    sentence when more names follow it: capitalised words up to a comma or "and".
    """
    for end in _SENTENCE_END.finditer(text):
        name = _NAME_SEPARATOR.split(text[: end.start()])[-1].strip()
        unfinished = " " not in name or _TWO_LETTER_INITIAL.search(name)
        if not (unfinished and _NAMES_GO_ON.match(text, end.end())):
            return end
    return None


def read_marked(text: str) -> Sentences | None:
    """LNCS (names end with a colon) and author-date (names, then the year alone)."""
    lncs = _LNCS.match(text)
    if lncs:
        title, after = _first_sentence(lncs.group("rest"))
        alone = _TITLE_THEN_YEAR.match(lncs.group("rest"))
        if alone and (title is None or title.endswith(")")):
            # No venue: "Family, I.: Title (2021)", perhaps followed by a link.
            title, after = alone.group("title"), alone.group("year")
        venue, tail = _venue(re.sub(r"^In:\s*", "", after))
        year = _BRACKET_YEAR.search(after)
        return Sentences(
            lncs.group("authors"),
            "family-first",
            title,
            int(year.group("year")) if year else _last_year(after),
            venue,
            tail,
        )
    dated = _AUTHOR_DATE.match(text)
    ends = names_end(text) if dated else None
    if (
        dated
        and not re.search(r"[“”\"]|\.\.", dated.group("authors"))
        and ends is not None
        and ends.start() == dated.end("authors")
    ):
        title, after = _first_sentence(dated.group("rest"))
        venue, tail = _venue(re.sub(r"^In\s+", "", after))
        authors = dated.group("authors")
        return Sentences(authors, _order(authors), title, int(dated.group("year")), venue, tail)
    return None


def read_plain(text: str) -> Sentences | None:
    """APS (names, title and venue cut by commas) and natbib's plain styles (names,
    title and venue cut by full stops, the year last)."""
    aps = _APS.match(text)
    if aps and not _SENTENCE_END.search(aps.group("authors")):
        return _read_aps(aps.group("authors"), aps.group("rest"))
    end = names_end(text)
    if end is None:
        return None
    names, rest = text[: end.start()].strip(), text[end.end() :]
    if not names or not rest or len(names.split()) > _MOST_NAME_WORDS or re.search(r"\d", names):
        return None
    title, after = _first_sentence(rest)
    alone = _TITLE_COMMA_YEAR.match(rest)
    if title is None and alone:
        # No venue: "Given Family. Title, 2023."
        title, after = alone.group("title"), alone.group("year")
    year = _last_year(after)
    if title is None or year is None:
        return None
    venue, tail = _venue(re.sub(r"^In\s+", "", after))
    return Sentences(names, _order(names), title, year, venue, tail)


def _order(names: str) -> str:
    """ "Family, Given, and Given Family" (Chicago inverts the first name) or names as
    spoken ("Given Family and Given Family", "I. Family, I. Family")."""
    return "chicago" if re.match(r"^[^\s,.]+,\s", names) else "natural"


def _read_aps(authors: str, rest: str) -> Sentences:
    year_match = _BRACKET_YEAR.search(rest)
    year = int(year_match.group("year")) if year_match else _last_year(rest)
    inside = re.search(r",\s+in\s+", rest)
    if inside:
        venue, tail = _venue(rest[inside.end() :])
        return Sentences(authors, "natural", rest[: inside.start()], year, venue, tail)
    journal = _APS_JOURNAL.search(rest)
    if journal:
        title = rest[: journal.start()]
        return Sentences(authors, "natural", title, year, journal.group("venue"), journal["tail"])
    # A DOI may stand between the title and the year ("… images 10.48550/arXiv.… (2026)").
    title = _IDENTIFIER.sub(" ", rest[: year_match.start()] if year_match else rest)
    return Sentences(authors, "natural", title.rstrip(" ,."), year, None, "")


def _first_sentence(text: str) -> tuple[str | None, str]:
    """The text up to its first sentence end (kept when it is ? or !), and the rest.

    A title is more than an abbreviation: "Chr. van Everbroeck, August Borms. …" does
    not end after "Chr.".
    """
    found = next((end for end in _SENTENCE_END.finditer(text) if end.start() >= 4), None)
    if found is None:
        return None, text
    end = found.start() + (1 if text[found.start()] in "?!" else 0)
    return text[:end].strip(), text[found.end() :]


def _venue(text: str) -> tuple[str | None, str]:
    """The venue at the start of `text` (up to its volume, pages, year or a full stop)."""
    text = _IDENTIFIER.sub(" ", text).strip()
    end = VENUE_END.search(text)
    venue = (text[: end.start()] if end else text).strip(" .,")
    if not re.search(r"[^\W\d_]{2}", venue):
        return None, text
    return venue, text[end.start() :] if end else ""


def _last_year(text: str) -> int | None:
    years = _BARE_YEAR.findall(_IDENTIFIER.sub(" ", text))
    return int(years[-1]) if years else None
