"""The JSON report is versioned and validates against the schema shipped in the package."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
from report_samples import sample_report, suppressed_report

from refaudit.baseline import build_baseline
from refaudit.models import JSON_SCHEMA_VERSION, AuditReport, SnapshotState, Work
from refaudit.render import RenderContext, render
from refaudit.render.json import load_schema
from refaudit.report import SCHEMA_PATH, schema_text


def rendered(report: AuditReport, context: RenderContext | None = None) -> dict:
    return json.loads(render(report, "json", context or RenderContext()))


def test_report_validates_against_the_shipped_schema() -> None:
    validator = jsonschema.Draft202012Validator(load_schema())
    for report in (sample_report(), suppressed_report(), AuditReport()):
        validator.validate(rendered(report))


def test_schema_rejects_an_unknown_verdict() -> None:
    data = rendered(sample_report())
    data["results"][0]["verdict"] = "probably-fine"
    errors = list(jsonschema.Draft202012Validator(load_schema()).iter_errors(data))
    assert errors


def test_report_carries_schema_version_summary_and_evidence() -> None:
    data = rendered(sample_report())
    assert data["schema_version"] == JSON_SCHEMA_VERSION
    assert data["summary"]["not_found"] == 1
    assert data["summary"]["failing"] == data["summary"]["flagged"] == 2
    lecun = next(r for r in data["results"] if r["key"] == "lecun2015deep")
    year = next(f for f in lecun["findings"] if f["code"] == "year-mismatch")
    assert (year["cited"], year["found"], year["source"], year["record"]) == (
        "2016",
        "2015",
        "crossref",
        "10.1038/nature14539",
    )
    assert lecun["matched"]["doi"] == "10.1038/nature14539"


def test_failing_and_baselined_flags_follow_the_policy_and_the_baseline() -> None:
    report = sample_report()
    data = rendered(report, RenderContext(baseline=build_baseline(report)))
    assert data["summary"]["failing"] == data["summary"]["flagged"] == 0
    assert not any(r["flagged"] for r in data["results"])
    assert all(
        f["baselined"] for r in data["results"] for f in r["findings"] if not f["suppressed"]
    )


def test_unverified_result_names_the_failed_sources() -> None:
    offline = next(r for r in rendered(sample_report())["results"] if r["key"] == "offline2020")
    assert offline["verdict"] == "unverified"
    assert offline["sources"]["crossref"] == {
        "state": "failed",
        "reason": "timeout after 20 s",
        "why": None,
    }


def test_snapshot_state_is_serialised_and_a_1_0_report_without_it_still_validates() -> None:
    validator = jsonschema.Draft202012Validator(load_schema())
    report = sample_report()
    assert rendered(report)["retraction_snapshot"] is None
    report.retraction_snapshot = SnapshotState(
        available=True,
        downloaded_at="2026-11-01T06:12:40+00:00",
        age_days=22.3,
        rows=61482,
        newest_notice_date="2026-10-31",
    )
    data = rendered(report)
    validator.validate(data)
    assert data["retraction_snapshot"]["age_days"] == 22.3
    data["retraction_snapshot"]["age_days"] = "22 days"
    assert list(validator.iter_errors(data))
    old = rendered(sample_report())
    del old["retraction_snapshot"]
    validator.validate({**old, "schema_version": "1.0"})


def test_committed_schema_is_the_one_the_report_models_generate() -> None:
    """Run `python -m refaudit.report` after changing a report model or record."""
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text()


def test_every_record_field_reaches_the_report() -> None:
    """The matched work carries every field of the record, subtitle and ISBNs included."""
    report = sample_report()
    lecun = next(r for r in report.results if r.reference.key == "lecun2015deep")
    assert lecun.matched is not None
    lecun.matched.subtitle, lecun.matched.isbn = "A review", ["9780262035613"]
    matched = next(r for r in rendered(report)["results"] if r["key"] == "lecun2015deep")["matched"]
    assert set(matched) == {field.name for field in dataclasses.fields(Work)}
    assert (matched["subtitle"], matched["isbn"]) == ("A review", ["9780262035613"])
