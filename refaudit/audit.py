"""The one pipeline: parse → batched lookups → search → verify → screen → AuditReport.

The CLI and the MCP server both call these functions; neither decides anything
about references itself.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from refaudit.config import Settings
from refaudit.models import (
    AuditReport,
    Bibliography,
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

A caller that has already written them out may return lighter copies
(`refaudit.render.json.JsonStream`), so a long bibliography's results need not
stay whole in memory until the end.
"""

# References audited together. Evidence (every candidate record, every source's
# answer) is held only for the batch in hand, so memory follows this number, not
# the length of the bibliography. It is far above the services' own batch sizes
# (50-500 identifiers a request), so no request is split further; every
# benchmark set fits in one batch.
BATCH_REFERENCES = 5000


async def audit_references(
    references: Sequence[Reference],
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    on_batch: BatchDone | None = None,
) -> AuditReport:
    """Verify and screen `references`; one Result per reference, in input order.

    References go through the pipeline BATCH_REFERENCES at a time, sharing one
    set of source clients, the cache and the retraction snapshot.
    """
    from refaudit.mirror.parallel import audit_in_processes, worker_count

    started = time.monotonic()
    workers = worker_count(references, settings)
    if workers > 1:
        report = await audit_in_processes(references, settings, workers, progress, on_batch)
    else:
        stores = Stores.open(settings)
        try:
            report = await audit_with(
                references, settings, stores, transport=transport, progress=progress,
                on_batch=on_batch,
            )  # fmt: skip
        finally:
            stores.close()
    report.stats.elapsed_s = round(time.monotonic() - started, 3)
    if report.stats.floor_s >= 1:
        report.stats.floor_ratio = round(report.stats.elapsed_s / report.stats.floor_s, 2)
    return report


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
    references: Sequence[Reference],
    settings: Settings,
    stores: Stores,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    on_batch: BatchDone | None = None,
) -> AuditReport:
    """`audit_references` in this process, with stores the caller opened (and closes)."""
    from refaudit.mirror import mirror_state
    from refaudit.sources import open_sources

    report = AuditReport(offline=settings.offline)
    total, done = len(references), 0
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
        for first in range(0, total, BATCH_REFERENCES):
            batch = list(references[first : first + BATCH_REFERENCES])
            results = await _audit_batch(batch, sources, mirror, settings, snapshot, tick)
            report.results += on_batch(results) if on_batch else results
        if sources.cache_problem:
            report.problems.append(_cache_problem(settings, sources.cache_problem))
        report.stats.floor_s = round(sources.floor_s(report.stats.requests), 1)
    return report


async def _audit_batch(
    references: list[Reference],
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
        evidence = await gather_mirror_first(references, local, sources, on_done=tick)
        verdict = functools.partial(decide, enabled_sources=[MIRROR, *sources.enabled])
    results = [item.verdict(verdict) for item in evidence]
    identified = [
        (item, result.matched.doi.lower())
        for item, result in zip(evidence, results, strict=True)
        if result.matched is not None and result.matched.doi
    ]
    if mirror is None:
        await complete_for_screening(identified, sources)
    else:
        from refaudit.mirror.evidence import complete_mirror_first

        await complete_mirror_first(identified, local, sources)
    records = [_records_of(result, item) for result, item in zip(results, evidence, strict=True)]
    screen_results(results, records, settings, snapshot=snapshot)
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


async def audit_bibliography(
    bibliography: Bibliography,
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    on_batch: BatchDone | None = None,
) -> AuditReport:
    """Audit parsed references and carry the parser's problems into the report."""
    report = await audit_references(
        bibliography.references,
        settings,
        transport=transport,
        progress=progress,
        on_batch=on_batch,
    )
    report.problems = list(bibliography.problems) + report.problems
    report.files = list(bibliography.files)
    return report


async def audit_paths(
    paths: Sequence[Path],
    settings: Settings,
    *,
    all_entries: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    on_batch: BatchDone | None = None,
) -> AuditReport:
    """Parse every file (.bib/.tex/.bbl) and audit all their references together."""
    combined = read_bibliography(paths, all_entries=all_entries)
    return await audit_bibliography(
        combined, settings, transport=transport, progress=progress, on_batch=on_batch
    )


def read_bibliography(paths: Sequence[Path], *, all_entries: bool = False) -> Bibliography:
    """Every reference of every file, each entry once (blocking: files are read here)."""
    from refaudit.parsing import parse_file

    combined = Bibliography()
    # `check paper.tex refs.bib` reaches refs.bib twice: each entry is audited once.
    seen: set[tuple[object, ...]] = set()

    def first_time(*where: object) -> bool:
        if where in seen:
            return False
        seen.add(where)
        return True

    for path in paths:
        parsed = parse_file(Path(path), all_entries=all_entries)
        combined.references += [
            r for r in parsed.references if first_time(_real(r.file), r.line, r.key)
        ]
        combined.problems += [
            p for p in parsed.problems if first_time(_real(p.file), p.line, p.key, p.message)
        ]
        combined.files += [name for name in parsed.files or [str(path)] if first_time(_real(name))]
    return combined


@functools.lru_cache(maxsize=256)
def _real(name: str | None) -> str:
    """One spelling per file, so `refs.bib` and `./refs.bib` are the same file."""
    return str(Path(name).resolve()) if name else ""
