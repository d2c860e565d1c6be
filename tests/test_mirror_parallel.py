"""A long mirror-only audit spread over worker processes gives the one-process report."""

from __future__ import annotations

import asyncio
import multiprocessing
import re
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from refaudit.audit import audit_paths, audit_references, read_bibliography
from refaudit.config import load_settings
from refaudit.errors import MirrorError
from refaudit.mirror import parallel
from refaudit.mirror.store import MirrorStore
from refaudit.models import AuditReport, Reference, Result, Verdict
from tests.mirror_dumps import BIBLIOGRAPHY, build_test_mirror


def _copies(tmp_path: Path, count: int) -> Path:
    """The mirror tests' bibliography `count` times over, each copy with its own keys."""
    text = "".join(re.sub(r"@(\w+)\{(\w+),", rf"@\1{{\2x{n},", BIBLIOGRAPHY) for n in range(count))
    path = tmp_path / "long.bib"
    path.write_text(text, encoding="utf-8")
    return path


def _audit(bib: Path, mirror: str, processes: int) -> AuditReport:
    settings = load_settings(
        overrides={"sources": ["mirror"], "mirror": mirror, "use_cache": False}, env={}
    )
    settings.processes = processes
    return asyncio.run(audit_paths([bib], settings))


def _summary(report: AuditReport) -> list[tuple[object, ...]]:
    return [
        (
            r.reference.key,
            r.verdict,
            r.reason,
            [(f.code, f.cited, f.found) for f in r.findings],
            sorted(n.kind for n in r.integrity),
            r.matched.doi if r.matched else None,
            r.corrected_bibtex,
        )
        for r in report.results
    ]


def test_slices_in_two_processes_give_the_one_process_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = build_test_mirror(tmp_path)
    bib = _copies(tmp_path, 6)  # 30 references
    monkeypatch.setattr(parallel, "PARALLEL_MIN_REFERENCES", 10)
    monkeypatch.setattr(parallel, "SLICE_REFERENCES", 4)
    merged: list[int] = []
    original = parallel._merge

    def counted(before: AuditReport | None, report: AuditReport) -> AuditReport:
        merged.append(len(report.results))
        return original(before, report)

    monkeypatch.setattr(parallel, "_merge", counted)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)

    alone = _audit(bib, mirror, processes=1)
    assert merged == []
    spread = _audit(bib, mirror, processes=2)

    assert merged == [4] * 7 + [2]  # 30 references in slices of 4, audited by the workers
    assert len(spread.results) == 30
    assert _summary(spread) == _summary(alone)
    assert spread.mirror == alone.mirror
    assert spread.retraction_snapshot == alone.retraction_snapshot
    assert spread.stats.requests == alone.stats.requests


def test_only_long_mirror_only_audits_use_several_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    long = parallel.PARALLEL_MIN_REFERENCES
    mirror_only = load_settings(overrides={"sources": ["mirror"]}, env={})
    assert parallel.worker_count(long, mirror_only) == 2
    assert parallel.worker_count(long - 1, mirror_only) == 1
    # A live source's rate limit is kept in one process: never spread those audits.
    with_live = load_settings(overrides={"sources": ["mirror", "crossref"]}, env={})
    assert parallel.worker_count(long, with_live) == 1
    mirror_only.processes = 1
    assert parallel.worker_count(long, mirror_only) == 1


def test_workers_start_from_a_fork_server_not_from_the_threaded_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A progress bar's or the MCP server's thread runs while the workers start."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork server on this platform")
    assert parallel._context().get_start_method() == "forkserver"
    mirror = build_test_mirror(tmp_path)
    bib = _copies(tmp_path, 3)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_REFERENCES", 10)
    monkeypatch.setattr(parallel, "SLICE_REFERENCES", 5)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    stop = threading.Event()
    busy = threading.Thread(target=stop.wait, daemon=True)
    busy.start()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns when a process with threads forks itself.
            warnings.simplefilter("error", DeprecationWarning)
            report = _audit(bib, mirror, processes=2)
    finally:
        stop.set()
    assert len(report.results) == 15


def _abbreviator_was_built_before_this_call(_: object) -> bool:
    from refaudit.match import abbreviations

    return abbreviations._build_abbreviator.cache_info().currsize == 1


def test_workers_inherit_the_iso4_table_from_the_fork_server() -> None:
    """Building the LTWA costs each process a second of CPU: the fork server builds it
    once, before it forks the workers, instead of every worker building its own."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork server on this platform")
    context = parallel._context()
    parallel._start_fork_server()
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        assert all(pool.map(_abbreviator_was_built_before_this_call, range(4)))


class _FakeWorker:
    """Stands in for a worker's open stores: records the slices it is given."""

    def __init__(self, fail_first: bool) -> None:
        self.slices: list[str] = []
        self.fail_first = fail_first
        self.release = threading.Event()

    def audit(self, references: list[Reference]) -> AuditReport:
        self.slices.append(references[0].key)
        if len(self.slices) == 1:
            if self.fail_first:
                raise RuntimeError("the mirror went away")
        else:
            self.release.wait(10)
        return AuditReport(results=[Result(r, Verdict.SKIPPED) for r in references])


def _stop_after_first_slice(done: int, total: int) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize("fail_first", [True, False], ids=["failed slice", "ctrl-c"])
def test_a_failed_slice_or_ctrl_c_drops_the_queued_slices(
    monkeypatch: pytest.MonkeyPatch, fail_first: bool
) -> None:
    worker = _FakeWorker(fail_first)
    monkeypatch.setattr(parallel, "_worker", worker)
    monkeypatch.setattr(parallel, "SLICE_REFERENCES", 10)
    references = [Reference(key=f"r{n}") for n in range(80)]  # 8 slices
    pool = ThreadPoolExecutor(max_workers=1)
    expected = RuntimeError if fail_first else KeyboardInterrupt
    with pytest.raises(expected):
        asyncio.run(parallel.run_slices(pool, references, _stop_after_first_slice))
    worker.release.set()
    pool.shutdown(wait=True)
    # The first slice, and at most the one the worker had already taken: never all 8. Which
    # one that is depends on the race between the worker and shutdown draining the queue.
    assert worker.slices[0] == "r0" and len(worker.slices) <= 2


def test_a_worker_opens_its_mirror_once_for_all_its_slices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import refaudit.mirror as mirror_module

    location = build_test_mirror(tmp_path)
    opened: list[str] = []
    open_store = mirror_module.open_store

    def counted(where: str) -> MirrorStore:
        opened.append(where)
        return open_store(where)

    monkeypatch.setattr(mirror_module, "open_store", counted)
    monkeypatch.setattr(parallel, "_worker", None)
    settings = load_settings(
        overrides={"sources": ["mirror"], "mirror": location, "use_cache": False}, env={}
    )
    references = read_bibliography([_copies(tmp_path, 2)]).references
    parallel._start_worker(settings)
    try:
        first = parallel._audit_slice(references[:5])
        second = parallel._audit_slice(references[5:])
    finally:
        assert isinstance(parallel._worker, parallel._Worker)
        parallel._worker.close()
    assert opened == [location]
    assert [r.verdict for r in first.results] == [r.verdict for r in second.results]
    assert first.mirror == second.mirror is not None


def test_a_worker_that_cannot_open_the_mirror_says_why_for_each_slice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel, "_worker", None)
    missing = str(tmp_path / "no-mirror.sqlite3")
    settings = load_settings(
        overrides={"sources": ["mirror"], "mirror": missing, "use_cache": False}, env={}
    )
    parallel._start_worker(settings)
    with pytest.raises(MirrorError, match="no mirror at"):
        parallel._audit_slice([Reference(key="a")])


class _Lookahead:
    """References handed out one at a time; refuses to be read more than `limit` ahead
    of the results the audit has handed back (a streamed .bib must not be listed)."""

    def __init__(self, references: list[Reference], limit: int) -> None:
        self.references = references
        self.limit = limit
        self.read = 0
        self.delivered = 0

    def __iter__(self) -> Iterator[Reference]:
        for reference in self.references:
            if self.read - self.delivered >= self.limit:
                raise AssertionError(f"read {self.read}, only {self.delivered} audited")
            self.read += 1
            yield reference

    def on_batch(self, results: list[Result]) -> list[Result]:
        self.delivered += len(results)
        return results


class _EchoWorker:
    def audit(self, references: list[Reference]) -> AuditReport:
        return AuditReport(results=[Result(r, Verdict.SKIPPED) for r in references])


def test_slices_are_taken_from_the_iterator_as_the_workers_need_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parallel, "_worker", _EchoWorker())
    monkeypatch.setattr(parallel, "SLICE_REFERENCES", 10)
    references = [Reference(key=f"r{n}") for n in range(200)]
    source = _Lookahead(references, limit=3 * 10)  # three slices in flight, no more
    ticks: list[tuple[int, int]] = []
    pool = ThreadPoolExecutor(max_workers=2)
    report = asyncio.run(
        parallel.run_slices(
            pool, source, lambda done, total: ticks.append((done, total)),
            source.on_batch, ahead=3, total=200,
        )
    )  # fmt: skip
    assert [r.reference.key for r in report.results] == [r.key for r in references]
    assert ticks[0] == (10, 200) and ticks[-1] == (200, 200)


def test_a_long_iterator_is_read_only_far_enough_to_tell_it_is_long(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    mirror_only = load_settings(overrides={"sources": ["mirror"]}, env={})
    minimum = parallel.PARALLEL_MIN_REFERENCES
    long = [Reference(key=f"r{n}") for n in range(minimum + 500)]
    source = _Lookahead(long, limit=minimum)
    workers, references, total = parallel.plan(iter(source), mirror_only, None)
    assert (workers, total, source.read) == (2, minimum, minimum)
    source.delivered = source.read
    assert list(references) == long
    # A short one is listed whole and audited here; a known total is kept.
    workers, short, total = parallel.plan(iter(long[:10]), mirror_only, 10)
    assert (workers, short, total) == (1, long[:10], 10)
    assert parallel.plan(iter(long), mirror_only, 90_000)[2] == 90_000


def test_a_streamed_bibliography_is_audited_by_workers_a_few_slices_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real workers, real mirror: the input is read a few slices ahead, not listed whole."""
    mirror = build_test_mirror(tmp_path)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_REFERENCES", 10)
    monkeypatch.setattr(parallel, "SLICE_REFERENCES", 4)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    references = read_bibliography([_copies(tmp_path, 16)]).references  # 80
    settings = load_settings(
        overrides={"sources": ["mirror"], "mirror": mirror, "use_cache": False}, env={}
    )
    alone = _audit(tmp_path / "long.bib", mirror, processes=1)
    source = _Lookahead(references, limit=10 + 2 * 2 * 4)  # the first 10, then 4 slices
    spread = asyncio.run(
        audit_references(iter(source), settings, total=80, on_batch=source.on_batch)
    )
    assert source.delivered == 80
    assert _summary(spread) == _summary(alone)
