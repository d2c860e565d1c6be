"""`refaudit check`, `fix`, `baseline`: exit codes, output formats, and never clobbering files.

Most tests replace the pipeline (`refaudit.audit.audit_paths`) with a fake that
returns a hand-made report; the subprocess tests run the real command line, one
of them against the real pipeline offline with nothing cached.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from report_samples import BIB_TEXT, sample_report, streamed
from typer.testing import CliRunner

from refaudit import audit
from refaudit.cli import app
from refaudit.cli.options import fill_optional_value
from refaudit.config import DEFAULT_BASE_URLS
from refaudit.models import InputProblem
from refaudit.render.json import load_schema

runner = CliRunner()
PIPELINE_CALLS: list[dict] = []
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def bib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """refs.bib in the working directory, audited by a fake pipeline returning sample_report()."""
    path = tmp_path / "refs.bib"
    path.write_text(BIB_TEXT, encoding="utf-8")
    PIPELINE_CALLS.clear()

    async def fake_audit_paths(
        paths, settings, *, all_entries=False, progress=None, on_batch=None, tally=None, **kw
    ):
        PIPELINE_CALLS.append({"paths": paths, "settings": settings, "all_entries": all_entries})
        if progress:
            progress(6, 6)
        return streamed(sample_report(), on_batch, tally)

    monkeypatch.setattr(audit, "audit_paths", fake_audit_paths)
    monkeypatch.setenv("CI", "true")
    return path


def run(*args: str):
    return runner.invoke(app, list(args))


def test_default_policy_fails_on_not_found_and_retracted(bib: Path) -> None:
    result = run("check", str(bib))
    assert result.exit_code == 1
    assert "smith2021quantum" in result.output
    assert "2 reference(s) fail" in result.output


def test_fail_on_none_exits_zero_and_fail_on_is_validated(bib: Path) -> None:
    assert run("check", str(bib), "--fail-on", "none", "--allow-unverified").exit_code == 0
    bad = run("check", str(bib), "--fail-on", "sometimes")
    assert bad.exit_code == 2
    assert "unknown --fail-on value 'sometimes'" in bad.output
    assert "Traceback" not in bad.output


def test_flags_reach_the_settings_and_the_pipeline(bib: Path) -> None:
    run(
        "check", str(bib), "--offline", "--no-cache", "--sources", "crossref,dblp",
        "--mailto", "me@example.org", "--timeout", "5", "--all-entries", "--fail-on", "none",
    )  # fmt: skip
    call = PIPELINE_CALLS[-1]
    settings = call["settings"]
    assert (settings.offline, settings.use_cache, settings.sources) == (
        True,
        False,
        ["crossref", "dblp"],
    )
    assert (settings.mailto, settings.timeout, call["all_entries"]) == ("me@example.org", 5.0, True)


def test_unknown_source_is_a_usage_error(bib: Path) -> None:
    result = run("check", str(bib), "--sources", "google")
    assert result.exit_code == 2
    assert "unknown source(s) google" in result.output


def test_missing_input_is_exit_2_with_a_one_line_message(bib: Path) -> None:
    result = run("check", "nope.bib")
    assert result.exit_code == 2
    assert "nope.bib: file not found" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "message", "hint"),
    [
        (("check", "--bogus"), "error: No such option: --bogus", "refaudit check --help"),
        (("check",), "error: Missing argument 'files'.", "refaudit check --help"),
        (("nosuch",), "error: No such command 'nosuch'.", "refaudit --help"),
        (("check", "--format"), "error: Option '--format' requires an argument.", None),
    ],
)
def test_click_usage_errors_take_refaudits_one_line_style(
    args: tuple[str, ...], message: str, hint: str | None
) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert result.output.startswith(message)
    if hint:
        assert f"hint: see '{hint}'" in result.output
    assert "╭" not in result.output and "Usage:" not in result.output


def test_usage_errors_match_refaudits_own_errors(bib: Path) -> None:
    click_error = run("check", str(bib), "--no-such-flag").output.splitlines()
    own_error = run("check", str(bib), "--format", "nope").output.splitlines()
    assert [line.split(":")[0] for line in click_error] == ["error", "hint"]
    assert [line.split(":")[0] for line in own_error] == ["error", "hint"]


def test_help_and_no_arguments_still_print_the_help() -> None:
    assert run("check", "--help").exit_code == 0
    bare = run()
    assert bare.exit_code == 2
    assert "Usage: refaudit" in bare.output and "check" in bare.output


def test_require_verified_exits_3_when_too_much_is_unverified(bib: Path) -> None:
    default = run("check", str(bib), "--fail-on", "none")
    assert default.exit_code == 3, "one unverified reference of five is more than 10 %"
    assert "exit 3: 20% of the references are unverified" in default.stderr
    assert run("check", str(bib), "--fail-on", "none", "--require-verified").exit_code == 3
    assert run("check", str(bib), "--fail-on", "none", "--require-verified", "0.5").exit_code == 0
    assert run("check", "--require-verified", str(bib), "--fail-on", "none").exit_code == 3
    assert run("check", str(bib), "--require-verified", "0.5").exit_code == 1, "1 wins over 3"


def test_bare_require_verified_gets_the_default_fraction() -> None:
    assert fill_optional_value(["--require-verified", "a.bib"]) == [
        "--require-verified=0.1",
        "a.bib",
    ]
    assert fill_optional_value(["--require-verified", "0.3"]) == ["--require-verified", "0.3"]
    assert fill_optional_value(["--", "--require-verified"]) == ["--", "--require-verified"]


def test_json_output_validates_against_the_schema(bib: Path) -> None:
    result = run("check", str(bib), "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    jsonschema.Draft202012Validator(load_schema()).validate(data)


def test_json_written_batch_by_batch_is_the_whole_report(bib: Path, tmp_path: Path) -> None:
    from refaudit.render import RenderContext, render

    whole = render(sample_report(), "json", RenderContext())
    printed = run("check", str(bib), "--format", "json")
    target = tmp_path / "report.json"
    written = run("check", str(bib), "--format", "json", "-o", str(target))
    assert printed.exit_code == written.exit_code == 1
    assert printed.stdout == whole
    assert target.read_text(encoding="utf-8") == whole
    assert "2 reference(s) fail" in written.stderr


def test_output_file_gets_the_report_and_stderr_a_summary(bib: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.sarif"
    result = run("check", str(bib), "--format", "sarif", "--output", str(target))
    assert result.exit_code == 1
    assert json.loads(target.read_text())["version"] == "2.1.0"
    assert "wrote sarif report" in result.stderr


@pytest.mark.parametrize("output_format", ["junit", "github", "markdown", "table"])
def test_every_format_renders(bib: Path, output_format: str) -> None:
    result = run("check", str(bib), "--format", output_format)
    assert result.exit_code == 1
    if output_format == "junit":
        assert ET.fromstring(result.stdout).get("failures") == "2"
    elif output_format == "github":
        assert "::error file=refs.bib,line=21," in result.stdout
    else:
        assert "smith2021quantum" in result.stdout


def test_unknown_format_is_a_usage_error(bib: Path) -> None:
    result = run("check", str(bib), "--format", "pdf")
    assert result.exit_code == 2 and "unknown format 'pdf'" in result.output


def test_baseline_then_check_passes_until_a_new_finding_appears(
    bib: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline = tmp_path / ".refaudit-baseline.json"
    assert run("baseline", str(bib)).exit_code == 0
    assert baseline.is_file()
    result = run(
        "check", str(bib), "--baseline", str(baseline), "--fail-on", "warning",
        "--require-verified", "0.5",
    )  # fmt: skip
    assert result.exit_code == 0
    assert "[baseline]" in result.output

    changed = sample_report()
    changed.results[3].reference.doi = "10.1016/s0140-6736(97)00000-0"

    async def new_finding(paths, settings, *, on_batch=None, tally=None, **kwargs):
        return streamed(changed, on_batch, tally)

    monkeypatch.setattr(audit, "audit_paths", new_finding)
    assert run("check", str(bib), "--baseline", str(baseline)).exit_code == 1


def test_fix_writes_a_new_file_and_reports_what_changed(bib: Path, tmp_path: Path) -> None:
    target = tmp_path / "refs.fixed.bib"
    result = run("fix", str(bib), "-o", str(target))
    assert result.exit_code == 0, result.output
    assert "@inproceedings{vaswani2017attention," in target.read_text()
    assert bib.read_text() == BIB_TEXT
    assert "corrected lecun2015deep (line 11)" in result.stderr
    assert "left smith2021quantum unchanged: not found" in result.stderr
    assert PIPELINE_CALLS[-1]["all_entries"] is True


def test_fix_takes_a_bibtex_suffix_as_check_does(bib: Path, tmp_path: Path) -> None:
    renamed = bib.rename(tmp_path / "refs.bibtex")
    result = run("fix", str(renamed), "--diff")
    assert result.exit_code == 0, result.output
    added = [line for line in result.stdout.splitlines() if line.startswith("+\t")]
    assert "+\tdoi = {10.1038/nature14539}," in added


def test_fix_of_a_document_is_quiet_when_asked(bib: Path, tmp_path: Path) -> None:
    paper = tmp_path / "paper.docx"
    paper.write_bytes(b"audited by the fake pipeline")
    target = tmp_path / "refs.fixed.bib"
    loud = run("fix", str(paper), "-o", str(target))
    assert loud.exit_code == 0 and "wrote 6 entries" in loud.stderr
    quiet = run("fix", str(paper), "-o", str(target), "--force", "-q")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert "@inproceedings{vaswani2017attention," in target.read_text()


def test_fix_names_an_entry_it_could_not_read(
    bib: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = sample_report()
    message = "could not parse this @article entry, so it is left out: unbalanced braces"
    broken.problems.append(
        InputProblem(str(bib), message, line=3, key="broken", severity="error", code="parse-error")
    )

    async def with_problem(paths, settings, *, on_batch=None, tally=None, **kwargs):
        return streamed(broken, on_batch, tally)

    monkeypatch.setattr(audit, "audit_paths", with_problem)
    result = run("fix", str(bib), "-o", str(tmp_path / "refs.fixed.bib"))
    assert result.exit_code == 0, result.output
    assert f"left broken (line 3) as written, unchecked: {message}" in result.stderr


def test_fix_refuses_to_overwrite_without_force(bib: Path, tmp_path: Path) -> None:
    target = tmp_path / "exists.bib"
    target.write_text("mine")
    result = run("fix", str(bib), "-o", str(target))
    assert result.exit_code == 2 and "already exists" in result.output
    assert target.read_text() == "mine"
    assert run("fix", str(bib), "-o", str(target), "--force").exit_code == 0
    assert "@inproceedings{vaswani2017attention," in target.read_text()


def test_fix_needs_an_explicit_destination(bib: Path) -> None:
    result = run("fix", str(bib))
    assert result.exit_code == 2
    assert "choose exactly one of -o FILE, --in-place or --diff" in result.output
    assert run("fix", str(bib), "-o", str(bib)).exit_code == 2
    assert bib.read_text() == BIB_TEXT


def test_fix_in_place_keeps_a_backup(bib: Path) -> None:
    result = run("fix", str(bib), "--in-place")
    assert result.exit_code == 0
    assert (bib.parent / "refs.bib.bak").read_text() == BIB_TEXT
    assert "year = {2015}" in bib.read_text()
    assert not [p for p in bib.parent.iterdir() if p.name.endswith(".tmp")]


def test_fix_diff_prints_a_unified_diff_and_writes_nothing(bib: Path) -> None:
    result = run("fix", str(bib), "--diff", "--add-ids")
    assert result.exit_code == 0
    assert "-\tyear = {2016}," in result.stdout
    assert "+\tyear = {2015}," in result.stdout
    assert "+\tdoi = {10.1038/nature14539}," in result.stdout, "reported by doi-available"
    assert "10.5555/3295222.3295349" not in result.stdout, "no DOI that check did not report"
    assert bib.read_text() == BIB_TEXT
    assert not (bib.parent / "refs.bib.bak").exists()


def _subprocess(args: list[str], cwd: Path, code: str | None = None) -> subprocess.CompletedProcess:
    unreachable = {
        f"REFAUDIT_{name.upper()}_URL": "http://127.0.0.1:9" for name in DEFAULT_BASE_URLS
    }
    env = {**os.environ, "CI": "true", **unreachable}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests"), env.get("PYTHONPATH", "")])
    command = (
        [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "refaudit", *args]
    )
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


PATCHED_MAIN = """
import sys
from report_samples import sample_report, streamed
from refaudit import audit

async def fake(paths, settings, *, on_batch=None, tally=None, **kwargs):
    return streamed(sample_report(), on_batch, tally)

audit.audit_paths = fake
sys.argv[0] = "refaudit"
from refaudit.cli import main
main()
"""


def test_subprocess_exit_codes_and_machine_output_on_stdout(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text(BIB_TEXT)
    flagged = _subprocess(["check", "refs.bib", "--format", "github"], tmp_path, PATCHED_MAIN)
    assert flagged.returncode == 1, flagged.stderr
    assert flagged.stdout.startswith("::error file=refs.bib,line=11,")
    assert "\r" not in flagged.stderr, "no progress bar when CI is set"
    clean = _subprocess(
        ["check", "refs.bib", "--fail-on", "none", "--allow-unverified"], tmp_path, PATCHED_MAIN
    )
    assert clean.returncode == 0


def test_subprocess_missing_file_is_exit_2_without_traceback(tmp_path: Path) -> None:
    result = _subprocess(["check", "missing.bib"], tmp_path)
    assert result.returncode == 2
    assert "missing.bib: file not found" in result.stderr
    assert "Traceback" not in result.stderr


def test_real_pipeline_offline_with_empty_cache_reports_unverified_never_not_found(
    tmp_path: Path,
) -> None:
    (tmp_path / "refs.bib").write_text(BIB_TEXT)
    result = _subprocess(
        ["check", "refs.bib", "--offline", "--format", "json", "--fail-on", "not_found"], tmp_path
    )
    assert result.returncode == 3, "nothing could be checked: never a pass"
    # Six entries; the project homepage is a web resource, skipped without asking anyone.
    assert "no source answered: offline, and none of the 5 reference(s) is in the cache" in (
        result.stderr
    )
    data = json.loads(result.stdout)
    jsonschema.Draft202012Validator(load_schema()).validate(data)
    assert data["summary"]["not_found"] == 0
    assert {r["verdict"] for r in data["results"]} <= {"unverified", "skipped"}


SARIF_SCHEMA = json.loads(
    (REPO / "tests" / "fixtures" / "sarif-2.1.0-subset.schema.json").read_text()
)


def test_subprocess_writes_every_format_to_its_output_file(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text(BIB_TEXT)
    for output_format in ("table", "json", "markdown", "sarif", "junit", "github"):
        target = f"report.{output_format}"
        result = _subprocess(
            ["check", "refs.bib", "-f", output_format, "-o", target], tmp_path, PATCHED_MAIN
        )
        assert result.returncode == 1, result.stderr
        assert result.stdout == "", "the report goes to the file, not stdout"
        assert f"wrote {output_format} report to {target}" in result.stderr
    text = {p.suffix[1:]: p.read_text(encoding="utf-8") for p in tmp_path.glob("report.*")}
    jsonschema.Draft202012Validator(load_schema()).validate(json.loads(text["json"]))
    sarif = json.loads(text["sarif"])
    jsonschema.Draft7Validator(SARIF_SCHEMA).validate(sarif)
    located = {
        r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]["startLine"]
        for r in sarif["runs"][0]["results"]
    }
    assert located["not-found"] == 21 and located["retracted"] == 28
    suites = ET.fromstring(text["junit"])
    assert len(suites.findall(".//testcase")) == 6
    assert {c.get("name") for c in suites.iter("testcase") if c.find("failure") is not None} == {
        "smith2021quantum",
        "wakefield1998",
    }
    assert "::error file=refs.bib,line=21," in text["github"]
    assert "| `smith2021quantum` | not found |" in text["markdown"]
    assert "Failing the run (2)" in text["table"] and "\x1b[" not in text["table"]


def test_subprocess_outage_is_exit_3_unless_unverified_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text(BIB_TEXT)
    args = ["check", "refs.bib", "--offline", "--quiet"]
    outage = _subprocess(args, tmp_path)
    assert outage.returncode == 3
    assert outage.stderr.count("\n") == 1, "one line says nothing was checked"
    assert outage.stdout == ""
    assert _subprocess([*args, "--allow-unverified"], tmp_path).returncode == 0
    assert _subprocess([*args, "--require-verified", "1"], tmp_path).returncode == 0


def test_no_source_reachable_is_one_line_and_exit_3(tmp_path: Path) -> None:
    """Every source refuses the connection (the fixture points them all at port 9).

    Five of the six entries need a source; the project homepage is a web resource.
    """
    (tmp_path / "refs.bib").write_text(BIB_TEXT)
    result = _subprocess(["check", "refs.bib"], tmp_path)
    assert result.returncode == 3
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: could not reach any source: connection refused by 127.0.0.1 — none of the 5"
        " reference(s) was checked"
    ]
    to_file = _subprocess(["check", "refs.bib", "-f", "json", "-o", "report.json"], tmp_path)
    assert to_file.returncode == 3
    assert "crossref: connection refused by 127.0.0.1 (5 reference(s))" in to_file.stderr
    assert json.loads((tmp_path / "report.json").read_text())["summary"]["unverified"] == 5


def test_a_baseline_is_not_written_when_no_source_could_be_reached(tmp_path: Path) -> None:
    """A baseline of outages would replace the committed one and record no real finding."""
    (tmp_path / "refs.bib").write_text(BIB_TEXT)
    committed = tmp_path / ".refaudit-baseline.json"
    committed.write_text('{"version": 1, "findings": []}\n')
    result = _subprocess(["baseline", "refs.bib"], tmp_path)
    assert result.returncode == 3
    assert "could not reach any source" in result.stderr
    assert "not written" in result.stderr
    assert committed.read_text() == '{"version": 1, "findings": []}\n'


def test_fix_with_no_source_reachable_says_so_and_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text(BIB_TEXT)
    result = _subprocess(["fix", "refs.bib", "--in-place"], tmp_path)
    assert result.returncode == 3
    assert "could not reach any source" in result.stderr
    assert "nothing to correct" not in result.stderr
    assert (tmp_path / "refs.bib").read_text() == BIB_TEXT
    assert not (tmp_path / "refs.bib.bak").exists()


def test_pre_commit_hooks_run_refaudit_on_bib_and_tex_changes(bib: Path) -> None:
    import re

    import yaml

    hooks = {
        hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    }
    assert re.search(hooks["refaudit"]["files"], "paper/refs.bib")
    paper = hooks["refaudit-paper"]
    assert re.search(paper["files"], "chapters/intro.tex") and re.search(paper["files"], "a.bib")
    assert paper["pass_filenames"] is False, "chapters without \\bibliography are not inputs"
    for hook in hooks.values():
        program, *args = hook["entry"].split()
        assert program == "refaudit"
        result = run(*args, str(bib))
        assert result.exit_code == 1, (hook["id"], result.output)
        assert result.stdout.splitlines()[0].startswith(
            "refs.bib:21: error not-found [smith2021quantum] "
        )
