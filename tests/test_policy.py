"""--fail-on rules, the unverified share, and baselines that waive only known findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_samples import sample_report, suppressed_report

from refaudit.baseline import build_baseline, read_baseline, write_baseline
from refaudit.errors import ConfigError, InputError
from refaudit.findings import FAIL_ON_CHOICES, parse_fail_on
from refaudit.models import Finding, Reference, Result, Verdict
from refaudit.policy import effective_findings, failing_results, report_tally


def failing_keys(fail_on: list[str], **kwargs) -> list[str]:
    report = kwargs.pop("report", None) or sample_report()
    return [r.reference.key for r in failing_results(report, fail_on, **kwargs)]


@pytest.mark.parametrize(
    ("fail_on", "expected"),
    [
        (["not_found", "doi", "retracted"], ["smith2021quantum", "wakefield1998"]),
        (["error"], ["lecun2015deep", "smith2021quantum", "wakefield1998"]),
        (["warning"], ["lecun2015deep", "smith2021quantum", "wakefield1998", "offline2020"]),
        (["info"], ["lecun2015deep", "smith2021quantum", "wakefield1998", "offline2020"]),
        (["mismatch"], ["lecun2015deep"]),
        (["unverified"], ["offline2020"]),
        (["not_found"], ["smith2021quantum"]),
        (["retracted"], ["wakefield1998"]),
        (["integrity"], ["wakefield1998"]),
        (["flagged"], ["lecun2015deep", "smith2021quantum", "wakefield1998"]),
        (["year-mismatch"], ["lecun2015deep"]),
        (["none"], []),
    ],
)
def test_each_fail_on_word_selects_the_expected_references(fail_on, expected) -> None:
    assert failing_keys(fail_on) == expected


def test_skipped_references_never_fail() -> None:
    assert "website" not in failing_keys(list(FAIL_ON_CHOICES))


def test_doi_rule_catches_doi_errors_but_not_doi_suggestions() -> None:
    report = sample_report()
    report.results[0].findings.append(
        Finding("doi-points-elsewhere", "error", "the DOI resolves to another work", field="doi")
    )
    assert failing_keys(["doi"], report=report) == ["vaswani2017attention"]


def test_suppressed_findings_never_fail() -> None:
    assert failing_keys(["info"], report=suppressed_report()) == []


def test_fail_on_accepts_comma_lists_dashes_and_rejects_unknown_words() -> None:
    assert parse_fail_on(["not-found,doi", "retracted", "doi"]) == ["not_found", "doi", "retracted"]
    with pytest.raises(ConfigError, match="unknown --fail-on value 'sever'"):
        parse_fail_on(["sever"])


def test_verdict_without_a_finding_gets_one_so_it_can_fail() -> None:
    result = Result(Reference(key="x"), Verdict.NOT_FOUND)
    assert [f.code for f in effective_findings(result)] == ["not-found"]
    ignored = Result(
        Reference(key="y"),
        Verdict.UNVERIFIED,
        findings=[Finding("arxiv-version", "info", "older version", suppressed="known")],
    )
    assert effective_findings(ignored)[0].suppressed == "known"


def test_unverified_share_ignores_skipped_references() -> None:
    assert report_tally(sample_report()).unverified_share() == pytest.approx(1 / 5)


def test_baseline_waives_known_findings_but_not_new_ones(tmp_path: Path) -> None:
    path = tmp_path / ".refaudit-baseline.json"
    write_baseline(build_baseline(sample_report()), path)
    known = read_baseline(path)
    assert failing_keys(["info"], baseline=known) == []

    changed = sample_report()
    changed.results[3].reference.doi = "10.1016/s0140-6736(97)99999-9"
    changed.results[0].findings.append(Finding("title-typo", "error", "typo", field="title"))
    assert failing_keys(["error"], report=changed, baseline=known) == [
        "vaswani2017attention",
        "wakefield1998",
    ]


def test_baseline_file_is_sorted_readable_json(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    write_baseline(build_baseline(sample_report()), path)
    data = json.loads(path.read_text())
    assert data["version"] == 1
    keys = [(f["key"], f["code"]) for f in data["findings"]]
    assert keys == sorted(keys)
    assert {"key": "lecun2015deep", "code": "year-mismatch", "field": "year", "doi": None} in data[
        "findings"
    ]


def test_broken_baseline_file_is_an_input_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text("{not json")
    with pytest.raises(InputError, match="b.json"):
        read_baseline(path)
    with pytest.raises(InputError, match="not found"):
        read_baseline(tmp_path / "missing.json")
