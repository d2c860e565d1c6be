"""JUnit XML, GitHub annotations and Markdown: the formats CI systems and PRs read."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from report_samples import sample_report

from refaudit.render import RenderContext, render


def test_junit_has_one_testcase_per_reference_and_failures_for_failing_ones() -> None:
    root = ET.fromstring(render(sample_report(), "junit", RenderContext()))
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert len(cases) == 6
    assert root.get("tests") == "6" and root.get("failures") == "2"
    assert cases["smith2021quantum"].find("failure").get("type") == "not-found"
    assert cases["wakefield1998"].find("failure") is not None
    assert cases["vaswani2017attention"].find("failure") is None
    assert "crossref: timeout after 20 s" in cases["offline2020"].find("skipped").get("message")
    assert cases["lecun2015deep"].get("line") == "11"


def test_junit_failures_follow_the_fail_policy() -> None:
    root = ET.fromstring(render(sample_report(), "junit", RenderContext(fail_on=["error"])))
    lecun = next(c for c in root.iter("testcase") if c.get("name") == "lecun2015deep")
    assert "year-mismatch" in lecun.find("failure").text


def test_github_annotations_use_workflow_command_syntax() -> None:
    lines = render(sample_report(), "github", RenderContext()).splitlines()
    assert (
        "::error file=refs.bib,line=21,title=refaudit not-found::smith2021quantum: "
        "No such work found in crossref, openalex, semanticscholar" in lines
    )
    year = next(line for line in lines if "year-mismatch" in line)
    assert year.startswith("::error file=refs.bib,line=11,")
    assert "%0Acited: 2016%0Acorrect: 2015" in year
    assert not any("website" in line for line in lines), "skipped entries are not annotated"
    assert "::warning file=refs.bib,line=50,title=refaudit parse-error::" in "\n".join(lines)


def test_github_escapes_newlines_percent_and_property_separators() -> None:
    report = sample_report()
    report.results[2].reference.file = "refs, 100%.bib"
    report.results[2].findings[0].message = "50% sure\nsecond line"
    line = next(
        line for line in render(report, "github", RenderContext()).splitlines() if "smith" in line
    )
    assert "file=refs%2C 100%25.bib," in line
    assert line.endswith("smith2021quantum: 50%25 sure%0Asecond line")


def test_markdown_lists_findings_suppressed_entries_and_problems() -> None:
    text = render(sample_report(), "markdown", RenderContext(details=True))
    assert text.startswith("# refaudit report")
    assert "| `smith2021quantum` | not found | error |" in text
    assert "**fails**" in text
    assert "## Suppressed" in text and "web page, not a publication" in text
    assert "cited *2016*, correct *2015*" in text
    assert "- refs.bib:50 `broken`: entry has no closing brace" in text
