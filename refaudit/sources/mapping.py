"""Small pure helpers the `to_work` functions share.

Upstream JSON is messy in the same ways everywhere: a title is a string in
one record and a list in the next, values are null, names come whole
("Vaswani, Ashish") or split, titles carry JATS/HTML/MathML tags. These
helpers turn such values into plain Python without guessing.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from refaudit.models import Person

T = TypeVar("T")

_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
# After unescaping only well-known markup counts as a tag, so "x &lt; y and z &gt; w" survives.
_ESCAPED_TAG = re.compile(
    r"</?(?:jats:|mml:)?(?:title|i|b|em|strong|sup|sub|sc|scp|p|span|u|tt|br|italic|bold"
    r"|inline-formula|math|mi|mn|mo|mrow|msub|msup|mfrac|mtext)(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
_SPACE = re.compile(r"\s+")
_ORCID = re.compile(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])", re.IGNORECASE)
_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "le", "la"}
)


def first_text(value: Any) -> str | None:
    """The first non-empty string in `value` (a string, a list of strings, or null)."""
    if isinstance(value, str):
        text = value.strip()
        return text or None
    if isinstance(value, (list, tuple)):
        for item in value:
            text = first_text(item)
            if text:
                return text
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def strip_markup(text: str | None) -> str | None:
    """Plain text of a title that may carry JATS, HTML or MathML tags and entities."""
    if not text:
        return None
    # Tags come raw or entity-escaped ("&lt;title&gt;…"), so strip, unescape, strip again.
    plain = _ESCAPED_TAG.sub(" ", html.unescape(_TAG.sub(" ", text)))
    plain = _SPACE.sub(" ", plain).strip()
    # Removing inline tags leaves a space before punctuation: "x <i>y</i>." → "x y ."
    plain = re.sub(r"\s+([,.;:!?)\]])", r"\1", plain)
    plain = re.sub(r"([(\[])\s+", r"\1", plain)
    return plain or None


def as_int(value: Any) -> int | None:
    """An int from an int or a numeric string; None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def iso_date(year: int | None, month: int | None = None, day: int | None = None) -> str | None:
    """`YYYY`, `YYYY-MM` or `YYYY-MM-DD`, keeping only the parts that are known."""
    if not year:
        return None
    if not month or not 1 <= month <= 12:
        return f"{year:04d}"
    if not day or not 1 <= day <= 31:
        return f"{year:04d}-{month:02d}"
    return f"{year:04d}-{month:02d}-{day:02d}"


def normalize_orcid(value: Any) -> str | None:
    """`https://orcid.org/0000-0002-1825-0097` → `0000-0002-1825-0097`."""
    match = _ORCID.search(value) if isinstance(value, str) else None
    return match.group(1).upper() if match else None


def person_from_name(name: str) -> Person:
    """Split a whole personal name: "Family, Given" or "Given [particle] Family"."""
    name = _SPACE.sub(" ", name).strip()
    if "," in name:
        family, given = (part.strip() for part in name.split(",", 1))
        return _with_particle(family, given)
    parts = name.split(" ")
    if len(parts) == 1:
        return Person(family=name)
    start = len(parts) - 1
    while start > 1 and parts[start - 1].lower() in _PARTICLES:
        start -= 1
    return Person(
        family=parts[-1],
        given=" ".join(parts[:start]),
        particle=" ".join(parts[start:-1]),
    )


def _with_particle(family: str, given: str) -> Person:
    words = family.split(" ")
    particles = []
    while len(words) > 1 and words[0].lower() in _PARTICLES:
        particles.append(words.pop(0))
    return Person(family=" ".join(words), given=given, particle=" ".join(particles))


def chunked(items: Sequence[T], size: int) -> Iterator[list[T]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def unique(items: Sequence[str | None]) -> list[str]:
    """Drop empties and repeats, keep order."""
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return list(seen)


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


def display_name_to_person(name: str, *, medline_order: bool = False) -> Person:
    """A display name → Person; organisations ("… Collaboration") keep their whole name.

    `medline_order` reads "Wakefield AJ" as family name then initials. Only PubMed
    writes names that way; elsewhere "Koushik MV" is a given name and a family name.
    """
    text = " ".join(name.split()).strip(" ,")
    if any(word.lower() in ORGANISATION_WORDS for word in text.split()):
        return Person(family=text, is_organisation=True)
    words = text.split()
    if (
        medline_order
        and len(words) >= 2
        and _INITIALS.fullmatch(words[-1])
        and not _INITIALS.fullmatch(words[0])
    ):
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
