"""A mirror-only audit of a long bibliography, spread over the machine's cores.

With `--sources mirror` nothing waits on the network: every step (search in the
mirror, matching, verdicts, screening) is CPU work, so one process keeps one core
busy. A long bibliography is cut into slices audited by worker processes, each
with its own mirror connection, and the results come back in input order.

Only audits without live sources take this path: a live source's rate limit is
kept by its client in one process, and several processes would each spend it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

from refaudit.config import MIRROR_SOURCE, Settings
from refaudit.models import AuditReport, Reference, Result

#: Below this many references, starting the workers costs more than they save.
PARALLEL_MIN_REFERENCES = 2000
#: References per slice: small enough for steady progress and an even share per
#: worker, large enough that each slice's set-up (mirror connection, snapshot) is noise.
SLICE_REFERENCES = 250


def worker_count(references: Sequence[Reference], settings: Settings) -> int:
    """How many processes to audit with: 1 unless mirror-only, long and on several cores."""
    if set(settings.sources) != {MIRROR_SOURCE} or len(references) < PARALLEL_MIN_REFERENCES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    wanted = settings.processes or cores or 1
    return max(1, min(wanted, cores or 1, len(references) // SLICE_REFERENCES))


async def audit_in_processes(
    references: Sequence[Reference],
    settings: Settings,
    workers: int,
    progress: Callable[[int, int], None] | None = None,
    on_batch: Callable[[list[Result]], Sequence[Result]] | None = None,
) -> AuditReport:
    """`audit_references` over slices in `workers` processes, merged into one report.

    Each slice's results are handed to `on_batch` (as a batch of the one-process
    pipeline is) in input order, as soon as it and the slices before it are done.
    """
    slices = [
        list(references[i : i + SLICE_REFERENCES])
        for i in range(0, len(references), SLICE_REFERENCES)
    ]
    one_process = dataclasses.replace(settings, processes=1)
    loop = asyncio.get_running_loop()
    merged: AuditReport | None = None
    done = 0
    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=_context(), initializer=_default_interrupt
    )
    try:
        futures = [
            asyncio.wrap_future(pool.submit(_audit_slice, part, one_process), loop=loop)
            for part in slices
        ]
        for future in futures:
            report = await future
            done += len(report.results)
            if on_batch:
                report.results = list(on_batch(report.results))
            merged = _merge(merged, report)
            if progress:
                progress(done, len(references))
    except BaseException:
        # Ctrl-C or a failed slice: the queued slices are dropped, not run to the end.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    assert merged is not None
    return merged


def _default_interrupt() -> None:
    """A forked worker inherits the parent's asyncio SIGINT handler; Ctrl-C must stop it."""
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _audit_slice(references: list[Reference], settings: Settings) -> AuditReport:
    from refaudit.audit import audit_references

    return asyncio.run(audit_references(references, settings))


def _context() -> multiprocessing.context.BaseContext:
    """Fork where the platform has it: workers start at once, modules already imported."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _merge(merged: AuditReport | None, report: AuditReport) -> AuditReport:
    """Add a slice's report to the reports of the slices before it."""
    if merged is None:
        return report
    merged.results += report.results
    seen = {(problem.file, problem.message) for problem in merged.problems}
    merged.problems += [p for p in report.problems if (p.file, p.message) not in seen]
    for name in ("requests", "cache_hits", "rate_limited", "failures"):
        total = getattr(merged.stats, name)
        for source, count in getattr(report.stats, name).items():
            total[source] = total.get(source, 0) + count
    return merged
