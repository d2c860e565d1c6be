"""The versioned JSON report: `refaudit.report.Report`, filled in from one run.

The models, the schema version and the generated schema
(`render/report.schema.json`) live in `refaudit.report`; docs/json-schema.md
describes them. The MCP server returns the same models.
"""

from __future__ import annotations

import json
from typing import Any

from refaudit.models import AuditReport, Result
from refaudit.render.common import RenderContext, report_summary, rows
from refaudit.report import (
    SCHEMA_PATH,
    ReferenceResult,
    Report,
    ReportedFinding,
    Summary,
    ToolInfo,
)
from refaudit.version import installed_version


def report_model(report: AuditReport, context: RenderContext) -> Report:
    """The whole run as the report model the JSON renderer and MCP both return."""
    return Report(
        tool=ToolInfo(version=installed_version()),
        files=list(report.files),
        offline=report.offline,
        retraction_snapshot=report.retraction_snapshot,
        mirror=report.mirror,
        fail_on=list(context.fail_on),
        baseline=context.baseline is not None,
        summary=Summary(**report_summary(report, context)),
        stats=report.stats,
        problems=report.problems,
        results=[result_model(result, context) for result in report.results],
    )


def result_model(result: Result, context: RenderContext) -> ReferenceResult:
    """One verdict with its evidence; findings as every renderer lists them."""
    reference = result.reference
    return ReferenceResult(
        key=reference.key,
        file=reference.file,
        line=reference.line,
        verdict=result.verdict,
        confidence=result.confidence,
        flagged=result.flagged,
        failing=context.fails(result),
        worst_severity=result.worst_severity,
        retracted=result.retracted,
        reason=result.reason,
        findings=[
            ReportedFinding(**vars(row.finding), baselined=row.baselined, failing=row.failing)
            for row in rows(result, context)
        ],
        integrity=result.integrity,
        sources=result.sources,
        matched=result.matched,
        corrected_bibtex=result.corrected_bibtex,
        reference=reference,
    )


def report_data(report: AuditReport, context: RenderContext) -> dict[str, Any]:
    """The report as JSON-ready data, shaped as the schema describes."""
    return report_model(report, context).model_dump(mode="json")


def render_json(report: AuditReport, context: RenderContext) -> str:
    return json.dumps(report_data(report, context), indent=2, ensure_ascii=False) + "\n"


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
