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


def report_model(
    report: AuditReport, context: RenderContext, *, with_results: bool = True
) -> Report:
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
        results=[result_model(result, context) for result in report.results]
        if with_results
        else [],
    )


def result_model(result: Result, context: RenderContext) -> ReferenceResult:
    """One verdict with its evidence; findings as every renderer lists them."""
    reference = result.reference
    fails = context.fails(result)
    return ReferenceResult(
        key=reference.key,
        file=reference.file,
        line=reference.line,
        verdict=result.verdict,
        confidence=result.confidence,
        flagged=fails,
        failing=fails,
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
    """The JSON text, one result serialised at a time.

    Byte for byte what `json.dumps(report_data(...), indent=2)` gives, without ever
    holding every result's model and dict at once: for a 100,000-entry bibliography
    those cost gigabytes, the text alone a tenth of that.
    """
    data = report_model(report, context, with_results=False).model_dump(mode="json")
    data["results"] = _RESULTS_SLOT
    text = json.dumps(data, indent=2, ensure_ascii=False)
    items = [
        json.dumps(
            result_model(result, context).model_dump(mode="json"), indent=2, ensure_ascii=False
        ).replace("\n", "\n    ")
        for result in report.results
    ]
    results = "[\n    " + ",\n    ".join(items) + "\n  ]" if items else "[]"
    return text.replace(json.dumps(_RESULTS_SLOT), results, 1) + "\n"


#: Stands for the results array while the rest of the report is serialised.
_RESULTS_SLOT = "\u0000refaudit-results\u0000"


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
