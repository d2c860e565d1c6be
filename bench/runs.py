"""Run cost of whole bibliographies: requests per source, wall time, rate-limit floor, warm re-run.

Starts ../shared/scholarsim (realistic limits by default), audits each file
through the real pipeline with a cold cache, then again with the same cache
(the warm run must send no request). Prints per file: references, verdicts,
requests per source and per reference, wall time, the floor the published
rate limits allow for those requests, and wall / floor.

    python bench/runs.py ../shared/upstream-samples/bib/biblatex-examples.bib
    python bench/runs.py --config no-limits ../shared/bench/public/gen.bib
    python bench/runs.py --log requests.jsonl ../shared/bench/public/scale-1000.bib

`--log` keeps scholarsim's request log (one JSON line per request, its path and query
as sent), to see what each request was for and how full each batch was.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import tempfile
from pathlib import Path

from simulator import refaudit_settings, start_simulator


async def audit(path: Path, settings: object) -> object:
    from refaudit.audit import audit_paths

    return await audit_paths([path], settings, all_entries=True)  # type: ignore[arg-type]


def describe(name: str, report: object) -> str:
    stats = report.stats  # type: ignore[attr-defined]
    results = report.results  # type: ignore[attr-defined]
    verdicts = collections.Counter(r.verdict.value for r in results)
    sent = sum(stats.requests.values())
    per_source = ", ".join(f"{k} {v}" for k, v in sorted(stats.requests.items()))
    ratio = f"{stats.floor_ratio:.2f}×" if stats.floor_ratio else "—"
    return (
        f"{name}: {len(results)} refs, {dict(verdicts)}\n"
        f"    {sent} requests ({sent / max(1, len(results)):.2f}/ref): {per_source or 'none'}\n"
        f"    wall {stats.elapsed_s:.1f} s, floor {stats.floor_s:.1f} s, wall/floor {ratio}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--config", default="realistic", help="scholarsim config name or file")
    parser.add_argument("--log", type=Path, help="append scholarsim's request log to this file")
    args = parser.parse_args()
    process, url = start_simulator(args.config, args.log)
    warm_requests = 0
    try:
        for path in args.files:
            with tempfile.TemporaryDirectory(prefix="refaudit-runs-") as cache:
                settings = refaudit_settings(url, cache, args.config)
                cold = asyncio.run(audit(path, settings))
                print(describe(f"{path.name} cold", cold))
                warm = asyncio.run(audit(path, settings))
                sent = sum(warm.stats.requests.values())  # type: ignore[attr-defined]
                print(f"    warm re-run: {sent} requests, {warm.stats.elapsed_s:.1f} s")  # type: ignore[attr-defined]
                warm_requests += sent
    finally:
        process.terminate()
        process.wait(timeout=10)
    return 1 if warm_requests else 0


if __name__ == "__main__":
    sys.exit(main())
