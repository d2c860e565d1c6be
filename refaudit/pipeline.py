"""The audit of references in this process: evidence, verdicts, screening, corrections.

`audit.audit_references` runs it here for most audits; a long mirror-only audit
runs it in worker processes over slices (`mirror.parallel`), each worker
keeping its stores and source clients open for all its slices.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from refaudit.config import Settings
from refaudit.models import (
    AuditReport,
    InputProblem,
    Reference,
    Result,
    SnapshotState,
    Verdict,
    Work,
)

if TYPE_CHECKING:
    import httpx

    from refaudit.evidence import Evidence
    from refaudit.mirror.store import MirrorStore, RetractionRows
    from refaudit.retractions.store import Snapshot
    from refaudit.sources import Sources

Progress = Callable[[int, int], None]
"""Called as progress(done, total) while references are checked."""

BatchDone = Callable[[list[Result]], Sequence[Result]]
"""Called with each batch's finished results; what it returns is kept in the report.

A caller that has already written them out returns nothing (`render.ReportStream.add`)
and passes a `policy.Tally` to the audit, which counts every result for the summary
and the exit code: a long bibliography's results then never stay in memory.
"""

# References audited together. Evidence (every candidate record, every source's
# answer) is held only for the batch in hand, so memory follows this number, not
# the length of the bibliography. It is far above the services' own batch sizes
# (50-500 identifiers a request), so no request is split further; every
# benchmark set fits in one batch.
BATCH_REFERENCES = 5000
# References read at a time, in a worker thread, while the batch before them is looked
# up: a streamed .bib is parsed as its first identifiers are already on their way.
READ_AHEAD = 100
# The first group of a batch is this small, and each group after it twice the one
# before (up to READ_AHEAD): a long file's first request leaves once a few entries are
# parsed, not a hundred.
FIRST_READ = 8


@dataclass
class Stores:
    """The local data an audit reads: the mirror and the retraction snapshot.

    Opened once per audit, or once per worker process for the many slices of a
    long mirror-only audit.
    """

    mirror: MirrorStore | None
    snapshot: Snapshot | RetractionRows | None

    @classmethod
    def open(cls, settings: Settings) -> Stores:
        """A mirror built with the Retraction Watch CSV screens with its own rows;
        otherwise the snapshot `refaudit retractions update` installed is used."""
        from refaudit.mirror import open_mirror
        from refaudit.retractions.store import Snapshot

        mirror = open_mirror(settings)
        try:
            rows = mirror.retractions() if mirror is not None else None
            return cls(mirror, rows or Snapshot.open(settings))
        except BaseException:
            if mirror is not None:
                mirror.close()
            raise

    def close(self) -> None:
        if self.snapshot is not None:
            self.snapshot.close()
        if self.mirror is not None:
            self.mirror.close()


async def audit_with(
    references: Iterable[Reference],
    settings: Settings,
    stores: Stores,
    *,
    total: int | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    on_batch: BatchDone | None = None,
) -> AuditReport:
    """`audit_references` in this process, with stores the caller opened (and closes)."""
    from refaudit.mirror import mirror_state
    from refaudit.sources import open_sources

    report = AuditReport(offline=settings.offline)
    if isinstance(references, Sequence):
        total = len(references)
    total, done = total or 0, 0
    mirror, snapshot = stores.mirror, stores.snapshot

    def tick() -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, total)

    if progress:
        progress(0, total)
    report.retraction_snapshot = _snapshot_state(snapshot)
    if mirror is not None:
        report.mirror = mirror_state(mirror.info())
    async with open_sources(settings, report.stats, transport=transport) as sources:
        pending = iter(references)
        while first := await asyncio.to_thread(_take, pending, min(FIRST_READ, BATCH_REFERENCES)):
            batch = _arriving(first, pending, BATCH_REFERENCES - len(first))
            results = await _audit_batch(batch, sources, mirror, settings, snapshot, tick)
            report.results += on_batch(results) if on_batch else results
        if sources.cache_problem:
            report.problems.append(_cache_problem(settings, sources.cache_problem))
        report.stats.floor_s = round(sources.floor_s(report.stats.requests), 1)
    return report


def _take(references: Iterator[Reference], count: int) -> list[Reference]:
    return list(itertools.islice(references, count))


async def _arriving(
    first: list[Reference], rest: Iterator[Reference], limit: int
) -> AsyncIterator[list[Reference]]:
    """`first`, then up to `limit` more of `rest` as they are read (in a worker thread,
    so the event loop sends the requests of the references read before them), in
    groups twice as long as the one before, up to READ_AHEAD."""
    yield first
    size = len(first)
    while limit > 0:
        size = min(2 * size, READ_AHEAD, limit)
        group = await asyncio.to_thread(_take, rest, size)
        if not group:
            return
        limit -= len(group)
        yield group


async def _audit_batch(
    references: AsyncIterator[list[Reference]],
    sources: Sources,
    mirror: MirrorStore | None,
    settings: Settings,
    snapshot: Snapshot | RetractionRows | None,
    tick: Callable[[], None],
) -> list[Result]:
    """Evidence, verdicts, screening and corrections for one batch; its evidence is dropped."""
    from refaudit.evidence import complete_for_screening, gather_evidence
    from refaudit.retractions.screen import screen_results
    from refaudit.verify import decide

    if mirror is None:
        verdict = functools.partial(decide, enabled_sources=sources.enabled)
        evidence = await gather_evidence(references, sources, on_done=tick, decide=verdict)
    else:
        from refaudit.mirror.evidence import MIRROR, gather_mirror_first
        from refaudit.sources.mirror import MirrorSource

        local = MirrorSource(mirror).as_sources()
        batch = [reference async for group in references for reference in group]
        evidence = await gather_mirror_first(batch, local, sources, on_done=tick)
        verdict = functools.partial(decide, enabled_sources=[MIRROR, *sources.enabled])
    results = [item.verdict(verdict) for item in evidence]
    identified = [
        (item, result.matched.doi.lower())
        for item, result in zip(evidence, results, strict=True)
        if result.matched is not None and result.matched.doi
    ]
    if mirror is None:
        await complete_for_screening(identified, sources, evidence)
    else:
        from refaudit.mirror.evidence import complete_mirror_first

        await complete_mirror_first(identified, local, sources)
    records = [_records_of(result, item) for result, item in zip(results, evidence, strict=True)]
    screen_results(results, records, settings, snapshot=snapshot)
    if settings.check_urls and not settings.offline:
        from refaudit.urlcheck import check_results

        await check_results(results)
    for result in results:
        _apply_ignores(result, settings)
        _attach_correction(result)
    return results


def _cache_problem(settings: Settings, message: str) -> InputProblem:
    from refaudit.cache import FILE_NAME

    path = settings.resolved_cache_dir() / FILE_NAME
    return InputProblem(file=str(path), message=message, code="cache-unusable")


def _snapshot_state(snapshot: Snapshot | RetractionRows | None) -> SnapshotState:
    """What the report says about the snapshot: an offline run's only retraction data."""
    if snapshot is None:
        return SnapshotState(available=False)
    info = snapshot.status()
    return SnapshotState(
        available=True,
        downloaded_at=info.downloaded_at,
        age_days=round(snapshot.age_days, 1),
        rows=info.rows,
        newest_notice_date=info.newest_notice_date,
    )


def _records_of(result: Result, item: Evidence) -> list[Work]:
    """Every source record describing the identified work (for integrity notices)."""
    from refaudit.match import is_same_work

    if result.matched is None:
        return []
    pool = item.id_records + item.candidates
    return [w for w in pool if is_same_work(w, result.matched)]


def _apply_ignores(result: Result, settings: Settings) -> None:
    """Suppress findings of ignored entries; the reason stays visible in the report."""
    reference = result.reference
    reason = reference.ignore_reason
    for rule in settings.ignore:
        if (rule.key and rule.key == reference.key) or (
            rule.doi and reference.doi and rule.doi == reference.doi.lower()
        ):
            reason = rule.reason
    if not reason:
        return
    for finding in result.findings:
        finding.suppressed = reason


def _attach_correction(result: Result) -> None:
    from refaudit.bibtex import corrected_entry

    if result.matched is not None and result.verdict in (Verdict.VERIFIED, Verdict.MISMATCH):
        result.corrected_bibtex = corrected_entry(result.reference, result.matched, result.findings)
