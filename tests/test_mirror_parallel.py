"""A long mirror-only audit spread over worker processes gives the one-process report."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from refaudit.audit import audit_paths
from refaudit.config import load_settings
from refaudit.mirror import parallel
from refaudit.models import AuditReport, Reference
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
    long = [Reference(key=f"r{n}") for n in range(parallel.PARALLEL_MIN_REFERENCES)]
    mirror_only = load_settings(overrides={"sources": ["mirror"]}, env={})
    assert parallel.worker_count(long, mirror_only) == 2
    assert parallel.worker_count(long[:-1], mirror_only) == 1
    # A live source's rate limit is kept in one process: never spread those audits.
    with_live = load_settings(overrides={"sources": ["mirror", "crossref"]}, env={})
    assert parallel.worker_count(long, with_live) == 1
    mirror_only.processes = 1
    assert parallel.worker_count(long, mirror_only) == 1
