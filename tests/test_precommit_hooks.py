"""The pre-commit hooks (`.pre-commit-hooks.yaml`): which files start each, and that each
entry is a command line `refaudit` accepts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import typer.main
import yaml

from refaudit.cli import app

ROOT = Path(__file__).resolve().parent.parent
HOOKS = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def starts(hook: str, path: str) -> bool:
    """pre-commit runs a hook on a staged file when `files` searches its path."""
    return re.search(HOOKS[hook]["files"], path) is not None


def test_hooks_cover_bib_bbl_and_tex_as_check_reads_them() -> None:
    assert set(HOOKS) == {
        "refaudit",
        "refaudit-offline",
        "refaudit-paper",
        "refaudit-paper-offline",
    }
    for hook in HOOKS:
        assert starts(hook, "paper/refs.bib") and starts(hook, "build/main.bbl"), hook
        assert not starts(hook, "refs.bib.bak") and not starts(hook, "notes.txt"), hook
        assert not starts(hook, "paper.bibliography.md"), hook
    # A chapter is no input of its own: .tex files start only the paper hooks, which
    # check the main file named in `args`.
    assert starts("refaudit-paper", "chapters/intro.tex")
    assert starts("refaudit-paper-offline", "main.tex")
    assert not starts("refaudit", "chapters/intro.tex")
    assert HOOKS["refaudit-paper"]["pass_filenames"] is False


def test_offline_hooks_never_ask_the_network_nor_fail_for_what_the_cache_lacks() -> None:
    for name in ("refaudit-offline", "refaudit-paper-offline"):
        words = shlex.split(HOOKS[name]["entry"])
        assert "--offline" in words and "--allow-unverified" in words
        online = HOOKS[name.removesuffix("-offline")]
        assert online["files"] == HOOKS[name]["files"]


def test_every_entry_parses_as_a_refaudit_command() -> None:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    for name, hook in HOOKS.items():
        program, subcommand, *options = shlex.split(hook["entry"])
        assert program == "refaudit", name
        check = commands[subcommand]
        # pre-commit appends the staged files (or the hook's args: the main .tex file).
        context = check.make_context(subcommand, [*options, "paper/main.tex"])
        assert context.params["quiet"] is True, name
        assert context.params["files"] == [Path("paper/main.tex")], name


def test_the_pinned_revision_has_every_hook_the_docs_use() -> None:
    import shutil
    import subprocess

    import pytest

    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    revisions = set(re.findall(r"^\s*rev:\s*(\S+)", text, re.MULTILINE))
    used = set(re.findall(r"^\s*- id: (refaudit[\w-]*)", text, re.MULTILINE))
    assert used >= {"refaudit-paper", "refaudit-paper-offline"}
    assert used <= set(HOOKS)
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for revision in revisions:
        shown = subprocess.run(
            [git, "show", f"{revision}:.pre-commit-hooks.yaml"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        if shown.returncode and ("bad object" in shown.stderr or "shallow" in shown.stderr):
            pytest.skip("a shallow clone does not hold the pinned commit")
        pinned = {hook["id"] for hook in yaml.safe_load(shown.stdout)}
        assert used <= pinned, (revision, used - pinned)
