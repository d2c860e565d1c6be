"""Novelty benchmark: `assess_novelty` on ../shared/bench/public/novelty.jsonl.

Starts ../shared/scholarsim on the benchmark world, assesses every idea with a cold
cache, writes the scorer's prediction format and scores it with
../shared/bench/score_novelty.py (prior-art recall@10, AUROC of novelty_score,
coverage). Then assesses every idea again on the warm cache to count the requests
a repeated question costs. Misses (prior-art works not among the ten most similar)
are printed for reading.

    python bench/novelty.py                          # realistic config, every idea
    python bench/novelty.py --config no-limits --first 20
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from simulator import SHARED, refaudit_settings, start_simulator

IDEAS = SHARED / "bench" / "public" / "novelty.jsonl"
SCORER = SHARED / "bench" / "score_novelty.py"
#: Ideas assessed at once: enough to keep every source's rate limit busy.
CONCURRENCY = 8


def prediction(idea_id: str, report: object) -> dict[str, object]:
    """One line of score_novelty.py's prediction format."""
    return {
        "id": idea_id,
        "novelty_score": report.novelty_score,  # type: ignore[attr-defined]
        "status": report.status,  # type: ignore[attr-defined]
        "assessment": report.assessment,  # type: ignore[attr-defined]
        "similar": [
            {"doi": paper.doi, "title": paper.title, "similarity": paper.similarity}
            for paper in report.similar_papers  # type: ignore[attr-defined]
        ],
    }


async def assess_all(
    ideas: list[dict[str, str]], settings: object
) -> tuple[list[dict], object, list[int]]:
    """Assess every idea on one shared set of clients; (predictions, stats, requests per idea)."""
    from refaudit.models import RunStats
    from refaudit.novelty import assess_novelty
    from refaudit.sources import open_sources, sharing

    stats = RunStats()
    gate = asyncio.Semaphore(CONCURRENCY)
    costs: list[int] = []

    async def one(idea: dict[str, str]) -> dict[str, object]:
        own = RunStats()
        async with gate:
            report = await assess_novelty(idea["idea"], settings, stats=own)  # type: ignore[arg-type]
        costs.append(sum(own.requests.values()))
        return prediction(idea["id"], report)

    async with open_sources(settings, stats) as sources:  # type: ignore[arg-type]
        with sharing(sources):
            predictions = await asyncio.gather(*(one(idea) for idea in ideas))
    return list(predictions), stats, costs


def norm(title: str | None) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in (title or "").lower()).split())


def misses(ideas: list[dict[str, str]], predictions: list[dict]) -> list[str]:
    """Prior-art ideas whose work is not among the ten most similar papers."""
    lines = []
    for idea, predicted in zip(ideas, predictions, strict=True):
        if idea["label"] != "prior_art":
            continue
        top = predicted["similar"][:10]
        want_doi = (idea.get("doi") or "").lower()
        if any(
            (s["doi"] or "").lower() == want_doi or norm(s["title"]) == norm(idea["title"])
            for s in top
        ):
            continue
        best = top[0] if top else {}
        lines.append(
            f"{idea['id']} score={predicted['novelty_score']} want “{idea['title']}” "
            f"| best “{best.get('title')}” sim={best.get('similarity')} | idea: {idea['idea']}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--config", default="realistic", help="scholarsim config name")
    parser.add_argument("--first", type=int, help="only the first N ideas")
    parser.add_argument("--predictions", type=Path, help="write the predictions here")
    args = parser.parse_args()

    ideas = [json.loads(line) for line in IDEAS.read_text().splitlines() if line.strip()]
    ideas = ideas[: args.first] if args.first else ideas
    process, url = start_simulator(args.config)
    try:
        with tempfile.TemporaryDirectory() as folder:
            settings = refaudit_settings(url, folder, args.config)
            started = time.monotonic()
            predictions, cold, costs = asyncio.run(assess_all(ideas, settings))
            elapsed = time.monotonic() - started
            _, warm, _ = asyncio.run(assess_all(ideas, settings))
    finally:
        process.terminate()
        process.wait(timeout=10)

    out = args.predictions or Path(tempfile.mkstemp(suffix=".jsonl")[1])
    out.write_text("".join(json.dumps(p) + "\n" for p in predictions))
    labels = Path(tempfile.mkstemp(suffix=".jsonl")[1])
    labels.write_text("".join(json.dumps(idea) + "\n" for idea in ideas))
    scores = subprocess.run(
        [sys.executable, str(SCORER), str(labels), str(out)], capture_output=True, text=True
    )
    cold_requests = sum(cold.requests.values())  # type: ignore[attr-defined]
    warm_requests = sum(warm.requests.values())  # type: ignore[attr-defined]
    unassessed = sum(1 for p in predictions if p["status"] == "unverified")
    print(scores.stdout.strip())
    print(f"config: {args.config}, ideas: {len(ideas)}, wall: {elapsed:.1f} s")
    print(
        f"requests cold: {cold_requests} ({cold_requests / len(ideas):.2f} per idea,"
        f" at most {max(costs)} for one idea)"
    )
    print(f"requests warm: {warm_requests}")
    print(f"could not assess: {unassessed}")
    for label in ("prior_art", "novel"):
        scores = sorted(
            p["novelty_score"]
            for p, idea in zip(predictions, ideas, strict=True)
            if idea["label"] == label and p["novelty_score"] is not None
        )
        bands = collections.Counter(
            p["assessment"]
            for p, idea in zip(predictions, ideas, strict=True)
            if idea["label"] == label
        )
        if scores:
            print(
                f"{label}: novelty_score min {scores[0]:.3f} median {scores[len(scores) // 2]:.3f}"
                f" max {scores[-1]:.3f}; assessments {dict(sorted(bands.items()))}"
            )
    for line in misses(ideas, predictions):
        print("miss:", line)


if __name__ == "__main__":
    main()
