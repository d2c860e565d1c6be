"""PDF and .bbl benchmark: refaudit on the compiled papers of ../shared/bench/public/pdf.

Starts ../shared/scholarsim on the benchmark world, audits every public PDF (its
reference list read from the PDF) and every .bbl beside them through the real
pipeline, each with a cold cache, and scores them with ../shared/bench/score_pdf.py:
extraction (printed references found, spurious ones), then detection of the visible
hallucinations, false alarms and coverage. A .bbl is scored by citation key with
score.py, on the same entries. Also times reading each PDF (before any request).

    python bench/pdf.py                     # every PDF and .bbl, no rate limits
    python bench/pdf.py --only gen-acm      # one paper (PDF and .bbl)
    python bench/pdf.py --kinds pdf         # the PDFs only
    python bench/pdf.py --predictions out/  # keep the prediction files
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from accuracy import prediction
from simulator import SHARED, refaudit_settings, start_simulator

FOLDER = SHARED / "bench" / "public" / "pdf"
SCORE_PDF = SHARED / "bench" / "score_pdf.py"
SCORE = SHARED / "bench" / "score.py"


async def _audit(path: Path, settings: object) -> list[object]:
    from refaudit.audit import audit_paths
    from refaudit.errors import InputError

    try:
        report = await audit_paths([path], settings, all_entries=True)  # type: ignore[arg-type]
    except InputError as error:
        print(f"{path.name}: {error}", file=sys.stderr)
        return []
    return report.results


def _pdf_prediction(result: object) -> dict[str, object]:
    """score_pdf.py's line: the printed text and position instead of a citation key."""
    line = prediction(result)
    reference = result.reference  # type: ignore[attr-defined]
    line.pop("key")
    return {"text": reference.text, "label": reference.label, **line}


def _score(scorer: Path, labels: Path, lines: list[dict[str, object]], out: Path) -> dict:
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = subprocess.run(
        [sys.executable, str(scorer), str(labels), str(out), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def _bbl_labels(labels: Path, folder: Path) -> Path:
    """The PDF labels as score.py reads them (its scored set: errors the style prints)."""
    data = json.loads(labels.read_text())
    kept = [
        label for label in data["labels"] if label["label"] == "VALID" or label.get("visible", True)
    ]
    for label in kept:
        if label["expected_verdict"] == "mismatch":
            label["expected_fields"] = label.get("visible_fields", label["expected_fields"])
    path = folder / labels.name
    path.write_text(json.dumps({**data, "labels": kept}))
    return path


def _row(name: str, scores: dict, seconds: float, read_s: float | None) -> dict[str, object]:
    detection, extraction = scores["detection"], scores["extraction"]

    def rounded(value: float | None) -> float | None:
        return None if value is None else round(value, 4)

    return {
        "input": name,
        "found": rounded(extraction["recall"]),
        "spurious": extraction["spurious_predictions"],
        "detection": rounded(detection["detection_rate"]),
        "false_alarms": rounded(detection["false_positive_rate"]),
        "coverage": rounded(scores["coverage"]),
        "read_s": read_s,
        "audit_s": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--only", nargs="*", help="paper names (e.g. gen-acm)")
    parser.add_argument("--kinds", nargs="*", default=["pdf", "bbl"], choices=["pdf", "bbl"])
    parser.add_argument("--config", default="no-limits", help="scholarsim config name")
    parser.add_argument("--predictions", type=Path, help="folder for prediction JSONL files")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    if not FOLDER.exists():
        raise SystemExit(f"{FOLDER} not found: the benchmark needs ../shared")
    from refaudit.parsing.pdf import read_pdf

    names = args.only or sorted(
        p.name.removesuffix(".labels.json") for p in FOLDER.glob("*.labels.json")
    )
    rows: list[dict[str, object]] = []
    process, url = start_simulator(args.config, None)
    try:
        with tempfile.TemporaryDirectory() as work:
            folder = args.predictions or Path(work)
            folder.mkdir(parents=True, exist_ok=True)
            settings = refaudit_settings(url, work, args.config)
            for name in names:
                labels = FOLDER / f"{name}.labels.json"
                for kind in args.kinds:
                    path = FOLDER / f"{name}.{kind}"
                    if not path.exists():
                        continue
                    read_s = None
                    if kind == "pdf":
                        started = time.perf_counter()
                        read_pdf(path)
                        read_s = round(time.perf_counter() - started, 2)
                    settings.cache_dir = Path(work) / f"cache-{name}-{kind}"  # type: ignore[attr-defined]
                    started = time.perf_counter()
                    results = asyncio.run(_audit(path, settings))
                    seconds = time.perf_counter() - started
                    out = folder / f"{name}.{kind}.jsonl"
                    if kind == "pdf":
                        lines = [_pdf_prediction(result) for result in results]
                        scores = _score(SCORE_PDF, labels, lines, out)
                    else:
                        lines = [prediction(result) for result in results]
                        scores = _score(SCORE, _bbl_labels(labels, Path(work)), lines, out)
                        found = {line["key"] for line in lines}
                        wanted = {
                            label["key"] for label in json.loads(labels.read_text())["labels"]
                        }
                        scores["extraction"] = {
                            "recall": round(len(found & wanted) / len(wanted), 4),
                            "spurious_predictions": len(found - wanted),
                        }
                    rows.append(_row(path.name, scores, seconds, read_s))
    finally:
        process.terminate()
        process.wait(timeout=10)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    header = ["input", "found", "spurious", "detection", "false_alarms", "coverage", "audit_s"]
    for kind, extra in ((".pdf", ["read_s"]), (".bbl", [])):
        print(f"\n{kind} files")
        print(" | ".join(header + extra))
        for row in rows:
            if str(row["input"]).endswith(kind):
                print(" | ".join("" if row[h] is None else str(row[h]) for h in header + extra))


if __name__ == "__main__":
    main()
