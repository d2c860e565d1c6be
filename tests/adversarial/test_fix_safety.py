"""`refaudit fix` never loses or corrupts a byte it did not mean to change.

The pipeline is replaced by a fake that reports one `mismatch` (a wrong year) on
whatever file it is given, so each case is about the file handling alone.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refaudit import audit, safewrite
from refaudit.cli import app
from refaudit.errors import InputError
from refaudit.fix import apply_fixes, verify_fix
from refaudit.models import AuditReport, Finding, Result, Verdict, Work
from refaudit.parsing import parse_file
from refaudit.parsing.bibtex import parse_bibtex
from tests.adversarial.helpers import as_unprivileged

runner = CliRunner()

QUOTED_BRACES = """@article{first,
  title = {Deep Residual Learning for Image Recognition},
  note = "preprint {v2",
  year = {2010},
}

@article{second,
  title = "Batch Normalization } Accelerating Training",
  year = {2015},
}

@article{third,
  title = {Adam: A Method for Stochastic Optimization},
  year = {2014},
}
"""


def year_report(
    path: Path, key: str, found: str | None, *, code: str = "year-mismatch"
) -> AuditReport:
    """A report saying `key`'s year is wrong, the records giving `found`."""
    references = {r.key: r for r in parse_file(path).references}
    reference = references[key]
    finding = Finding(code, "error", f"Year should be {found}", field="year", found=found)
    work = Work(source="crossref", title=reference.title, year=2016)
    result = Result(reference, Verdict.MISMATCH, findings=[finding], matched=work)
    return AuditReport(results=[result], files=[str(path)])


@pytest.fixture
def fake_audit(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """Make the pipeline return `year_report(path, **plan)`; tests set the plan."""
    plan: dict[str, object] = {"key": "first", "found": "2015"}

    async def fake_audit_paths(paths, settings, **kwargs):
        hook = plan.get("during_audit")
        if callable(hook):
            hook()
        return year_report(Path(paths[0]), plan["key"], plan["found"])  # type: ignore[arg-type]

    monkeypatch.setattr(audit, "audit_paths", fake_audit_paths)
    monkeypatch.setenv("CI", "true")
    return plan


def fix(*args: str) -> object:
    return runner.invoke(app, ["fix", *args, "--offline"])


def test_braces_inside_quoted_values_never_swallow_the_following_entries(
    tmp_path: Path, fake_audit: dict[str, object]
) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(QUOTED_BRACES)
    result = fix(str(path), "--in-place")
    assert result.exit_code == 0, result.output
    text = path.read_text()
    assert text == QUOTED_BRACES.replace("year = {2010}", "year = {2015}")
    assert [r.key for r in parse_bibtex(text).references] == ["first", "second", "third"]


def test_the_scanner_agrees_with_the_parser_on_every_entry(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(QUOTED_BRACES)
    outcome = apply_fixes(QUOTED_BRACES, year_report(path, "first", "2015"))
    verify_fix(QUOTED_BRACES, outcome)
    assert [(c.key, c.fields) for c in outcome.changes] == [("first", ("year",))]


def test_a_fix_that_would_change_anything_else_is_refused_and_nothing_is_written(
    tmp_path: Path, fake_audit: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(QUOTED_BRACES)
    real = apply_fixes

    def losing_an_entry(text: str, report: AuditReport, **kwargs: object) -> object:
        outcome = real(text, report, **kwargs)
        start = outcome.text.index("@article{second")
        outcome.text = outcome.text[:start] + outcome.text[outcome.text.index("@article{third") :]
        return outcome

    monkeypatch.setattr("refaudit.fix.apply_fixes", losing_an_entry)
    for mode in (["--in-place"], ["-o", str(tmp_path / "out.bib")], ["--diff"]):
        result = fix(str(path), *mode)
        assert result.exit_code == 2, result.output
        assert "refusing to write the fix" in result.output
        assert "Traceback" not in result.output
    assert path.read_text() == QUOTED_BRACES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["refs.bib"]


def test_verify_fix_names_an_unreported_field_change(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(QUOTED_BRACES)
    outcome = apply_fixes(QUOTED_BRACES, year_report(path, "first", "2015"))
    outcome.text = outcome.text.replace("preprint {v2", "preprint {v3")
    with pytest.raises(InputError, match="note would change unreported"):
        verify_fix(QUOTED_BRACES, outcome, file=str(path))


def test_a_latin1_file_stays_latin1(tmp_path: Path, fake_audit: dict[str, object]) -> None:
    original = "@article{first,\n  author = {M\u00fcller, J\u00fcrgen},\n  year = {2010},\n}\n"
    path = tmp_path / "refs.bib"
    path.write_bytes(original.encode("latin-1"))
    result = fix(str(path), "--in-place")
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == original.replace("2010", "2015").encode("latin-1")


def test_a_correction_latin1_cannot_hold_is_refused(
    tmp_path: Path, fake_audit: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    original = "@article{first,\n  author = {M\u00fcller, J\u00fcrgen},\n  year = {2010},\n}\n"
    path = tmp_path / "refs.bib"
    path.write_bytes(original.encode("latin-1"))
    fake_audit["found"] = "2015"
    real = apply_fixes

    def polish_author(text: str, report: AuditReport, **kwargs: object) -> object:
        outcome = real(text, report, **kwargs)
        outcome.text = outcome.text.replace("M\u00fcller", "\u0141ukasz")
        outcome.changes[0] = type(outcome.changes[0])(
            "first", 1, "corrected", ("author", "year"), outcome.changes[0].start
        )
        return outcome

    monkeypatch.setattr("refaudit.fix.apply_fixes", polish_author)
    result = fix(str(path), "--in-place")
    assert result.exit_code == 2
    assert "latin-1" in result.output and "convert the file to UTF-8" in result.output
    assert path.read_bytes() == original.encode("latin-1")


@pytest.mark.parametrize(
    ("code", "found", "written"),
    [("future-date", "2019", "2019"), ("year-mismatch", "2015, 2016", "2015")],
)
def test_year_corrections_write_the_year_the_finding_states(
    tmp_path: Path, code: str, found: str, written: str
) -> None:
    text = "@article{first,\n  title = {T},\n  year = {2031},\n}\n"
    path = tmp_path / "refs.bib"
    path.write_text(text)
    report = year_report(path, "first", found, code=code)
    outcome = apply_fixes(text, report)
    verify_fix(text, outcome)
    assert f"year = {{{written}}}" in outcome.text
    assert [(c.key, c.fields) for c in outcome.changes] == [("first", ("year",))]


def test_a_correction_with_nothing_to_write_is_not_reported_as_corrected(tmp_path: Path) -> None:
    text = "@article{first,\n  title = {T},\n  year = {2031},\n}\n"
    path = tmp_path / "refs.bib"
    path.write_text(text)
    report = year_report(path, "first", None, code="future-date")
    report.results[0].matched = Work(source="crossref", title="T")  # no year anywhere
    outcome = apply_fixes(text, report)
    assert outcome.text == text and outcome.changes == []
    assert [r.reference.key for r, _ in outcome.left] == ["first"]


def test_in_place_refuses_when_the_file_changed_during_the_audit(
    tmp_path: Path, fake_audit: dict[str, object]
) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(QUOTED_BRACES)
    edited = QUOTED_BRACES + "\n@misc{added, title = {Written meanwhile}}\n"
    fake_audit["during_audit"] = lambda: path.write_text(edited)
    result = fix(str(path), "--in-place")
    assert result.exit_code == 2
    assert "changed since refaudit read it" in result.output
    assert path.read_text() == edited
    assert sorted(p.name for p in tmp_path.iterdir()) == ["refs.bib"]


def test_in_place_refuses_a_same_size_edit_that_keeps_the_timestamp(
    tmp_path: Path, fake_audit: dict[str, object]
) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(QUOTED_BRACES)
    stat = path.stat()

    def same_size_edit() -> None:
        path.write_text(QUOTED_BRACES.replace("Adam", "ADAM"))
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    fake_audit["during_audit"] = same_size_edit
    assert fix(str(path), "--in-place").exit_code == 2
    assert "ADAM" in path.read_text()


def test_in_place_through_a_symlink_rewrites_the_target_and_keeps_the_link(
    tmp_path: Path, fake_audit: dict[str, object]
) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "refs.bib"
    target.write_text(QUOTED_BRACES)
    link = tmp_path / "refs.bib"
    link.symlink_to(target)
    result = fix(str(link), "--in-place")
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and link.resolve() == target
    assert "year = {2015}" in target.read_text()
    assert (tmp_path / "real" / "refs.bib.bak").read_text() == QUOTED_BRACES


def test_backups_are_numbered_and_an_existing_one_is_never_truncated(
    tmp_path: Path, fake_audit: dict[str, object]
) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(QUOTED_BRACES)
    (tmp_path / "refs.bib.bak").write_text("the user's own backup\n")
    (tmp_path / "refs.bib.bak.1").write_text("an older refaudit backup\n")
    result = fix(str(path), "--in-place")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "refs.bib.bak").read_text() == "the user's own backup\n"
    assert (tmp_path / "refs.bib.bak.1").read_text() == "an older refaudit backup\n"
    assert (tmp_path / "refs.bib.bak.2").read_text() == QUOTED_BRACES
    assert "refs.bib.bak.2" in result.output


def test_written_files_keep_the_permissions_a_user_expects(
    tmp_path: Path, fake_audit: dict[str, object]
) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(QUOTED_BRACES)
    path.chmod(0o664)
    assert fix(str(path), "--in-place").exit_code == 0
    assert path.stat().st_mode & 0o777 == 0o664
    assert (tmp_path / "refs.bib.bak").stat().st_mode & 0o777 == 0o664
    fixed = tmp_path / "fixed.bib"
    assert fix(str(path), "-o", str(fixed)).exit_code == 0
    # A new file gets what the umask gives, as any editor would write it, not mkstemp's 0600.
    assert fixed.stat().st_mode & 0o777 == 0o666 & ~safewrite._UMASK


def test_a_read_only_folder_is_one_message_and_the_original_is_intact(
    tmp_path: Path, fake_audit: dict[str, object]
) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    path = folder / "refs.bib"
    path.write_text(QUOTED_BRACES)

    def fix_in_place() -> tuple[int, str]:
        result = fix(str(path), "--in-place")
        return result.exit_code, result.output

    folder.chmod(0o555)
    try:
        # As root, in a child without root's exemption from permissions.
        exit_code, output = as_unprivileged(fix_in_place)
    finally:
        folder.chmod(0o755)
    assert exit_code == 2, output
    assert "permission denied" in output and "nothing was changed" in output
    assert "Traceback" not in output
    assert path.read_text() == QUOTED_BRACES
    assert sorted(p.name for p in folder.iterdir()) == ["refs.bib"]


def test_a_read_only_file_system_is_one_message_and_the_original_is_intact(
    tmp_path: Path, fake_audit: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(QUOTED_BRACES)

    def read_only(*args: object, **kwargs: object) -> int:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr("refaudit.safewrite.os.open", read_only)
    result = fix(str(path), "--in-place")
    assert result.exit_code == 2
    assert "the file system is read-only" in result.output
    assert "Traceback" not in result.output
    assert path.read_text() == QUOTED_BRACES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["refs.bib"]


def test_a_full_disk_is_one_message_and_the_original_is_intact(
    tmp_path: Path, fake_audit: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(QUOTED_BRACES)
    calls = {"fsync": 0}
    real_fsync = os.fsync

    def fsync_fails_on_the_new_file(descriptor: int) -> None:
        calls["fsync"] += 1
        if calls["fsync"] == 2:  # the backup got written; the new content does not fit
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(descriptor)

    monkeypatch.setattr("refaudit.safewrite.os.fsync", fsync_fails_on_the_new_file)
    result = fix(str(path), "--in-place")
    assert result.exit_code == 2
    assert "no space left on the device" in result.output
    assert path.read_text() == QUOTED_BRACES
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("command", ["check", "baseline"])
def test_an_output_path_equal_to_an_input_is_refused(
    tmp_path: Path, fake_audit: dict[str, object], command: str
) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(QUOTED_BRACES)
    for output in (str(path), str(tmp_path / "." / "refs.bib")):
        result = runner.invoke(app, [command, str(path), "-o", output, "--offline"])
        assert result.exit_code == 2, result.output
        assert "is an input of this run" in result.output
    assert path.read_text() == QUOTED_BRACES


def test_check_refuses_to_write_over_a_bib_the_tex_pulled_in(
    tmp_path: Path, fake_audit: dict[str, object]
) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(QUOTED_BRACES)
    link = tmp_path / "report.json"
    link.symlink_to(bib)
    result = runner.invoke(app, ["check", str(bib), "-f", "json", "-o", str(link), "--offline"])
    assert result.exit_code == 2
    assert bib.read_text() == QUOTED_BRACES


def test_batch_refuses_a_results_file_that_is_one_of_its_manifests(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text(QUOTED_BRACES)
    manifest = tmp_path / "papers.txt"
    manifest.write_text("refs.bib\n")
    result = runner.invoke(app, ["batch", str(manifest), "-o", str(manifest), "--offline"])
    assert result.exit_code == 2, result.output
    assert "is an input of this run" in result.output
    assert manifest.read_text() == "refs.bib\n"
