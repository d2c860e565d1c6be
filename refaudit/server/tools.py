"""The MCP tools: module-level functions, each a thin layer over one pipeline function.

Every tool takes the request `Context` (its lifespan context is the `ServerState`
with the settings and the shared source clients), checks its arguments, calls the
function the CLI calls and returns a typed result from `refaudit.report` (or
`refaudit.novelty`), so hosts see an output schema. Problems the calling model can
fix come back as `ToolError` with the CLI's message; an upstream outage is an
`unverified` verdict or status, never an error. Inputs are capped (text size, entry
and list counts) so one call cannot exhaust the server, and parsing and rendering
run in a worker thread so a large call never stalls other sessions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from refaudit.errors import RefauditError
from refaudit.models import (
    AuditReport,
    Bibliography,
    Person,
    Reference,
    RunStats,
    SourceStatus,
    Work,
)
from refaudit.novelty import MAX_CONTEXT_CHARS, MAX_IDEA_CHARS, NoveltyReport
from refaudit.report import (
    BibtexResult,
    BibtexResults,
    CorrectedBibliography,
    DoiIntegrity,
    FixedEntry,
    LeftEntry,
    NoticeDetails,
    PaperDetailsResult,
    ReferenceResult,
    Report,
    RetractionCheck,
    RetractionList,
    SearchResults,
)
from refaudit.retractions.store import CREDIT
from refaudit.server.state import ServerState, render_context
from refaudit.sources import registry, sharing

T = TypeVar("T")

# Every tool only reads: it never changes the user's files or any upstream record.
OFFLINE_TOOL = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
UPSTREAM_TOOL = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=True)

#: Largest BibTeX text a tool accepts, and most entries audited in one call.
MAX_BIBTEX_CHARS = 2_000_000
MAX_ENTRIES = 2_000
#: Most references verify_references takes, and longest free-text citation.
MAX_REFERENCES = 500
MAX_CITATION_CHARS = 2_000
#: Most identifiers or metadata objects get_bibtex takes.
MAX_IDENTIFIERS = 100
#: Abstracts in search results are cut to this many characters.
ABSTRACT_CHARS = 500

SourceName = Literal[registry.SOURCE_NAMES]  # type: ignore[valid-type]


class CitationFields(BaseModel):
    """One citation given as fields (any may be missing; a title or an identifier is needed)."""

    model_config = ConfigDict(extra="forbid")

    key: str | None = Field(None, max_length=200, description="your key for it (default refN)")
    title: str | None = Field(None, max_length=MAX_CITATION_CHARS)
    authors: list[str] | None = Field(
        None, max_length=500, description='"Given Family" or "Family, Given" per author'
    )
    year: int | None = Field(None, ge=1000, le=2999)
    venue: str | None = Field(None, max_length=MAX_CITATION_CHARS)
    doi: str | None = Field(None, max_length=300)
    arxiv_id: str | None = Field(None, max_length=100)
    pmid: str | None = Field(None, max_length=20)
    url: str | None = Field(None, max_length=2_000)


class PaperMetadata(BaseModel):
    """A work as search_references or paper_details return it (fields not listed are ignored)."""

    model_config = ConfigDict(extra="ignore")

    title: str = Field(min_length=1, max_length=MAX_CITATION_CHARS)
    authors: list[str | Person] = Field(default_factory=list, max_length=500)
    year: int | None = Field(None, ge=1000, le=2999)
    date: str | None = None
    type: str | None = Field(None, description="journal-article, proceedings-article, …")
    venue: str | None = None
    publisher: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    pmid: str | None = None
    url: str | None = None
    isbn: list[str] = Field(default_factory=list)


# --- helpers -------------------------------------------------------------------------


def server_state(ctx: Context) -> ServerState:
    """The state the server's lifespan yielded (settings, shared sources, health)."""
    state = ctx.request_context.lifespan_context
    if not isinstance(state, ServerState):
        raise ToolError("the server was started without refaudit's lifespan")
    return state


async def _pipeline(state: ServerState, call: Callable[[], Awaitable[T]]) -> T:
    """Run a pipeline call on the shared source clients, turning refaudit's errors into
    the CLI's message."""
    try:
        if state.sources is None:
            return await call()
        with sharing(state.sources):
            return await call()
    except RefauditError as exc:
        raise ToolError(_message(exc)) from exc


async def _counted(
    state: ServerState,
    call: Callable[[RunStats], Awaitable[T]],
    statuses: Callable[[T], list[Mapping[str, SourceStatus]]] = lambda _: [],
) -> T:
    """Run a pipeline call that asks the sources, adding its counts and each source's
    state (`statuses` of the answer) to the server's source health."""
    stats = RunStats()
    answer = await _pipeline(state, lambda: call(stats))
    state.record_statuses(statuses(answer))
    state.record_stats(stats)
    return answer


async def _in_thread(function: Callable[[], T]) -> T:
    """Run blocking work (parsing, rendering, reading the snapshot) off the event loop."""
    try:
        return await anyio.to_thread.run_sync(function)
    except RefauditError as exc:
        raise ToolError(_message(exc)) from exc


def _message(exc: RefauditError) -> str:
    return f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message


def citation_reference(
    *,
    citation: str | None,
    title: str | None,
    authors: list[str] | None,
    year: int | None,
    venue: str | None,
    doi: str | None,
    arxiv_id: str | None,
    pmid: str | None,
    url: str | None,
    key: str = "citation",
) -> Reference:
    """A Reference from free text and/or fields; explicit fields win over parsed text."""
    from refaudit.identifiers import normalize_doi, parse_arxiv_id
    from refaudit.names import parse_names
    from refaudit.parsing import parse_freetext

    if not (citation and citation.strip()) and not any((title, doi, arxiv_id, pmid)):
        raise ToolError("give either a citation string or at least a title, doi, arxiv_id or pmid")
    if citation and citation.strip():
        reference = parse_freetext(citation.strip(), key=key)
    else:
        reference = Reference(key=key, entry_type="article" if venue else "misc")
    if title:
        reference.title = title.strip()
        reference.fields["title"] = reference.title
    if authors:
        people = []
        for name in authors:
            parsed, _ = parse_names(name)
            people.extend(parsed)
        reference.authors, reference.authors_truncated = people, False
        reference.fields["author"] = " and ".join(authors)
    if year is not None:
        reference.year = year
        reference.fields["year"] = str(year)
    if venue:
        reference.venue = venue.strip()
        reference.fields["journal"] = reference.venue
    if doi:
        reference.doi = normalize_doi(doi)
        if reference.doi is None:
            raise ToolError(
                f"doi {doi!r} is not a DOI (expected something like 10.1038/nature14539)"
            )
        reference.fields["doi"] = reference.doi
    if arxiv_id:
        parsed_arxiv = parse_arxiv_id(arxiv_id)
        if parsed_arxiv is None:
            raise ToolError(f"arxiv_id {arxiv_id!r} is not an arXiv identifier (e.g. 1706.03762)")
        reference.arxiv_id, reference.arxiv_version = parsed_arxiv
        reference.fields["eprint"] = arxiv_id.strip()
        reference.fields["archiveprefix"] = "arXiv"
    if pmid:
        if not pmid.strip().isdigit():
            raise ToolError(f"pmid {pmid!r} is not a PubMed id (digits only)")
        reference.pmid = pmid.strip()
        reference.fields["pmid"] = reference.pmid
    if url:
        reference.url = url.strip()
        reference.fields["url"] = reference.url
    return reference


def resolve_inside(root: Path | None, requested: str) -> Path:
    """The file `requested` names, refused unless it lies inside `root`."""
    if root is None:
        raise ToolError(
            "reading files is disabled: pass the BibTeX text as `bibtex`, "
            "or start the server with --root DIR to allow paths inside DIR"
        )
    base = root.resolve()
    candidate = (base / requested).resolve()
    if not candidate.is_relative_to(base):
        raise ToolError(f"{requested}: outside the allowed root {base}")
    if not candidate.is_file():
        raise ToolError(f"{requested}: no such file under {base}")
    return candidate


def _bounded(bibliography: Bibliography) -> Bibliography:
    if len(bibliography.references) > MAX_ENTRIES:
        raise ToolError(
            f"the bibliography has {len(bibliography.references):,} entries; at most "
            f"{MAX_ENTRIES:,} are checked in one call: split it, or run `refaudit check`"
        )
    return bibliography


async def _parse_bibtex(text: str) -> Bibliography:
    from refaudit.parsing import parse_bibtex

    return _bounded(await _in_thread(lambda: parse_bibtex(text)))


async def _audit(state: ServerState, bibliography: Bibliography) -> AuditReport:
    from refaudit.audit import audit_bibliography

    report = await _pipeline(
        state,
        lambda: audit_bibliography(bibliography, state.settings, transport=state.transport),
    )
    state.record_report(report)
    return report


async def _report(state: ServerState, report: AuditReport) -> Report:
    from refaudit.render.json import report_model

    return await _in_thread(lambda: report_model(report, render_context(state.settings)))


# --- verification --------------------------------------------------------------------


async def verify_reference(
    ctx: Context,
    citation: Annotated[
        str | None,
        Field(
            max_length=MAX_CITATION_CHARS,
            description="the whole citation as free text, in any common style",
        ),
    ] = None,
    title: Annotated[str | None, Field(max_length=MAX_CITATION_CHARS)] = None,
    authors: Annotated[
        list[str] | None,
        Field(
            max_length=500, description='one string per author: "Given Family" or "Family, Given"'
        ),
    ] = None,
    year: Annotated[int | None, Field(ge=1000, le=2999)] = None,
    venue: Annotated[
        str | None,
        Field(max_length=MAX_CITATION_CHARS, description="journal, conference or book"),
    ] = None,
    doi: Annotated[str | None, Field(max_length=300)] = None,
    arxiv_id: Annotated[str | None, Field(max_length=100)] = None,
    pmid: Annotated[str | None, Field(max_length=20)] = None,
    url: Annotated[str | None, Field(max_length=2_000)] = None,
) -> ReferenceResult:
    """Check one citation against the scholarly sources and screen it for retractions.

    Give the citation as free text (`citation`), as fields, or both (fields win).
    Returns the verdict, its confidence, every finding with the value the source records
    and the source that says so, the matched record, which sources answered, retraction
    notices, and a corrected BibTeX entry.
    """
    from refaudit.audit import audit_references
    from refaudit.render.json import result_model

    state = server_state(ctx)
    reference = citation_reference(
        citation=citation,
        title=title,
        authors=authors,
        year=year,
        venue=venue,
        doi=doi,
        arxiv_id=arxiv_id,
        pmid=pmid,
        url=url,
    )
    report = await _pipeline(
        state, lambda: audit_references([reference], state.settings, transport=state.transport)
    )
    state.record_report(report)
    return result_model(report.results[0], render_context(state.settings))


async def verify_references(
    ctx: Context,
    references: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_CITATION_CHARS)] | CitationFields],
        Field(
            min_length=1,
            max_length=MAX_REFERENCES,
            description="citations: free-text strings, or objects with title, authors, year, "
            "venue, doi, arxiv_id, pmid, url (and an optional key)",
        ),
    ],
) -> Report:
    """Check many citations in one call, without writing BibTeX first.

    One verdict per citation, in order, plus a summary (counts; `flagged` follows the fail policy).
    Objects are keyed by their `key` or ref1, ref2, …; free-text strings by position.
    """
    state = server_state(ctx)
    parsed: list[Reference] = []
    for number, item in enumerate(references, start=1):
        key = f"ref{number}"
        try:
            if isinstance(item, str):
                parsed.append(_free_text(item, key))
            else:
                fields = item.model_dump(exclude={"key"})
                parsed.append(citation_reference(citation=None, key=item.key or key, **fields))
        except ToolError as exc:
            raise ToolError(f"references[{number - 1}]: {exc}") from exc
    report = await _audit(state, Bibliography(references=parsed))
    return await _report(state, report)


def _free_text(text: str, key: str) -> Reference:
    fields: dict[str, Any] = dict.fromkeys(
        ("title", "authors", "year", "venue", "doi", "arxiv_id", "pmid", "url")
    )
    return citation_reference(citation=text, key=key, **fields)


async def verify_bibliography(
    ctx: Context,
    bibtex: Annotated[
        str | None,
        Field(min_length=1, max_length=MAX_BIBTEX_CHARS, description="BibTeX text of the entries"),
    ] = None,
    path: Annotated[
        str | None,
        Field(
            max_length=4_096,
            description="a .bib/.tex/.bbl/.docx file inside the server's --root directory "
            "(refused when the server has no root)",
        ),
    ] = None,
) -> Report:
    """Check every entry of a bibliography; per-entry verdicts plus a summary.

    Pass BibTeX text, or a path the server is allowed to read. The summary counts
    verdicts and the references the fail policy flags, and lists the problems met while parsing.
    """
    from refaudit.audit import read_bibliography

    state = server_state(ctx)
    if (bibtex is None) == (path is None):
        raise ToolError("give exactly one of `bibtex` (text) or `path`")
    if path is not None:
        file = resolve_inside(state.root, path)
        bibliography = _bounded(await _in_thread(lambda: read_bibliography([file])))
    else:
        bibliography = await _parse_bibtex(bibtex or "")
    report = await _audit(state, bibliography)
    return await _report(state, report)


async def correct_bibliography(
    ctx: Context,
    bibtex: Annotated[
        str,
        Field(min_length=1, max_length=MAX_BIBTEX_CHARS, description="BibTeX text to correct"),
    ],
) -> CorrectedBibliography:
    """The MCP counterpart of `refaudit fix`: BibTeX in, corrected BibTeX and a diff out.

    Only the fields a source contradicts are rewritten (and the entry's layout kept);
    every other byte comes back unchanged. `corrected` lists what changed, `left` the
    mismatched entries that were not changed and why, `summary` the audit behind it.
    """
    import difflib

    from refaudit.fix import apply_fixes, verify_fix

    state = server_state(ctx)
    bibliography = await _parse_bibtex(bibtex)
    report = await _audit(state, bibliography)

    def correct() -> CorrectedBibliography:
        outcome = apply_fixes(bibtex, report)
        verify_fix(bibtex, outcome)
        diff = difflib.unified_diff(
            bibtex.splitlines(keepends=True),
            outcome.text.splitlines(keepends=True),
            fromfile="given.bib",
            tofile="corrected.bib",
        )
        from refaudit.render.json import report_model

        return CorrectedBibliography(
            bibtex=outcome.text,
            diff="".join(diff),
            corrected=[
                FixedEntry(key=c.key, line=c.line, action=c.action, fields=list(c.fields))
                for c in outcome.changes
            ],
            left=[LeftEntry(key=result.reference.key, reason=why) for result, why in outcome.left],
            summary=report_model(report, render_context(state.settings)).summary,
        )

    return await _in_thread(correct)


# --- discovery -----------------------------------------------------------------------


async def search_references(
    ctx: Context,
    query: Annotated[
        str, Field(min_length=1, max_length=1_000, description="title words, authors, topic")
    ],
    year_from: Annotated[int | None, Field(ge=1000, le=2999)] = None,
    year_to: Annotated[int | None, Field(ge=1000, le=2999)] = None,
    sources: Annotated[
        list[SourceName] | None, Field(description="sources to ask (default: all enabled)")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 10,
) -> SearchResults:
    """Find works in the scholarly databases; merged across sources, best first.

    Use it to find the real work behind a citation refaudit could not find, or to find
    something to cite. Every hit is a database record, never a guess; each carries its
    citation count and the start of its abstract.
    """
    from refaudit import discovery

    state = server_state(ctx)
    outcome = await _counted(
        state,
        lambda stats: discovery.search_works(
            query,
            state.settings,
            year_from=year_from,
            year_to=year_to,
            sources=list(sources) if sources else None,
            limit=limit,
            transport=state.transport,
            stats=stats,
        ),
        lambda outcome: [outcome.sources],
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
        list[Annotated[str, Field(min_length=1, max_length=MAX_CITATION_CHARS)]] | None,
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
) -> BibtexResults:
    """BibTeX for identifiers (from the databases, the DOI agency's own when it has it) or
    for metadata objects (written from the metadata alone, without asking any source).

    A title only gives BibTeX when a database has a work with that title. Keys follow
    `{family}{year}{firstword}` (lecun2015deep) and are unique across the whole call.
    """
    from refaudit import discovery

    state = server_state(ctx)
    if not identifiers and not works:
        raise ToolError("give `identifiers`, `works`, or both")
    entries: list[discovery.BibtexEntry] = []
    if identifiers:
        entries = await _counted(
            state,
            lambda stats: discovery.bibtex_entries(
                identifiers, state.settings, transport=state.transport, stats=stats
            ),
        )
    taken = {entry.key for entry in entries if entry.key}
    for item in works or []:
        work = _work_from_metadata(item)
        entries.append(discovery.rekey(discovery.metadata_entry(work), taken))
    return BibtexResults(
        entries=[BibtexResult.model_validate(entry, from_attributes=True) for entry in entries],
        # A retracted work is an error in its entry, never part of the BibTeX to paste.
        bibtex="\n".join(
            entry.bibtex.strip() + "\n"
            for entry in entries
            if entry.bibtex and entry.status != "retracted"
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
            max_length=MAX_CITATION_CHARS,
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

    state = server_state(ctx)
    details = await _counted(
        state,
        lambda stats: discovery.paper_details(
            identifier,
            state.settings,
            references=references,
            citations=citations,
            limit=limit,
            transport=state.transport,
            stats=stats,
        ),
        lambda details: [details.sources],
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
    return await _counted(
        state,
        lambda stats: assess(
            idea,
            state.settings,
            context=context,
            threshold=threshold,
            limit=limit,
            transport=state.transport,
            stats=stats,
        ),
    )


# --- retractions ---------------------------------------------------------------------


async def check_retractions(
    ctx: Context,
    dois: Annotated[
        list[Annotated[str, Field(max_length=300)]], Field(min_length=1, max_length=500)
    ],
) -> RetractionCheck:
    """Screen DOIs for retractions, withdrawals, expressions of concern and corrections.

    Asks Crossref, OpenAlex and the local Retraction Watch snapshot. One answer per DOI,
    in order; `unknown` means the sources failed, never that the DOI is clean.
    """
    from refaudit import retractions

    state = server_state(ctx)
    screenings = await _counted(
        state,
        lambda stats: retractions.check_dois(
            dois, state.settings, transport=state.transport, stats=stats
        ),
        lambda screenings: [screening.sources for screening in screenings],
    )
    return RetractionCheck(
        results=[
            DoiIntegrity.model_validate(screening, from_attributes=True) for screening in screenings
        ],
        credit=CREDIT,
    )


JournalFilter = Annotated[
    str | None, Field(max_length=500, description="words of the journal's name")
]
YearFrom = Annotated[int | None, Field(ge=1900, le=2999, description="notices from this year")]
YearTo = Annotated[int | None, Field(ge=1900, le=2999, description="notices up to this year")]


async def retractions_by_author(
    ctx: Context,
    name: Annotated[
        str, Field(min_length=2, max_length=200, description='"Wakefield", "Wakefield AJ", …')
    ],
    journal: JournalFilter = None,
    year_from: YearFrom = None,
    year_to: YearTo = None,
    limit: Annotated[int, Field(ge=1, le=500)] = 50,
) -> RetractionList:
    """Retraction Watch notices on papers by this author (from the local snapshot)."""
    from refaudit import retractions

    settings = server_state(ctx).settings
    records = await _in_thread(
        lambda: retractions.retractions_by_author(
            name, settings, journal=journal, years=(year_from, year_to), limit=limit
        )
    )
    return RetractionList(records=records, credit=CREDIT)


async def recent_retractions(
    ctx: Context,
    days: Annotated[int | None, Field(ge=1, description="notices of the last N days")] = None,
    journal: JournalFilter = None,
    limit: Annotated[int | None, Field(ge=1, le=500)] = None,
) -> RetractionList:
    """The newest Retraction Watch notices (the last `days` days, or the `limit` latest)."""
    from refaudit import retractions

    settings = server_state(ctx).settings
    records = await _in_thread(
        lambda: retractions.recent_retractions(settings, days=days, journal=journal, limit=limit)
    )
    return RetractionList(records=records, credit=CREDIT)


async def search_retractions(
    ctx: Context,
    query: Annotated[
        str | None, Field(max_length=1_000, description="words of the paper's title")
    ] = None,
    journal: JournalFilter = None,
    since: Annotated[
        str | None, Field(max_length=10, description="earliest notice date, ISO (2020-01-31)")
    ] = None,
    year_from: YearFrom = None,
    year_to: YearTo = None,
    nature: Annotated[
        str | None,
        Field(max_length=100, description="Retraction, Expression of concern, Correction, …"),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=500)] = 50,
) -> RetractionList:
    """Search the Retraction Watch snapshot by title words, journal, notice date or year
    range, and kind. Every record names its journal."""
    from refaudit import retractions

    if not any((query, journal, since, nature, year_from, year_to)):
        raise ToolError("give at least one of query, journal, since, year_from, year_to or nature")
    settings = server_state(ctx).settings
    records = await _in_thread(
        lambda: retractions.search_retractions(
            settings,
            query=query,
            journal=journal,
            since=since,
            years=(year_from, year_to),
            nature=nature,
            limit=limit,
        )
    )
    return RetractionList(records=records, credit=CREDIT)


async def get_notice(
    ctx: Context,
    notice_doi: Annotated[
        str, Field(max_length=300, description="DOI of the retraction/correction notice")
    ],
) -> NoticeDetails:
    """A retraction or correction notice by its DOI, and the papers it concerns."""
    from refaudit import retractions

    state = server_state(ctx)
    lookup = await _pipeline(
        state,
        lambda: retractions.get_notice(notice_doi, state.settings, transport=state.transport),
    )
    return NoticeDetails(**vars(lookup), credit=CREDIT)


#: Every tool with its title and annotations, in the order hosts list them.
TOOLS: tuple[tuple[Callable[..., Awaitable[BaseModel]], str, ToolAnnotations], ...] = (
    (verify_reference, "Verify one reference", UPSTREAM_TOOL),
    (verify_references, "Verify a list of references", UPSTREAM_TOOL),
    (verify_bibliography, "Verify a bibliography", UPSTREAM_TOOL),
    (correct_bibliography, "Correct a bibliography", UPSTREAM_TOOL),
    (search_references, "Search for references", UPSTREAM_TOOL),
    (get_bibtex, "Get BibTeX", UPSTREAM_TOOL),
    (paper_details, "Paper details", UPSTREAM_TOOL),
    (assess_novelty, "Assess the novelty of a research idea", UPSTREAM_TOOL),
    (check_retractions, "Check DOIs for retractions", UPSTREAM_TOOL),
    (retractions_by_author, "Retractions by author", OFFLINE_TOOL),
    (recent_retractions, "Recent retractions", OFFLINE_TOOL),
    (search_retractions, "Search retractions", OFFLINE_TOOL),
    (get_notice, "Get an integrity notice", UPSTREAM_TOOL),
)
#: The tools that ask the upstream sources: what each client's fair share limits.
UPSTREAM_TOOL_NAMES = frozenset(
    function.__name__ for function, _, hints in TOOLS if hints is UPSTREAM_TOOL
)
