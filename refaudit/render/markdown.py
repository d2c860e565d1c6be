"""A Markdown report, for pull-request comments and job summaries."""

from __future__ import annotations

from refaudit.models import AuditReport
from refaudit.render.common import (
    RenderContext,
    Row,
    finding_source,
    location,
    rows,
    shown_verdict,
)
from refaudit.render.table import summary_lines


def _cell(text: str | None) -> str:
    """Table-safe text: pipes escaped, newlines flattened."""
    return (text or "").replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(report: AuditReport, context: RenderContext) -> str:
    counts, cost, *snapshot = summary_lines(report, context)
    lines = ["# refaudit report", "", f"**{counts}**", "", cost, ""]
    for line in snapshot:
        lines += [line, ""]

    issues: list[Row] = []
    quiet: list[Row] = []
    for result in report.results:
        for row in rows(result, context):
            (quiet if row.finding.suppressed else issues).append(row)
    if issues:
        lines += [
            "## Findings",
            "",
            "| Key | Verdict | Severity | Finding | Source | Location |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for row in issues:
            marks = " ".join(
                mark
                for mark, on in (("**fails**", row.failing), ("*baseline*", row.baselined))
                if on
            )
            said = f"`{row.finding.code}` {_cell(row.finding.message)} {marks}".rstrip()
            source = _cell(finding_source(row.result, row.finding))
            lines.append(
                f"| `{_cell(row.result.reference.key)}` | {shown_verdict(row.result)} "
                f"| {row.finding.severity} | {said} | {source} | {_cell(location(row.result))} |"
            )
        lines.append("")
    else:
        lines += ["No findings.", ""]

    if context.details and issues:
        lines += ["## Details", ""]
        for row in issues:
            finding = row.finding
            if finding.cited is None and finding.found is None:
                continue
            field = f" ({finding.field})" if finding.field else ""
            evidence = " ".join(p for p in (finding.source, finding.record) if p)
            lines += [
                f"- `{_cell(row.result.reference.key)}` `{finding.code}`{field}: "
                f"cited *{_cell(finding.cited) or '—'}*, correct *{_cell(finding.found) or '—'}*"
                + (f" ({_cell(evidence)})" if evidence else "")
            ]
        lines.append("")

    if quiet:
        lines += ["## Suppressed", "", "| Key | Finding | Reason |", "| --- | --- | --- |"]
        for row in quiet:
            lines.append(
                f"| `{_cell(row.result.reference.key)}` | `{row.finding.code}` "
                f"| {_cell(row.finding.suppressed)} |"
            )
        lines.append("")

    if report.problems:
        lines += ["## Input problems", ""]
        for problem in report.problems:
            where = ":".join(str(p) for p in (problem.file, problem.line) if p is not None)
            key = f" `{problem.key}`" if problem.key else ""
            lines.append(f"- {_cell(where)}{key}: {_cell(problem.message)}")
        lines.append("")
    return "\n".join(lines)
