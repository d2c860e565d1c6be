"""One input of a batch: audited by the one pipeline, its report written, its results line.

The local process pool and the Ray actors (`cluster`) both run `audit_one`, so
an input's line is the same whichever engine audited it.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from refaudit.config import Settings
from refaudit.errors import RefauditError


@dataclass
class BatchLine:
    """One results-file line: what happened to one input."""

    input: str
    status: Literal["ok", "error"]
    references: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    failing: list[dict[str, Any]] = field(default_factory=list)
    report: str | None = None
    elapsed_s: float = 0.0
    error: str | None = None

    def json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


def audit_one(source: str, settings: Settings, report_file: str) -> BatchLine:
    """Audit one input and write its report; never raises (errors become the line)."""
    from refaudit.audit import audit_paths
    from refaudit.policy import failing_findings, failing_results
    from refaudit.render import RenderContext, render, report_summary

    started = time.monotonic()
    try:
        report = asyncio.run(audit_paths([Path(source)], settings))
        context = RenderContext(fail_on=settings.fail_on)
        target = Path(report_file)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(report, "json", context), encoding="utf-8")
        failing = [
            {
                "key": result.reference.key,
                "file": result.reference.file,
                "line": result.reference.line,
                "verdict": result.verdict.value,
                "codes": sorted({f.code for f in failing_findings(result, settings.fail_on)}),
            }
            for result in failing_results(report, settings.fail_on)
        ]
        summary = report_summary(report, context)
        return BatchLine(
            input=source,
            status="ok",
            references=len(report.results),
            counts={k: v for k, v in summary.items() if k != "total"},
            failing=failing,
            report=str(target),
            elapsed_s=round(time.monotonic() - started, 3),
        )
    except RefauditError as exc:
        reason = exc.message
    except Exception as exc:  # an input must never stop the batch
        reason = f"internal error: {type(exc).__name__}: {exc}"
    return BatchLine(
        input=source, status="error", error=reason, elapsed_s=round(time.monotonic() - started, 3)
    )
