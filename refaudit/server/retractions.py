"""The MCP tools about integrity notices: screening DOIs and the Retraction Watch snapshot.

Each is a thin layer over `refaudit.retractions`, as the `retractions` commands
are; every answer credits Retraction Watch.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from refaudit.report import DoiIntegrity, NoticeDetails, RetractionCheck, RetractionList
from refaudit.retractions.store import CREDIT
from refaudit.server import bounds
from refaudit.server.calling import counted, in_thread, pipeline, server_state


async def check_retractions(
    ctx: Context,
    dois: Annotated[list[bounds.Doi], Field(min_length=1, max_length=500)],
) -> RetractionCheck:
    """Screen DOIs for retractions, withdrawals, expressions of concern and corrections.

    Asks Crossref, OpenAlex and the local Retraction Watch snapshot. One answer per DOI,
    in order; `unknown` means the sources failed, never that the DOI is clean.
    """
    from refaudit import retractions

    state = server_state(ctx)
    screenings = await counted(
        state,
        retractions.check_dois,
        dois,
        statuses=lambda screenings: [screening.sources for screening in screenings],
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
    records = await in_thread(
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
    records = await in_thread(
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
    records = await in_thread(
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
    notice_doi: Annotated[bounds.Doi, Field(description="DOI of the retraction/correction notice")],
) -> NoticeDetails:
    """A retraction or correction notice by its DOI, and the papers it concerns."""
    from refaudit import retractions

    state = server_state(ctx)
    lookup = await pipeline(
        state,
        lambda: retractions.get_notice(notice_doi, state.settings, transport=state.transport),
    )
    return NoticeDetails(**vars(lookup), credit=CREDIT)
