"""A saved JSON report (`check --format json`) read back into the report every renderer takes.

CI runs the audit once and derives SARIF, annotations, a job summary and the HTML
page from that one file, so every format tells the story of the same run and no
reference is asked about twice.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pydantic import ValidationError

from refaudit.baseline import Baseline, fingerprint
from refaudit.errors import InputError
from refaudit.models import AuditReport, Finding, Result, Verdict
from refaudit.render.common import RenderContext
from refaudit.report import ReferenceResult, Report

_FINDING_FIELDS = [f.name for f in dataclasses.fields(Finding)]


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
    report = AuditReport(
        results=results,
        problems=saved.problems,
        files=saved.files,
        stats=saved.stats,
        offline=saved.offline,
        retraction_snapshot=saved.retraction_snapshot,
        mirror=saved.mirror,
    )
    context = RenderContext(
        fail_on=list(saved.fail_on), baseline=Baseline(waived) if saved.baseline else None
    )
    return report, context


def _result(item: ReferenceResult) -> Result:
    """One reported result as the pipeline made it (the report's verdict findings included,
    so none is synthesised twice)."""
    findings = [
        Finding(**{name: getattr(reported, name) for name in _FINDING_FIELDS})
        for reported in item.findings
    ]
    if item.verdict == Verdict.SKIPPED:
        # A report marks a skipped entry's findings suppressed by the skip itself; the
        # renderers do that again, and the entry's worst severity is read without it.
        skip = item.reason or "skipped"
        for finding in findings:
            if finding.suppressed == skip:
                finding.suppressed = None
    return Result(
        reference=item.reference,
        verdict=item.verdict,
        confidence=item.confidence,
        findings=findings,
        matched=item.matched,
        integrity=item.integrity,
        sources=item.sources,
        corrected_bibtex=item.corrected_bibtex,
        reason=item.reason,
    )
