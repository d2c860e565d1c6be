"""`refaudit --version`: the version written once, and the commit when run from a checkout."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refaudit import version
from refaudit.cli import app

ROOT = Path(__file__).resolve().parents[1]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_build_reads_the_version_from_the_one_file_that_writes_it() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"]
    assert pyproject["project"]["dynamic"] == ["version"]
    source = ROOT / pyproject["tool"]["hatch"]["version"]["path"]
    assert source == ROOT / "refaudit" / "version.py"
    written = re.findall(r'^__version__ = "([^"]+)"$', source.read_text(encoding="utf-8"), re.M)
    assert written == [version.__version__]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version.__version__)


@needs_git
def test_version_names_the_commit_of_the_checkout_it_runs_from() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not run from a git checkout")
    printed = CliRunner().invoke(app, ["--version"])
    assert printed.exit_code == 0
    head = _git(ROOT, "rev-parse", "--short", "HEAD")
    assert printed.output == f"refaudit {version.__version__} (git {head})\n"


@needs_git
def test_a_checkout_is_any_git_work_tree_and_an_install_is_not(tmp_path: Path) -> None:
    assert version.checkout_commit(tmp_path) is None
    _git(tmp_path, "init", "-q")
    assert version.checkout_commit(tmp_path) is None  # no commit yet: nothing to name
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "a")
    assert version.checkout_commit(tmp_path) == _git(tmp_path, "rev-parse", "--short", "HEAD")


def test_installed_from_a_wheel_version_prints_the_version_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(version, "checkout_commit", lambda root=None: None)
    printed = CliRunner().invoke(app, ["-V"])
    assert printed.exit_code == 0
    assert printed.output == f"refaudit {version.__version__}\n"
