"""`--format gitlab`: GitLab's Code Quality JSON, shown in a merge request's widget."""

from __future__ import annotations

import json

from report_samples import sample_report, streamed

from refaudit.baseline import Baseline, build_baseline
from refaudit.render import RenderContext, render, report_stream

SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


def issues(context: RenderContext | None = None) -> list[dict]:
    return json.loads(render(sample_report(), "gitlab", context or RenderContext()))


def test_every_unsuppressed_finding_is_an_issue_on_its_entry_line() -> None:
    found = issues()
    for issue in found:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in SEVERITIES
        assert isinstance(issue["location"]["lines"]["begin"], int)
    by_check = {issue["check_name"]: issue for issue in found}
    # The fabricated reference fails the default gate: a blocker, on its line.
    not_found = by_check["refaudit/not-found"]
    assert not_found["severity"] == "blocker"
    smith = next(r for r in sample_report().results if r.reference.key == "smith2021quantum")
    assert not_found["location"] == {"path": "refs.bib", "lines": {"begin": smith.reference.line}}
    assert not_found["description"].startswith("smith2021quantum: ")
    # A year one off cites evidence and does not fail the default gate.
    year = by_check["refaudit/year-mismatch"]
    assert year["severity"] == "critical"
    assert "(cited: 2016; correct: 2015)" in year["description"]
    # The skipped web page is suppressed: GitLab has no way to say so, so it is left out.
    assert not any("skipped" in issue["check_name"] for issue in found)
    # The input problem (an unparsable entry) is reported where it is.
    problem = sample_report().problems[0]
    assert by_check[f"refaudit/{problem.code}"]["location"]["lines"]["begin"] == problem.line


def test_fingerprints_are_unique_and_survive_upstream_changes() -> None:
    found = issues()
    assert len({issue["fingerprint"] for issue in found}) == len(found)
    report = sample_report()
    for result in report.results:
        for finding in result.findings:
            finding.message += " (reworded upstream)"
            finding.found = "something else"
    again = json.loads(render(report, "gitlab", RenderContext()))
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in found]


def test_a_strict_gate_and_a_baseline_change_severities() -> None:
    strict = {i["check_name"]: i["severity"] for i in issues(RenderContext(fail_on=["flagged"]))}
    assert strict["refaudit/year-mismatch"] == "blocker"
    known: Baseline = build_baseline(sample_report())
    baselined = issues(RenderContext(baseline=known))
    # Known findings are notes; the input problem is no finding and keeps its severity.
    assert {i["severity"] for i in baselined if i["check_name"] != "refaudit/parse-error"} == {
        "info"
    }


def test_streamed_report_is_byte_for_byte_the_whole_one() -> None:
    context = RenderContext()
    stream = report_stream("gitlab", context)
    report = streamed(sample_report(), stream.add)
    parts: list[str] = []
    stream.write(report, parts.append)
    assert "".join(parts) == render(sample_report(), "gitlab", context)


def test_a_report_without_findings_is_an_empty_array() -> None:
    report = sample_report()
    report.results = report.results[:1]
    report.problems = []
    assert render(report, "gitlab", RenderContext()) == "[]\n"
