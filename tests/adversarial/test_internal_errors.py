"""An internal error is exit 4 with one line naming a bug report, never a traceback exiting 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from refaudit.cli import main


def _crash(*args: object, **kwargs: object) -> None:
    raise ZeroDivisionError("simulated bug")


@pytest.fixture
def crashing_parser(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr("refaudit.parsing.files.parse_file", _crash)
    monkeypatch.setattr("refaudit.parsing.parse_file", _crash)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    path = tmp_path / "refs.bib"
    path.write_text("@article{a, title = {A}}\n")
    return path


def test_a_bug_exits_4_with_one_line_and_a_report_file(
    crashing_parser: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["parse", str(crashing_parser)])
    assert exit_info.value.code == 4
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "internal error (ZeroDivisionError: simulated bug)" in lines[0]
    assert "--debug" in lines[0]
    report = Path(lines[0].split("report it with ")[1].split(" ")[0])
    assert "Traceback" in report.read_text() and "simulated bug" in report.read_text()


def test_debug_anywhere_on_the_line_prints_the_traceback(
    crashing_parser: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["parse", str(crashing_parser), "--debug"])
    assert exit_info.value.code == 4
    assert "Traceback (most recent call last)" in capsys.readouterr().err
