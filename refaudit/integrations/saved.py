"""A saved JSON report (`check --format json`) read back into the report every renderer takes.

CI runs the audit once and derives SARIF, annotations, a job summary and the HTML
page from that one file, so every format tells the story of the same run and no
reference is asked about twice.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from refaudit.baseline import Baseline, fingerprint
from refaudit.errors import InputError
from refaudit.models import AuditReport, Finding, Result, Verdict
from refaudit.render.common import RenderContext
from refaudit.report import ReferenceResult, Report

D = TypeVar("D")


def read_report(path: Path) -> tuple[AuditReport, RenderContext]:
    """The report in `path` and the fail policy and baseline it was judged under.

    The baseline file itself is not needed: the report marks each finding it
    waived, and those marks become the baseline here.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the report: {exc}", file=str(path)) from exc
    try:
        saved = Report.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InputError(
            f"not a refaudit JSON report: {where}: {first['msg']}",
            file=str(path),
            hint="write one with `refaudit check --format json -o report.json`",
        ) from exc
    results = [_result(item) for item in saved.results]
    waived = {
        fingerprint(result, finding)
        for result, item in zip(results, saved.results, strict=True)
        for finding, reported in zip(result.findings, item.findings, strict=True)
        if reported.baselined
    }
    report = _from_saved(AuditReport, saved, results=results)
    context = RenderContext(
        fail_on=list(saved.fail_on), baseline=Baseline(waived) if saved.baseline else None
    )
    return report, context


def _result(item: ReferenceResult) -> Result:
    """One reported result as the pipeline made it (the report's verdict findings included,
    so none is synthesised twice)."""
    findings = [_from_saved(Finding, reported) for reported in item.findings]
    if item.verdict == Verdict.SKIPPED:
        # A report marks a skipped entry's findings suppressed by the skip itself; the
        # renderers do that again, and the entry's worst severity is read without it.
        skip = item.reason or "skipped"
        for finding in findings:
            if finding.suppressed == skip:
                finding.suppressed = None
    return _from_saved(Result, item, findings=findings)


def _from_saved(cls: type[D], saved: object, **given: Any) -> D:
    """The `cls` dataclass `saved` was reported from: each of its fields the report keeps,
    by name, with `given` ones in place of the reported."""
    values = {
        field.name: getattr(saved, field.name)
        for field in dataclasses.fields(cls)  # type: ignore[arg-type]
        if field.init and field.name not in given and hasattr(saved, field.name)
    }
    return cls(**values, **given)
