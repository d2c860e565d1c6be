"""JUnit and SARIF stay well-formed whatever characters keys, titles and messages hold."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET

from refaudit.models import AuditReport
from refaudit.render import RenderContext, render, xml_safe
from tests.report_samples import sample_report

HOSTILE = "bad\x01key\x0b\x1f\ud800\ufffe"


def hostile_report() -> AuditReport:
    report = copy.deepcopy(sample_report())
    for result in report.results:
        result.reference.key = f"{result.reference.key}{HOSTILE}"
        for finding in result.findings:
            finding.message += HOSTILE
            finding.cited = f"cited{HOSTILE}"
    report.results[1].reference.file = f"refs{HOSTILE}.bib"
    return report


def test_xml_safe_escapes_exactly_what_xml_1_0_forbids() -> None:
    assert xml_safe("tab\tnew\nline\r ok é 😀") == "tab\tnew\nline\r ok é 😀"
    assert xml_safe(HOSTILE) == "bad\\x01key\\x0b\\x1f\\xd800\\xfffe"


def test_junit_with_control_characters_in_keys_is_well_formed_xml() -> None:
    text = render(hostile_report(), "junit", RenderContext())
    root = ET.fromstring(text.encode("utf-8"))
    names = [case.get("name") for case in root.iter("testcase")]
    assert "vaswani2017attentionbad\\x01key\\x0b\\x1f\\xd800\\xfffe" in names


def test_sarif_with_control_characters_is_utf8_json_with_the_same_escapes() -> None:
    text = render(hostile_report(), "sarif", RenderContext())
    data = json.loads(text.encode("utf-8"))
    keys = {result["properties"]["key"] for result in data["runs"][0]["results"]}
    assert "lecun2015deepbad\\x01key\\x0b\\x1f\\xd800\\xfffe" in keys
