"""Faults benchmark: a failing source may cost a verdict, never make a wrong citation right.

Runs each labelled set once on a fault-free simulator, then under each fault
config, and compares verdicts reference by reference. The one thing that must
never happen: a reference `verified` under faults that the fault-free run
calls `mismatch` or `not_found` (a finding silently dropped because the source
that would have made it did not answer). Such references are listed; the
script exits 1 when there is any. It also prints how many references each
config left `unverified` (the honest price of an outage).

Rate limits are lifted (faults are what is measured), so a full pass over the
public sets takes minutes, not hours.

    python bench/faults.py                                  # gen + freetext, every fault config
    python bench/faults.py --sets gen hallmark-dev_public --configs outage-crossref faults-30
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from accuracy import PUBLIC, SETS, run_set
from simulator import SHARED, refaudit_settings, start_simulator

NO_LIMITS = {"rate_limits": False}
FAULTS_30 = {"error_statuses": [500, 503], "error_rate": 0.3}


def _outage(service: str) -> dict[str, object]:
    return {**NO_LIMITS, "sources": {service: {"enabled": False, "outage": "503"}}}


# Simulator service names (S2 is "s2" there).
CONFIGS: dict[str, dict[str, object]] = {
    "outage-crossref": _outage("crossref"),
    "outage-openalex": _outage("openalex"),
    "outage-s2": _outage("s2"),
    "outage-arxiv": _outage("arxiv"),
    "outage-datacite": _outage("datacite"),
    "flaky": {
        **json.loads((SHARED / "scholarsim" / "configs" / "flaky.json").read_text()),
        **NO_LIMITS,
    },
    "faults-30": {"seed": 30, **NO_LIMITS, "faults": FAULTS_30},
}


def verdicts(config: dict[str, object], names: list[str], scratch: Path) -> dict[str, dict]:
    """Verdict and reason per reference key, per set, under one simulator config."""
    config_file = scratch / f"config-{abs(hash(json.dumps(config, sort_keys=True)))}.json"
    config_file.write_text(json.dumps(config))
    process, url = start_simulator(str(config_file), None)
    found: dict[str, dict] = {}
    try:
        with tempfile.TemporaryDirectory(dir=scratch) as cache:
            settings = refaudit_settings(url, cache, "no-limits")
            for name in names:
                settings.cache_dir = Path(cache) / name  # type: ignore[attr-defined]
                results, _stats = asyncio.run(run_set(name, settings))
                found[name] = {
                    r.reference.key: (r.verdict.value, r.reason or "")  # type: ignore[attr-defined]
                    for r in results
                }
    finally:
        process.terminate()
        process.wait(timeout=10)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sets", nargs="*", default=["gen", "freetext"], choices=list(SETS))
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    args = parser.parse_args()
    if not PUBLIC.exists():
        raise SystemExit(f"{PUBLIC} not found: the benchmark needs ../shared")
    silenced = 0
    with tempfile.TemporaryDirectory(prefix="refaudit-faults-") as folder:
        scratch = Path(folder)
        clean = verdicts(NO_LIMITS, args.sets, scratch)
        for config in args.configs:
            faulty = verdicts(CONFIGS[config], args.sets, scratch)
            for name in args.sets:
                wrong = [
                    key
                    for key, (verdict, _) in faulty[name].items()
                    if verdict == "verified" and clean[name][key][0] in ("mismatch", "not_found")
                ]
                unverified = sum(v == "unverified" for v, _ in faulty[name].values())
                changed = sum(
                    faulty[name][k][0] != clean[name][k][0]
                    for k in faulty[name]
                    if k in clean[name]
                )
                print(
                    f"{config:18} {name:22} refs {len(faulty[name]):5}  verdicts changed "
                    f"{changed:4}  unverified {unverified:4}  verified-but-wrong {len(wrong)}"
                )
                for key in wrong:
                    print(f"    {key}: fault-free {clean[name][key][0]} ({clean[name][key][1]})")
                silenced += len(wrong)
    print(f"\nverified under faults but wrong without them: {silenced}")
    return 1 if silenced else 0


if __name__ == "__main__":
    sys.exit(main())
