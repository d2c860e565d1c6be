"""GitHub Actions workflow commands: each finding becomes an annotation on its .bib line.

Format: `::error file=refs.bib,line=12,title=refaudit doi-not-registered::message`
(https://docs.github.com/actions/reference/workflow-commands-for-github-actions).
Suppressed findings are not annotated; baselined ones are downgraded to notices.
"""

from __future__ import annotations

from collections.abc import Callable

from refaudit.models import AuditReport, InputProblem
from refaudit.render.common import (
    FindingStream,
    Row,
    display_path,
    with_comparison,
)
from refaudit.render.table import summary_lines

_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(
    command: str, message: str, *, file: str | None, line: int | None, title: str
) -> str:
    properties = []
    if file:
        properties.append(f"file={_escape_property(file)}")
        if line:
            properties.append(f"line={line}")
    properties.append(f"title={_escape_property(title)}")
    return f"::{command} {','.join(properties)}::{_escape_data(message)}"


class GithubStream(FindingStream):
    """The annotations written while the audit runs (a `ReportStream`)."""

    def _piece(self, row: Row) -> str:
        return annotation(row)[1] + "\n"

    def write(self, report: AuditReport, write: Callable[[str], object]) -> None:
        for piece in self._spool.pieces():
            write(piece)
        for problem in report.problems:
            write(problem_annotation(problem)[1] + "\n")
        for line in summary_lines(report, self._context):
            write(line + "\n")


def annotation(row: Row) -> tuple[str, str]:
    """(command, workflow command) for one unsuppressed finding: `error`, `warning` or `notice`."""
    finding, reference = row.finding, row.result.reference
    command = "notice" if row.baselined else _COMMANDS[finding.severity]
    message = with_comparison(
        f"{reference.key}: {finding.message}",
        finding,
        compared="\ncited: {cited}\ncorrect: {found}",
        sourced="\nsource: {evidence}",
    )
    if row.baselined:
        message += "\n(known: in the baseline)"
    line = _annotation(
        command,
        message,
        file=display_path(reference.file),
        line=reference.line,
        title=f"refaudit {finding.code}",
    )
    return command, line


def problem_annotation(problem: InputProblem) -> tuple[str, str]:
    """(command, workflow command) for a problem with the input itself."""
    command = _COMMANDS.get(problem.severity, "warning")
    line = _annotation(
        command,
        problem.message,
        file=display_path(problem.file),
        line=problem.line,
        title=f"refaudit {problem.code}",
    )
    return command, line


def plain_annotation(command: str, message: str) -> str:
    """A workflow command that points at no file (a note about the run itself)."""
    return f"::{command}::{_escape_data(message)}"
