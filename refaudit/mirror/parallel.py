"""A mirror-only audit of a long bibliography, spread over the machine's cores.

With `--sources mirror` nothing waits on the network: every step (search in the
mirror, matching, verdicts, screening) is CPU work, so one process keeps one core
busy. A long bibliography is cut into slices audited by worker processes, each
opening its mirror connection, snapshot and source clients once for all its
slices, and the results come back in input order. The references are taken from
their iterator a slice at a time as the workers need them (a streamed .bib is read
only a few slices ahead of the audit), never listed whole.

Only audits without live sources take this path: a live source's rate limit is
kept by its client in one process, and several processes would each spend it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import multiprocessing
import multiprocessing.util
import os
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor

from refaudit.collector import collect_less
from refaudit.config import MIRROR_SOURCE, Settings
from refaudit.models import AuditReport, Reference, Result, RunStats
from refaudit.pipeline import Stores, audit_with

#: Below this many references, starting the workers costs more than they save.
PARALLEL_MIN_REFERENCES = 2000
#: References per slice: small enough for steady progress and an even share per
#: worker, large enough that each slice's set-up (mirror connection, snapshot) is noise.
SLICE_REFERENCES = 250
#: Slices handed to the pool per worker ahead of the one being merged: a worker that
#: finishes finds the next slice queued, and the input is read only this far ahead.
SLICES_AHEAD = 2


def may_use_processes(settings: Settings) -> bool:
    """Whether an audit may be cut into slices for worker processes: only a mirror-only
    one (no live pool whose limits the workers would have to share), processes allowed."""
    return set(settings.sources) == {MIRROR_SOURCE} and settings.processes != 1


def worker_count(count: int, settings: Settings) -> int:
    """How many processes to audit `count` references with: 1 unless mirror-only, long
    and on several cores."""
    if not may_use_processes(settings) or count < PARALLEL_MIN_REFERENCES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    wanted = settings.processes or cores or 1
    return max(1, min(wanted, cores or 1, count // SLICE_REFERENCES))


def plan(
    references: Iterable[Reference], settings: Settings, total: int | None
) -> tuple[int, Iterable[Reference], int]:
    """(worker count, the same references, how many there are or are expected).

    The length of an iterator is not known up front: its first PARALLEL_MIN_REFERENCES
    are read to tell a short audit (then listed whole, and audited in this process)
    from a long one, whose expected length is `total` when the caller knows it.
    """
    if isinstance(references, Sequence):
        return worker_count(len(references), settings), references, len(references)
    if not may_use_processes(settings):
        return 1, references, total or 0
    if (total or 0) >= PARALLEL_MIN_REFERENCES:
        # Workers will be needed: the fork server prepares them while the head is read.
        _start_fork_server()
    rest = iter(references)
    head = list(itertools.islice(rest, PARALLEL_MIN_REFERENCES))
    if len(head) < PARALLEL_MIN_REFERENCES:
        return 1, head, len(head)
    count = max(total or 0, len(head))
    return worker_count(count, settings), itertools.chain(head, rest), count


async def audit_in_processes(
    references: Iterable[Reference],
    settings: Settings,
    workers: int,
    progress: Callable[[int, int], None] | None = None,
    on_batch: Callable[[list[Result]], Sequence[Result]] | None = None,
    *,
    total: int = 0,
) -> AuditReport:
    """`audit_references` over slices in `workers` processes, merged into one report.

    Each slice's results are handed to `on_batch` (as a batch of the one-process
    pipeline is) in input order, as soon as it and the slices before it are done.
    """
    one_process = dataclasses.replace(settings, processes=1)
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_context(),
        initializer=_start_worker,
        initargs=(one_process,),
    )
    return await run_slices(
        pool, references, progress, on_batch, ahead=workers * SLICES_AHEAD, total=total
    )


async def run_slices(
    pool: Executor,
    references: Iterable[Reference],
    progress: Callable[[int, int], None] | None = None,
    on_batch: Callable[[list[Result]], Sequence[Result]] | None = None,
    *,
    ahead: int = SLICES_AHEAD,
    total: int = 0,
) -> AuditReport:
    """Slices submitted to `pool` at most `ahead` at a time, merged in input order; `pool`
    is shut down. `total` is what `progress` is told to expect."""
    loop = asyncio.get_running_loop()
    pending = iter(references)
    running: deque[tuple[asyncio.Future[_Returned], list[Reference]]] = deque()
    merged: AuditReport | None = None
    done = 0
    try:
        while True:
            while len(running) < ahead and (
                part := list(itertools.islice(pending, SLICE_REFERENCES))
            ):
                future = asyncio.wrap_future(pool.submit(_audit_returned, part), loop=loop)
                # Once one slice fails, the others fail alike (a broken pool): one error is told.
                future.add_done_callback(_retrieved)
                running.append((future, part))
            if not running:
                break
            future, part = running.popleft()
            report = _with_references(await future, part)
            done += len(report.results)
            if on_batch:
                report.results = list(on_batch(report.results))
            merged = _merge(merged, report)
            if progress:
                progress(done, max(total, done))
    except BaseException:
        # Ctrl-C, a failed slice or an unreadable input: the queued slices are dropped.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    assert merged is not None
    return merged


def _retrieved(future: asyncio.Future[_Returned]) -> None:
    if not future.cancelled():
        future.exception()


class _Worker:
    """One worker process's mirror, snapshot and source clients, open for all its slices."""

    def __init__(self, settings: Settings) -> None:
        from refaudit.sources import open_sources

        self.settings = settings
        self.loop = asyncio.new_event_loop()
        self.stores = Stores.open(settings)
        self.clients = contextlib.AsyncExitStack()
        opening = open_sources(settings, RunStats())
        self.sources = self.loop.run_until_complete(self.clients.enter_async_context(opening))
        collect_less()
        #: closes everything once: when the worker process exits, or when called
        self.close = multiprocessing.util.Finalize(self, self._close, exitpriority=10)

    def audit(self, references: list[Reference]) -> AuditReport:
        from refaudit.sources import sharing

        with sharing(self.sources):
            return self.loop.run_until_complete(audit_with(references, self.settings, self.stores))

    def _close(self) -> None:
        self.loop.run_until_complete(self.clients.aclose())
        self.stores.close()
        self.loop.close()


#: This worker process's open stores and clients, or why they could not be opened.
_worker: _Worker | BaseException | None = None


def _start_worker(settings: Settings) -> None:
    """Pool initializer: open once what every slice of this worker reads."""
    global _worker
    try:
        _worker = _Worker(settings)
    except Exception as exc:  # raised again by each slice, so the parent sees the cause
        _worker = exc


def _audit_slice(references: list[Reference]) -> AuditReport:
    if isinstance(_worker, BaseException):
        raise _worker
    assert _worker is not None, "slices run only in workers started by _start_worker"
    return _worker.audit(references)


#: A slice's report, and for each result whether its reference is the one the parent sent
#: (then replaced by `_SENT` on the way back).
_Returned = tuple[AuditReport, list[bool]]
#: Stands for a reference the parent holds already.
_SENT = Reference(key="")


def _audit_returned(references: list[Reference]) -> _Returned:
    """`_audit_slice`, its results sent back without the references the parent holds:
    pickled a second time and unpickled, they cost the parent as much as the results."""
    report = _audit_slice(references)
    if len(report.results) != len(references):
        return report, [False] * len(report.results)
    sent = [r.reference is given for r, given in zip(report.results, references, strict=True)]
    for result, same in zip(report.results, sent, strict=True):
        if same:
            result.reference = _SENT
    return report, sent


def _with_references(returned: _Returned, references: list[Reference]) -> AuditReport:
    """The slice's report with the references it was sent put back in their results."""
    report, sent = returned
    for result, given, same in zip(report.results, references, sent, strict=False):
        if same:
            result.reference = given
    return report


def _context() -> multiprocessing.context.BaseContext:
    """A fresh server process forks the workers: the caller may be running threads.

    Forking the caller itself copies whatever its threads (a progress bar's, the
    MCP server's) hold at that moment, locks included; the fork server is started
    from a clean interpreter with the audit's modules already imported, so its
    workers still start at once.
    """
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" not in methods:
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(
        ["refaudit.pipeline", "refaudit.mirror.parallel", "refaudit.mirror.preload"]
    )
    return context


def _start_fork_server() -> None:
    """Start the fork server (and its preloading) now, in the background, if it is the
    start method workers will use."""
    from multiprocessing import forkserver

    if _context().get_start_method() == "forkserver":
        forkserver.ensure_running()


def _merge(merged: AuditReport | None, report: AuditReport) -> AuditReport:
    """Add a slice's report to the reports of the slices before it."""
    if merged is None:
        return report
    merged.results += report.results
    seen = {(problem.file, problem.message) for problem in merged.problems}
    merged.problems += [p for p in report.problems if (p.file, p.message) not in seen]
    merged.stats.add(report.stats)
    return merged
