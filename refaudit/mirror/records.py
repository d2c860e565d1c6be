"""One bulk-file line → one row a mirror stores.

A mirror keeps each upstream's own record (the Crossref `/works` message, the
OpenAlex Work, the Semantic Scholar paper), trimmed to the fields refaudit reads,
so the `to_work` of the live source reads it exactly as it reads an API answer.
Alongside the record it keeps the keys lookups and searches need: DOI, arXiv id,
PMID, year and the normalised title, authors and abstract.
"""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

from refaudit import match
from refaudit.errors import UnexpectedResponse
from refaudit.models import Work
from refaudit.sources import load, registry

#: The sources whose bulk files a mirror holds, one table each (registry `mirrored`).
UPSTREAMS: tuple[str, ...] = tuple(e.name for e in registry.SOURCES if e.mirrored)


@functools.cache
def _reader(upstream: str) -> tuple[frozenset[str], Callable[[dict[str, Any]], Work]]:
    """The fields the upstream's `to_work` reads (its SELECT_FIELDS), and `to_work`."""
    _, module = load(upstream)
    return frozenset(module.SELECT_FIELDS), module.to_work


@functools.cache
def _bulk_shape(upstream: str) -> Callable[[Any], Any]:
    """The upstream's `from_bulk` (its bulk layout → its API's), or none needed."""
    _, module = load(upstream)
    return getattr(module, "from_bulk", lambda item: item)


class MalformedRecord(ValueError):
    """A bulk-file line that is not a record of its upstream."""


@dataclass(frozen=True)
class MirrorRecord:
    """One upstream record with its lookup and search keys."""

    upstream: str
    key: str
    doi: str | None
    arxiv_id: str | None
    pmid: str | None
    year: int | None
    title: str
    authors: str
    abstract: str
    body: bytes
    updated: str | None

    @classmethod
    def from_json(cls, upstream: str, item: Any) -> MirrorRecord:
        """Read one decoded bulk line; MalformedRecord when it is not a usable record."""
        if not isinstance(item, dict):
            raise MalformedRecord("not a JSON object")
        fields, to_work = _reader(upstream)
        kept = {name: value for name, value in item.items() if name in fields}
        try:
            work = to_work(kept)
        except UnexpectedResponse as exc:
            raise MalformedRecord(exc.reason) from exc
        key = work.openalex_id or work.s2_id or work.doi
        return cls(
            upstream=upstream,
            key=key or "",
            doi=work.doi,
            arxiv_id=work.arxiv_id,
            pmid=work.pmid,
            year=work.year,
            title=match.normalize_text(" ".join(filter(None, (work.title, work.subtitle)))),
            authors=match.normalize_text(" ".join(p.full_family for p in work.authors[:20])),
            abstract=match.normalize_text(work.abstract or "")[:_ABSTRACT_CHARS],
            body=encode_body(kept),
            updated=_updated(item),
        )

    @classmethod
    def from_bulk(cls, upstream: str, item: Any) -> MirrorRecord:
        """Read one decoded line of the upstream's bulk file (its own layout)."""
        return cls.from_json(upstream, _bulk_shape(upstream)(item))

    def row(self) -> tuple[Any, ...]:
        """The record as its upstream's table row: the values of `COLUMNS`, in order."""
        return _ROW(self)


#: A mirror table's columns, the same in both backends: every field of a record but its
#: upstream, which names the table.
COLUMNS: tuple[str, ...] = tuple(field.name for field in fields(MirrorRecord))[1:]
_ROW = attrgetter(*COLUMNS)


#: Abstracts beyond this length add index size without helping a title search.
_ABSTRACT_CHARS = 2000


def encode_body(record: dict[str, Any]) -> bytes:
    """Compact JSON, compressed: most of a mirror's size is these bodies."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return zlib.compress(text.encode("utf-8"), 1)


def decode_work(upstream: str, body: bytes) -> Work:
    """The stored record as the live source's `to_work` reads it."""
    return _reader(upstream)[1](json.loads(zlib.decompress(body)))


def _updated(item: dict[str, Any]) -> str | None:
    """When the upstream last changed the record (OpenAlex `updated_date`, Crossref `indexed`)."""
    indexed = item.get("indexed")
    value = item.get("updated_date") or (
        indexed.get("date-time") if isinstance(indexed, dict) else None
    )
    return value[:10] if isinstance(value, str) else None
