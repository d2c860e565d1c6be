"""The MCP server: refaudit's pipeline as tools an agent can call before it cites.

Every tool is a thin layer over the functions the CLI uses (`audit_references`,
`audit_bibliography`, `refaudit.discovery`, `refaudit.retractions`): it checks
its arguments, calls one pipeline function and turns the refaudit records into
typed results, so hosts get an output schema for each tool. Problems the
calling model can fix come back as `ToolError` with the message the CLI would
print; an upstream outage is an `unverified` verdict or an explicit status,
never a crashed server. Only `refaudit serve` imports this module, which keeps
`mcp` out of every other command.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import Field

from refaudit.config import OTHER_ENDPOINTS, Settings
from refaudit.errors import RefauditError
from refaudit.models import AuditReport, Reference, RunStats, SourceStatus, Verdict
from refaudit.novelty import MAX_CONTEXT_CHARS, MAX_IDEA_CHARS, NoveltyReport
from refaudit.novelty import assess_novelty as assess_novelty_of
from refaudit.render import RenderContext
from refaudit.render.json import report_model, result_model
from refaudit.report import (
    BibtexResult,
    BibtexResults,
    DoiIntegrity,
    NoticeDetails,
    PaperDetailsResult,
    ReferenceResult,
    Report,
    RetractionCheck,
    RetractionList,
    SearchResults,
)
from refaudit.retractions.snapshot import CREDIT
from refaudit.sources import registry
from refaudit.version import installed_version

if TYPE_CHECKING:
    import httpx
    from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)

T = TypeVar("T")

SERVER_NAME = "refaudit"
MCP_PATH = "/mcp"

# Every tool only reads: it never changes the user's files or any upstream record.
OFFLINE_TOOL = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
UPSTREAM_TOOL = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=True)

INSTRUCTIONS = """\
refaudit checks scholarly references against Crossref, OpenAlex, Semantic Scholar, arXiv,
DataCite, PubMed and DBLP, and screens them for retractions. Verify every reference before
you cite it (verify_reference, verify_bibliography) and never invent a field refaudit did not
return. Verdicts: verified, mismatch (found, but fields differ: see findings), not_found
(the sources answered and none knows the work), unverified (a source failed: NOT evidence
that the work does not exist), skipped (ignored by configuration)."""


# ---------------------------------------------------------------------------
# Process-wide state


@dataclass
class SourceHealth:
    """What this server process has seen of one source so far."""

    last_state: str = "not used yet"
    last_reason: str | None = None
    last_seen: str | None = None
    requests: int = 0
    cache_hits: int = 0
    rate_limited: int = 0
    failures: int = 0


@dataclass
class ServerState:
    """Shared by every session of one server process (and yielded by its lifespan)."""

    settings: Settings
    root: Path | None
    transport: httpx.AsyncBaseTransport | None
    health: dict[str, SourceHealth] = field(default_factory=dict)

    def record_report(self, report: AuditReport) -> None:
        """Fold one run's per-source outcome and cost into the process-wide view."""
        self.record_statuses([result.sources for result in report.results])
        self.record_stats(report.stats)

    def record_statuses(self, runs: list[Mapping[str, SourceStatus]]) -> None:
        """A source is failing if it failed anywhere in this run, ok if it answered."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        failed: dict[str, str | None] = {}
        used: set[str] = set()
        for statuses in runs:
            for name, status in statuses.items():
                if status.state == "failed":
                    failed.setdefault(name, status.reason)
                elif status.state in ("answered", "cached"):
                    used.add(name)
        for name in used | set(failed):
            health = self.health.setdefault(name, SourceHealth())
            health.last_seen = now
            if name in failed:
                health.last_state, health.last_reason = "failing", failed[name]
            else:
                health.last_state, health.last_reason = "ok", None

    def record_stats(self, stats: RunStats) -> None:
        """Add one run's request, cache-hit, rate-limit and failure counts."""
        for counter, attribute in (
            (stats.requests, "requests"),
            (stats.cache_hits, "cache_hits"),
            (stats.rate_limited, "rate_limited"),
            (stats.failures, "failures"),
        ):
            for name, count in counter.items():
                health = self.health.setdefault(name, SourceHealth())
                setattr(health, attribute, getattr(health, attribute) + count)


def render_context(settings: Settings) -> RenderContext:
    """Tools judge `failing` by the server's fail policy, as `refaudit check` does."""
    return RenderContext(fail_on=list(settings.fail_on))


# ---------------------------------------------------------------------------
# Arguments → Reference


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
) -> Reference:
    """A Reference from free text and/or fields; explicit fields win over parsed text."""
    from refaudit.identifiers import normalize_doi, parse_arxiv_id
    from refaudit.names import parse_names
    from refaudit.parsing import parse_freetext

    if not (citation and citation.strip()) and not any((title, doi, arxiv_id, pmid)):
        raise ToolError("give either a citation string or at least a title, doi, arxiv_id or pmid")
    if citation and citation.strip():
        reference = parse_freetext(citation.strip(), key="citation")
    else:
        reference = Reference(key="citation", entry_type="article" if venue else "misc")
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


async def _pipeline(call: Awaitable[T]) -> T:
    """Await a pipeline call, turning refaudit's errors into the CLI's message."""
    try:
        return await call
    except RefauditError as exc:
        message = f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message
        raise ToolError(message) from exc


# ---------------------------------------------------------------------------
# The server


def build_server(
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    root: Path | None = None,
) -> MCPServer[ServerState]:
    """An MCPServer whose tools run the pipeline with `settings` (and `transport`, for tests).

    `root` is the only directory `verify_bibliography` may read files from; without it the
    tool accepts BibTeX text only.
    """
    state = ServerState(settings=settings, root=root, transport=transport)

    @asynccontextmanager
    async def lifespan(_: MCPServer[ServerState]) -> AsyncIterator[ServerState]:
        log.info("refaudit MCP server: sources %s", ", ".join(settings.sources))
        yield state

    server: MCPServer[ServerState] = MCPServer(
        SERVER_NAME,
        title="refaudit",
        instructions=INSTRUCTIONS,
        version=installed_version(),
        lifespan=lifespan,
    )
    _add_audit_tools(server, state)
    _add_discovery_tools(server, state)
    _add_retraction_tools(server, state)
    _add_resources(server, state)
    _add_prompts(server)
    return server


def _add_audit_tools(server: MCPServer[ServerState], state: ServerState) -> None:
    from refaudit.audit import audit_bibliography, audit_paths, audit_references

    @server.tool(title="Verify one reference", annotations=UPSTREAM_TOOL)
    async def verify_reference(
        citation: Annotated[
            str | None, Field(description="the whole citation as free text, in any common style")
        ] = None,
        title: str | None = None,
        authors: Annotated[
            list[str] | None,
            Field(description='one string per author: "Given Family" or "Family, Given"'),
        ] = None,
        year: Annotated[int | None, Field(ge=1000, le=2999)] = None,
        venue: Annotated[str | None, Field(description="journal, conference or book")] = None,
        doi: str | None = None,
        arxiv_id: str | None = None,
        pmid: str | None = None,
        url: str | None = None,
    ) -> ReferenceResult:
        """Check one citation against the scholarly sources and screen it for retractions.

        Give the citation as free text (`citation`), as fields, or both (fields win).
        Returns the verdict, its confidence, every finding with the value the source records
        and the source that says so, the matched record, which sources answered, retraction
        notices, and a corrected BibTeX entry.
        """
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
            audit_references([reference], state.settings, transport=state.transport)
        )
        state.record_report(report)
        return result_model(report.results[0], render_context(state.settings))

    @server.tool(title="Verify a bibliography", annotations=UPSTREAM_TOOL)
    async def verify_bibliography(
        bibtex: Annotated[str | None, Field(description="BibTeX text of the entries")] = None,
        path: Annotated[
            str | None,
            Field(
                description="a .bib/.tex/.bbl file inside the server's --root directory "
                "(refused when the server has no root)"
            ),
        ] = None,
    ) -> Report:
        """Check every entry of a bibliography; per-entry verdicts plus a summary.

        Pass BibTeX text, or a path the server is allowed to read. The summary counts
        verdicts, lists the flagged keys and the problems met while parsing.
        """
        from refaudit.parsing import parse_bibtex

        if (bibtex is None) == (path is None):
            raise ToolError("give exactly one of `bibtex` (text) or `path`")
        if path is not None:
            file = resolve_inside(state.root, path)
            report = await _pipeline(audit_paths([file], state.settings, transport=state.transport))
        else:
            bibliography = parse_bibtex(bibtex or "")
            report = await _pipeline(
                audit_bibliography(bibliography, state.settings, transport=state.transport)
            )
        state.record_report(report)
        return report_model(report, render_context(state.settings))


SourceName = Literal[registry.SOURCE_NAMES]  # type: ignore[valid-type]


def _add_discovery_tools(server: MCPServer[ServerState], state: ServerState) -> None:
    from refaudit import discovery

    settings = state.settings

    @server.tool(title="Search for references", annotations=UPSTREAM_TOOL)
    async def search_references(
        query: Annotated[str, Field(min_length=1, description="title words, authors, topic")],
        year_from: int | None = None,
        year_to: int | None = None,
        sources: Annotated[
            list[SourceName] | None, Field(description="sources to ask (default: all enabled)")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
    ) -> SearchResults:
        """Find works in the scholarly databases; merged across sources, best first.

        Use it to find the real work behind a citation refaudit could not find, or to find
        something to cite. Every hit is a database record, never a guess.
        """
        stats = RunStats()
        outcome = await _pipeline(
            discovery.search_works(
                query,
                settings,
                year_from=year_from,
                year_to=year_to,
                sources=list(sources) if sources else None,
                limit=limit,
                transport=state.transport,
                stats=stats,
            )
        )
        state.record_statuses([outcome.sources])
        state.record_stats(stats)
        return SearchResults.model_validate(outcome, from_attributes=True)

    @server.tool(title="Get BibTeX", annotations=UPSTREAM_TOOL)
    async def get_bibtex(
        identifiers: Annotated[
            list[str],
            Field(
                min_length=1,
                max_length=50,
                description="DOIs, arXiv ids, PMIDs, S2/OpenAlex ids or exact titles",
            ),
        ],
    ) -> BibtexResults:
        """BibTeX for each identifier, from the databases (the DOI agency's own when it has it).

        A title only gives BibTeX when a database has a work with that title; keys are
        unique across the list.
        """
        stats = RunStats()
        entries = await _pipeline(
            discovery.bibtex_entries(identifiers, settings, transport=state.transport, stats=stats)
        )
        state.record_stats(stats)
        return BibtexResults(
            entries=[BibtexResult.model_validate(entry, from_attributes=True) for entry in entries],
            bibtex="\n".join(entry.bibtex.strip() + "\n" for entry in entries if entry.bibtex),
        )

    @server.tool(title="Assess the novelty of a research idea", annotations=UPSTREAM_TOOL)
    async def assess_novelty(
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
        stats = RunStats()
        report = await _pipeline(
            assess_novelty_of(
                idea,
                settings,
                context=context,
                threshold=threshold,
                limit=limit,
                transport=state.transport,
                stats=stats,
            )
        )
        state.record_stats(stats)
        return report

    @server.tool(title="Paper details", annotations=UPSTREAM_TOOL)
    async def paper_details(
        identifier: Annotated[
            str, Field(min_length=1, description="DOI, arXiv id, PMID, S2/OpenAlex id or title")
        ],
        references: Annotated[bool, Field(description="also list the works it cites")] = False,
        citations: Annotated[bool, Field(description="also list works citing it")] = False,
        limit: Annotated[int, Field(ge=1, le=100, description="per citation list")] = 20,
    ) -> PaperDetailsResult:
        """One work in full: the merged record with each field's source, every source's own
        record, integrity notices and, on request, its references and citations."""
        stats = RunStats()
        details = await _pipeline(
            discovery.paper_details(
                identifier,
                settings,
                references=references,
                citations=citations,
                limit=limit,
                transport=state.transport,
                stats=stats,
            )
        )
        state.record_statuses([details.sources])
        state.record_stats(stats)
        return PaperDetailsResult.model_validate(details, from_attributes=True)


def _add_retraction_tools(server: MCPServer[ServerState], state: ServerState) -> None:
    import anyio

    from refaudit import retractions

    settings = state.settings

    @server.tool(title="Check DOIs for retractions", annotations=UPSTREAM_TOOL)
    async def check_retractions(
        dois: Annotated[list[str], Field(min_length=1, max_length=500)],
    ) -> RetractionCheck:
        """Screen DOIs for retractions, withdrawals, expressions of concern and corrections.

        Asks Crossref, OpenAlex and the local Retraction Watch snapshot. One answer per DOI,
        in order; `unknown` means the sources failed, never that the DOI is clean.
        """
        stats = RunStats()
        screenings = await _pipeline(
            retractions.check_dois(dois, settings, transport=state.transport, stats=stats)
        )
        state.record_statuses([screening.sources for screening in screenings])
        state.record_stats(stats)
        return RetractionCheck(
            results=[
                DoiIntegrity.model_validate(screening, from_attributes=True)
                for screening in screenings
            ],
            credit=CREDIT,
        )

    @server.tool(title="Retractions by author", annotations=OFFLINE_TOOL)
    async def retractions_by_author(
        name: Annotated[str, Field(min_length=2, description='"Wakefield", "Wakefield AJ", …')],
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
    ) -> RetractionList:
        """Retraction Watch notices on papers by this author (from the local snapshot)."""
        records = await _pipeline(
            anyio.to_thread.run_sync(
                lambda: retractions.retractions_by_author(name, settings, limit=limit)
            )
        )
        return RetractionList(records=records, credit=CREDIT)

    @server.tool(title="Recent retractions", annotations=OFFLINE_TOOL)
    async def recent_retractions(
        days: Annotated[int | None, Field(ge=1, description="notices of the last N days")] = None,
        limit: Annotated[int | None, Field(ge=1, le=500)] = None,
    ) -> RetractionList:
        """The newest Retraction Watch notices (the last `days` days, or the `limit` latest)."""
        records = await _pipeline(
            anyio.to_thread.run_sync(
                lambda: retractions.recent_retractions(settings, days=days, limit=limit)
            )
        )
        return RetractionList(records=records, credit=CREDIT)

    @server.tool(title="Search retractions", annotations=OFFLINE_TOOL)
    async def search_retractions(
        query: Annotated[str | None, Field(description="words of the paper's title")] = None,
        journal: str | None = None,
        since: Annotated[
            str | None, Field(description="earliest notice date, ISO (2020-01-31)")
        ] = None,
        nature: Annotated[
            str | None, Field(description="Retraction, Expression of concern, Correction, …")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
    ) -> RetractionList:
        """Search the Retraction Watch snapshot by title words, journal, date and kind."""
        if not any((query, journal, since, nature)):
            raise ToolError("give at least one of query, journal, since or nature")
        records = await _pipeline(
            anyio.to_thread.run_sync(
                lambda: retractions.search_retractions(
                    settings, query=query, journal=journal, since=since, nature=nature, limit=limit
                )
            )
        )
        return RetractionList(records=records, credit=CREDIT)

    @server.tool(title="Get an integrity notice", annotations=UPSTREAM_TOOL)
    async def get_notice(
        notice_doi: Annotated[str, Field(description="DOI of the retraction/correction notice")],
    ) -> NoticeDetails:
        """A retraction or correction notice by its DOI, and the papers it concerns."""
        lookup = await _pipeline(
            retractions.get_notice(notice_doi, settings, transport=state.transport)
        )
        return NoticeDetails(**vars(lookup), credit=CREDIT)


def _add_resources(server: MCPServer[ServerState], state: ServerState) -> None:
    @server.resource(
        "refaudit://sources",
        name="sources",
        title="Sources refaudit consults",
        mime_type="application/json",
    )
    def sources() -> dict[str, Any]:
        """Each source: enabled?, base URL, rate limits and the health this process has seen."""
        return sources_overview(state)

    @server.resource(
        "refaudit://policy",
        name="policy",
        title="What refaudit counts as an error",
        mime_type="application/json",
    )
    def policy() -> dict[str, Any]:
        """Verdicts, the fail policy, the retraction policy and the finding codes."""
        return policy_overview(state.settings)


def sources_overview(state: ServerState) -> dict[str, Any]:
    """The `refaudit://sources` document."""
    from refaudit.sources import load, rate_limits_for

    settings = state.settings
    entries = []
    for name in registry.SOURCE_NAMES:
        module = load(name)[1]
        health = state.health.get(name, SourceHealth())
        entries.append(
            {
                "name": name,
                "enabled": name in settings.sources,
                "base_url": settings.base_urls.get(name),
                "api_key_configured": settings.api_key(name) is not None,
                "rate_limits": {
                    pool: {"rps": limit.rps, "burst": limit.burst, "concurrency": limit.concurrency}
                    for pool, limit in rate_limits_for(module, settings).items()
                },
                "health": {
                    "state": health.last_state,
                    "reason": health.last_reason,
                    "last_seen": health.last_seen,
                    "requests": health.requests,
                    "cache_hits": health.cache_hits,
                    "rate_limited": health.rate_limited,
                    "failures": health.failures,
                },
            }
        )
    return {
        "offline": settings.offline,
        "cache": settings.use_cache,
        "mailto_configured": settings.mailto is not None,
        "sources": entries,
        "endpoints": {name: settings.base_urls.get(name) for name in OTHER_ENDPOINTS},
    }


VERDICT_MEANINGS: Mapping[str, str] = {
    Verdict.VERIFIED.value: "a source has the work and the cited fields agree",
    Verdict.MISMATCH.value: "the work exists but some cited fields differ (see findings)",
    Verdict.NOT_FOUND.value: "every source answered and none knows the work: likely fabricated",
    Verdict.UNVERIFIED.value: (
        "a source failed (outage, rate limit, offline cache miss): no conclusion either way; "
        "this is NOT not_found"
    ),
    Verdict.SKIPPED.value: "ignored by configuration (the reason says why)",
}


def policy_overview(settings: Settings) -> dict[str, Any]:
    """The `refaudit://policy` document: the same vocabulary `refaudit check --fail-on` uses."""
    from refaudit.findings import FAIL_ON_CHOICES, FINDING_CODES, INTEGRITY_CODES, RETRACTION_CODES

    return {
        "verdicts": dict(VERDICT_MEANINGS),
        "severities": {
            "error": "the citation is wrong or unusable",
            "warning": "probably a mistake worth fixing",
            "info": "cosmetic or informative (a better form, a newer version)",
        },
        "flagged": "a reference is flagged when it is not_found or has an unsuppressed error",
        "fail_on": {
            word: FAIL_ON_CHOICES.get(word) or f"findings with code {word.replace('_', '-')}"
            for word in settings.fail_on
        },
        "fail_on_choices": dict(FAIL_ON_CHOICES),
        "retraction_policy": dict(settings.retraction_policy),
        "finding_codes": {
            entry.code: {
                "severity": entry.severity or "set by retraction_policy",
                "fields": list(entry.fields),
                "makes_mismatch": entry.mismatch,
                "fixable": entry.fixable,
                "when": entry.when,
            }
            for entry in FINDING_CODES.values()
        },
        "integrity_codes": sorted(INTEGRITY_CODES),
        "retraction_codes": sorted(RETRACTION_CODES),
    }


VERIFY_BEFORE_CITING = """\
Before you cite anything, verify it with refaudit.

1. Check every reference you intend to cite: verify_reference for one citation (free text or
   fields), verify_bibliography for a whole .bib. Do not rely on memory for titles, authors,
   years, venues or DOIs.
2. Read the verdict:
   - verified: safe to cite; prefer the matched record's fields and corrected_bibtex.
   - mismatch: the work exists but the citation is wrong somewhere. Fix each finding
     using its `found` value and name the `source` it came from.
   - not_found: every source answered and none knows the work. Do not cite it; it may be
     fabricated. Search (search_references) for the work you meant.
   - unverified: a source failed or was unreachable. This is NOT evidence the work is
     missing; say it could not be checked, and retry later.
   - skipped: the user's configuration ignores this reference.
3. If retracted is true (a retraction, partial retraction, withdrawal or removal), do not
   cite the work as support; mention the notice if you discuss it. Expressions of concern
   and corrections are worth mentioning too.
4. Never invent a DOI, page range or author. Use get_bibtex for the exact entry, and quote
   only fields refaudit returned.
"""


def _add_prompts(server: MCPServer[ServerState]) -> None:
    @server.prompt(name="verify-before-citing", title="Verify references before citing")
    def verify_before_citing(
        citations: Annotated[
            str | None, Field(description="references you are about to cite (optional)")
        ] = None,
    ) -> list[UserMessage]:
        """How to check every reference before citing it, and how to read the verdicts."""
        text = VERIFY_BEFORE_CITING
        if citations:
            text += f"\nThe references to check now:\n\n{citations}\n"
        return [UserMessage(text)]


# ---------------------------------------------------------------------------
# Streamable HTTP


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses: the only binds allowed without a token."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_form(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def transport_security(
    host: str, port: int, extra_hosts: tuple[str, ...] = ()
) -> TransportSecuritySettings:
    """Host/Origin checks against DNS rebinding: only the names this bind answers to."""
    names = [host, *extra_hosts]
    if is_loopback(host):
        names += ["127.0.0.1", "localhost", "::1"]
    if host in ("0.0.0.0", "::"):
        names += ["127.0.0.1", "localhost", "::1", socket.gethostname(), socket.getfqdn()]
    hosts = list(dict.fromkeys(_host_form(name, port) for name in names))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{entry}" for entry in hosts]
        + [f"https://{entry}" for entry in hosts],
    )


class BearerTokenMiddleware:
    """Answers 401 to any HTTP request without `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            from starlette.responses import JSONResponse

            response = JSONResponse(
                {"error": "unauthorized", "message": "missing or wrong bearer token"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="refaudit"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                return hmac.compare_digest(value, self._expected)
        return False


def http_app(
    server: MCPServer[ServerState],
    *,
    host: str,
    port: int,
    token: str | None,
    extra_hosts: tuple[str, ...] = (),
) -> ASGIApp:
    """The streamable-HTTP ASGI app at /mcp, with Host/Origin checks and the optional token."""
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=transport_security(host, port, extra_hosts),
        host=host,
    )
    return BearerTokenMiddleware(app, token) if token else app


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket, bound before serving so port 0 and bind errors surface early."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


async def serve_http(app: ASGIApp, sock: socket.socket, announce: Callable[[str], None]) -> None:
    """Serve `app` on the bound socket with uvicorn (its logs go to stderr).

    `announce` gets the URL once the socket accepts connections, so a caller waiting
    for that line never races the server.
    """
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    host, port = sock.getsockname()[:2]
    announce(f"http://{_host_form(host, port)}{MCP_PATH}")
    await uvicorn.Server(config).serve(sockets=[sock])
