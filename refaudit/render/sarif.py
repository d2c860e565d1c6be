"""SARIF 2.1.0 for code-scanning dashboards: one result per finding, located at the entry.

Rules are the finding codes; levels follow severity (info → note). Suppressed
findings are kept, with the reason as an external suppression, and with a
baseline each result carries `baselineState` (new / unchanged).
"""

from __future__ import annotations

import json
from typing import Any

from refaudit.baseline import fingerprint
from refaudit.models import AuditReport
from refaudit.render.common import RenderContext, Row, display_path, rows, xml_safe
from refaudit.version import installed_version

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
DOCS = "https://github.com/refaudit/refaudit/blob/main/docs/verdicts.md"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _rule_name(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("-"))


def render_sarif(report: AuditReport, context: RenderContext) -> str:
    all_rows = [row for result in report.results for row in rows(result, context)]
    rules: dict[str, dict[str, Any]] = {}
    for row in all_rows:
        rules.setdefault(
            row.finding.code,
            {
                "id": row.finding.code,
                "name": _rule_name(row.finding.code),
                "shortDescription": {"text": row.finding.code.replace("-", " ")},
                "helpUri": f"{DOCS}#{row.finding.code}",
                "defaultConfiguration": {"level": _LEVELS[row.finding.severity]},
            },
        )
    rule_index = {code: index for index, code in enumerate(rules)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "refaudit",
                "version": installed_version(),
                "informationUri": "https://github.com/refaudit/refaudit",
                "rules": list(rules.values()),
            }
        },
        "results": [_result(row, rule_index, context) for row in all_rows],
        "columnKind": "unicodeCodePoints",
    }
    document = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(_xml_safe_strings(document), indent=2, ensure_ascii=False) + "\n"


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
    text = f"{reference.key}: {finding.message}"
    if finding.cited is not None or finding.found is not None:
        text += f" (cited: {finding.cited or '—'}; correct: {finding.found or '—'})"
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
