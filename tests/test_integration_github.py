"""What the GitHub Action derives from one saved JSON report: bounded annotations, a job
summary under GitHub's size limit, and the report read back as every renderer sees it."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from report_samples import sample_report

from refaudit.baseline import build_baseline
from refaudit.errors import InputError
from refaudit.integrations.github import (
    SHOWN_PER_KIND,
    Inputs,
    bounded_annotations,
    check_command,
    default_inputs,
    job_summary,
    main,
    resolve_inputs,
    run,
)
from refaudit.integrations.saved import read_report
from refaudit.models import AuditReport
from refaudit.render import FORMATS, RenderContext, render


def many_fabricated(count: int) -> AuditReport:
    """`count` not-found references and as many year warnings (from the sample's entries)."""
    sample = sample_report()
    not_found = next(r for r in sample.results if r.verdict == "not_found")
    mismatch = next(r for r in sample.results if r.verdict == "mismatch")
    results = []
    for n in range(count):
        for template in (not_found, mismatch):
            result = copy.deepcopy(template)
            result.reference.key = f"{template.reference.key}-{n}"
            result.reference.line = len(results) * 8 + 1
            results.append(result)
    return AuditReport(results=results, files=sample.files)


def test_annotations_show_the_most_severe_first_and_count_the_rest() -> None:
    lines = list(bounded_annotations(many_fabricated(30), RenderContext()))
    errors = [line for line in lines if line.startswith("::error ")]
    warnings = [line for line in lines if line.startswith("::warning ")]
    notices = [line for line in lines if line.startswith("::notice")]
    assert len(errors) == SHOWN_PER_KIND and len(warnings) <= SHOWN_PER_KIND
    assert len(notices) <= SHOWN_PER_KIND
    # Failing not-found references come before the findings that do not fail.
    assert all("not-found" in line for line in errors)
    assert "smith2021quantum-0:" in errors[0] and "smith2021quantum-9:" in errors[-1]
    shown = len(lines) - 1
    every = render(many_fabricated(30), "github", RenderContext()).splitlines()
    total = sum(1 for line in every if line.startswith("::"))
    assert lines[-1] == (
        f"::notice::refaudit: {total - shown} more finding(s) are not annotated (GitHub shows "
        f"{SHOWN_PER_KIND} of each kind a step); the job summary lists them all"
    )


def test_a_small_report_is_annotated_whole() -> None:
    report = sample_report()
    lines = list(bounded_annotations(report, RenderContext()))
    assert not any("more finding(s)" in line for line in lines)
    github = [
        line
        for line in render(report, "github", RenderContext()).splitlines()
        if line.startswith("::")
    ]
    assert sorted(lines) == sorted(github)


def test_summary_stays_under_the_limit_and_points_to_the_artifact() -> None:
    report = many_fabricated(400)
    whole = job_summary(report, RenderContext())
    assert "more line(s)" not in whole
    cut = job_summary(report, RenderContext(), artifact="refs-report", limit=20_000)
    assert len(cut.encode("utf-8")) <= 20_000
    assert cut.rstrip().endswith("The full report is in the `refs-report` artifact of this run.*")
    # The failing references come first, so they survive the cut.
    assert "## Failing references" in cut and "## Other findings" not in cut
    kept = cut.count("| `smith2021quantum-")
    left = int(re.search(r"stops here \((\d+) more line\(s\)\)", cut).group(1))
    assert kept + left > 400 and kept > 50


def test_saved_report_renders_as_the_report_it_was_written_from(tmp_path: Path) -> None:
    report = sample_report()
    context = RenderContext(fail_on=["flagged", "retracted"], baseline=build_baseline(report))
    context.baseline.known = set(list(context.baseline.known)[:2])
    saved = tmp_path / "report.json"
    saved.write_text(render(report, "json", context), encoding="utf-8")
    again, again_context = read_report(saved)
    for format in FORMATS:
        if format != "json":
            assert render(again, format, again_context) == render(report, format, context), format


def test_a_file_that_is_not_a_report_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "refaudit.sarif"
    path.write_text('{"version": "2.1.0", "runs": []}', encoding="utf-8")
    with pytest.raises(InputError, match=r"refaudit.sarif: not a refaudit JSON report"):
        read_report(path)


def test_default_inputs_are_papers_with_a_bibliography_else_bib_files(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text("@misc{a, title={A}}\n", encoding="utf-8")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "intro.tex").write_text("\\cite{a}\n", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "old.bib").write_text("", encoding="utf-8")
    assert default_inputs(tmp_path) == [Path("refs.bib")]
    (tmp_path / "main.tex").write_text(
        "% \\bibliography{commented}\n\\addbibresource{refs.bib}\n", encoding="utf-8"
    )
    assert default_inputs(tmp_path) == [Path("main.tex")]
    assert resolve_inputs("**/*.tex refs.bib main.tex", tmp_path) == [
        Path("chapters/intro.tex"),
        Path("main.tex"),
        Path("refs.bib"),
    ]


def test_paths_that_name_no_file_are_reported_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "refs.bib").write_text("@misc{a, title={A}}\n", encoding="utf-8")
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    environ = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)}

    code = run(Inputs(paths="paper/*.bib"), tmp_path, tmp_path / "out", environ)

    log = capsys.readouterr().out
    assert code == 2
    assert "::error::refaudit: `paths` (paper/*.bib) names no file" in log
    assert "no .bib file in the repository" not in log
    assert "`paths` (paper/*.bib) names no file" in summary.read_text(encoding="utf-8")
    assert "exit-code=2" in outputs.read_text(encoding="utf-8")


@pytest.mark.parametrize("args", ["--format table", "--output=x.json", "-f sarif", "-ox.json"])
def test_args_may_not_replace_the_report_the_action_reads(
    tmp_path: Path,
    args: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match="`args` may not set"):
        check_command([Path("refs.bib")], Inputs(args=args), tmp_path / "refaudit.json")
    (tmp_path / "refs.bib").write_text("@misc{a, title={A}}\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs"))

    assert main(["run", "--out-dir", str(tmp_path / "out"), f"--args={args}"]) == 0

    assert "::error::refaudit: `args` may not set" in capsys.readouterr().out
    assert (tmp_path / "outputs").read_text(encoding="utf-8") == "exit-code=2\n"
    kept = check_command([Path("refs.bib")], Inputs(args="--fail-on none"), tmp_path / "r.json")
    assert kept[-2:] == ["--fail-on", "none"]


def test_sarif_is_uploaded_except_from_a_fork(tmp_path: Path) -> None:
    from refaudit.integrations.github import sarif_upload_refused

    event = tmp_path / "event.json"

    def pull_request(head: str) -> dict[str, str]:
        body = {
            "pull_request": {
                "head": {"repo": {"full_name": head}},
                "base": {"repo": {"full_name": "lab/paper"}},
            }
        }
        event.write_text(json.dumps(body), encoding="utf-8")
        return {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event)}

    assert sarif_upload_refused({"GITHUB_EVENT_NAME": "push"}) is None
    assert sarif_upload_refused(pull_request("lab/paper")) is None
    refused = sarif_upload_refused(pull_request("someone/paper"))
    assert refused is not None and refused.startswith("this pull request comes from the fork")
    # pull_request_target runs with the base repository's token: it can upload.
    target = {**pull_request("someone/paper"), "GITHUB_EVENT_NAME": "pull_request_target"}
    assert sarif_upload_refused(target) is None
