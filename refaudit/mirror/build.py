"""`refaudit mirror build`: bulk files in, a new mirror out, swapped in only when complete."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from refaudit.errors import MirrorError
from refaudit.mirror import new_builder
from refaudit.mirror.loaders import Problem, bulk_files, read_records
from refaudit.mirror.store import now_iso

#: Problems kept for the report; the rest are only counted.
SHOWN_PROBLEMS = 50


class BuildProgress(Protocol):
    """What a build tells whoever watches it (the CLI draws progress bars from it)."""

    def start(self, label: str, total_bytes: int) -> None: ...

    def advance(self, done_bytes: int, lines: int) -> None: ...

    def step(self, label: str) -> None: ...


@dataclass
class BuildReport:
    location: str
    records: dict[str, int] = field(default_factory=dict)
    retraction_rows: int = 0
    problems: list[Problem] = field(default_factory=list)
    problem_count: int = 0
    seconds: float = 0.0
    #: earlier runs that were killed before they finished, one sentence each
    interrupted: list[str] = field(default_factory=list)

    def note(self, problem: Problem) -> None:
        self.problem_count += 1
        if len(self.problems) < SHOWN_PROBLEMS:
            self.problems.append(problem)


def build_mirror(
    location: str,
    *,
    inputs: Mapping[str, Sequence[Path]] | None = None,
    retractions: Path | None = None,
    progress: BuildProgress | None = None,
) -> BuildReport:
    """Load bulk files (`inputs`: files or folders per upstream) into a new mirror, swap it in.

    The previous mirror, if any, stays usable until the new one is complete; an
    interrupted or failed build leaves it untouched.
    """
    files = {upstream: bulk_files(paths) for upstream, paths in (inputs or {}).items() if paths}
    if not files and retractions is None:
        raise MirrorError(
            "nothing to build from",
            hint="give --crossref, --openalex and/or --retractions files or folders",
        )
    started = time.monotonic()
    report = BuildReport(location=location)
    with new_builder(location) as builder:
        report.interrupted = list(builder.interrupted)
        if retractions is not None:
            if progress:
                progress.step("loading Retraction Watch CSV")
            loaded = builder.add_retractions(retractions, source_url=str(retractions))
            report.retraction_rows = loaded.rows
            for skipped in loaded.skipped:
                line, _, reason = skipped.removeprefix("line ").partition(": ")
                report.note(
                    Problem(str(retractions), int(line) if line.isdigit() else None, reason)
                )
        for upstream, paths in files.items():
            total = sum(path.stat().st_size for path in paths)
            if progress:
                progress.start(f"loading {upstream}", total)
            records = read_records(
                upstream,
                paths,
                on_problem=report.note,
                on_progress=progress.advance if progress else None,
            )
            builder.add(records)
        meta = {
            "built_at": now_iso(),
            "format": "1",
            "built_from": "; ".join(
                f"{name}: {len(paths)} file(s)" for name, paths in files.items()
            ),
        }
        counts = builder.finish(meta, on_step=progress.step if progress else None)
        report.records = {upstream: counts[upstream] for upstream in files}
        builder.publish()
    report.seconds = round(time.monotonic() - started, 2)
    return report
