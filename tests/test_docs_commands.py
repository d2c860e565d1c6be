"""Every command the README, docs/ and `--help` show pastes into bash as written.

Commands are read from ```sh / ```bash blocks, from `$ ` lines of ```console
blocks, from `run:` / `script:` steps of ```yaml blocks, from inline code that
starts with a program name, and from the `Example:` line of each command's help.
Each goes through `bash -n`, which rejects what a user would see as a syntax error
(an unquoted DOI with parentheses, an unbalanced quote).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from refaudit.cli import app

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROGRAMS = ("refaudit ", "pip ", "pipx ", "uvx ", "python3 ", "pytest", "pre-commit ")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def _joined(lines: list[str]) -> list[str]:
    """Lines with backslash continuations joined into one command each."""
    commands: list[str] = []
    pending = ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        commands.append(pending + line)
        pending = ""
    return [c for c in commands if c.strip() and not c.lstrip().startswith("#")]


def _console_commands(block: str) -> list[str]:
    commands: list[str] = []
    lines = block.splitlines()
    for index, line in enumerate(lines):
        if not line.startswith("$ "):
            continue
        command = line[2:]
        follow = index + 1
        while command.rstrip().endswith("\\") and follow < len(lines):
            command = command.rstrip()[:-1] + " " + lines[follow]
            follow += 1
        commands.append(command)
    return commands


def _yaml_commands(block: str) -> list[str]:
    commands: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "run" and isinstance(value, str):
                    commands.append(value)
                elif key == "script" and isinstance(value, list):
                    commands.extend(str(step) for step in value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(yaml.safe_load(block))
    return commands


def documented_commands() -> list[tuple[str, str]]:
    """(where, command) for every shell command shown in the docs."""
    found: list[tuple[str, str]] = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        for match in FENCE.finditer(text):
            language, block = match.group(1), match.group(2)
            if language in ("sh", "bash", "shell"):
                found += [(name, command) for command in _joined(block.splitlines())]
            elif language == "console":
                found += [(name, command) for command in _console_commands(block)]
            elif language == "yaml":
                found += [(name, command) for command in _yaml_commands(block)]
        prose = FENCE.sub("", text)
        found += [(name, code) for code in INLINE.findall(prose) if code.startswith(PROGRAMS)]
    return found


def help_examples() -> list[tuple[str, str]]:
    """(command, example) from the `Example:` line of every command's help text."""
    import typer.main

    examples: list[tuple[str, str]] = []

    def walk(command: object, path: str) -> None:
        for line in (getattr(command, "help", None) or "").splitlines():
            if line.strip().startswith("Example:"):
                examples.append((path, line.split("Example:", 1)[1].strip()))
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "refaudit")
    return examples


def test_the_docs_show_commands_at_all() -> None:
    commands = [command for _, command in documented_commands()]
    assert len(commands) > 40
    assert any(command.startswith("refaudit retractions check") for command in commands)
    assert len(help_examples()) >= 15


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_every_documented_command_is_valid_bash() -> None:
    broken = []
    for where, command in documented_commands() + help_examples():
        checked = subprocess.run(
            ["bash", "-n", "-c", command], capture_output=True, text=True, timeout=10
        )
        if checked.returncode:
            broken.append(f"{where}: {command}  ->  {checked.stderr.strip()}")
    assert not broken, "\n".join(broken)


def test_no_doc_installs_the_unrelated_refaudit_distribution() -> None:
    """`refaudit` on PyPI is another project; ours is refaudit-cli or the repository."""
    wrong = re.compile(
        r"\b(pip3? install|pipx install|uvx|uv tool install)\s+(-\S+\s+)*['\"]?refaudit\b(?!-)"
    )
    offenders = [
        f"{path.name}: {line.strip()}"
        for path in DOCS
        for line in path.read_text(encoding="utf-8").splitlines()
        if wrong.search(line)
    ]
    assert not offenders, "\n".join(offenders)


def test_install_lines_name_the_python_requirement_and_the_distribution() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "refaudit-cli"
    assert project["scripts"]["refaudit"] == "refaudit.cli:main"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "Python ≥ 3.11" in readme and project["requires-python"] == ">=3.11"


def test_every_install_line_and_the_pre_commit_example_pin_one_revision() -> None:
    assert len(_pinned_revisions()) == 1


def _all_commands() -> list[list[str]]:
    import typer.main

    paths: list[list[str]] = []

    def walk(command: object, path: list[str]) -> None:
        paths.append(path)
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return paths


def test_help_names_what_to_type_not_python_types() -> None:
    from typer.testing import CliRunner

    runner = CliRunner()
    python_types = re.compile(r"<(bool|str|int|float|path|file|dir|list\[\w+\])>", re.IGNORECASE)
    for path in _all_commands():
        text = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}).output
        assert not python_types.search(text), (path, python_types.search(text))


def test_one_spelling_for_the_sources_option() -> None:
    import typer.main

    spellings = set()

    def walk(command: object) -> None:
        for param in getattr(command, "params", []):
            spellings.update(o for o in param.opts if o.startswith("--source"))
        for sub in (getattr(command, "commands", None) or {}).values():
            walk(sub)

    walk(typer.main.get_command(app))
    assert spellings == {"--sources"}


PINNED_REVISION = re.compile(r"refaudit/refaudit@([\w.\-]+)|^\s*rev:\s*([\w.\-]+)", re.MULTILINE)


def _pinned_revisions() -> set[str]:
    found: set[str] = set()
    for doc in DOCS:
        for match in PINNED_REVISION.finditer(doc.read_text(encoding="utf-8")):
            found.add(match.group(1) or match.group(2))
    return found


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_every_revision_the_docs_pin_exists_in_the_repository() -> None:
    """An install line or pre-commit `rev` naming a tag nobody pushed fails for every user."""
    if shutil.which("git") is None or _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout")
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone does not hold the pinned commits")
    revisions = _pinned_revisions()
    assert revisions, "the docs pin no revision: the pattern no longer matches them"
    missing = {
        rev for rev in revisions if _git("rev-parse", "--verify", f"{rev}^{{commit}}").returncode
    }
    assert not missing, f"pinned in the docs but not in the repository: {sorted(missing)}"
    for rev in revisions:
        hooks = _git("show", f"{rev}:.pre-commit-hooks.yaml")
        assert hooks.returncode == 0 and "id: refaudit" in hooks.stdout


EXTRAS = re.compile(r'pip install [^\n]*-e "\.\[([\w,]+)\]"')


def test_the_readme_test_command_installs_what_ci_installs() -> None:
    """The README promises that its test command is what CI runs: the same extras."""
    ci = set(EXTRAS.findall((ROOT / ".ci" / "run").read_text(encoding="utf-8")))
    assert len(ci) == 1, ci
    for doc in (ROOT / "README.md", ROOT / "docs" / "contributing.md"):
        lines = doc.read_text(encoding="utf-8").splitlines()
        tests = {m for line in lines if "pytest" in line for m in EXTRAS.findall(line)}
        assert tests == ci, f"{doc.name} installs {tests} for the tests, .ci/run {ci}"
