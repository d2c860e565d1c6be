"""Small pure helpers the `to_work` functions share.

Upstream JSON is messy in the same ways everywhere: a title is a string in
one record and a list in the next, values are null, names come whole
("Vaswani, Ashish") or split, titles carry JATS/HTML/MathML tags. These
helpers turn such values into plain Python without guessing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from refaudit.errors import NothingToAsk
from refaudit.models import Work
from refaudit.text import strip_markup

T = TypeVar("T")

_SPACE = re.compile(r"\s+")
_ORCID = re.compile(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])", re.IGNORECASE)


def first_text(value: Any) -> str | None:
    """The first non-empty string in `value` (a string, a list of strings, or null)."""
    if isinstance(value, str):
        text = value.strip()
        return text or None
    if isinstance(value, (list, tuple)):
        for item in value:
            found = first_text(item)
            if found:
                return found
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if the upstream sent an object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_dicts(value: Any) -> list[dict[str, Any]]:
    """The objects of a list the upstream sent (anything else in it, or no list: left out)."""
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


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


def registered_work(
    source: str,
    doi: str,
    *,
    landing: str | None,
    raw_title: str | None,
    subtitle: str | None,
    **fields: Any,
) -> Work:
    """A DOI registration agency's record (Crossref, DataCite) as a Work: known by its DOI,
    seen at the landing page it registered or else through the DOI's resolver, its title
    kept as registered and, like its subtitle, without markup."""
    return Work(
        source=source,
        source_id=doi,
        doi=doi,
        url=landing or f"https://doi.org/{doi}",
        title=strip_markup(raw_title),
        raw_title=raw_title,
        subtitle=strip_markup(subtitle),
        **fields,
    )


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
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")
STOPWORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "by", "for", "from", "in", "is", "of", "on", "or", "the"}
    | {"to", "with"}
)


def query_words(text: str | None, *, drop_stopwords: bool = False) -> list[str]:
    """Lower-case words of a title for a search query, punctuation and hyphens dropped."""
    words = [word.lower() for word in _WORD.findall(strip_markup(text) or "")]
    return [w for w in words if w not in STOPWORDS] if drop_stopwords else words


def cited_title_words(source: str, title: str | None) -> list[str]:
    """The words of the cited title, for a source searched by title words alone.

    Raises:
        NothingToAsk: the citation has no title words, so the source cannot be asked.
    """
    words = query_words(title)
    if not words:
        raise NothingToAsk(source, "searched by title words; the citation has none")
    return words


def rarest_title_words(title: str | None, most: int) -> list[str]:
    """A title's distinct content words, longest (as a rule rarest) first, at most `most`: the
    OR query a keyed index is given when the title as a phrase finds nothing (a misspelt or
    changed word). Empty when there are fewer than three: their OR would find anything."""
    distinct = list(dict.fromkeys(query_words(title, drop_stopwords=True)))
    if len(distinct) < 3:
        return []
    return sorted(distinct, key=len, reverse=True)[:most]


def year_from(value: object) -> int | None:
    """The first plausible four-digit year in `value` ("2017", "1998 Feb 28", 2017)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1500 <= value <= 2099 else None
    match = _YEAR.search(str(value or ""))
    return int(match.group(1)) if match else None
