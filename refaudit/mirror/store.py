"""The interface every mirror backend implements, and what a location says.

A location that starts with `postgresql://` (or `postgres://`) is a PostgreSQL
database; anything else is the path of a SQLite file. Both hold the same
tables: one per upstream (the trimmed record plus its lookup and search keys),
the Retraction Watch rows, and a small key/value table of facts about the
mirror (when it was built and updated, how far each upstream has been read).
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from refaudit.mirror.records import UPSTREAMS, MirrorRecord

if TYPE_CHECKING:
    from refaudit.models import RetractionRecord
    from refaudit.retractions.csvload import LoadReport
    from refaudit.retractions.store import SnapshotStatus

SearchMode = Literal["all", "any", "similar"]
#: Lookup fields every backend indexes.
LOOKUP_FIELDS = ("key", "doi", "arxiv_id", "pmid")
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
#: what `MirrorInfo.records` calls the Retraction Watch rows
RETRACTION_WATCH = "retraction_watch"


@dataclass
class Candidate:
    """A search hit before re-ranking: the normalised title and the stored record."""

    title: str
    body: bytes


@dataclass(frozen=True)
class CandidateSearch:
    """What `MirrorStore.candidates` looks for, by `mode`.

    "all": every word is in the title (cheap, and enough for a correctly cited
    title); "any": titles or abstracts sharing words, or `authors` by family
    name; "similar": titles like `text` despite misspelt words.
    """

    words: Sequence[str]
    mode: SearchMode = "any"
    authors: Sequence[str] = ()
    text: str = ""
    year_from: int | None = None
    year_to: int | None = None
    limit: int = 50

    def year_bounds(self, column: str, mark: str) -> tuple[list[str], list[int]]:
        """The year range as SQL conditions on `column` with `mark` for the bound, and the
        bounds' values (none for an open end)."""
        bounds = [(f"{column} >= {mark}", self.year_from), (f"{column} <= {mark}", self.year_to)]
        kept = [(condition, year) for condition, year in bounds if year]
        return [condition for condition, _ in kept], [year for _, year in kept]


#: The mirror's backends, as reports name them.
Backend = Literal["sqlite", "postgresql"]


@dataclass
class MirrorInfo:
    """What `refaudit mirror status` prints and reports cite."""

    location: str
    """the database file or PostgreSQL URL (`display_location` hides its password)"""
    backend: Backend
    built_at: str | None = None
    """when `mirror build` finished (ISO 8601 UTC); null for a mirror never built"""
    updated_at: str | None = None
    """when `mirror update` last finished; null until it has run once"""
    records: dict[str, int] = field(default_factory=dict)
    """records held per upstream export and the Retraction Watch snapshot"""
    newest: dict[str, str | None] = field(default_factory=dict)
    """per upstream, the newest record's date: how far the mirror reaches"""
    size_bytes: int | None = None
    meta: dict[str, str] = field(default_factory=dict)
    """every fact in the `mirror_meta` table, as stored"""

    @classmethod
    def from_meta(
        cls, location: str, backend: Backend, meta: dict[str, str], size_bytes: int | None
    ) -> MirrorInfo:
        """Read the facts every backend keeps in its `mirror_meta` table."""
        parts = (*UPSTREAMS, RETRACTION_WATCH)
        return cls(
            location=location,
            backend=backend,
            built_at=meta.get("built_at"),
            updated_at=meta.get("updated_at"),
            records={name: int(meta.get(f"records_{name}") or 0) for name in parts},
            newest={name: meta.get(f"newest_{name}") or None for name in parts},
            size_bytes=size_bytes,
            meta=dict(meta),
        )

    def age_days(self, now: datetime | None = None) -> float | None:
        """Days since the mirror last took in new data (build or update)."""
        stamp = self.updated_at or self.built_at
        if not stamp:
            return None
        elapsed = (now or datetime.now(UTC)) - datetime.fromisoformat(stamp)
        return round(max(0.0, elapsed.total_seconds() / 86400), 2)


class RetractionRows(abc.ABC):
    """The Retraction Watch rows a mirror holds, queried as screening asks a snapshot."""

    @abc.abstractmethod
    def lookup_doi(self, doi: str) -> list[RetractionRecord]: ...

    @abc.abstractmethod
    def lookup_pmid(self, pmid: str) -> list[RetractionRecord]: ...

    @abc.abstractmethod
    def lookup_title(self, title: str, year: int | None = None) -> list[RetractionRecord]: ...

    @abc.abstractmethod
    def status(self) -> SnapshotStatus: ...

    @property
    @abc.abstractmethod
    def age_days(self) -> float: ...

    @abc.abstractmethod
    def close(self) -> None: ...


class MirrorStore(abc.ABC):
    """Read access to a built mirror, plus the in-place upserts `mirror update` needs.

    The public methods answer what needs no query (an upstream the mirror has no table
    for, nothing asked); a backend implements the queries, the `_` methods.
    """

    location: str
    #: the upstreams this mirror has a table for (one built before an upstream was added
    #: to the mirror has none for it: that upstream holds nothing here)
    _held: set[str]
    #: the mirror's `mirror_meta` rows: build and update times, record counts
    _meta: dict[str, str]

    @abc.abstractmethod
    def info(self) -> MirrorInfo: ...

    def lookup(self, upstream: str, field: str, values: Sequence[str]) -> list[bytes]:
        """Stored bodies whose `field` (one of LOOKUP_FIELDS) is among `values`."""
        if upstream not in self._held or field not in LOOKUP_FIELDS or not values:
            return []
        return self._lookup(upstream, field, values)

    def candidates(self, upstream: str, search: CandidateSearch) -> list[Candidate]:
        """Candidate records, best first, for `search`."""
        if upstream not in self._held or not search.words:
            return []
        return self._candidates(upstream, search)

    def unknown_title_words(self, upstream: str, words: Sequence[str]) -> list[str]:
        """The `words` found in no title of `upstream`: a misspelt word is among them."""
        if upstream not in self._held or not words:
            return []
        return self._unknown_title_words(upstream, words)

    def retractions(self) -> RetractionRows | None:
        """The Retraction Watch rows, or None when the mirror was built without them."""
        if not int(self._meta.get("records_retraction_watch") or 0):
            return None
        return self._retraction_rows()

    def set_meta(self, values: dict[str, str]) -> None:
        self._write_meta(values)
        self._meta.update(values)

    @abc.abstractmethod
    def upsert(self, records: Iterable[MirrorRecord]) -> int:
        """Insert or replace records by (upstream, key); returns how many were written."""

    @abc.abstractmethod
    def replace_retractions(self, snapshot: Path) -> int:
        """Swap in the rows of a Retraction Watch snapshot file in one transaction."""

    @abc.abstractmethod
    def close(self) -> None: ...

    @abc.abstractmethod
    def _lookup(self, upstream: str, field: str, values: Sequence[str]) -> list[bytes]: ...

    @abc.abstractmethod
    def _candidates(self, upstream: str, search: CandidateSearch) -> list[Candidate]: ...

    @abc.abstractmethod
    def _unknown_title_words(self, upstream: str, words: Sequence[str]) -> list[str]: ...

    @abc.abstractmethod
    def _retraction_rows(self) -> RetractionRows: ...

    @abc.abstractmethod
    def _write_meta(self, values: dict[str, str]) -> None: ...


class MirrorBuilder(abc.ABC):
    """Writes a new mirror beside the current one; `publish` swaps it in, atomically."""

    #: what earlier builds that were killed left behind and what was done about it
    interrupted: list[str] = []

    @abc.abstractmethod
    def add(self, records: Iterable[MirrorRecord]) -> int: ...

    @abc.abstractmethod
    def add_retractions(self, csv_path: Path, *, source_url: str) -> LoadReport: ...

    @abc.abstractmethod
    def finish(self, meta: dict[str, str], on_step: Any = None) -> dict[str, int]:
        """Deduplicate, index, record `meta`; returns records per upstream, not visible yet."""

    @abc.abstractmethod
    def publish(self) -> None:
        """Make the finished mirror the current one (readers of the old one are unaffected)."""

    @abc.abstractmethod
    def discard(self) -> None:
        """Remove everything written so far; the current mirror stays as it was."""


def is_postgres(location: str) -> bool:
    return location.startswith(POSTGRES_SCHEMES)


def display_location(location: str) -> str:
    """A location fit to print: a PostgreSQL URL without its password."""
    if not is_postgres(location):
        return location
    parts = urlsplit(location)
    if parts.password is None:
        return location
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
