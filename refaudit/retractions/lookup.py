"""Questions about retractions that the CLI and the MCP server ask directly.

`check_dois` asks Crossref and OpenAlex (batched) and the local snapshot about
a list of DOIs; the others query the snapshot, with Crossref as the live
fallback for a single notice.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from refaudit.asking import Ledger, ask
from refaudit.config import Settings
from refaudit.errors import RefauditError, SourceError
from refaudit.identifiers import normalize_doi
from refaudit.models import Notice, NoticeKind, RetractionRecord, RunStats, SourceStatus, Work
from refaudit.notices import WITHDRAWING_KINDS
from refaudit.retractions.screen import collect_notices, merge_notices
from refaudit.retractions.store import NAME, Snapshot
from refaudit.sources import registry

if TYPE_CHECKING:
    import httpx

LIVE_SOURCES = tuple(sorted(registry.names_where("screens_retractions"), key=registry.order))


@dataclass
class DoiScreening:
    """What is known about one DOI's integrity, and who was asked."""

    input: str
    doi: str | None
    valid: bool
    found: bool | None
    title: str | None = None
    notices: list[Notice] = field(default_factory=list)
    sources: dict[str, SourceStatus] = field(default_factory=dict)
    snapshot_age_days: float | None = None

    @property
    def status(self) -> str:
        """invalid | retracted | withdrawn | … | clean | not-found | unknown (sources failed)."""
        if not self.valid:
            return "invalid"
        worst = _worst(self.notices)
        if worst is not None:
            return worst.value
        if self.found is None or (self.found and self.unscreened):
            return "unknown"
        return "clean" if self.found else "not-found"

    @property
    def unscreened(self) -> list[str]:
        """Live sources that failed: without them "no notice" does not mean clean."""
        return [
            name
            for name, status in self.sources.items()
            if name != NAME and status.state == "failed"
        ]

    @property
    def withdrawn(self) -> bool:
        """Retracted, partially retracted, withdrawn or removed."""
        return any(n.kind in WITHDRAWING_KINDS for n in self.notices)


_SEVERITY_ORDER = (
    NoticeKind.RETRACTION,
    NoticeKind.PARTIAL_RETRACTION,
    NoticeKind.REMOVAL,
    NoticeKind.WITHDRAWAL,
    NoticeKind.EXPRESSION_OF_CONCERN,
    NoticeKind.CORRECTION,
    NoticeKind.REINSTATEMENT,
)


def _worst(notices: list[Notice]) -> NoticeKind | None:
    kinds = {n.kind for n in notices}
    return next((kind for kind in _SEVERITY_ORDER if kind in kinds), None)


async def check_dois(
    dois: list[str],
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    stats: RunStats | None = None,
) -> list[DoiScreening]:
    """Screen each DOI (one answer per input, in order) against Crossref, OpenAlex and the snapshot.

    `found` is None when no source could answer: such a DOI is never called clean.
    """
    from refaudit.sources import open_sources

    canonical = {text: normalize_doi(text) for text in dois}
    wanted = list(dict.fromkeys(doi for doi in canonical.values() if doi))
    snapshot = Snapshot.open(settings)
    works: dict[str, list[Work]] = {doi: [] for doi in wanted}
    ledger = Ledger()
    if wanted:
        names = [name for name in LIVE_SOURCES if name in settings.sources]
        async with open_sources(
            settings, stats or RunStats(), transport=transport, names=names
        ) as sources:
            answers = await asyncio.gather(
                *(
                    ask(ledger, name, sources.get(name).lookup_dois(wanted))  # type: ignore[union-attr]
                    for name in sources.enabled
                )
            )
        for found in answers:
            for doi, work in (found or {}).items():
                works.setdefault(doi, []).append(work)
    try:
        return [_screening(text, canonical[text], works, ledger, snapshot) for text in dois]
    finally:
        if snapshot is not None:
            snapshot.close()


def _screening(
    text: str,
    doi: str | None,
    works: dict[str, list[Work]],
    ledger: Ledger,
    snapshot: Snapshot | None,
) -> DoiScreening:
    if doi is None:
        return DoiScreening(input=text, doi=None, valid=False, found=False)
    records = works.get(doi, [])
    rows = snapshot.lookup_doi(doi) if snapshot is not None else []
    found = True if records else (False if ledger.outcome() == "absent" else None)
    statuses = dict(ledger.statuses)
    if snapshot is not None:
        statuses[NAME] = SourceStatus("answered", f"snapshot {snapshot.age_days:.0f} days old")
    return DoiScreening(
        input=text,
        doi=doi,
        valid=True,
        found=found,
        title=next((w.title for w in records if w.title), rows[0].title if rows else None),
        notices=collect_notices(records, rows),
        sources=statuses,
        snapshot_age_days=round(snapshot.age_days, 1) if snapshot is not None else None,
    )


def require_snapshot(settings: Settings) -> Snapshot:
    """The local snapshot, or an error telling the user how to get one."""
    snapshot = Snapshot.open(settings)
    if snapshot is None:
        raise RefauditError(
            "no Retraction Watch snapshot yet",
            hint="download it with `refaudit retractions update`",
        )
    return snapshot


def retractions_by_author(
    name: str,
    settings: Settings,
    *,
    journal: str | None = None,
    years: tuple[int | None, int | None] = (None, None),
    limit: int = 50,
) -> list[RetractionRecord]:
    """Snapshot notices on papers by this author ("Wakefield", "Wakefield AJ", "A J Wakefield"),
    optionally in one journal and a range of notice years."""
    with require_snapshot(settings) as snapshot:
        return snapshot.by_author(name, limit=limit, journal=journal, years=years)


def recent_retractions(
    settings: Settings,
    *,
    days: int | None = None,
    journal: str | None = None,
    limit: int | None = None,
) -> list[RetractionRecord]:
    """The newest snapshot notices: of the last `days` days, or the `limit` latest (20)."""
    with require_snapshot(settings) as snapshot:
        return snapshot.recent(days=days, limit=limit, journal=journal)


def search_retractions(
    settings: Settings,
    *,
    query: str | None = None,
    journal: str | None = None,
    since: str | None = None,
    years: tuple[int | None, int | None] = (None, None),
    nature: str | None = None,
    limit: int = 50,
) -> list[RetractionRecord]:
    """Snapshot notices by title words, journal, earliest notice date (ISO), notice years
    and kind."""
    with require_snapshot(settings) as snapshot:
        return snapshot.search(
            query, journal=journal, since=since, years=years, nature=nature, limit=limit
        )


@dataclass
class NoticeLookup:
    """One notice and the papers it concerns, from the snapshot or from Crossref."""

    notice_doi: str
    found: bool | None
    notices: list[Notice] = field(default_factory=list)
    records: list[RetractionRecord] = field(default_factory=list)
    origin: str | None = None
    reason: str | None = None


async def get_notice(
    notice_doi: str,
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
) -> NoticeLookup:
    """A notice by its DOI: the snapshot's rows first, else the notice's Crossref record."""
    from refaudit.sources import open_sources

    canonical = normalize_doi(notice_doi)
    if canonical is None:
        raise RefauditError(
            f"{notice_doi!r} is not a DOI", hint="e.g. 10.1016/s0140-6736(10)60175-4"
        )
    snapshot = Snapshot.open(settings)
    if snapshot is not None:
        with snapshot:
            rows = snapshot.record(canonical)
        if rows:
            return NoticeLookup(
                canonical,
                True,
                notices=merge_notices(row.to_notice() for row in rows),
                records=rows,
                origin=f"{NAME} snapshot",
            )
    if "crossref" not in settings.sources:
        return NoticeLookup(canonical, None, reason="not in the snapshot; Crossref is disabled")
    async with open_sources(settings, RunStats(), transport=transport, names=["crossref"]) as src:
        crossref = src.get("crossref")
        try:
            works = await crossref.lookup_dois([canonical])  # type: ignore[union-attr]
        except SourceError as exc:
            return NoticeLookup(canonical, None, reason=f"crossref: {exc.reason}")
    work = works.get(canonical)
    if work is None:
        return NoticeLookup(canonical, False, reason="Crossref does not know this DOI")
    about_others = [n for n in work.notices if normalize_doi(n.notice_doi) == canonical]
    return NoticeLookup(
        canonical,
        True,
        notices=merge_notices(about_others),
        origin="crossref",
        reason=None if about_others else "this DOI is not an update notice in Crossref",
    )
