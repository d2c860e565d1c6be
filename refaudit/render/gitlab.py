"""GitLab Code Quality JSON: findings shown in the merge request's code-quality widget.

An array of `{description, check_name, fingerprint, severity, location: {path,
lines: {begin}}}`. GitLab compares the fingerprints of a merge request's report with
the target branch's, so a fingerprint is the baseline's identity of a finding (key,
code, field, cited DOI) plus the file: stable while upstream records change.
Severity: a finding that fails the run is `blocker`; otherwise errors are
`critical`, warnings `minor`, notes and baselined findings `info`. Suppressed
findings are left out (the format has no way to say "known and accepted").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from refaudit.baseline import fingerprint
from refaudit.models import AuditReport, InputProblem
from refaudit.render.common import (
    FindingStream,
    Row,
    display_path,
    with_comparison,
)

_SEVERITIES = {"error": "critical", "warning": "minor", "info": "info"}
#: Between two issues of the array.
_SEPARATOR = ",\n  "


class GitlabStream(FindingStream):
    """The Code Quality report written while the audit runs (a `ReportStream`)."""

    separator = _SEPARATOR

    def _piece(self, row: Row) -> str:
        return json.dumps(issue(row), indent=2, ensure_ascii=False).replace("\n", "\n  ")

    def write(self, report: AuditReport, write: Callable[[str], object]) -> None:
        issues = [
            json.dumps(_problem(problem), indent=2, ensure_ascii=False).replace("\n", "\n  ")
            for problem in report.problems
        ]
        if not self._spool.count and not issues:
            self._spool.close()
            write("[]\n")
            return
        write("[\n  ")
        for piece in self._spool.pieces():
            write(piece)
        for n, text in enumerate(issues):
            write(_SEPARATOR if n or self._spool.count else "")
            write(text)
        write("\n]\n")


def issue(row: Row) -> dict[str, Any]:
    """One finding as a Code Quality issue."""
    finding, reference = row.finding, row.result.reference
    description = with_comparison(f"{reference.key}: {finding.message}", finding)
    if row.failing:
        severity = "blocker"
    elif row.baselined:
        severity = "info"
    else:
        severity = _SEVERITIES[finding.severity]
    path = display_path(reference.file) or reference.key
    identity = "|".join((path, *fingerprint(row.result, finding)))
    return {
        "description": description,
        "check_name": f"refaudit/{finding.code}",
        "fingerprint": hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest(),
        "severity": severity,
        "location": {"path": path, "lines": {"begin": reference.line or 1}},
    }


def _problem(problem: InputProblem) -> dict[str, Any]:
    """A problem with the input itself (an unparsable entry, a missing file)."""
    path = display_path(problem.file) or problem.file
    identity = "|".join(
        (path, problem.code, str(problem.line or ""), problem.key or "", problem.message)
    )
    return {
        "description": problem.message,
        "check_name": f"refaudit/{problem.code}",
        "fingerprint": hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest(),
        "severity": _SEVERITIES.get(problem.severity, "minor"),
        "location": {"path": path, "lines": {"begin": problem.line or 1}},
    }
