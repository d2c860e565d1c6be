"""The versioned JSON report: `refaudit.report.Report`, filled in from one run.

The models, the schema version and the generated schema
(`render/report.schema.json`) live in `refaudit.report`; docs/json-schema.md
describes them. The MCP server returns the same models.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from refaudit.models import AuditReport, Result
from refaudit.render.common import (
    RenderContext,
    Row,
    Spool,
    StreamBase,
    report_summary,
    rows,
)
from refaudit.version import installed_version

if TYPE_CHECKING:
    # Building the report models takes a fifth of a second: not before the audit needs them.
    from refaudit.report import ReferenceResult, Report


def report_model(
    report: AuditReport, context: RenderContext, *, with_results: bool = True
) -> Report:
    """The whole run as the report model the JSON renderer and MCP both return."""
    from refaudit.report import Report, Summary, ToolInfo

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


def result_model(
    result: Result, context: RenderContext, result_rows: list[Row] | None = None
) -> ReferenceResult:
    """One verdict with its evidence; findings as every renderer lists them (`result_rows`)."""
    from refaudit.report import ReferenceResult, ReportedFinding

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
            for row in (rows(result, context) if result_rows is None else result_rows)
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


#: Between two results of the array.
_SEPARATOR = ",\n    "
#: Stands for the results array while the rest of the report is serialised.
_RESULTS_SLOT = "\u0000refaudit-results\u0000"


def render_json(report: AuditReport, context: RenderContext) -> str:
    """The JSON text, one result serialised at a time.

    The JSON `json.dumps(report_data(...), indent=2)` gives, without ever
    holding every result's model and dict at once: for a 100,000-entry bibliography
    those cost gigabytes, the text alone a tenth of that.
    """
    parts: list[str] = []
    texts = (_result_text(result, context) for result in report.results)
    pieces = (text if n == 0 else _SEPARATOR + text for n, text in enumerate(texts))
    _write_report(report, context, pieces, parts.append)
    return "".join(parts)


class JsonStream(StreamBase):
    """The JSON report written while the audit runs (a `ReportStream`)."""

    def __init__(self, context: RenderContext) -> None:
        super().__init__(context)
        self._spool = Spool()

    def _render(self, result: Result) -> None:
        self._spool.add(_result_text(result, self._context), _SEPARATOR)

    def write(self, report: AuditReport, write: Callable[[str], object]) -> None:
        """Write the report whose results were added, once."""
        _write_report(report, self._context, self._spool.pieces(), write)


def _result_text(result: Result, context: RenderContext) -> str:
    # pydantic's own serialiser writes what `json.dumps(model_dump(mode="json"), indent=2,
    # ensure_ascii=False)` writes, in a seventh of the time: a long report's results are
    # most of its rendering.
    return result_model(result, context).model_dump_json(indent=2).replace("\n", "\n    ")


def _write_report(
    report: AuditReport,
    context: RenderContext,
    pieces: Iterator[str],
    write: Callable[[str], object],
) -> None:
    """The report around its results: `pieces` of their text, separators in place."""
    data = report_model(report, context, with_results=False).model_dump(mode="json")
    data["results"] = _RESULTS_SLOT
    head, tail = json.dumps(data, indent=2, ensure_ascii=False).split(json.dumps(_RESULTS_SLOT), 1)
    write(head)
    first = next(pieces, None)
    if first is None:
        write("[]")
    else:
        write("[\n    ")
        write(first)
        for piece in pieces:
            write(piece)
        write("\n  ]")
    write(tail + "\n")


def load_schema() -> dict[str, Any]:
    from refaudit.report import SCHEMA_PATH

    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
