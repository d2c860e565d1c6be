"""JUnit XML: one testcase per reference, so CI test tabs list the bibliography.

A reference that fails the run (per `--fail-on` and the baseline) is a
`<failure>`; skipped and unverified references are `<skipped>`; other findings
go to `<system-out>` so nothing is hidden.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field

from refaudit.models import AuditReport, Result, Verdict
from refaudit.render.common import (
    RenderContext,
    Row,
    Spool,
    StreamBase,
    display_path,
    failed_sources_text,
    rows,
    with_comparison,
    xml_safe,
)


def _describe(row: Row) -> str:
    finding = row.finding
    line = with_comparison(f"[{finding.severity}] {finding.code}: {finding.message}", finding)
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


_COUNTED = ("tests", "failures", "skipped")


@dataclass
class _Suite:
    """One file's testcases, serialised as they come, and its counts."""

    cases: Spool = field(default_factory=Spool)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_COUNTED, 0))


class JunitStream(StreamBase):
    """The JUnit document written while the audit runs (a `ReportStream`).

    ElementTree would need the whole tree; each testcase is serialised on its own
    instead, indented as `ET.indent` indents it inside the tree, and its suite's
    start tag (which carries the counts) is written at the end. Suites come in
    the order of their names, cases in input order.
    """

    def __init__(self, context: RenderContext) -> None:
        super().__init__(context)
        self._suites: dict[str, _Suite] = {}

    def _render(self, result: Result) -> None:
        name = display_path(result.reference.file) or "references"
        suite = self._suites.setdefault(name, _Suite())
        case = _testcase(result, self._context, name)
        suite.counts["tests"] += 1
        suite.counts["failures"] += case.find("failure") is not None
        suite.counts["skipped"] += case.find("skipped") is not None
        _make_xml_safe(case)
        ET.indent(case, level=2)
        suite.cases.add(ET.tostring(case, encoding="unicode"), "\n    ")

    def write(self, report: AuditReport, write: Callable[[str], object]) -> None:
        root = ET.Element("testsuites", name="refaudit")
        for key in _COUNTED:
            root.set(key, str(sum(suite.counts[key] for suite in self._suites.values())))
        root.set("errors", "0")
        root.set("time", f"{report.stats.elapsed_s:.3f}")
        write('<?xml version="1.0" encoding="UTF-8"?>\n')
        if not self._suites:
            write(_tag(root).removesuffix(">") + " />\n")
            return
        write(_tag(root) + "\n  ")
        for number, name in enumerate(sorted(self._suites)):
            suite = self._suites[name]
            element = ET.Element("testsuite", name=name)
            for key, value in suite.counts.items():
                element.set(key, str(value))
            element.set("errors", "0")
            element.set("time", "0")
            write(("\n  " if number else "") + _tag(element) + "\n    ")
            for piece in suite.cases.pieces():
                write(piece)
            write("\n  </testsuite>")
        write("\n</testsuites>\n")


def _tag(element: ET.Element) -> str:
    """The start tag of an element without children, escaped as ElementTree escapes it."""
    _make_xml_safe(element)
    return ET.tostring(element, encoding="unicode").removesuffix(" />") + ">"
