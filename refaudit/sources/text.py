"""Helpers for sources that get authors as one display string and take free-text queries.

Semantic Scholar, arXiv and dblp name authors by one string ("Peter H. N. de
With", "Open Science Collaboration", "John Smith Jr."), and arXiv, PubMed and
dblp want queries built from a title's words. These complement
`refaudit.sources.mapping`, which holds the helpers every `to_work` shares.
"""

from __future__ import annotations

import re

from refaudit.models import Person
from refaudit.sources.mapping import person_from_name, strip_markup

_WORD = re.compile(r"[^\W_]+")
_INITIALS = re.compile(r"[A-Z]{1,3}|[A-Z]-[A-Z]")
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")
SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
ORGANISATION_WORDS = frozenset(
    {
        "agency",
        "association",
        "board",
        "collaboration",
        "committee",
        "consortium",
        "council",
        "foundation",
        "group",
        "initiative",
        "institute",
        "investigators",
        "network",
        "organisation",
        "organization",
        "project",
        "society",
        "team",
    }
)
STOPWORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "by", "for", "from", "in", "is", "of", "on", "or", "the"}
    | {"to", "with"}
)


def display_name_to_person(name: str) -> Person:
    """A display name → Person; organisations ("… Collaboration") keep their whole name."""
    text = " ".join(name.split()).strip(" ,")
    if any(word.lower() in ORGANISATION_WORDS for word in text.split()):
        return Person(family=text, is_organisation=True)
    words = text.split()
    if len(words) >= 2 and _INITIALS.fullmatch(words[-1]) and not _INITIALS.fullmatch(words[0]):
        # MEDLINE order, "Wakefield AJ": family name first, initials last.
        person = person_from_name("X " + " ".join(words[:-1]))
        person.given = spaced_initials(words[-1])
        return person
    if len(words) > 2 and words[-1].lower() in SUFFIXES:
        person = person_from_name(" ".join(words[:-1]))
        person.suffix = words[-1]
        return person
    return person_from_name(text)


def spaced_initials(letters: str) -> str:
    """ "AJ" → "A. J."; "J-P" → "J.-P." """
    return " ".join(
        "-".join(f"{part}." for part in chunk.split("-"))
        for chunk in re.findall(r"[A-Z](?:-[A-Z])?", letters)
    )


def query_words(text: str | None, *, drop_stopwords: bool = False) -> list[str]:
    """Lower-case words of a title for a search query, punctuation and hyphens dropped."""
    words = [word.lower() for word in _WORD.findall(strip_markup(text) or "")]
    return [w for w in words if w not in STOPWORDS] if drop_stopwords else words


def year_from(value: object) -> int | None:
    """The first plausible four-digit year in `value` ("2017", "1998 Feb 28", 2017)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1500 <= value <= 2099 else None
    match = _YEAR.search(str(value or ""))
    return int(match.group(1)) if match else None
