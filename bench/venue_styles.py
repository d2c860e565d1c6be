"""Venues written the way each field writes them, and a rough field for each work.

The sampling benches cite a work's journal or conference in one of the forms
real reference lists use: the full name, its ISO 4 abbreviation (with or
without dots, as NLM prints it), an acronym, the publisher's short name, or
the abbreviation cut after a series letter ("J. Phys. A"). The ISO 4 forms come
from pyiso4 (the LTWA); acronyms come from the name itself, as an author would
form them, unless the record already states one.
"""

from __future__ import annotations

import functools
import random
import re

STYLES = ("full", "iso4", "iso4-nodots", "acronym", "short", "series")

# Keyword rules on the venue and title: good enough to report per field, not a taxonomy.
_FIELDS = (
    (
        "medicine",
        r"medic|clinic|health|lancet|cancer|surg|nurs|patient|disease|pharma|radiol|"
        r"cardio|neuro|psychiat|ophthalm|dermat|pediatr|therap|oncol|hospital",
    ),
    ("biology", r"biolog|cell|gene|genom|molec|protein|bioinf|ecolog|zoolog|botan|microb"),
    ("chemistry", r"chem|tetrahedron|crystal|spectros"),
    ("physics", r"physic|phys\b|optic|astro|quantum|nuclear|plasma|instrument"),
    ("mathematics", r"math|statist|algebra|geometr|probab|bayesian|analysis\b"),
    (
        "computing",
        r"comput|machine learning|neural|software|data|learning|inform|vision|"
        r"language|robot|intelligen|network|ieee|acm|web\b|algorithm",
    ),
    ("engineering", r"engineer|material|mechan|electr|energy|manufactur|sensor|circuit"),
    (
        "social sciences",
        r"econom|financ|manag|business|sociol|social|polit|histor|philos|law\b|"
        r"educat|linguist|psycholog|geograph|agricult|ekonom",
    ),
)
_ORDINAL = re.compile(
    r"^(?:\d+(?:st|nd|rd|th)?|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|"
    r"tenth|'\d\d)$",
    re.IGNORECASE,
)
_SKIPPED = frozenset(
    "a an the of on in and for at to proceedings proc annual international conference "
    "symposium workshop".split()
)
_PARENTHESISED_ACRONYM = re.compile(r"\(([A-Z][A-Za-z0-9\-]{1,11})(?:\s*'?\d{2,4})?\)\s*$")
_ACRONYM_LIKE = re.compile(r"^[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9\-]*$")
_SERIES_END = re.compile(r"\s(?:[A-Z]|[IVX]{1,4}|\d{1,2})$")


def field_of(work: dict) -> str:
    text = f"{work.get('venue') or ''} {work.get('title') or ''}".lower()
    return next((name for name, pattern in _FIELDS if re.search(pattern, text)), "other")


@functools.cache
def _abbreviator() -> object:
    from pyiso4.ltwa import Abbreviate

    return Abbreviate.create()


def iso4(name: str) -> str:
    """The ISO 4 form; a closing series letter is kept (the LTWA drops "E" as a word)."""
    series = _SERIES_END.search(name)
    body = name[: series.start()] if series else name
    try:
        abbreviated = _abbreviator()(body, remove_part=True)  # type: ignore[operator]
    except IndexError:  # pyiso4 trips over some Unicode; such a title is cited in full
        return name
    return abbreviated + (series.group(0) if series else "")


def acronym(work: dict) -> str | None:
    """The acronym a citation would use: the record's, or the name's initials."""
    name = work.get("venue") or ""
    stated = _PARENTHESISED_ACRONYM.search(name)
    if stated:
        return stated.group(1)
    short = work.get("venue_short") or ""
    if _ACRONYM_LIKE.match(short.replace("-", "")) and len(short) <= 12:
        return short
    if work["type"] != "proceedings-article":
        return None
    words = [w for w in re.split(r"[\s,:/\-–]+", name) if w]
    letters = "".join(
        w if w.isupper() and len(w) <= 5 else w[0].upper()
        for w in words
        if w.lower() not in _SKIPPED and not _ORDINAL.match(w) and w[0].isalpha()
    )
    return letters if 2 <= len(letters) <= 8 else None


def series_form(name: str) -> str | None:
    """ "J. Phys. A" for "Journal of Physics A: Mathematical and Theoretical"."""
    head = name.split(":", 1)[0].strip()
    section = re.search(r"^(.*\b(?:Section|Series|Part)\s+[A-Z])\b", head)
    if section:
        return iso4(section.group(1))
    if not _SERIES_END.search(head):
        return None
    return iso4(head)


def venue_form(work: dict, style: str, rng: random.Random) -> str | None:
    """The work's venue written in `style`, or None when the style does not apply."""
    name = work.get("venue")
    if not name:
        return None
    if style == "full":
        return name.removeprefix("The ") if rng.random() < 0.3 else name
    if style == "iso4":
        return iso4(name)
    if style == "iso4-nodots":
        return iso4(name).replace(".", "")
    if style == "acronym":
        short = acronym(work)
        if not short:
            return None
        year = work.get("year")
        return rng.choice([short, f"Proc. {short}", f"{short} {year}", f"Proceedings of {short}"])
    if style == "short":
        return work.get("venue_short")
    return series_form(name)


def pick_venue(work: dict, rng: random.Random) -> tuple[str, str | None]:
    """A style that applies to the work, and its venue in that style."""
    styles = list(STYLES)
    rng.shuffle(styles)
    for style in styles:
        form = venue_form(work, style, rng)
        if form and form.strip():
            return style, form
    return "full", work.get("venue")
