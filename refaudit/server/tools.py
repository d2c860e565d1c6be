"""The MCP tools: module-level functions, each a thin layer over one pipeline function.

Every tool takes the request `Context` (its lifespan context is the `ServerState`
with the settings and the shared source clients), checks its arguments, calls the
function the CLI calls and returns a typed result from `refaudit.report` (or
`refaudit.novelty`), so hosts see an output schema. Problems the calling model can
fix come back as `ToolError` with the CLI's message; an upstream outage is an
`unverified` verdict or status, never an error. Inputs are capped (text size, entry
and list counts) so one call cannot exhaust the server, and parsing and rendering
run in a worker thread so a large call never stalls other sessions (`calling`).
The verification tools are here; those that find works are in `discovery`, those
about integrity notices in `retractions`; `TOOLS` lists them all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from refaudit.models import AuditReport, Bibliography, Reference
from refaudit.report import CorrectedBibliography, FixedEntry, LeftEntry, ReferenceResult, Report
from refaudit.server import bounds
from refaudit.server.calling import in_thread, pipeline, server_state
from refaudit.server.discovery import assess_novelty, get_bibtex, paper_details, search_references
from refaudit.server.retractions import (
    check_retractions,
    get_notice,
    recent_retractions,
    retractions_by_author,
    search_retractions,
)
from refaudit.server.state import ServerState, render_context

#: Largest BibTeX text a tool accepts, and most entries audited in one call.
MAX_BIBTEX_CHARS = 2_000_000
MAX_ENTRIES = 2_000
#: Most references verify_references takes.
MAX_REFERENCES = 500


class CitationFields(BaseModel):
    """One citation given as fields (any may be missing; a title or an identifier is needed)."""

    model_config = ConfigDict(extra="forbid")

    key: str | None = Field(
        default=None, max_length=200, description="your key for it (default refN)"
    )
    title: bounds.CitationText | None = None
    authors: list[str] | None = Field(
        default=None, max_length=500, description='"Given Family" or "Family, Given" per author'
    )
    year: bounds.Year | None = None
    venue: bounds.CitationText | None = None
    doi: bounds.Doi | None = None
    arxiv_id: bounds.ArxivId | None = None
    pmid: bounds.Pmid | None = None
    url: bounds.Url | None = None


def citation_reference(
    citation: str | None, given: CitationFields, key: str = "citation"
) -> Reference:
    """A Reference from free text and/or fields; explicit fields win over parsed text."""
    from refaudit.identifiers import normalize_doi, parse_arxiv_id
    from refaudit.names import parse_names
    from refaudit.parsing import parse_freetext

    title, authors, year, venue = given.title, given.authors, given.year, given.venue
    doi, arxiv_id, pmid, url = given.doi, given.arxiv_id, given.pmid, given.url
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
        if not (pmid.strip().isascii() and pmid.strip().isdigit()):
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
    try:
        candidate = (base / requested).resolve()
        if not candidate.is_relative_to(base):
            raise ToolError(f"{requested}: outside the allowed root {base}")
        if not candidate.is_file():
            raise ToolError(f"{requested}: no such file under {base}")
    except (OSError, ValueError) as exc:  # a NUL byte, a name longer than the system allows
        raise ToolError(f"{requested!r}: not a usable file name ({exc})") from exc
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

    return _bounded(await in_thread(lambda: parse_bibtex(text)))


async def _audit(state: ServerState, bibliography: Bibliography) -> AuditReport:
    from refaudit.audit import audit_bibliography

    report = await pipeline(
        state,
        lambda: audit_bibliography(bibliography, state.settings, transport=state.transport),
    )
    state.record_report(report)
    return report


async def _report(state: ServerState, report: AuditReport) -> Report:
    from refaudit.render.json import report_model

    return await in_thread(lambda: report_model(report, render_context(state.settings)))


async def verify_reference(
    ctx: Context,
    citation: Annotated[
        str | None,
        Field(
            max_length=bounds.MAX_CITATION_CHARS,
            description="the whole citation as free text, in any common style",
        ),
    ] = None,
    title: bounds.CitationText | None = None,
    authors: Annotated[
        list[str] | None,
        Field(
            max_length=500, description='one string per author: "Given Family" or "Family, Given"'
        ),
    ] = None,
    year: bounds.Year | None = None,
    venue: Annotated[
        bounds.CitationText | None, Field(description="journal, conference or book")
    ] = None,
    doi: bounds.Doi | None = None,
    arxiv_id: bounds.ArxivId | None = None,
    pmid: bounds.Pmid | None = None,
    url: bounds.Url | None = None,
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
    given = CitationFields(
        title=title,
        authors=authors,
        year=year,
        venue=venue,
        doi=doi,
        arxiv_id=arxiv_id,
        pmid=pmid,
        url=url,
    )
    reference = citation_reference(citation, given)
    report = await pipeline(
        state, lambda: audit_references([reference], state.settings, transport=state.transport)
    )
    state.record_report(report)
    return result_model(report.results[0], render_context(state.settings))


async def verify_references(
    ctx: Context,
    references: Annotated[
        list[bounds.GivenText | CitationFields],
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
                parsed.append(citation_reference(item, CitationFields(), key))
            else:
                parsed.append(citation_reference(None, item, item.key or key))
        except ToolError as exc:
            raise ToolError(f"references[{number - 1}]: {exc}") from exc
    report = await _audit(state, Bibliography(references=parsed))
    return await _report(state, report)


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
            description="a .bib/.tex/.bbl/.docx/.pdf file inside the server's --root directory "
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
        bibliography = _bounded(await in_thread(lambda: read_bibliography([file])))
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

    return await in_thread(correct)


#: Every tool with its title, in the order hosts list them.
TOOLS: tuple[tuple[Callable[..., Awaitable[BaseModel]], str], ...] = (
    (verify_reference, "Verify one reference"),
    (verify_references, "Verify a list of references"),
    (verify_bibliography, "Verify a bibliography"),
    (correct_bibliography, "Correct a bibliography"),
    (search_references, "Search for references"),
    (get_bibtex, "Get BibTeX"),
    (paper_details, "Paper details"),
    (assess_novelty, "Assess the novelty of a research idea"),
    (check_retractions, "Check DOIs for retractions"),
    (retractions_by_author, "Retractions by author"),
    (recent_retractions, "Recent retractions"),
    (search_retractions, "Search retractions"),
    (get_notice, "Get an integrity notice"),
)
#: The tools that answer from the local Retraction Watch snapshot alone; every other tool
#: asks the upstream sources, so each client's fair share limits it.
OFFLINE_TOOLS = (retractions_by_author, recent_retractions, search_retractions)
UPSTREAM_TOOL_NAMES = frozenset(
    function.__name__ for function, _ in TOOLS if function not in OFFLINE_TOOLS
)


def tool_annotations(function: Callable[..., Any]) -> ToolAnnotations:
    """Every tool only reads: it never changes the user's files or any upstream record."""
    return ToolAnnotations(
        read_only_hint=True,
        idempotent_hint=True,
        open_world_hint=function not in OFFLINE_TOOLS,
    )
