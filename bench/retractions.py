"""Retraction benchmark: integrity recall and false flags on ../shared/bench/public/retractions.bib.

Starts ../shared/scholarsim on the benchmark world, downloads its Labs
Retraction Watch CSV with `refaudit retractions update`, then screens every
reference three ways: the snapshot alone (offline, by DOI, PMID or title),
live Crossref + OpenAlex (`check_dois`, no snapshot), and both together.
Prints recall per expected notice kind, false flags on the clean controls,
requests sent and wall time, and writes the "Retractions" section of
docs/benchmarks.md.

    python bench/retractions.py                      # default simulator limits
    python bench/retractions.py --config no-limits --no-docs
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from simulator import SHARED, simulator_env, start_simulator

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = SHARED / "bench" / "public"
DOCS = ROOT / "docs" / "benchmarks.md"
SECTION = "## Retractions"
# Which notice kinds count as the labels' expected kind (the labels fold removal into retraction).
EXPECTED_KINDS = {
    "retraction": {"retraction", "partial_retraction", "removal"},
    "withdrawal": {"withdrawal"},
    "expression_of_concern": {"expression_of_concern"},
    "correction": {"correction"},
}
WITHDRAWING = {"retraction", "partial_retraction", "removal", "withdrawal"}
SEVERITY_ORDER = (
    "retraction",
    "partial_retraction",
    "removal",
    "withdrawal",
    "expression_of_concern",
    "correction",
    "reinstatement",
)


def simulator_requests(base: str) -> int:
    import httpx

    stats = httpx.get(f"{base}/_sim/stats", timeout=10).json()
    return int(stats.get("total", {}).get("requests", 0))


def reset_simulator(base: str) -> None:
    import httpx

    httpx.post(f"{base}/_sim/reset", timeout=10)


@dataclass
class Run:
    """Kinds found per citation key by one screening mode, and what it cost."""

    name: str
    kinds: dict[str, list[str]] = field(default_factory=dict)
    requests: int = 0
    seconds: float = 0.0
    unknown: int = 0
    covered: int = 0


def worst(kinds: list[str]) -> str | None:
    return next((kind for kind in SEVERITY_ORDER if kind in kinds), None)


def screen_offline(references: list, settings) -> Run:  # type: ignore[no-untyped-def]
    """The snapshot alone, through the same `screen_results` the pipeline calls."""
    from refaudit.models import Result, Verdict
    from refaudit.retractions import Snapshot, screen_results

    run = Run("snapshot only (offline)")
    started = time.perf_counter()
    snapshot = Snapshot.open(settings)
    assert snapshot is not None, "no snapshot"
    results = [Result(reference=ref, verdict=Verdict.UNVERIFIED) for ref in references]
    screen_results(results, [[] for _ in results], settings, snapshot=snapshot)
    run.seconds = time.perf_counter() - started
    for result in results:
        run.kinds[result.reference.key] = [n.kind.value for n in result.integrity]
    run.covered = len(results)
    snapshot.close()
    return run


def screen_live(name: str, references: list, dois: dict[str, str], settings, base: str) -> Run:  # type: ignore[no-untyped-def]
    """`check_dois` on every reference that carries a DOI."""
    from refaudit.retractions import check_dois

    run = Run(name)
    reset_simulator(base)
    started = time.perf_counter()
    keys = [ref.key for ref in references if ref.key in dois]
    answers = asyncio.run(check_dois([dois[key] for key in keys], settings))
    run.seconds = time.perf_counter() - started
    run.requests = simulator_requests(base)
    for key, answer in zip(keys, answers, strict=True):
        run.kinds[key] = [n.kind.value for n in answer.notices]
        run.unknown += answer.found is None and not answer.notices
    run.covered = len(keys)
    return run


def score(run: Run, labels: list[dict]) -> dict[str, object]:
    """Recall per expected kind (detected at all / right kind) and false flags on controls."""
    detected: Counter[str] = Counter()
    right_kind: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    false_flags = corrected_as_retracted = 0
    for label in labels:
        expected = label["expected_integrity"]
        kinds = run.kinds.get(label["key"], [])
        if expected == "none":
            totals["control"] += 1
            false_flags += bool(kinds)
            continue
        totals[expected] += 1
        detected[expected] += bool(kinds)
        right_kind[expected] += worst(kinds) in EXPECTED_KINDS[expected]
        if expected == "correction" and any(k in WITHDRAWING for k in kinds):
            corrected_as_retracted += 1
    return {
        "totals": dict(totals),
        "detected": dict(detected),
        "right_kind": dict(right_kind),
        "false_flags": false_flags,
        "corrected_as_retracted": corrected_as_retracted,
    }


def table(runs: list[Run], scores: list[dict], snapshot_rows: int, update_s: float) -> str:
    kinds = ["retraction", "withdrawal", "expression_of_concern", "correction"]
    header = (
        "| mode | "
        + " | ".join(kinds)
        + " | false flags on controls | corrected shown as retracted"
        + " | checked | unknown | requests | wall |"
    )
    lines = [header, "|" + "---|" * (len(kinds) + 7)]
    for run, result in zip(runs, scores, strict=True):
        cells = []
        for kind in kinds:
            total = result["totals"].get(kind, 0)  # type: ignore[union-attr]
            found = result["detected"].get(kind, 0)  # type: ignore[union-attr]
            right = result["right_kind"].get(kind, 0)  # type: ignore[union-attr]
            cells.append(f"{found}/{total} ({right} right kind)")
        controls = result["totals"].get("control", 0)  # type: ignore[union-attr]
        lines.append(
            f"| {run.name} | "
            + " | ".join(cells)
            + f" | {result['false_flags']}/{controls} | {result['corrected_as_retracted']}"
            + f" | {run.covered} | {run.unknown} | {run.requests} | {run.seconds:.2f} s |"
        )
    lines.append("")
    lines.append(
        f"Snapshot: `refaudit retractions update` loaded {snapshot_rows:,} Retraction Watch rows "
        f"from the simulator's Labs CSV in {update_s:.2f} s (one request)."
    )
    return "\n".join(lines)


def _measured_on() -> str:
    """The commit and UTC time a figure belongs to, as every section of the page states them."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"Measured on `{commit or 'an unknown commit'}`, {when}."


def write_docs(body: str, config: str, count: int) -> None:
    section = (
        f"{SECTION} (`bench/retractions.py`)\n\n"
        "Integrity recall per expected notice kind and false flags on the clean controls of "
        f"`retractions.bib` ({count} references, public set), screened three ways: the "
        "Retraction Watch snapshot alone, live Crossref + OpenAlex, and both. Recall = "
        "references with any notice / with the expected kind as their most severe notice.\n\n"
        f"Command: `python3 bench/retractions.py --config {config}`. {_measured_on()}\n\n"
        f"{body}\n\n"
        "The Labs CSV holds only the notices Retraction Watch records; publisher-only notices "
        "(most withdrawals and errata) reach refaudit through Crossref `updated-by` and OpenAlex "
        "`is_retracted`, which is why the snapshot alone misses them. References without a DOI "
        "are screened by the snapshot (exact normalised title + year) but not by `check_dois`.\n"
    )
    text = DOCS.read_text(encoding="utf-8") if DOCS.exists() else "# Benchmarks\n"
    if SECTION in text:
        start = text.index(SECTION)
        following = text.find("\n## ", start + len(SECTION))
        rest = "\n" + text[following + 1 :] if following != -1 else ""
        text = text[:start] + section + rest
    else:
        text = text.rstrip("\n") + "\n\n" + section
    DOCS.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="realistic", help="scholarsim config name")
    parser.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    args = parser.parse_args()

    from refaudit.config import load_settings
    from refaudit.identifiers import find_dois, normalize_doi
    from refaudit.parsing import parse_file
    from refaudit.retractions import download_snapshot

    labels = json.loads((PUBLIC / "retractions.labels.json").read_text(encoding="utf-8"))["labels"]
    references = parse_file(PUBLIC / "retractions.bib").references
    dois: dict[str, str] = {}
    for ref in references:
        doi = normalize_doi(ref.doi) or next(iter(find_dois(ref.url or "")), None)
        if doi:
            dois[ref.key] = doi

    process, base = start_simulator(args.config)
    try:
        with tempfile.TemporaryDirectory() as work:
            env = {
                **simulator_env(base),
                "REFAUDIT_MAILTO": "bench@example.org",
                "REFAUDIT_CACHE_DIR": f"{work}/cache",
                "REFAUDIT_DATA_DIR": f"{work}/with-snapshot",
            }
            os.environ.update(env)
            settings = load_settings(env=env, overrides={"use_cache": False})
            started = time.perf_counter()
            update = asyncio.run(download_snapshot(settings))
            update_s = time.perf_counter() - started

            offline = screen_offline(
                references, load_settings(env=env, overrides={"offline": True})
            )
            no_snapshot = load_settings(
                env={**env, "REFAUDIT_DATA_DIR": f"{work}/empty"}, overrides={"use_cache": False}
            )
            live = screen_live("live Crossref + OpenAlex", references, dois, no_snapshot, base)
            both = screen_live("live + snapshot", references, dois, settings, base)
            # As in the pipeline: references without a DOI fall back to the snapshot's title match.
            for ref in references:
                if ref.key not in dois:
                    both.kinds[ref.key] = offline.kinds.get(ref.key, [])
                    both.covered += 1
    finally:
        process.terminate()
        process.wait(timeout=10)

    runs = [offline, live, both]
    scores = [score(run, labels) for run in runs]
    body = table(runs, scores, update.rows, update_s)
    print(body)
    if not args.no_docs:
        write_docs(body, args.config, len(labels))
        print(f"\nwrote the {SECTION!r} section of {DOCS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
