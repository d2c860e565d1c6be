"""A Markdown report, for pull-request comments and job summaries."""

from __future__ import annotations

from collections.abc import Callable

from refaudit.models import AuditReport, Result
from refaudit.render.common import (
    RenderContext,
    Row,
    Spool,
    StreamBase,
    finding_source,
    location,
    rows,
    shown_verdict,
)
from refaudit.render.table import summary_lines


def cell(text: str | None) -> str:
    """Table-safe text: pipes escaped, newlines flattened."""
    return (text or "").replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


class MarkdownStream(StreamBase):
    """The Markdown report written while the audit runs (a `ReportStream`).

    The findings, details and suppressed tables each go to their own spool; the
    summary above them is written once the audit is done.
    """

    def __init__(self, context: RenderContext) -> None:
        super().__init__(context)
        self._issues, self._details, self._quiet = Spool(), Spool(), Spool()

    def _render(self, result: Result) -> None:
        for row in rows(result, self._context):
            if row.finding.suppressed:
                self._quiet.add(_quiet_line(row), "\n")
                continue
            self._issues.add(issue_line(row), "\n")
            detail = detail_line(row) if self._context.details else None
            if detail is not None:
                self._details.add(detail, "\n")

    def write(self, report: AuditReport, write: Callable[[str], object]) -> None:
        counts, cost, *snapshot = summary_lines(report, self._context)
        lines = ["# refaudit report", "", f"**{counts}**", "", cost, ""]
        for line in snapshot:
            lines += [line, ""]
        # Each spooled table is joined by "\n" and followed by an empty line, as in
        # "\n".join() of one list of lines.
        sections: list[tuple[list[str], Spool | None]] = []
        if self._issues.count:
            sections.append((FINDINGS_HEAD, self._issues))
            if self._context.details:
                sections.append((["## Details", ""], self._details))
        else:
            sections.append((["No findings.", ""], None))
        if self._quiet.count:
            sections.append((_SUPPRESSED_HEAD, self._quiet))
        write("\n".join(lines))
        for head, spool in sections:
            write("\n" + "\n".join(head))
            if spool is not None:
                if spool.count:
                    write("\n")
                    for piece in spool.pieces():
                        write(piece)
                write("\n")
        for spool in (self._issues, self._details, self._quiet):
            spool.close()
        tail: list[str] = []
        if report.problems:
            tail += ["## Input problems", ""]
            for problem in report.problems:
                where = ":".join(str(p) for p in (problem.file, problem.line) if p is not None)
                key = f" `{problem.key}`" if problem.key else ""
                tail.append(f"- {cell(where)}{key}: {cell(problem.message)}")
            tail.append("")
        if tail:
            write("\n" + "\n".join(tail))


FINDINGS_HEAD = [
    "## Findings",
    "",
    "| Key | Verdict | Severity | Finding | Source | Location |",
    "| --- | --- | --- | --- | --- | --- |",
]
_SUPPRESSED_HEAD = ["## Suppressed", "", "| Key | Finding | Reason |", "| --- | --- | --- |"]


def issue_line(row: Row) -> str:
    """A finding as one row of the findings table (FINDINGS_HEAD)."""
    marks = " ".join(
        mark for mark, on in (("**fails**", row.failing), ("*baseline*", row.baselined)) if on
    )
    said = f"`{row.finding.code}` {cell(row.finding.message)} {marks}".rstrip()
    source = cell(finding_source(row.result, row.finding))
    return (
        f"| `{cell(row.result.reference.key)}` | {shown_verdict(row.result)} "
        f"| {row.finding.severity} | {said} | {source} | {cell(location(row.result))} |"
    )


def detail_line(row: Row) -> str | None:
    """Cited against correct, with the record behind it (None: the finding compares nothing)."""
    finding = row.finding
    if finding.cited is None and finding.found is None:
        return None
    field = f" ({finding.field})" if finding.field else ""
    evidence = " ".join(p for p in (finding.source, finding.record) if p)
    return (
        f"- `{cell(row.result.reference.key)}` `{finding.code}`{field}: "
        f"cited *{cell(finding.cited) or '—'}*, correct *{cell(finding.found) or '—'}*"
        + (f" ({cell(evidence)})" if evidence else "")
    )


def _quiet_line(row: Row) -> str:
    return (
        f"| `{cell(row.result.reference.key)}` | `{row.finding.code}` "
        f"| {cell(row.finding.suppressed)} |"
    )
