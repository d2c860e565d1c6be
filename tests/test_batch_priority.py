"""The Ray that `refaudit batch --engine ray` starts audits at the command's own priority."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from refaudit.batch import expand_inputs, run_batch
from refaudit.batch.job import BatchLine
from refaudit.config import load_settings
from tests.mirror_dumps import BIBLIOGRAPHY, build_test_mirror

ray = pytest.importorskip("ray", reason='Ray not installed (pip install "refaudit-cli[ray]")')


def auditor_niceness() -> list[int]:
    """The nice value of each Ray worker auditing for the batch (Linux's /proc)."""
    found = []
    for process in Path("/proc").glob("[0-9]*"):
        try:
            command = (process / "cmdline").read_bytes()
            stat = (process / "stat").read_text()
        except OSError:
            continue
        if command.startswith(b"ray::Auditor"):
            found.append(int(stat.rsplit(")", 1)[1].split()[16]))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads Linux's /proc")
def test_the_batch_s_own_ray_workers_run_at_the_command_s_priority(tmp_path: Path) -> None:
    assert not ray.is_initialized()
    folder = tmp_path / "inputs"
    folder.mkdir()
    for n in range(2):
        (folder / f"part-{n}.bib").write_text(BIBLIOGRAPHY)
    settings = load_settings(
        overrides={"sources": ["mirror"], "mirror": build_test_mirror(tmp_path)}
    )
    seen: list[list[int]] = []

    def watch(line: BatchLine) -> None:
        seen.append(auditor_niceness())

    results = tmp_path / "r.jsonl"
    summary = run_batch(
        expand_inputs([folder]), settings, results, workers=2, engine="ray", on_line=watch
    )
    assert [line.status for line in summary.lines] == ["ok", "ok"]
    assert seen[0] and set(seen[0]) == {os.nice(0)}
    assert not ray.is_initialized()  # the batch stopped the Ray it started
