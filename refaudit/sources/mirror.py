"""The local mirror as a source: Crossref, OpenAlex and Semantic Scholar records offline.

A mirror (`refaudit mirror build`) holds each upstream's own records, so the
evidence pipeline reads them exactly as it reads the live answers: a Crossref
record from the mirror is a `Work` with `source="crossref"`, parsed by
`crossref.to_work`. The mirror answers every question the pipeline asks:

- DOIs → the Crossref and OpenAlex records (arXiv's DataCite DOIs are in OpenAlex);
- arXiv ids, PMIDs, OpenAlex ids → OpenAlex records;
- bibliographic search → FTS5 / PostgreSQL full-text candidates re-ranked by title,
  with a typo-tolerant pass (word prefixes, trigrams) when no title is close;
- integrity: Crossref `updated-by` / `update-to`, OpenAlex `is_retracted`, and the
  Retraction Watch rows (`MirrorStore.retractions`).

`MirrorSource.as_sources` routes the pipeline's questions to per-upstream views
under the names it asks by; `refaudit.mirror.evidence` decides what still goes
to the live APIs.
"""

from __future__ import annotations

from collections.abc import Sequence

from refaudit.identifiers import normalize_doi
from refaudit.mirror.records import UPSTREAMS, decode_work
from refaudit.mirror.search import (
    CANDIDATES,
    CLOSE_TITLE,
    best_candidates,
    likeness,
    mirror_query,
)
from refaudit.mirror.store import Candidate, CandidateSearch, MirrorStore, SearchMode
from refaudit.models import Work
from refaudit.sources import Sources, registry
from refaudit.sources.base import SearchQuery, Source

#: sources whose search is bibliographic (title, authors, year in one query)
_BIBLIOGRAPHIC = frozenset(registry.stages("free_text")[0])

NAME = registry.MIRROR.name
#: identifier kinds the mirror's OpenAlex records answer for live sources it does not hold
_ID_KINDS = ("arxiv-doi", "arxiv", "pmid")


class MirrorSource(Source):
    """The whole mirror: every question answered from the mirrored upstreams' records."""

    name = NAME

    def __init__(self, store: MirrorStore) -> None:
        self.store = store

    @property
    def capabilities(self) -> frozenset[str]:
        return registry.MIRROR.capabilities

    def as_sources(self) -> Sources:
        """Views of the mirror under the names the evidence pipeline asks.

        A mirrored source (Crossref, OpenAlex, Semantic Scholar) is answered by its own
        records; the first live source the mirror does not hold among those asked for
        arXiv DOIs, arXiv ids or PMIDs (DataCite, arXiv, PubMed) is answered from the
        OpenAlex records that carry those ids.
        """
        views: dict[str, Source] = {name: MirrorView(self.store, name) for name in UPSTREAMS}
        fallback = next((u for u in UPSTREAMS if "pmid" in registry.entry(u).capabilities), None)
        for kind in _ID_KINDS:
            first = next((n for n in registry.resolvers(kind, 0) if n not in views), None)
            if fallback and first:
                views[first] = MirrorView(self.store, fallback, searches=False)
        return Sources(views, {})

    async def lookup_dois(self, dois: list[str]) -> dict[str, Work]:
        return await self._first("lookup_dois", dois)

    async def lookup_arxiv(self, arxiv_ids: list[str]) -> dict[str, Work]:
        return await self._first("lookup_arxiv", arxiv_ids)

    async def lookup_pmids(self, pmids: list[str]) -> dict[str, Work]:
        return await self._first("lookup_pmids", pmids)

    async def lookup_ids(self, ids: list[str]) -> dict[str, Work]:
        return await self._first("lookup_ids", ids)

    async def search(self, query: SearchQuery) -> list[Work]:
        found: list[Work] = []
        for upstream in UPSTREAMS:
            found += await MirrorView(self.store, upstream).search(query)
        return found[: max(1, query.limit)]

    async def _first(self, method: str, keys: list[str]) -> dict[str, Work]:
        """Each key's record from the first upstream (registry order) that holds it."""
        found: dict[str, Work] = {}
        for upstream in reversed(UPSTREAMS):
            found.update(await getattr(MirrorView(self.store, upstream), method)(keys))
        return found


class MirrorView(Source):
    """One upstream's records in a mirror, asked as that upstream would be."""

    def __init__(self, store: MirrorStore, upstream: str, *, searches: bool = True) -> None:
        self.name = upstream
        held = registry.entry(upstream).capabilities - {"search", "integrity"}
        self._capabilities = held | ({"search"} if searches else frozenset())
        self._store = store
        self._upstream = upstream
        self._searches = searches

    @property
    def capabilities(self) -> frozenset[str]:
        return self._capabilities

    async def lookup_dois(self, dois: list[str]) -> dict[str, Work]:
        wanted = {d for d in (normalize_doi(doi) for doi in dois) if d}
        return {w.doi: w for w in self._lookup("doi", sorted(wanted)) if w.doi in wanted}

    async def lookup_arxiv(self, arxiv_ids: list[str]) -> dict[str, Work]:
        wanted = set(arxiv_ids)
        return {w.arxiv_id: w for w in self._lookup("arxiv_id", arxiv_ids) if w.arxiv_id in wanted}

    async def lookup_pmids(self, pmids: list[str]) -> dict[str, Work]:
        wanted = set(pmids)
        return {w.pmid: w for w in self._lookup("pmid", pmids) if w.pmid in wanted}

    async def lookup_ids(self, ids: list[str]) -> dict[str, Work]:
        wanted = [value.rsplit("/", 1)[-1].upper() for value in ids if value]
        return {w.openalex_id: w for w in self._lookup("key", wanted) if w.openalex_id}

    async def search(self, query: SearchQuery) -> list[Work]:
        # Bibliographic search (the free-text stage's first source) matches authors too.
        wanted = mirror_query(query, with_authors=self._upstream in _BIBLIOGRAPHIC)
        if not self._searches or wanted is None:
            return []
        # Cheapest first: the title's words all present; then any of them (a changed or
        # invented word); then similar titles (misspelt words). Each pass only when the
        # ones before found no close title, and the last only when a word is in no title
        # at all: with every word spelt as some title spells it, "any" has searched them.
        passes: list[SearchMode] = ["any"] if wanted.free_text else ["all", "any", "similar"]
        found: list[Candidate] = []
        for mode in passes:
            if mode == "similar" and not self._store.unknown_title_words(
                self._upstream, wanted.words
            ):
                break
            search = CandidateSearch(
                wanted.words,
                mode=mode,
                authors=wanted.authors,
                text=wanted.text,
                year_from=query.year_from,
                year_to=query.year_to,
                limit=CANDIDATES,
            )
            found += self._store.candidates(self._upstream, search)
            if max((likeness(wanted, c.title) for c in found), default=0.0) >= CLOSE_TITLE:
                break
        kept = best_candidates(wanted, found, query.limit)
        return [decode_work(self._upstream, c.body) for c in kept]

    def _lookup(self, field: str, values: Sequence[str]) -> list[Work]:
        bodies = self._store.lookup(self._upstream, field, list(dict.fromkeys(values)))
        return [decode_work(self._upstream, body) for body in bodies]
