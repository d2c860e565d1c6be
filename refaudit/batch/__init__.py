"""`refaudit batch`: audit many bibliographies or manuscripts, here or on a Ray cluster.

Each input (any file `check` reads: .bib, .tex, .bbl, .docx or .pdf) is audited on its
own by the one pipeline (`audit.audit_paths`). Its full JSON report is written next to
the results file (`results.reports/`), and one JSON line goes to the results file:
counts, the failing references and where the report is. Lines are appended as inputs finish,
so an interrupted batch resumes where it stopped: inputs already in the results
file are skipped. An input that cannot be audited gets an error line; the batch
goes on.

Engines: `local` runs a process pool on this machine; `ray` runs the same
function on one Ray actor per worker (`ray.init()` locally or on `--ray-address`), with one
rate-limiter actor per live source shared by every worker, so a whole cluster
stays within each API's published limits.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from refaudit.batch.job import BatchLine, audit_one
from refaudit.collector import collect_less
from refaudit.config import Settings
from refaudit.errors import InputError
from refaudit.parsing.files import SUPPORTED_SUFFIXES

INPUT_SUFFIXES = SUPPORTED_SUFFIXES
#: a manifest lists one input per line (relative to itself); `#` starts a comment
MANIFEST_SUFFIXES = (".txt", ".lst", ".manifest")
Engine = Literal["local", "ray"]


@dataclass
class BatchSummary:
    lines: list[BatchLine] = field(default_factory=list)
    skipped: int = 0
    elapsed_s: float = 0.0

    @property
    def references(self) -> int:
        return sum(line.references for line in self.lines)

    @property
    def errors(self) -> int:
        return sum(1 for line in self.lines if line.status == "error")

    @property
    def failing(self) -> int:
        return sum(1 for line in self.lines if line.failing)

    @property
    def unverified(self) -> int:
        """References no source could check (sources down, offline and not cached)."""
        return sum(line.counts.get("unverified", 0) for line in self.lines)

    @property
    def unverified_share(self) -> float:
        """Share of the checked (not skipped) references that are unverified."""
        checked = sum(line.references - line.counts.get("skipped", 0) for line in self.lines)
        return self.unverified / checked if checked else 0.0


def expand_inputs(paths: Iterable[Path]) -> list[Path]:
    """Files as given; folders: their .tex files (else every file `check` reads); manifests:
    their lines.

    A folder of manuscripts is audited manuscript by manuscript: a .bib beside a
    .tex is read through it, not audited again on its own.
    """
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += _folder_inputs(path)
        elif path.suffix.lower() in MANIFEST_SUFFIXES:
            found += _manifest_inputs(path)
        elif path.is_file():
            found.append(path)
        else:
            raise InputError("no such file or folder", file=str(path))
    return list(dict.fromkeys(p.resolve() for p in found))


def _folder_inputs(folder: Path) -> list[Path]:
    inputs: list[Path] = []
    for directory in sorted({p.parent for p in folder.rglob("*") if p.is_file()}):
        files = sorted(p for p in directory.iterdir() if p.is_file())
        tex = [p for p in files if p.suffix.lower() == ".tex"]
        inputs += tex or [p for p in files if p.suffix.lower() in INPUT_SUFFIXES]
    return inputs


def _manifest_inputs(manifest: Path) -> list[Path]:
    inputs = []
    for number, raw in enumerate(manifest.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        path = (manifest.parent / line).expanduser()
        if not path.exists():
            raise InputError(f"no such file or folder: {line}", file=str(manifest), line=number)
        inputs += _folder_inputs(path) if path.is_dir() else [path]
    return inputs


def already_done(output: Path) -> set[str]:
    """Inputs the results file already has a line for (a cut-off last line is ignored)."""
    if not output.is_file():
        return set()
    done = set()
    for raw in output.read_text(encoding="utf-8").splitlines():
        try:
            done.add(json.loads(raw)["input"])
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
    return done


def report_path(output: Path, source: Path) -> Path:
    """Where an input's full report goes: `<results>.reports/<name>-<hash>.json`."""
    digest = hashlib.sha1(str(source).encode("utf-8")).hexdigest()[:10]
    return output.with_name(output.stem + ".reports") / f"{source.stem}-{digest}.json"


def run_batch(
    inputs: list[Path],
    settings: Settings,
    output: Path,
    *,
    workers: int = 1,
    engine: Engine = "local",
    ray_address: str | None = None,
    on_line: Callable[[BatchLine], None] | None = None,
) -> BatchSummary:
    """Audit every input not yet in `output`, appending one line per input as it finishes."""
    started = time.monotonic()
    done = already_done(output)
    pending = [p for p in inputs if str(p) not in done]
    summary = BatchSummary(skipped=len(inputs) - len(pending))
    jobs = [(str(p), str(report_path(output, p))) for p in pending]
    if workers > 1 or engine == "ray":
        # The inputs already share the cores: each is audited in its worker alone.
        settings = replace(settings, processes=1)
    if engine == "ray":
        from refaudit.batch.cluster import run_on_ray

        results: Iterator[BatchLine] = run_on_ray(jobs, settings, workers, ray_address)
    else:
        results = _run_local(jobs, settings, workers)
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("a", encoding="utf-8") as out:
        for line in results:
            out.write(line.json() + "\n")
            out.flush()
            summary.lines.append(line)
            if on_line:
                on_line(line)
    summary.elapsed_s = round(time.monotonic() - started, 2)
    return summary


def _run_local(
    jobs: list[tuple[str, str]], settings: Settings, workers: int
) -> Iterator[BatchLine]:
    if workers <= 1:
        for source, report_file in jobs:
            yield audit_one(source, settings, report_file)
        return
    # Each worker tunes its collector as the command does (spawned workers start afresh).
    with ProcessPoolExecutor(max_workers=workers, initializer=collect_less) as pool:
        futures = [pool.submit(audit_one, source, settings, target) for source, target in jobs]
        for future in as_completed(futures):
            yield future.result()
