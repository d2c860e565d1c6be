"""The MCP tools that find works: search, BibTeX, one work in full, novelty.

Each is a thin layer over `refaudit.discovery` or `refaudit.novelty`, as the
`search`, `bibtex`, `show` and `novelty` commands are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, Literal, Protocol, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field

from refaudit.models import Person, SourceStatus, Work
from refaudit.novelty import MAX_CONTEXT_CHARS, MAX_IDEA_CHARS, NoveltyReport
from refaudit.report import BibtexResults, PaperDetailsResult, SearchResults
from refaudit.server import bounds
from refaudit.server.calling import counted, server_state
from refaudit.sources import registry

#: Most identifiers or metadata objects get_bibtex takes.
MAX_IDENTIFIERS = 100
#: Abstracts in search results are cut to this many characters.
ABSTRACT_CHARS = 500

SourceName = Literal[registry.SOURCE_NAMES]  # type: ignore[valid-type]


class _Sourced(Protocol):
    """A discovery answer, which says how each source took part."""

    @property
    def sources(self) -> Mapping[str, SourceStatus]: ...


Answer = TypeVar("Answer", bound=_Sourced)


async def _discover(
    ctx: Context, call: Callable[..., Awaitable[Answer]], subject: str, **options: Any
) -> Answer:
    """Run a discovery call on the server's shared clients; what each source answered
    (its `sources`) goes into the server's source health, as an audit's does."""
    return await counted(
        server_state(ctx), call, subject, statuses=lambda answer: [answer.sources], **options
    )


class PaperMetadata(BaseModel):
    """A work as search_references or paper_details return it (fields not listed are ignored)."""

    model_config = ConfigDict(extra="ignore")

    title: bounds.GivenText
    authors: list[str | Person] = Field(default_factory=list, max_length=500)
    year: bounds.Year | None = None
    date: str | None = None
    type: str | None = Field(None, description="journal-article, proceedings-article, …")
    venue: bounds.CitationText | None = None
    publisher: bounds.CitationText | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    doi: bounds.Doi | None = None
    arxiv_id: bounds.ArxivId | None = None
    pmid: bounds.Pmid | None = None
    url: bounds.Url | None = None
    isbn: list[str] = Field(default_factory=list)


async def search_references(
    ctx: Context,
    query: Annotated[
        str, Field(min_length=1, max_length=1_000, description="title words, authors, topic")
    ],
    year_from: bounds.Year | None = None,
    year_to: bounds.Year | None = None,
    sources: Annotated[
        list[SourceName] | None,
        Field(
            description="sources to ask (default: all enabled; the slowest only when the "
            "others did not find the work the query names)"
        ),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 10,
) -> SearchResults:
    """Find works in the scholarly databases; merged across sources, best first.

    Use it to find the real work behind a citation refaudit could not find, or to find
    something to cite. Every hit is a database record, never a guess; each carries its
    citation count and the start of its abstract. When the query is a title and a fast
    index finds that work, Semantic Scholar, DBLP and arXiv (one request a second or
    slower, shared by every session) are not asked (`sources` says so); name them in
    `sources` to ask them anyway.
    """
    from refaudit import discovery

    if year_from is not None and year_to is not None and year_from > year_to:
        raise ToolError(f"year_from {year_from} is after year_to {year_to}: no work can match")
    outcome = await _discover(
        ctx,
        discovery.search_works,
        query,
        year_from=year_from,
        year_to=year_to,
        sources=list(sources) if sources else None,
        limit=limit,
        stop_when_found=True,
    )
    outcome.works = [_shortened(work) for work in outcome.works]
    return SearchResults.model_validate(outcome, from_attributes=True)


def _shortened(work: Work) -> Work:
    """The work with its abstract cut to ABSTRACT_CHARS (at a word boundary)."""
    if not work.abstract or len(work.abstract) <= ABSTRACT_CHARS:
        return work
    cut = work.abstract[:ABSTRACT_CHARS].rsplit(" ", 1)[0]
    return dataclasses.replace(work, abstract=cut + " …")


async def get_bibtex(
    ctx: Context,
    identifiers: Annotated[
        list[bounds.GivenText] | None,
        Field(
            max_length=MAX_IDENTIFIERS,
            description="DOIs, arXiv ids, PMIDs, S2/OpenAlex ids or exact titles",
        ),
    ] = None,
    works: Annotated[
        list[PaperMetadata] | None,
        Field(
            max_length=MAX_IDENTIFIERS,
            description="paper metadata as search_references or paper_details return it",
        ),
    ] = None,
    allow_retracted: Annotated[
        bool,
        Field(
            description="include retracted works in `bibtex` (to discuss the retraction); "
            "their entries carry a note naming the notice"
        ),
    ] = False,
) -> BibtexResults:
    """BibTeX for identifiers (from the databases, the DOI agency's own when it has it) or
    for metadata objects (written from the metadata alone, without asking any source).

    A title only gives BibTeX when a database has a work with that title. Keys follow
    `{family}{year}{firstword}` (lecun2015deep) and are unique across the whole call.
    A retracted work's entry has status "retracted" and is left out of `bibtex` unless
    `allow_retracted` is true.
    """
    from refaudit import discovery

    state = server_state(ctx)
    if not identifiers and not works:
        raise ToolError("give `identifiers`, `works`, or both")
    entries: list[discovery.BibtexEntry] = []
    if identifiers:
        entries = await counted(state, discovery.bibtex_entries, identifiers)
    taken = {entry.key for entry in entries if entry.key}
    for item in works or []:
        work = _work_from_metadata(item)
        entries.append(discovery.rekey(discovery.metadata_entry(work), taken))
    return BibtexResults(
        entries=entries,
        # A retracted work is an error in its entry, part of the BibTeX to paste only
        # when asked for (its entry then names the notice in a note).
        bibtex="\n".join(
            entry.bibtex.strip() + "\n"
            for entry in entries
            if entry.bibtex and (entry.status != "retracted" or allow_retracted)
        ),
    )


def _work_from_metadata(item: PaperMetadata) -> Work:
    from refaudit.identifiers import normalize_doi
    from refaudit.names import parse_names

    people: list[Person] = []
    for author in item.authors:
        people.extend(parse_names(author)[0] if isinstance(author, str) else [author])
    fields = item.model_dump(exclude={"authors", "doi"})
    return Work(source="metadata", authors=people, doi=normalize_doi(item.doi), **fields)


async def paper_details(
    ctx: Context,
    identifier: Annotated[
        str,
        Field(
            min_length=1,
            max_length=bounds.MAX_CITATION_CHARS,
            description="DOI, arXiv id, PMID, S2/OpenAlex id or title",
        ),
    ],
    references: Annotated[bool, Field(description="also list the works it cites")] = False,
    citations: Annotated[bool, Field(description="also list works citing it")] = False,
    limit: Annotated[int, Field(ge=1, le=500, description="per citation list")] = 20,
) -> PaperDetailsResult:
    """One work in full: the merged record with each field's source, every source's own
    record, integrity notices, its citation count and, on request, its references and
    citations (most cited first)."""
    from refaudit import discovery

    details = await _discover(
        ctx,
        discovery.paper_details,
        identifier,
        references=references,
        citations=citations,
        limit=limit,
    )
    result = PaperDetailsResult.model_validate(details, from_attributes=True)
    result.citation_count = details.work.citation_count if details.work else None
    result.references_listed = len(details.references) if references else None
    result.citations_listed = len(details.citations) if citations else None
    return result


async def assess_novelty(
    ctx: Context,
    idea: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_IDEA_CHARS,
            description="the idea in a sentence or a short paragraph",
        ),
    ],
    context: Annotated[
        str | None,
        Field(
            max_length=MAX_CONTEXT_CHARS,
            description="background (field, setting) that steers the searches",
        ),
    ] = None,
    threshold: Annotated[
        float, Field(ge=0, le=1, description="least similarity for a paper to be listed")
    ] = 0.25,
    limit: Annotated[int, Field(ge=1, le=100, description="similar papers listed")] = 20,
) -> NoveltyReport:
    """Has this idea been done already? Searches OpenAlex, Semantic Scholar, Crossref and
    arXiv and scores how much of the idea one paper's title and abstract already hold.

    `novelty_score` is 0-1 (higher is more novel), with an assessment (high, moderate,
    low, critical) and a recommendation. `similar_papers` lists the closest papers with the
    idea's concepts each covers; `gaps` the concepts none covers. `status: unverified` means
    the searches failed: the idea could not be assessed, which is not evidence of novelty.
    """
    from refaudit.novelty import assess_novelty as assess

    state = server_state(ctx)
    return await counted(state, assess, idea, context=context, threshold=threshold, limit=limit)
