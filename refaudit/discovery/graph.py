"""The citation graph: the works a paper cites and the works citing it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from refaudit.asking import Ledger, ask
from refaudit.identifiers import is_datacite_arxiv_doi
from refaudit.models import Work
from refaudit.sources import registry

if TYPE_CHECKING:
    from refaudit.sources import Sources

#: Citation-graph neighbours fetched before ranking them by citation count.
GRAPH_FETCH = 100


@runtime_checkable
class CitationGraph(Protocol):
    """A source that can list the works a paper cites and the works citing it."""

    name: str

    async def references(self, paper_id: str, limit: int = 100) -> list[Work]: ...

    async def citations(self, paper_id: str, limit: int = 100) -> list[Work]: ...


def rank_by_citations(works: Sequence[Work], limit: int) -> list[Work]:
    """Most-cited first (unknown counts last), keeping the first of each duplicate."""
    from refaudit.match import is_same_work

    unique: list[Work] = []
    for work in works:
        if not any(is_same_work(work, kept) for kept in unique):
            unique.append(work)
    unique.sort(key=lambda work: -(work.citation_count or -1))
    return unique[:limit]


def _graph_ids(work: Work, source: str) -> str | None:
    """The id a citation-graph source accepts for `work`."""
    if source == "semanticscholar":
        if work.s2_id:
            return work.s2_id
        if work.doi and not is_datacite_arxiv_doi(work.doi):
            return f"DOI:{work.doi}"
        return f"ARXIV:{work.arxiv_id}" if work.arxiv_id else None
    if source == "openalex":
        return work.openalex_id
    return None


async def neighbours(
    direction: Literal["references", "citations"],
    work: Work,
    records: dict[str, Work],
    opened: Sources,
    tracker: Ledger,
    limit: int,
) -> list[Work]:
    """The works `work` cites (or that cite it), most cited first.

    Semantic Scholar is asked first; OpenAlex answers when S2 failed or knows no
    neighbours, since each graph misses links the other has.
    """
    for name in registry.ranked_by("citation_graph"):
        source = opened.get(name)
        record = records.get(name, work)
        paper_id = _graph_ids(record, name)
        if not isinstance(source, CitationGraph) or not paper_id:
            continue
        call = getattr(source, direction)(paper_id, max(limit, GRAPH_FETCH))
        answer = await ask(tracker, name, call)
        if answer:
            return rank_by_citations(answer, limit)
    return []
