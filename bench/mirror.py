"""Mirror and batch benchmarks: parity, throughput, batch rates, build and load.

Every step works from the bulk export of a corpus (`../shared/scholarsim/export_dumps.py`
for Crossref, OpenAlex and Retraction Watch, `export_s2.py` for Semantic Scholar's
`papers` release, both with the simulator's own renderers), so a mirror built from it
must agree with the simulated live APIs record for record. No simulator runs:
`--sources mirror` sends no request at all.

    python bench/mirror.py parity                # world export → SQLite; gen, hallmark, retractions
    python bench/mirror.py throughput            # scale-5000 via SQLite and PostgreSQL
    python bench/mirror.py batch --copies 40     # scale-1000 copies, 1 and 2 workers, local and ray
    python bench/mirror.py batch --inputs distinct --engines local ray ray-cluster
    python bench/mirror.py load                  # world-synth into SQLite and PostgreSQL

Timings are wall time and this process's CPU time; the machine is shared, so the
load average at the start of each step is printed with it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import resource
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from accuracy import PUBLIC, SETS, prediction, score
from simulator import SHARED

REPO = Path(__file__).resolve().parents[1]
EXPORT = SHARED / "scholarsim" / "export_dumps.py"
EXPORT_S2 = Path(__file__).with_name("export_s2.py")
CORPORA = {
    "world": SHARED / "bench" / "world.jsonl.gz",
    "synth": SHARED / "bench" / "world-synth.jsonl.gz",
}


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def export(corpus: str, folder: Path) -> Path:
    """The corpus as bulk files (reused when `folder` already holds them): Crossref,
    OpenAlex and Retraction Watch by the simulator's export, Semantic Scholar's
    `papers` release by `export_s2.py`."""
    source = str(CORPORA[corpus])
    if not (folder / "manifest.json").is_file():
        command = [sys.executable, str(EXPORT), "--corpus", source, "--out", str(folder)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    if not (folder / "s2" / "papers").is_dir():
        command = [sys.executable, str(EXPORT_S2), "--corpus", source, "--out", str(folder / "s2")]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return folder


def build(dumps: Path, location: str) -> dict[str, object]:
    """`refaudit mirror build` in a child process: wall time, peak memory, size."""
    command = [
        sys.executable, "-m", "refaudit", "mirror", "build", "--quiet", "--db", location,
        "--crossref", str(dumps / "crossref"), "--openalex", str(dumps / "openalex"),
        "--s2", str(dumps / "s2"), "--retractions", str(dumps / "retraction_watch.csv"),
    ]  # fmt: skip
    started, cpu = time.monotonic(), _cpu_seconds()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    seconds, cpu = time.monotonic() - started, _cpu_seconds() - cpu
    status = subprocess.run(
        [
            sys.executable,
            "-m",
            "refaudit",
            "mirror",
            "status",
            "--db",
            location,
            "--format",
            "json",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    info = json.loads(status.stdout)
    records = sum(info["records"].values())
    return {
        "seconds": round(seconds, 1),
        "cpu_s": round(cpu, 1),
        "records": info["records"],
        "records_per_s": round(records / seconds),
        "size_mb": round(info["size_bytes"] / 1e6, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "load": load_average(),
        "output": done.stdout.strip().splitlines()[-1],
    }


def audit_set(
    name: str, location: str, settings: object | None = None
) -> tuple[list[object], float, float, int]:
    """One public set through the mirror (alone unless `settings` adds live sources).

    Returns the results, wall and CPU seconds (this process and the worker processes
    a long mirror-only audit starts), and the requests sent to live sources.
    """
    from refaudit.audit import audit_paths
    from refaudit.config import load_settings

    if settings is None:
        settings = load_settings(overrides={"sources": ["mirror"], "use_cache": False})
    settings.mirror = location  # type: ignore[attr-defined]
    wall, cpu = time.monotonic(), _cpu_seconds()
    report = asyncio.run(audit_paths([PUBLIC / SETS[name]], settings, all_entries=True))  # type: ignore[arg-type]
    _stop_fork_server()
    requests = sum(report.stats.requests.values())
    return report.results, time.monotonic() - wall, _cpu_seconds() - cpu, requests


def _adopt_orphans() -> None:
    """Become the reaper of orphaned descendants (Linux): the command's fork server,
    whose children are a long audit's workers, outlives the command by a moment."""
    import ctypes

    pr_set_child_subreaper = 36
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0)


def _reap_orphans() -> None:
    """Wait for adopted fork servers, so their workers' CPU time counts as our children's."""
    for process in Path("/proc").glob("[0-9]*"):
        try:
            command = (process / "cmdline").read_bytes()
            state, parent = (process / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        # A fork server that has already exited is a zombie: no command line any more.
        if int(parent) == os.getpid() and (state == "Z" or b"forkserver" in command):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(int(process.name), 0)


def _stop_fork_server() -> None:
    """A long audit's workers are the fork server's children: stopping the server (the
    next long audit starts it again) adds their CPU time to this process's children."""
    from multiprocessing import forkserver

    forkserver._forkserver._stop()  # type: ignore[attr-defined]


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the audit's workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def cli_check(name: str, location: str, folder: Path) -> dict[str, object]:
    """`refaudit check --sources mirror -f json -o …` in a child process: the command as run."""
    command = [
        sys.executable, "-m", "refaudit", "check", str(PUBLIC / SETS[name]), "--sources",
        "mirror", "--mirror", location, "--no-cache", "--quiet", "--format", "json",
        "--output", str(folder / f"{name}.json"), "--fail-on", "none",
    ]  # fmt: skip
    load = load_average()
    started, cpu = time.monotonic(), _cpu_seconds()
    subprocess.run(command, check=True, capture_output=True)
    seconds = time.monotonic() - started
    _reap_orphans()
    cpu = _cpu_seconds() - cpu
    references = len(json.loads((folder / f"{name}.json").read_text())["results"])
    return _rates(references, seconds, cpu, load)


def _rates(references: int, seconds: float, cpu: float, load: str) -> dict[str, object]:
    """One throughput row: wall and CPU time, and references per second of each."""
    return {
        "references": references,
        "seconds": round(seconds, 1),
        "cpu_s": round(cpu, 1),
        "refs_per_s": round(references / seconds),
        "refs_per_cpu_s": round(references / cpu),
        "load": load,
    }


def parity(args: argparse.Namespace) -> dict[str, object]:
    dumps = export("world", args.work / "world")
    location = str(args.work / "world.sqlite3")
    out: dict[str, object] = {"build": build(dumps, location)}
    for name in ("gen", "hallmark-dev_public", "retractions"):
        out[name] = _scored(name, location)
    out["typos"] = typo_search(location)
    if args.with_live:
        # Mirror first, the simulated live APIs (realistic config) for what it cannot settle.
        from simulator import refaudit_settings, start_simulator

        process, url = start_simulator("realistic")
        try:
            for name in ("gen", "hallmark-dev_public", "retractions"):
                settings = refaudit_settings(url, str(args.work / f"live-{name}"), "realistic")
                out[f"{name}+live"] = _scored(name, location, settings)
        finally:
            process.terminate()
            process.wait(timeout=10)
    return out


def _scored(name: str, location: str, settings: object | None = None) -> dict[str, object]:
    results, wall, cpu, requests = audit_set(name, location, settings)
    labels = json.loads((PUBLIC / f"{name}.labels.json").read_text())["labels"]
    scores = score(labels, {r.reference.key: prediction(r) for r in results})  # type: ignore[attr-defined]
    keep = ("detection_rate", "false_positive_rate", "coverage", "typo_found")
    return {k: scores[k] for k in keep} | {
        "integrity_recall": scores["integrity_recall"],
        "false_integrity_flags": scores["false_integrity_flags"],
        "seconds": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "live_requests": requests,
    }


def typo_search(location: str, count: int = 200) -> dict[str, object]:
    """Titles with a slip in every long word, searched through the mirror's fuzzy pass."""
    from refaudit.mirror import open_store
    from refaudit.mirror.store import CandidateSearch
    from refaudit.sources.base import SearchQuery
    from refaudit.sources.mirror import MirrorSource

    rng = random.Random(15)
    store = open_store(location)
    crossref = MirrorSource(store).as_sources().get("crossref")
    words = ["learning", "neural", "model", "analysis"]
    bodies = store.candidates("crossref", CandidateSearch(words, limit=2000))
    titles = [c.title for c in bodies if len(c.title.split()) >= 4][:count]
    found = 0
    for title in titles:
        typo = " ".join(_slip(word, rng) if len(word) >= 6 else word for word in title.split())
        hits = asyncio.run(crossref.search(SearchQuery(title=typo, limit=5)))  # type: ignore[union-attr]
        found += bool(hits) and hits[0].title is not None and _normal(hits[0].title) == title
    store.close()
    return {
        "titles": len(titles),
        "found_first": found,
        "rate": round(found / max(1, len(titles)), 3),
    }


def _slip(word: str, rng: random.Random) -> str:
    """Swap two neighbouring letters inside the word."""
    i = rng.randrange(1, len(word) - 2)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def _normal(title: str) -> str:
    from refaudit import match

    return match.normalize_text(title)


@contextlib.contextmanager
def postgres() -> Iterator[str]:
    sys.path.insert(0, str(REPO))
    from tests.pg_cluster import throwaway_cluster, why_unavailable

    reason = why_unavailable()
    if reason:
        raise SystemExit(f"PostgreSQL: {reason}")
    with throwaway_cluster(settings=("shared_buffers=256MB", "maintenance_work_mem=256MB")) as url:
        yield url


def throughput(args: argparse.Namespace) -> dict[str, object]:
    dumps = export("world", args.work / "world")
    out: dict[str, object] = {}
    sqlite_location = str(args.work / "world.sqlite3")
    if not Path(sqlite_location).is_file():
        build(dumps, sqlite_location)
    with postgres() as url:
        out["postgres_build"] = build(dumps, url)
        for backend, location in (("sqlite", sqlite_location), ("postgresql", url)):
            load = load_average()
            results, wall, cpu, _ = audit_set(args.set, location)
            out[backend] = _rates(len(results), wall, cpu, load)
            out[f"{backend}_cli"] = cli_check(args.set, location, args.work)
        out["postgresql_typos"] = typo_search(url)
    return out


def batch(args: argparse.Namespace) -> dict[str, object]:
    """`refaudit batch` from the SQLite mirror with 1 and 2 workers, per engine.

    Engines: `local` (a process pool), `ray` (Ray started by the batch, local mode)
    and `ray-cluster` (a Ray cluster of two one-CPU nodes on this machine started with
    `ray start`, the batch joining it by `--ray-address`). Inputs: `copies` of
    scale-1000 (they share every cached match) or `distinct` files of 250 entries cut
    from every public .bib set (no two alike). Each batch is the command as a user runs
    it, timed from its start to its exit.
    """
    dumps = export("world", args.work / "world")
    location = str(args.work / "world.sqlite3")
    if not Path(location).is_file():
        build(dumps, location)
    inputs = args.work / args.inputs
    shutil.rmtree(inputs, ignore_errors=True)
    inputs.mkdir()
    count = _write_inputs(inputs, args.inputs, args.copies)
    out: dict[str, object] = {"inputs": args.inputs, "files": count}
    for engine in args.engines:
        for workers in (1, 2):
            results = args.work / f"batch-{engine}-{workers}.jsonl"
            results.unlink(missing_ok=True)
            with _ray_cluster(engine == "ray-cluster", workers, args.work) as cluster:
                load = load_average()
                run = _command_batch(inputs, location, results, workers, engine, cluster)
                # The same command again, every input already done: what the engine
                # costs with nothing to audit (Ray is still started and stopped).
                bare = _command_batch(inputs, location, results, workers, engine, cluster)
            references = run["references"]
            out[f"{engine}-{workers}"] = {
                "references": references,
                "errors": run["errors"],
                "seconds": round(run["seconds"], 1),
                "refs_per_s": round(references / run["seconds"]),
                "audits_s": round(run["audits_s"], 1),
                # Each worker's own rate while auditing: the audits scale when it holds.
                "refs_per_worker_s": round(references / run["audits_s"]),
                "no_input_s": round(bare["seconds"], 1),
                "load": load,
            }
        one, two = out.get(f"{engine}-1"), out.get(f"{engine}-2")
        if isinstance(one, dict) and isinstance(two, dict):
            out[f"{engine}-speed-up"] = round(two["refs_per_s"] / one["refs_per_s"], 2)
    return out


def _command_batch(
    inputs: Path,
    location: str,
    results: Path,
    workers: int,
    engine: str,
    cluster: dict[str, str] | None,
) -> dict[str, float]:
    """`refaudit batch` in a process of its own, timed from its start to its exit.

    Returns references, errors, the wall time and the time the inputs took each in
    their worker, summed.
    """
    command = [
        sys.executable, "-m", "refaudit", "batch", str(inputs), "--sources", "mirror",
        "--mirror", location, "--no-cache", "--quiet", "--fail-on", "none", "-o", str(results),
        "--workers", str(workers), "--engine", "local" if engine == "local" else "ray",
    ]  # fmt: skip
    env = dict(os.environ)
    if cluster:
        command += ["--ray-address", cluster["address"]]
        env |= cluster["env"]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.monotonic() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"batch failed ({done.returncode}): {done.stderr[-2000:]}")
    lines = (
        [json.loads(raw) for raw in results.read_text().splitlines()] if results.exists() else []
    )
    return {
        "references": sum(line["references"] for line in lines),
        "errors": sum(line["status"] == "error" for line in lines),
        "seconds": seconds,
        "audits_s": sum(line["elapsed_s"] for line in lines),
    }


def _write_inputs(folder: Path, kind: str, copies: int) -> int:
    """The batch's input files; returns how many."""
    if kind == "copies":
        for n in range(copies):
            shutil.copyfile(PUBLIC / "scale-1000.bib", folder / f"scale-1000-{n:02d}.bib")
        return copies
    entries: list[str] = []
    for name in ("scale-5000.bib", "hallmark-dev_public.bib", "gen.bib", "retractions.bib"):
        text = (PUBLIC / name).read_text(encoding="utf-8")
        starts = [m.start() for m in re.finditer(r"^@\w+\{", text, re.MULTILINE)]
        entries += [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    unique = list(dict.fromkeys(entries))
    files = [unique[i : i + 250] for i in range(0, len(unique), 250)]
    for n, part in enumerate(files):
        (folder / f"part-{n:03d}.bib").write_text("".join(part), encoding="utf-8")
    return len(files)


@contextlib.contextmanager
def _ray_cluster(wanted: bool, nodes: int, work: Path) -> Iterator[dict[str, str] | None]:
    """A Ray cluster of `nodes` one-CPU nodes on this machine, as `ray start` makes one.

    Yields its address and the environment a client needs to join it: every node and
    client of a cluster must agree on `RAY_AUTH_MODE` (Ray 2.5x turns token
    authentication on by itself for a head that finds a token, never for a node or a
    client given an address), and all of them read the same token. The workers run at
    the command's priority (`RAY_worker_niceness=0`; Ray's default is nice 15).
    """
    if not wanted:
        yield None
        return
    token = work / "ray-auth-token"
    if not token.is_file():
        token.write_text(secrets.token_hex(32))
        token.chmod(0o600)
    env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ray = str(Path(sys.executable).with_name("ray"))
    common = ["--num-cpus", "1", "--disable-usage-stats", "--block"]
    # A temp dir of its own: `ray start --head` records itself as the machine's current
    # cluster there, for every later `ray.init()` to join, and `--block` never erases it.
    temp = ["--temp-dir", str(work / "ray")]
    head = [ray, "start", "--head", "--port", str(port), "--include-dashboard", "false"]
    head += [*temp, *common]
    started: list[subprocess.Popen[str]] = []
    try:
        started.append(_ray_node(head, env | {"RAY_worker_niceness": "0"}))
        address = f"{_node_ip(started[0])}:{port}"
        for _ in range(nodes - 1):
            node = [ray, "start", "--address", address, *common]
            started.append(_ray_node(node, env | {"RAY_worker_niceness": "0"}))
        yield {"address": address, "env": env}
    finally:
        # Each `ray start --block` stops its own node's processes on SIGTERM; `ray stop`
        # would stop every Ray on the machine.
        for process in reversed(started):
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _ray_node(command: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    """Start one `ray start --block` and return once its node is up."""
    process = subprocess.Popen(
        command, env=os.environ | env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    seen = []
    for line in process.stdout:
        seen.append(line)
        if "Ray runtime started" in line:
            process.log = seen  # type: ignore[attr-defined]
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process
    process.wait()
    raise SystemExit("ray start failed:\n" + "".join(seen[-20:]))


def _node_ip(head: subprocess.Popen[str]) -> str:
    """The address the head printed for other nodes to join it by."""
    for line in head.log:  # type: ignore[attr-defined]
        found = re.search(r"ray start --address='([\d.]+):\d+'", line)
        if found:
            return found.group(1)
    return "127.0.0.1"


def load(args: argparse.Namespace) -> dict[str, object]:
    dumps = export("synth", args.work / "synth")
    out: dict[str, object] = {"sqlite": build(dumps, str(args.work / "synth.sqlite3"))}
    with postgres() as url:
        out["postgresql"] = build(dumps, url) | {"sizes_mb": postgres_sizes(url)}
    return out


def postgres_sizes(url: str) -> dict[str, float]:
    """Heap (with TOAST) and each index of the mirror's tables, in MB."""
    import psycopg

    from refaudit.mirror.postgres import SCHEMA

    with psycopg.connect(url) as db:
        rows = db.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) - pg_indexes_size(c.oid)"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind = 'r'"
            " UNION ALL SELECT i.indexname,"
            " pg_relation_size((i.schemaname || '.' || i.indexname)::regclass)"
            " FROM pg_indexes i WHERE i.schemaname = %s",
            (SCHEMA, SCHEMA),
        ).fetchall()
    return {name: round(size / 1e6, 1) for name, size in rows}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("step", choices=["parity", "throughput", "batch", "load"])
    parser.add_argument("--work", type=Path, help="folder for exports and mirrors (kept)")
    parser.add_argument("--set", default="scale-5000", choices=list(SETS))
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument(
        "--engines", nargs="*", default=["local", "ray"], choices=["local", "ray", "ray-cluster"]
    )
    parser.add_argument(
        "--inputs", default="copies", choices=["copies", "distinct"], help="batch: input files"
    )
    parser.add_argument(
        "--with-live", action="store_true", help="parity: also mirror first + simulated live APIs"
    )
    args = parser.parse_args()
    if not PUBLIC.exists():
        raise SystemExit(f"{PUBLIC} not found: the benchmark needs ../shared")
    _adopt_orphans()
    with tempfile.TemporaryDirectory(prefix="refaudit-mirror-bench-") as scratch:
        args.work = args.work or Path(scratch)
        args.work.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("REFAUDIT_CACHE_DIR", str(args.work / "cache"))
        os.environ.setdefault("REFAUDIT_DATA_DIR", str(args.work / "data"))
        step = {"parity": parity, "throughput": throughput, "batch": batch, "load": load}
        print(json.dumps(step[args.step](args), indent=2))


if __name__ == "__main__":
    main()
