"""JUnit XML: one testcase per reference, so CI test tabs list the bibliography.

A reference that fails the run (per `--fail-on` and the baseline) is a
`<failure>`; skipped and unverified references are `<skipped>`; other findings
go to `<system-out>` so nothing is hidden.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from refaudit.models import AuditReport, Result, Verdict
from refaudit.render.common import (
    RenderContext,
    Row,
    display_path,
    failed_sources_text,
    rows,
    xml_safe,
)


def _describe(row: Row) -> str:
    finding = row.finding
    line = f"[{finding.severity}] {finding.code}: {finding.message}"
    if finding.cited is not None or finding.found is not None:
        line += f" (cited: {finding.cited or '—'}; correct: {finding.found or '—'})"
    evidence = " ".join(p for p in (finding.source, finding.record) if p)
    if evidence:
        line += f" [{evidence}]"
    if finding.suppressed:
        line += f" [suppressed: {finding.suppressed}]"
    if row.baselined:
        line += " [baseline]"
    return line


def _testcase(result: Result, context: RenderContext, suite: str) -> ET.Element:
    reference = result.reference
    case = ET.Element("testcase", name=reference.key, classname=suite, time="0")
    if reference.file:
        case.set("file", display_path(reference.file) or reference.file)
    if reference.line:
        case.set("line", str(reference.line))
    result_rows = rows(result, context)
    failing = [row for row in result_rows if row.failing]
    if failing:
        failure = ET.SubElement(
            case, "failure", type=failing[0].finding.code, message=failing[0].finding.message
        )
        failure.text = "\n".join(_describe(row) for row in failing)
    elif result.verdict == Verdict.SKIPPED:
        ET.SubElement(case, "skipped", message=result.reason or "skipped")
    elif result.verdict == Verdict.UNVERIFIED:
        reason = failed_sources_text(result) or result.reason or "no source could check it"
        ET.SubElement(case, "skipped", message=f"unverified: {reason}")
    others = [row for row in result_rows if not row.failing]
    if others:
        ET.SubElement(case, "system-out").text = "\n".join(_describe(row) for row in others)
    return case


def _make_xml_safe(root: ET.Element) -> None:
    """Escape what XML 1.0 forbids in every attribute and text (ElementTree writes it raw)."""
    for element in root.iter():
        element.attrib = {name: xml_safe(value) for name, value in element.attrib.items()}
        if element.text:
            element.text = xml_safe(element.text)


def render_junit(report: AuditReport, context: RenderContext) -> str:
    root = ET.Element("testsuites", name="refaudit")
    totals = {"tests": 0, "failures": 0, "skipped": 0}

    def suite_name(result: Result) -> str:
        return display_path(result.reference.file) or "references"

    ordered = sorted(report.results, key=suite_name)
    for name, members in groupby(ordered, key=suite_name):
        suite = ET.SubElement(root, "testsuite", name=name)
        cases = [_testcase(result, context, name) for result in members]
        suite.extend(cases)
        counts = {
            "tests": len(cases),
            "failures": sum(1 for c in cases if c.find("failure") is not None),
            "skipped": sum(1 for c in cases if c.find("skipped") is not None),
        }
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("errors", "0")
        suite.set("time", "0")
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("errors", "0")
    root.set("time", f"{report.stats.elapsed_s:.3f}")
    _make_xml_safe(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
