"""The shape every upstream source implements.

A source module knows one API: how to ask it (paths, parameters, batching) and
how to read its answers (`to_work`). It never retries, sleeps, caches or
translates httpx errors: the `SourceClient` it is given does all of that.
Lookups return a dict keyed by the canonical identifier asked for; an
identifier missing from the dict is one the source does not know.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from refaudit.identifiers import normalize_doi
from refaudit.models import Reference, Work
from refaudit.sources import registry

if TYPE_CHECKING:
    from refaudit.config import Settings
    from refaudit.sources.client import SourceClient

T = TypeVar("T")


@dataclass
class SearchQuery:
    """What a bibliographic search may use; each source builds its own query from it."""

    title: str | None = None
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    free_text: str | None = None
    year_from: int | None = None
    year_to: int | None = None
    limit: int = 5
    #: A research topic rather than one work's record: search titles and abstracts and
    #: return hits with their abstracts. Engines that AND their words (OpenAlex) get
    #: these key terms; ranked engines get `free_text`.
    topic_terms: list[str] = field(default_factory=list)

    def text(self) -> str:
        """A plain-text form of the query for engines that take one string."""
        if self.free_text:
            return self.free_text
        parts = [self.title or "", " ".join(self.authors[:3])]
        if self.year:
            parts.append(str(self.year))
        return " ".join(part for part in parts if part).strip()


class Source:
    """Base class: capabilities a source does not override answer with nothing."""

    name: str = ""
    #: DOIs one request answers: a budgeted run asks batch by batch, so a quota spent
    #: halfway costs only the batches not yet answered (None: the source's own batching)
    doi_batch_size: int | None = None
    #: identifiers one resolving look-up request answers (None: all of them in one)
    id_batch_size: int | None = None
    #: title searches made close together share a request (`coalesce`): a search
    #: costs a fraction of one
    batches_searches: bool = False

    def __init__(self, client: SourceClient, settings: Settings) -> None:
        """Every registry source is built so; one that reads settings (keys, a contact
        address) extends this."""
        self.client = client

    @property
    def capabilities(self) -> frozenset[str]:
        """What the registry says this source can do ("doi", "arxiv", "search", …)."""
        return registry.entry(self.name).capabilities

    def decides(self, reference: Reference) -> bool:
        """Whether a budgeted source is worth asking about a reference the others left open."""
        return True

    def id_batches(self, keys: list[str]) -> list[list[str]]:
        """The requests a look-up of `keys` makes, each as the keys it answers.

        Evidence gathering asks request by request, so a reference goes on to its
        search as soon as the request holding its identifier answers, not when the
        slowest request of the look-up does.
        """
        size = self.id_batch_size or len(keys) or 1
        return [keys[start : start + size] for start in range(0, len(keys), size)]

    async def lookup_dois(self, dois: list[str]) -> dict[str, Work]:
        """Canonical lower-case DOI → work, batched as the API allows."""
        return {}

    async def lookup_doi(self, doi: str, *, at_once: bool = False) -> Work | None:
        """One DOI's record. A source that batches sends it with the others asked about
        meanwhile, or (`at_once`) with those asked about at this very moment."""
        canonical = normalize_doi(doi)
        return (await self.lookup_dois([canonical])).get(canonical) if canonical else None

    def ride_doi(self, doi: str) -> Awaitable[dict[str, Work]] | None:
        """The records of the next look-up sent with room for `doi`, or None where no
        look-up can carry it: a DOI worth asking about, but not a request of its own
        until `release_rides`."""
        return None

    def release_rides(self) -> None:
        """Send now the DOIs riding (`ride_doi`) that no look-up has carried yet."""

    async def lookup_arxiv(self, arxiv_ids: list[str]) -> dict[str, Work]:
        """arXiv id without version → work."""
        return {}

    async def lookup_pmids(self, pmids: list[str]) -> dict[str, Work]:
        return {}

    async def lookup_ids(self, ids: list[str]) -> dict[str, Work]:
        """Source-native ids (S2 paperId, OpenAlex W-id) → work."""
        return {}

    async def search(self, query: SearchQuery) -> list[Work]:
        """Bibliographic search, best first, at most `query.limit` works."""
        return []

    def describe_search(self, query: SearchQuery) -> str:
        """The query text `search` sends for `query`, as shown to users."""
        return query.text()


async def all_at_once(calls: Iterable[Awaitable[T]]) -> list[T]:
    """Await every call concurrently; the first failure cancels the calls still waiting.

    A source's batches of one look-up are independent requests: sent one after the
    other, each waits for the round trip of the one before, and a pool that may have
    several requests in flight (Crossref's list pool: three) sits mostly idle. The
    client's pool still paces them and keeps them in the order they were made.
    """
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        return await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        # Let the cancelled calls give their pool slots back before the caller goes on.
        await asyncio.gather(*tasks, return_exceptions=True)
