"""Search: ask every chosen source, merge their hits into works, rank by fused rank.

Records from several sources are merged into one `Work` per work (same DOI, same
arXiv id, or the same title, year and first author: `match.is_same_work`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from refaudit.asking import Ledger, ask
from refaudit.config import Settings
from refaudit.discovery import opening
from refaudit.errors import InputError
from refaudit.merge import merge_records
from refaudit.models import RunStats, SourceStatus, Work
from refaudit.sources import unusable_reason

if TYPE_CHECKING:
    import httpx

    from refaudit.sources.base import SearchQuery, Source

#: Reciprocal-rank fusion offset: small, because each source returns only a few hits
#: and its first hit deserves clearly more weight than its fifth.
RANK_OFFSET = 2
#: Added to a search hit whose title is the query itself, so a pasted title comes first.
EXACT_TITLE_BONUS = 1.0


@dataclass
class SearchOutcome:
    """Merged, ranked search hits and how each source took part."""

    works: list[Work]
    sources: dict[str, SourceStatus]
    status: Literal["ok", "unverified"] = "ok"
    message: str = ""
    #: What each source was sent, as `Source.describe_search` shows it.
    queries: dict[str, str] = field(default_factory=dict)


@dataclass
class Cluster:
    """Records of one work found by a search, with each source's best rank for it."""

    records: list[Work]
    ranks: dict[str, int]


def cluster(answers: Sequence[tuple[str, Sequence[Work]]]) -> list[Cluster]:
    """Group every source's hits into works, remembering where each source ranked them."""
    from refaudit.match import is_same_work

    clusters: list[Cluster] = []
    for source, hits in answers:
        for rank, hit in enumerate(hits):
            home = next((c for c in clusters if any(is_same_work(r, hit) for r in c.records)), None)
            if home is None:
                clusters.append(Cluster([hit], {source: rank}))
                continue
            home.records.append(hit)
            home.ranks[source] = min(rank, home.ranks.get(source, rank))
    return clusters


async def search_staged(
    searchers: Sequence[Source], query: SearchQuery, tracker: Ledger
) -> list[tuple[str, list[Work]]]:
    """The hits of the faster indexes, and of the slowest pools only when those are needed.

    Semantic Scholar, DBLP and arXiv (`last_resort`: one request a second or slower)
    are asked after the others, and not at all once a hit of theirs is the work the
    query names (its title is the query, within the years asked): the slow pools
    could only add records of a work already found, and on a server they are shared
    by every session.
    """
    from refaudit.sources import registry

    first = [source for source in searchers if not registry.entry(source.name).last_resort]
    later = [source for source in searchers if source not in first]
    answers = await search_all(first, query, tracker)
    found = next(
        (
            (name, hit)
            for name, hits in answers
            for hit in hits
            if names_query(hit, query) and _within_years(hit, query.year_from, query.year_to)
        ),
        None,
    )
    if found is None:
        return answers + await search_all(later, query, tracker)
    for source in later:
        tracker.not_asked(source.name, "decided", f"{found[0]} found the work the query names")
    return answers


def names_query(work: Work, query: SearchQuery) -> bool:
    """The work's title is the query's text (in case, punctuation and spacing apart)."""
    from refaudit.match import normalize_text

    return bool(work.title) and normalize_text(work.title or "") == normalize_text(
        query.free_text or ""
    )


async def search_all(
    searchers: Sequence[Source], query: SearchQuery, tracker: Ledger
) -> list[tuple[str, list[Work]]]:
    """Each searcher's hits for `query`, asked at once; a failed source answers nothing."""
    answers = await asyncio.gather(
        *(ask(tracker, source.name, source.search(query)) for source in searchers)
    )
    return [
        (source.name, list(answer or [])) for source, answer in zip(searchers, answers, strict=True)
    ]


def _relevance(found: Cluster, query: SearchQuery, merged: Work) -> float:
    """Reciprocal-rank fusion over sources, plus a bonus when the title is the query."""
    score = sum(1 / (RANK_OFFSET + rank) for rank in found.ranks.values())
    if names_query(merged, query):
        score += EXACT_TITLE_BONUS
    return round(score, 4)


def _within_years(work: Work, year_from: int | None, year_to: int | None) -> bool:
    if work.year is None:
        return True
    return (year_from is None or work.year >= year_from) and (
        year_to is None or work.year <= year_to
    )


async def search_works(
    query: str,
    settings: Settings,
    *,
    year_from: int | None = None,
    year_to: int | None = None,
    sources: list[str] | None = None,
    limit: int = 10,
    topic_terms: Sequence[str] = (),
    stop_when_found: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
    stats: RunStats | None = None,
) -> SearchOutcome:
    """Search every chosen source and return merged works, best first.

    Relevance is reciprocal-rank fusion over the sources (a work several sources
    rank high comes first; an exact title match gets a bonus), ties broken by
    citation count. With `topic_terms` the query is a research topic: sources search
    titles and abstracts (those that AND their words get only these terms) and hits
    carry their abstracts. With `stop_when_found` (and no `sources` named) the slowest
    pools are spared once a faster index found the work the query names (`search_staged`).

    Raises:
        InputError: empty query, unknown source, or no chosen source can search.
    """
    from refaudit.sources.base import SearchQuery

    text = " ".join(query.split())
    if not text:
        raise InputError("the search query is empty")
    if limit < 1:
        raise InputError("--limit must be at least 1")
    for name in sources or []:
        problem = unusable_reason(name, settings)
        if problem:
            raise InputError(problem[0], hint=problem[1])
    tracker = Ledger()
    async with opening.open_discovery_sources(settings, transport, sources, stats) as asked:
        searchers = [
            source
            # Quota-bound sources (Scopus, IEEE Xplore) search only when named.
            for source in asked.with_capability("search", budgeted=sources is not None)
            if sources is None or source.name in sources
        ]
        if not searchers:
            raise InputError("none of the chosen sources can search")
        search = SearchQuery(
            free_text=text,
            year_from=year_from,
            year_to=year_to,
            limit=limit,
            topic_terms=list(topic_terms),
        )
        queries = {source.name: source.describe_search(search) for source in searchers}
        staged = stop_when_found and sources is None and not topic_terms
        answers = await (search_staged if staged else search_all)(searchers, search, tracker)
    ranked: list[Work] = []
    for found in cluster(answers):
        merged = merge_records(found.records)
        if _within_years(merged, year_from, year_to):
            merged.score = _relevance(found, search, merged)
            ranked.append(merged)
    ranked.sort(key=lambda work: (-(work.score or 0), -(work.citation_count or 0)))
    outcome = SearchOutcome(ranked[:limit], dict(tracker.statuses), queries=queries)
    if tracker.failures and not tracker.asked:
        outcome.status = "unverified"
        outcome.message = f"no source could answer ({tracker.failure_text()})"
    elif tracker.failures:
        outcome.message = f"results may be incomplete: {tracker.failure_text()}"
    return outcome
