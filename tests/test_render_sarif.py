"""SARIF 2.1.0: valid against the schema, one rule per code, results located at the entry."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from report_samples import sample_report

from refaudit.baseline import build_baseline
from refaudit.models import AuditReport
from refaudit.render import RenderContext, render

SCHEMA = json.loads(
    (Path(__file__).parent / "fixtures" / "sarif-2.1.0-subset.schema.json").read_text()
)


def sarif(report: AuditReport, context: RenderContext | None = None) -> dict:
    return json.loads(render(report, "sarif", context or RenderContext()))


def test_sarif_validates_against_the_2_1_0_schema() -> None:
    for report in (sample_report(), AuditReport()):
        jsonschema.Draft7Validator(SCHEMA).validate(sarif(report))


def test_schema_subset_catches_a_misspelt_property() -> None:
    log = sarif(sample_report())
    log["runs"][0]["results"][0]["lvl"] = "error"
    assert list(jsonschema.Draft7Validator(SCHEMA).iter_errors(log))


def test_rules_are_finding_codes_and_levels_follow_severity() -> None:
    run = sarif(sample_report())["runs"][0]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert rules["year-mismatch"]["defaultConfiguration"]["level"] == "error"
    assert rules["doi-available"]["defaultConfiguration"]["level"] == "note"
    for result in run["results"]:
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_results_point_at_the_entry_file_and_line() -> None:
    results = sarif(sample_report())["runs"][0]["results"]
    missing = next(r for r in results if r["ruleId"] == "not-found")
    location = missing["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "refs.bib"}, "region": {"startLine": 21}}


def test_skipped_entries_are_reported_as_suppressed() -> None:
    results = sarif(sample_report())["runs"][0]["results"]
    skipped = next(r for r in results if r["ruleId"] == "skipped")
    assert skipped["suppressions"] == [
        {"kind": "external", "justification": "web page, not a publication"}
    ]


def test_baseline_state_marks_known_findings_unchanged() -> None:
    report = sample_report()
    results = sarif(report, RenderContext(baseline=build_baseline(report)))["runs"][0]["results"]
    states = {r["baselineState"] for r in results if "suppressions" not in r}
    assert states == {"unchanged"}
