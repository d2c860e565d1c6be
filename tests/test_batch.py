"""`refaudit batch`: many inputs, one results line each, resumable; local pool and Ray."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refaudit.batch import expand_inputs, run_batch
from refaudit.batch.cluster import LIMITER_PREFIX, RateLimiter
from refaudit.cli import app
from refaudit.config import load_settings
from tests.mirror_dumps import BIBLIOGRAPHY, build_test_mirror

runner = CliRunner()
CLEAN = (
    "@inproceedings{he2016, title={Deep Residual Learning for Image Recognition},"
    " author={He, Kaiming and Zhang, Xiangyu and Ren, Shaoqing and Sun, Jian},"
    " booktitle={CVPR}, year={2016}, doi={10.1109/CVPR.2016.90}}\n"
)


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    return Path(build_test_mirror(tmp_path))


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """A folder of submissions: a manuscript with its .bib, a lone .bib, a broken file."""
    root = tmp_path / "submissions"
    (root / "paper-a").mkdir(parents=True)
    (root / "paper-a" / "main.tex").write_text(
        "\\documentclass{article}\\begin{document}\\cite{he2016,invented2021}"
        "\\bibliography{refs}\\end{document}\n"
    )
    (root / "paper-a" / "refs.bib").write_text(BIBLIOGRAPHY)
    (root / "clean.bib").write_text(CLEAN)
    (root / "broken.bib").write_bytes(b"\x00\x01 not a bibliography")
    return root


def test_folders_and_manifests_expand_to_manuscripts(inputs: Path, tmp_path: Path) -> None:
    found = expand_inputs([inputs])
    assert [p.name for p in found] == ["broken.bib", "clean.bib", "main.tex"]
    manifest = tmp_path / "list.txt"
    manifest.write_text("# this week\nsubmissions/clean.bib\nsubmissions/paper-a  # folder\n")
    assert [p.name for p in expand_inputs([manifest])] == ["clean.bib", "main.tex"]


def test_a_batch_no_source_could_check_exits_3_not_0(tmp_path: Path) -> None:
    """Offline with nothing cached, every reference is unverified: the batch says so and
    exits 3, as `check` does, unless the user accepts an incomplete audit."""
    root = tmp_path / "submissions"
    root.mkdir()
    (root / "refs.bib").write_text(BIBLIOGRAPHY)
    (root / "clean.bib").write_text(CLEAN)
    args = ["batch", str(root), "--offline", "--no-cache", "-o"]
    unchecked = runner.invoke(app, [*args, str(tmp_path / "a.jsonl")])
    assert unchecked.exit_code == 3, unchecked.output
    assert "6 unverified references" in unchecked.output
    assert "exit 3: 100% of the references are unverified" in unchecked.output
    accepted = runner.invoke(app, [*args, str(tmp_path / "b.jsonl"), "--allow-unverified"])
    assert accepted.exit_code == 0, accepted.output
    assert "6 unverified references" in accepted.output


def test_batch_writes_one_line_per_input_and_resumes(
    inputs: Path, mirror: Path, tmp_path: Path
) -> None:
    results = tmp_path / "results.jsonl"
    args = ["batch", str(inputs), "--sources", "mirror", "--mirror", str(mirror), "-o"]
    first = runner.invoke(app, [*args, str(results), "--workers", "2"])
    assert first.exit_code == 3, first.output  # the broken input is recorded, not fatal
    lines = {Path(line["input"]).name: line for line in map(json.loads, results.open())}
    assert set(lines) == {"broken.bib", "clean.bib", "main.tex"}

    assert lines["broken.bib"]["status"] == "error"
    assert "binary file" in lines["broken.bib"]["error"]
    clean = lines["clean.bib"]
    assert clean["status"] == "ok" and clean["references"] == 1 and clean["failing"] == []
    paper = lines["main.tex"]
    assert paper["references"] == 2
    assert [f["key"] for f in paper["failing"]] == ["invented2021"]
    assert paper["failing"][0]["codes"] == ["not-found"]
    report = json.loads(Path(paper["report"]).read_text())
    assert report["mirror"]["backend"] == "sqlite" and len(report["results"]) == 2
    assert "3 input(s) audited, 0 already done" in first.output

    again = runner.invoke(app, [*args, str(results)])
    assert "0 input(s) audited, 3 already done" in again.output
    assert len(results.read_text().splitlines()) == 3


def test_unknown_engine_and_results_over_an_input_are_refused(inputs: Path) -> None:
    bad_engine = runner.invoke(app, ["batch", str(inputs), "-o", "r.jsonl", "--engine", "spark"])
    assert bad_engine.exit_code == 2 and "unknown engine 'spark'" in bad_engine.output
    over = runner.invoke(app, ["batch", str(inputs), "-o", str(inputs / "clean.bib")])
    assert over.exit_code == 2 and "overwrite an input" in over.output


def test_the_rate_limiter_lets_a_burst_through_then_spaces_requests() -> None:
    limiter = RateLimiter()
    waits = [limiter.reserve(2.0, 2) for _ in range(5)]
    assert waits[:2] == [0.0, 0.0]
    assert waits[2] == pytest.approx(0.5, abs=0.05)
    assert waits[4] == pytest.approx(1.5, abs=0.05)


def test_without_the_extras_the_commands_name_the_extra_to_install(
    inputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    monkeypatch.setitem(sys.modules, "psycopg", None)
    no_ray = runner.invoke(app, ["batch", str(inputs), "-o", "r.jsonl", "--engine", "ray"])
    assert no_ray.exit_code == 2
    assert "the Ray engine needs Ray" in no_ray.output and "refaudit-cli[ray]" in no_ray.output
    no_pg = runner.invoke(app, ["mirror", "status", "--db", "postgresql://localhost/db"])
    assert no_pg.exit_code == 2 and "refaudit-cli[postgres]" in no_pg.output


ray = pytest.importorskip("ray", reason='Ray not installed (pip install "refaudit-cli[ray]")')


def test_a_ray_address_where_nothing_listens_is_refused_at_once(
    inputs: Path, tmp_path: Path
) -> None:
    with socket.socket() as probe:  # a port just freed: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    results = tmp_path / "results.jsonl"
    args = ["batch", str(inputs), "-o", str(results), "--engine", "ray"]
    for address in (f"127.0.0.1:{port}", f"ray://localhost:{port}"):
        started = time.monotonic()
        refused = runner.invoke(app, [*args, "--ray-address", address])
        assert refused.exit_code == 2, refused.output
        assert f"nothing answers at the Ray address {address}" in refused.output
        assert time.monotonic() - started < 5  # Ray alone retries for a minute
    assert not results.exists()


def test_a_malformed_ray_address_is_refused_with_a_message_not_a_traceback(
    inputs: Path, tmp_path: Path
) -> None:
    results = tmp_path / "results.jsonl"
    args = ["batch", str(inputs), "-o", str(results), "--engine", "ray"]
    for address, said in (
        ("127.0.0.1:70000", "names no TCP port"),
        ("ray://127.0.0.1:0", "names no TCP port"),
        ("a" * 300 + ":6379", "nothing answers at the Ray address"),
    ):
        refused = runner.invoke(app, [*args, "--ray-address", address])
        assert refused.exit_code == 2, refused.output
        assert said in refused.output and "internal error" not in refused.output
    assert not results.exists()


def test_a_cluster_that_refuses_the_client_names_the_token_settings(
    inputs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What Ray raises when the head wants a token the client does not send: nothing
    # about authentication.
    def refused(**_: object) -> None:
        raise ConnectionError(f"Failed to connect to Ray cluster at {address}")

    monkeypatch.setattr(ray, "init", refused)
    results = tmp_path / "results.jsonl"
    with socket.socket() as head:  # something listens there
        head.bind(("127.0.0.1", 0))
        head.listen()
        address = f"127.0.0.1:{head.getsockname()[1]}"
        args = ["batch", str(inputs), "-o", str(results), "--engine", "ray"]
        joined = runner.invoke(app, [*args, "--ray-address", address])
    assert joined.exit_code == 2
    assert f"could not join the Ray cluster at {address}" in joined.output
    assert "RAY_AUTH_MODE=token" in joined.output and "RAY_AUTH_TOKEN_PATH" in joined.output
    assert not results.exists()  # no results file is begun for a batch that cannot run


def test_the_ray_a_batch_starts_is_its_own_whatever_ray_address_says(
    inputs: Path, mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without --ray-address Ray would join RAY_ADDRESS (or the last `ray start` here).
    assert not ray.is_initialized(), "runs before the tests that share one Ray"
    monkeypatch.setenv("RAY_ADDRESS", "a cluster long gone")
    results = tmp_path / "own.jsonl"
    args = ["batch", str(inputs / "clean.bib"), "--sources", "mirror", "--mirror", str(mirror)]
    done = runner.invoke(app, [*args, "-o", str(results), "--engine", "ray", "--workers", "2"])
    assert done.exit_code == 0, done.output
    line = json.loads(results.read_text())
    assert line["status"] == "ok" and line["counts"]["verified"] == 1
    assert not ray.is_initialized()  # stopped with the batch


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning", log_to_driver=False)
    yield
    ray.shutdown()


def test_the_ray_engine_audits_as_tasks_with_shared_limiters(
    ray_cluster: None, inputs: Path, mirror: Path, tmp_path: Path
) -> None:
    # Crossref is asked about what the mirror cannot settle; it refuses at once (port 9).
    env = {**os.environ, "REFAUDIT_CROSSREF_URL": "http://127.0.0.1:9"}
    overrides = {"sources": ["mirror", "crossref"], "mirror": str(mirror), "max_retries": 0}
    settings = load_settings(env=env, overrides=overrides)
    results = tmp_path / "ray.jsonl"
    # The batch shares the named limiter it finds; this handle keeps it alive after the
    # batch lets go of its own, so what it paced can still be read.
    limiter = (
        ray.remote(num_cpus=0)(RateLimiter)
        .options(name=LIMITER_PREFIX + "crossref", get_if_exists=True)
        .remote()
    )
    summary = run_batch(expand_inputs([inputs]), settings, results, workers=2, engine="ray")
    assert sorted(line.status for line in summary.lines) == ["error", "ok", "ok"]
    assert summary.references == 3
    invented = json.loads(Path(paper_report(summary)).read_text())["results"][1]
    assert (
        invented["verdict"] == "unverified" and invented["sources"]["crossref"]["state"] == "failed"
    )
    assert ray.get(limiter.reservations.remote()) >= 1  # the worker's requests were paced


def paper_report(summary: object) -> str:
    return next(line.report for line in summary.lines if line.input.endswith("main.tex"))  # type: ignore[attr-defined]


def test_every_engine_and_worker_count_gives_the_same_lines_and_verdicts(
    ray_cluster: None, inputs: Path, mirror: Path, tmp_path: Path
) -> None:
    settings = load_settings(overrides={"sources": ["mirror"], "mirror": str(mirror)})
    runs = {
        (engine, workers): run_batch(
            expand_inputs([inputs]),
            settings,
            tmp_path / f"{engine}-{workers}.jsonl",
            workers=workers,
            engine=engine,  # type: ignore[arg-type]
        )
        for engine in ("local", "ray")
        for workers in (1, 2)
    }
    seen = {run: outcome(summary) for run, summary in runs.items()}
    lines, verdicts = seen["local", 1]
    assert all(found == (lines, verdicts) for found in seen.values())
    assert [line[1] for line in lines] == ["error", "ok", "ok"]
    assert ("he2016", "verified") in verdicts[str(inputs / "clean.bib")]


def outcome(summary: object) -> tuple[list[tuple[object, ...]], dict[str, list[tuple[str, str]]]]:
    """What a batch found, whichever engine ran it: each input's line, each reference's verdict."""
    lines = sorted(
        (line.input, line.status, line.references, line.counts, line.failing, line.error)
        for line in summary.lines  # type: ignore[attr-defined]
    )
    verdicts = {
        line.input: [
            (result["reference"]["key"], result["verdict"])
            for result in json.loads(Path(line.report).read_text())["results"]
        ]
        for line in summary.lines  # type: ignore[attr-defined]
        if line.report
    }
    return lines, verdicts
