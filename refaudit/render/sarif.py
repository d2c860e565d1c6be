"""SARIF 2.1.0 for code-scanning dashboards: one result per finding, located at the entry.

Rules are the finding codes; levels follow severity (info → note). Suppressed
findings are kept, with the reason as an external suppression, and with a
baseline each result carries `baselineState` (new / unchanged).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from refaudit.baseline import fingerprint
from refaudit.models import AuditReport, Result
from refaudit.render.common import (
    RenderContext,
    Row,
    Spool,
    StreamBase,
    display_path,
    rows,
    with_comparison,
    xml_safe,
)
from refaudit.version import installed_version

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
DOCS = "https://github.com/refaudit/refaudit/blob/main/docs/verdicts.md"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _rule_name(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("-"))


#: Stands for the results array while the rest of the document is serialised.
_RESULTS_SLOT = "refaudit-results-slot"
#: Before each result of the array (the array sits four levels deep).
_INDENT = "\n" + " " * 8


class SarifStream(StreamBase):
    """The SARIF document written while the audit runs (a `ReportStream`).

    Results are serialised as they come; the rules (in the order their codes first
    appear, which fixes every `ruleIndex`) go in front of them at the end.
    """

    def __init__(self, context: RenderContext) -> None:
        super().__init__(context)
        self._rules: dict[str, dict[str, Any]] = {}
        self._index: dict[str, int] = {}
        self._spool = Spool()

    def _render(self, result: Result) -> None:
        for row in rows(result, self._context):
            code = row.finding.code
            if code not in self._rules:
                self._index[code] = len(self._rules)
                self._rules[code] = _rule(code, row.finding.severity)
            data = _result(row, self._index, self._context)
            text = json.dumps(_xml_safe_strings(data), indent=2, ensure_ascii=False)
            self._spool.add(text.replace("\n", _INDENT), "," + _INDENT)

    def write(self, report: AuditReport, write: Callable[[str], object]) -> None:
        run: dict[str, Any] = {
            "tool": {
                "driver": {
                    "name": "refaudit",
                    "version": installed_version(),
                    "informationUri": "https://github.com/refaudit/refaudit",
                    "rules": list(self._rules.values()),
                }
            },
            "results": [],
            "columnKind": "unicodeCodePoints",
        }
        document = _xml_safe_strings({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})
        document["runs"][0]["results"] = _RESULTS_SLOT
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        head, tail = text.split(json.dumps(_RESULTS_SLOT), 1)
        write(head)
        if self._spool.count:
            write("[" + _INDENT)
            for piece in self._spool.pieces():
                write(piece)
            write("\n" + " " * 6 + "]")
        else:
            self._spool.close()
            write("[]")
        write(tail)


def _rule(code: str, severity: str) -> dict[str, Any]:
    return {
        "id": code,
        "name": _rule_name(code),
        "shortDescription": {"text": code.replace("-", " ")},
        "helpUri": f"{DOCS}#{code}",
        "defaultConfiguration": {"level": _LEVELS[severity]},
    }


def _xml_safe_strings(value: Any) -> Any:
    """Every string with XML 1.0's forbidden characters escaped, as in the JUnit writer.

    JSON could carry them as \\u0001, but SARIF viewers render messages as markdown/XML
    and a lone surrogate cannot even be written as UTF-8.
    """
    if isinstance(value, str):
        return xml_safe(value)
    if isinstance(value, dict):
        return {xml_safe(key): _xml_safe_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_xml_safe_strings(item) for item in value]
    return value


def _result(row: Row, rule_index: dict[str, int], context: RenderContext) -> dict[str, Any]:
    finding, reference = row.finding, row.result.reference
    text = with_comparison(f"{reference.key}: {finding.message}", finding, sourced="")
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index[finding.code],
        "level": _LEVELS[finding.severity],
        "message": {"text": text},
        "partialFingerprints": {"refauditFinding/v1": "|".join(fingerprint(row.result, finding))},
        "properties": {
            "key": reference.key,
            "verdict": row.result.verdict.value,
            "field": finding.field,
            "source": finding.source,
            "record": finding.record,
        },
    }
    path = display_path(reference.file)
    if path:
        physical: dict[str, Any] = {"artifactLocation": {"uri": path}}
        if reference.line:
            physical["region"] = {"startLine": reference.line}
        result["locations"] = [{"physicalLocation": physical}]
    if finding.suppressed:
        result["suppressions"] = [{"kind": "external", "justification": finding.suppressed}]
    if context.baseline is not None:
        result["baselineState"] = "unchanged" if row.baselined else "new"
    return result
