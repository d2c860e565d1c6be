"""Accuracy benchmark: refaudit against the labelled bibliographies of ../shared/bench.

Starts ../shared/scholarsim on the benchmark world, runs the real pipeline on
each labelled set, and prints HALLMARK-style scores: detection rate on
HALLUCINATED references, false alarms on VALID ones, the verdict confusion
matrix, how often the wrong field is named, integrity recall, coverage and
requests per reference.

    python bench/accuracy.py                      # every public set, no rate limits
    python bench/accuracy.py --sets gen --config realistic
    python bench/accuracy.py --predictions out/   # also write score.py-compatible JSONL
    python bench/accuracy.py --sets traps         # field traps, served from world-traps.jsonl.gz
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import tempfile
from pathlib import Path

from simulator import SHARED, TRAPS_WORLD, WORLD, refaudit_settings, start_simulator

PUBLIC = SHARED / "bench" / "public"
SETS = {
    "gen": "gen.bib",
    "hallmark-dev_public": "hallmark-dev_public.bib",
    "retractions": "retractions.bib",
    "freetext": "freetext.tex",
    "scale-1000": "scale-1000.bib",
    "scale-5000": "scale-5000.bib",
    "traps": "traps.bib",
}
#: Sets whose records live only in the traps world (the world plus the trap overlay).
TRAPS_SETS = {"traps"}
DEFAULT_SETS = ["gen", "hallmark-dev_public", "retractions", "freetext"]
FIELD_ALIASES = {"author": "authors", "journal": "venue", "booktitle": "venue", "date": "year"}
# The labels name only these fields; pages, volume and arXiv findings are reported but not scored.
SCORED_FIELDS = {"title", "authors", "year", "venue", "doi"}


def prediction(result: object) -> dict[str, object]:
    """One line of the scorer's prediction format."""
    from refaudit.findings import INTEGRITY_CODES, MISMATCH_CODES

    fields = sorted(
        {
            FIELD_ALIASES.get(f.field, f.field)
            for f in result.findings  # type: ignore[attr-defined]
            if f.code in MISMATCH_CODES and f.field
        }
        & SCORED_FIELDS
    )
    verdict = result.verdict.value  # type: ignore[attr-defined]
    return {
        "key": result.reference.key,  # type: ignore[attr-defined]
        # Integrity notices are scored separately: they do not make a reference hallucinated.
        "flagged": verdict == "not_found"
        or any(
            f.severity == "error" and not f.suppressed and f.code not in INTEGRITY_CODES
            for f in result.findings  # type: ignore[attr-defined]
        ),
        "verdict": verdict if verdict in ("verified", "mismatch", "not_found") else None,
        "fields": fields,
        "integrity": sorted({n.kind.value for n in result.integrity}),  # type: ignore[attr-defined]
        "covered": verdict != "unverified",
    }


def score(labels: list[dict], predictions: dict[str, dict]) -> dict[str, object]:
    """HALLMARK scoring as described in ../shared/bench/README.md."""
    valid = [lab for lab in labels if lab["label"] == "VALID"]
    bad = [lab for lab in labels if lab["label"] == "HALLUCINATED"]

    def flagged(lab: dict) -> bool:
        return bool(predictions.get(lab["key"], {}).get("flagged"))

    per_type: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    confusion: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    field_exact = field_all = field_total = spurious = 0
    integrity_hits: collections.Counter[str] = collections.Counter()
    integrity_total: collections.Counter[str] = collections.Counter()
    false_integrity = 0
    for lab in labels:
        pred = predictions.get(lab["key"], {})
        kind = lab["hallucination_type"] or "none"
        per_type[kind][0] += 1
        per_type[kind][1] += flagged(lab)
        per_type[kind][2] += pred.get("verdict") in ("verified", "mismatch")
        confusion[lab["expected_verdict"]][str(pred.get("verdict"))] += 1
        if lab["expected_verdict"] == "mismatch" and lab["expected_fields"]:
            named = set(pred.get("fields", []))
            wanted = set(lab["expected_fields"])
            field_total += 1
            field_exact += named == wanted
            field_all += wanted <= named
            spurious += bool(named - wanted)
        expected_integrity = lab.get("expected_integrity", "none")
        found_integrity = set(pred.get("integrity", []))
        if expected_integrity != "none":
            integrity_total[expected_integrity] += 1
            integrity_hits[expected_integrity] += expected_integrity in found_integrity or (
                expected_integrity == "retraction" and "removal" in found_integrity
            )
        elif found_integrity & {"retraction", "withdrawal", "removal", "expression_of_concern"}:
            false_integrity += 1
    covered = sum(1 for lab in labels if predictions.get(lab["key"], {}).get("covered"))
    return {
        "count": len(labels),
        "detection_rate": _rate(sum(map(flagged, bad)), len(bad)),
        "false_positive_rate": _rate(sum(map(flagged, valid)), len(valid)),
        "coverage": _rate(covered, len(labels)),
        "fields_exact": _rate(field_exact, field_total),
        "fields_all_named": _rate(field_all, field_total),
        "fields_spurious": _rate(spurious, field_total),
        "per_type": {k: {"n": v[0], "flagged": v[1], "found": v[2]} for k, v in per_type.items()},
        "confusion": {k: dict(v) for k, v in confusion.items()},
        "fabricated_not_found": _rate(
            confusion["not_found"]["not_found"], sum(confusion["not_found"].values())
        ),
        "typo_found": _rate(per_type["typo_title"][2], per_type["typo_title"][0]),
        "integrity_recall": {
            k: _rate(integrity_hits[k], integrity_total[k]) for k in integrity_total
        },
        "false_integrity_flags": false_integrity,
    }


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


async def run_set(name: str, settings: object) -> tuple[list[object], object]:
    """The results of one labelled set and the run's cost (requests, wall time, floor)."""
    from refaudit.audit import audit_paths

    report = await audit_paths([PUBLIC / SETS[name]], settings, all_entries=True)  # type: ignore[arg-type]
    return report.results, report.stats


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sets", nargs="*", default=DEFAULT_SETS, choices=list(SETS))
    parser.add_argument("--config", default="no-limits", help="scholarsim config name")
    parser.add_argument("--predictions", type=Path, help="folder for prediction JSONL files")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument(
        "--show",
        default="",
        help="hallucination types to explain (comma list; 'valid' = flagged valid ones)",
    )
    args = parser.parse_args()
    if not PUBLIC.exists():
        raise SystemExit(f"{PUBLIC} not found: the benchmark needs ../shared")

    # Trap records would add search candidates to the other sets' world: one world per run.
    if TRAPS_SETS & set(args.sets) and not set(args.sets) <= TRAPS_SETS:
        parser.error("run the traps set on its own (it is served from another world)")
    world = TRAPS_WORLD if TRAPS_SETS & set(args.sets) else WORLD
    process, url = start_simulator(args.config, None, world)
    scores = {}
    try:
        with tempfile.TemporaryDirectory() as cache:
            settings = refaudit_settings(url, cache, args.config)
            for name in args.sets:
                # A cold cache per set, so its request counts are its own.
                settings.cache_dir = Path(cache) / name
                results, stats = asyncio.run(run_set(name, settings))
                requests = dict(stats.requests)  # type: ignore[attr-defined]
                labels = json.loads((PUBLIC / f"{name}.labels.json").read_text())["labels"]
                predictions = {r.reference.key: prediction(r) for r in results}
                result_scores = score(labels, predictions)
                result_scores["seconds"] = round(stats.elapsed_s, 1)  # type: ignore[attr-defined]
                result_scores["requests_per_reference"] = round(
                    sum(requests.values()) / max(1, len(results)), 2
                )
                result_scores["requests"] = requests
                result_scores["rate_floor_s"] = stats.floor_s  # type: ignore[attr-defined]
                result_scores["floor_ratio"] = stats.floor_ratio  # type: ignore[attr-defined]
                scores[name] = result_scores
                if args.predictions:
                    args.predictions.mkdir(parents=True, exist_ok=True)
                    with (args.predictions / f"{name}.jsonl").open("w") as out:
                        for line in predictions.values():
                            out.write(json.dumps(line) + "\n")
                if args.show:
                    _show(args.show.split(","), labels, results)
    finally:
        process.terminate()
        process.wait(timeout=10)
    if args.json:
        print(json.dumps(scores, indent=2))
        return
    for name, result_scores in scores.items():
        _print_scores(name, result_scores)


def _show(kinds: list[str], labels: list[dict], results: list[object]) -> None:
    """Print the evidence for references of the given kinds ("valid": flagged valid ones)."""
    by_key = {r.reference.key: r for r in results}  # type: ignore[attr-defined]
    for lab in labels:
        kind = lab["hallucination_type"] or "valid"
        result = by_key.get(lab["key"])
        if result is None or kind not in kinds:
            continue
        if kind == "valid" and not prediction(result)["flagged"]:
            continue
        ref = result.reference  # type: ignore[attr-defined]
        print(f"--- {lab['key']} [{kind}] expected {lab['expected_verdict']}", end=" ")
        print(f"{lab['expected_fields']} world={lab['world_id']}")
        print(f"    got {result.verdict.value}: {result.reason or ''}")  # type: ignore[attr-defined]
        print(f"    cited: {ref.title!r} {ref.year} {ref.venue!r}")
        for f in result.findings:  # type: ignore[attr-defined]
            print(f"    {f.severity:7} {f.code}: {f.message[:150]}")
            print(f"            cited={str(f.cited)[:80]!r} found={str(f.found)[:80]!r}")


def _print_scores(name: str, s: dict) -> None:
    print(f"\n== {name}: {s['count']} references, {s['seconds']} s,", end=" ")
    print(f"{s['requests_per_reference']} requests/reference", end=" ")
    print(f"(rate limits allow it in {s['rate_floor_s']} s: {s['floor_ratio']}× the floor)")
    print(f"detection {s['detection_rate']}  false positives {s['false_positive_rate']}", end=" ")
    print(f" coverage {s['coverage']}")
    print(f"fields on mismatches: exact {s['fields_exact']}", end=" ")
    print(f" all named {s['fields_all_named']}  spurious {s['fields_spurious']}")
    print(f"expected not_found reported not_found {s['fabricated_not_found']}", end=" ")
    print(f" typo titles found {s['typo_found']}")
    print("per type (n / flagged / found):")
    for kind, v in sorted(s["per_type"].items()):
        print(f"  {kind:24} {v['n']:4} {v['flagged']:4} {v['found']:4}")
    print("confusion (expected → returned):")
    for expected, row in s["confusion"].items():
        print(f"  {expected:10} {row}")
    if s["integrity_recall"]:
        print(f"integrity recall {s['integrity_recall']}", end=" ")
        print(f" false integrity flags {s['false_integrity_flags']}")
    print(f"requests {s['requests']}")


if __name__ == "__main__":
    main()
