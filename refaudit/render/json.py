"""The versioned JSON report (schema: refaudit/render/report.schema.json, docs/json-schema.md).

`schema_version` follows models.JSON_SCHEMA_VERSION: the minor number grows when
keys are added, the major number when a key changes meaning or disappears.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from refaudit.models import JSON_SCHEMA_VERSION, AuditReport, Result, to_dict
from refaudit.render import RenderContext, report_summary, rows, tool_version

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


def report_data(report: AuditReport, context: RenderContext) -> dict[str, Any]:
    """The report as JSON-ready data, shaped as the schema describes."""
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "tool": {"name": "refaudit", "version": tool_version()},
        "files": list(report.files),
        "offline": report.offline,
        "retraction_snapshot": to_dict(report.retraction_snapshot),
        "fail_on": list(context.fail_on),
        "baseline": context.baseline is not None,
        "summary": report_summary(report, context),
        "stats": to_dict(report.stats),
        "problems": to_dict(report.problems),
        "results": [_result_data(result, context) for result in report.results],
    }


def _result_data(result: Result, context: RenderContext) -> dict[str, Any]:
    reference = result.reference
    return {
        "key": reference.key,
        "file": reference.file,
        "line": reference.line,
        "verdict": result.verdict.value,
        "confidence": result.confidence,
        "flagged": result.flagged,
        "failing": context.fails(result),
        "worst_severity": result.worst_severity,
        "reason": result.reason,
        "findings": [
            {**to_dict(row.finding), "baselined": row.baselined, "failing": row.failing}
            for row in rows(result, context)
        ],
        "integrity": to_dict(result.integrity),
        "sources": to_dict(result.sources),
        "matched": to_dict(result.matched),
        "corrected_bibtex": result.corrected_bibtex,
        "reference": to_dict(reference),
    }


def render_json(report: AuditReport, context: RenderContext) -> str:
    return json.dumps(report_data(report, context), indent=2, ensure_ascii=False) + "\n"


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
