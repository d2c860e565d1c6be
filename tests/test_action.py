"""The GitHub Action (`action.yml`): its metadata, and its shell steps run as a runner would.

The steps run in a temporary workspace with the files a GitHub runner provides
(`GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT`, `GITHUB_EVENT_PATH` of a pull request from a
fork), against fake Crossref and OpenAlex served over HTTP. The install step is the
one step not run: it installs refaudit from the registry into a fresh venv, so the
test hands the next steps its own interpreter as that step's `python` output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_serve_transports import served_over_http, server_environment
from tests.test_server import WIDGETS, upstreams

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s*[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d[\w.]*(?: .*)?$")

PAPER = r"""\documentclass{article}
\begin{document}
Widgets \cite{lovelace2017} and gravity \cite{smith2021quantum}.
\bibliography{refs}
\end{document}
"""
REFS = """@article{lovelace2017,
  title = {Deep learning for widget inspection},
  author = {Lovelace, Ada and Turing, Alan},
  journal = {Journal of Widget Science},
  year = {2017},
  doi = {10.1234/widgets.2019},
}

@article{smith2021quantum,
  title = {Quantum Gravity Priors for Large Language Models},
  author = {Smith, John},
  journal = {Journal of Imaginary Results},
  year = {2021},
}
"""


def action() -> dict[str, Any]:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def expressions(value: Any) -> Iterator[str]:
    """Every `${{ … }}` expression in a step, its `with`, `env` and `if` included."""
    if isinstance(value, str):
        yield from EXPRESSION.findall(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from expressions(item)
    elif isinstance(value, list):
        for item in value:
            yield from expressions(item)


def test_action_metadata_is_consistent() -> None:
    data = action()
    assert data["runs"]["using"] == "composite"
    steps = data["runs"]["steps"]
    declared = set(data["inputs"])
    used = {name for text in expressions(data) for name in re.findall(r"\binputs\.([\w-]+)", text)}
    assert used == declared, "every input is declared and used"
    assert declared >= {"paths", "fail-on", "sources", "mailto", "args", "sarif", "html", "version"}
    assert data["inputs"]["sarif"]["default"] == "true" == data["inputs"]["html"]["default"]
    ids = {step.get("id") for step in steps}
    for text in expressions(data):
        for step_id in re.findall(r"\bsteps\.([\w-]+)\.outputs", text):
            assert step_id in ids, f"{step_id} is a step id"
    assert set(data["outputs"]) == {"failing", "unverified", "report-path"}
    for step in steps:
        assert ("run" in step) != ("uses" in step), step.get("name")
        if "run" in step:
            assert step["shell"] == "bash", step["name"]
            # Inputs reach the shell through env, never pasted into the script.
            assert "${{" not in step["run"], step["name"]
    # The exit code is refaudit's own, and comes last: after every upload.
    assert steps[-1]["run"].strip() == 'exit "${CODE:-2}"'
    assert steps[-1]["env"]["CODE"] == "${{ steps.audit.outputs.exit-code }}"
    uses = [line for line in ACTION.read_text(encoding="utf-8").splitlines() if "uses:" in line]
    assert uses and all(PINNED.match(line) for line in uses), uses
    sarif = next(step for step in steps if "upload-sarif" in step.get("uses", ""))
    assert sarif["with"]["category"] == "${{ steps.audit.outputs.sarif-category }}"


COMPARISON = re.compile(r"([\w.-]+) (==|!=) '([^']*)'")


def _evaluate(text: str, context: dict[str, str]) -> str:
    """`${{ … }}` as the runner evaluates the action's own expressions: a context value,
    or comparisons with a quoted string joined by `&&`."""

    def value(found: re.Match[str]) -> str:
        expression = found.group(1)
        if not COMPARISON.search(expression):
            return context.get(expression, "")
        holds = True
        for part in expression.split(" && "):
            compared = COMPARISON.fullmatch(part.strip())
            assert compared, f"the test does not evaluate {part!r}"
            name, operator, literal = compared.groups()
            holds &= (context.get(name, "") == literal) == (operator == "==")
        return str(holds).lower()

    return EXPRESSION.sub(value, text)


def run_action(
    workspace: Path,
    runner_temp: Path,
    environment: dict[str, str],
    inputs: dict[str, str],
    *,
    cached: bool = False,
    refused: frozenset[str] = frozenset(),
) -> tuple[dict[str, str], str, list[dict[str, Any]]]:
    """Run the action's shell steps as a runner would; return the audit step's outputs, the
    log (stdout, where annotations go) and the `uses` steps that ran, evaluated.

    `cached`: the restore step found the exact key. `refused`: the actions (by name) whose
    step fails; as on GitHub, a failed step stops the rest unless it may fail
    (`continue-on-error`)."""
    data = action()
    context = {f"inputs.{name}": spec.get("default", "") for name, spec in data["inputs"].items()}
    context |= {f"inputs.{name}": value for name, value in inputs.items()}
    context |= {
        "runner.temp": str(runner_temp),
        "runner.os": "Linux",
        "github.action_path": str(ROOT),
        "steps.install.outputs.python": sys.executable,
    }
    log, uploads = [], []
    exit_code: int | str | None = None
    for step in data["runs"]["steps"]:
        if step.get("id") == "install":
            continue
        condition = step.get("if")
        if condition is not None and _evaluate(condition, context) != "true":
            continue
        if "uses" in step:
            used = {"uses": step["uses"]}
            used |= {k: _evaluate(str(v), context) for k, v in step.get("with", {}).items()}
            uploads.append(used)
            if step["uses"].split("@")[0] == "actions/cache/restore":
                context[f"steps.{step['id']}.outputs.cache-hit"] = str(cached).lower()
                context[f"steps.{step['id']}.outputs.cache-primary-key"] = used["key"]
            if step["uses"].split("@")[0] in refused and not step.get("continue-on-error"):
                exit_code = f"stopped at {step['uses'].split('@')[0]}"
                break
            continue
        output = runner_temp / f"output-{step.get('id', 'step')}"
        output.write_text("", encoding="utf-8")
        env = {**environment, "GITHUB_OUTPUT": str(output)}
        env |= {name: _evaluate(str(value), context) for name, value in step.get("env", {}).items()}
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        log.append(done.stdout)
        assert "Traceback" not in done.stderr, done.stderr
        for line in output.read_text(encoding="utf-8").splitlines():
            name, _, value = line.partition("=")
            context[f"steps.{step.get('id')}.outputs.{name}"] = value
        exit_code = done.returncode
    outputs = {
        key.rsplit(".", 1)[1]: value
        for key, value in context.items()
        if key.startswith("steps.audit.outputs.")
    }
    outputs["step exit"] = str(exit_code)
    return outputs, "".join(log), uploads


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "paper").mkdir(parents=True)
    (root / "paper" / "main.tex").write_text(PAPER, encoding="utf-8")
    (root / "paper" / "refs.bib").write_text(REFS, encoding="utf-8")
    # A chapter without a bibliography is not an input of its own.
    (root / "paper" / "intro.tex").write_text("Introduction.\n", encoding="utf-8")
    return root


def fork_pull_request(tmp_path: Path) -> Path:
    event = {
        "pull_request": {
            "number": 7,
            "head": {"repo": {"full_name": "someone/paper", "fork": True}},
            "base": {"repo": {"full_name": "lab/paper"}},
        }
    }
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    return path


def test_action_steps_write_summary_outputs_annotations_and_exit_code(
    workspace: Path, tmp_path: Path
) -> None:
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    summary = tmp_path / "step-summary.md"
    with served_over_http(upstreams(WIDGETS)) as upstream:
        environment = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REFAUDIT_"))},
            **server_environment(tmp_path, upstream),
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(fork_pull_request(tmp_path)),
            "GITHUB_REPOSITORY": "lab/paper",
            "RUNNER_TEMP": str(runner_temp),
            "CI": "true",
        }
        inputs = {"fail-on": "flagged", "sources": "crossref,openalex"}
        outputs, log, uploads = run_action(workspace, runner_temp, environment, inputs)
        # The next push, with the cache actions/cache restored: no request at all.
        summary.rename(tmp_path / "first-summary.md")
        again, _log, again_uploads = run_action(
            workspace, runner_temp, environment, inputs, cached=True
        )
    second = json.loads(Path(again["report-path"]).read_text(encoding="utf-8"))
    assert sum(second["stats"]["requests"].values()) == 0
    assert sum(second["stats"]["cache_hits"].values()) > 0
    assert again["exit-code"] == "1"
    summary = tmp_path / "first-summary.md"

    # refaudit's own exit code, given by the last step: 1, references fail.
    assert outputs["step exit"] == "1"
    assert outputs["exit-code"] == "1"
    assert outputs["failing"] == "2"
    assert outputs["unverified"] == "0"
    report = json.loads(Path(outputs["report-path"]).read_text(encoding="utf-8"))
    assert report["files"][0].endswith("main.tex")
    verdicts = {item["key"]: item["verdict"] for item in report["results"]}
    assert verdicts == {"lovelace2017": "mismatch", "smith2021quantum": "not_found"}

    # Annotations on the entries' lines, errors first; the fork cannot upload SARIF.
    annotations = [line for line in log.splitlines() if line.startswith("::")]
    assert annotations[0].startswith("::error file=paper/refs.bib,line=")
    assert any("smith2021quantum" in line and "not-found" in line for line in annotations)
    assert any(
        "year-mismatch" in line and "cited: 2017%0Acorrect: 2019" in line for line in annotations
    )
    assert (
        "::notice::refaudit: SARIF not uploaded: this pull request comes from the fork "
        "someone/paper" in log
    )
    assert outputs["sarif-path"] == ""

    # The job summary: counts, then the failing references with their evidence.
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# refaudit\n\n**2 references: 0 verified · 1 mismatch · 1 not found")
    failing = text.split("## Failing references", 1)[1]
    assert "`smith2021quantum`" in failing and "`lovelace2017`" in failing
    assert "cited *2017*, correct *2019* (crossref doi:10.1234/widgets.2019)" in failing

    # The cache holds what the audit step wrote; the artifact the JSON report and the
    # HTML page; no SARIF upload from a fork.
    restore, save, artifact = uploads
    assert [step["uses"].split("@")[0] for step in uploads] == [
        "actions/cache/restore",
        "actions/cache/save",
        "actions/upload-artifact",
    ]
    # The cache is saved although the run fails (actions/cache alone saves only after a
    # job that succeeded), under the key restore computed; a cache hit is not saved again.
    assert Path(save["path"]) == Path(restore["path"]) == runner_temp / "refaudit" / "cache"
    assert save["key"] == restore["key"]
    assert any(Path(save["path"]).iterdir())
    assert "actions/cache/save" not in [step["uses"].split("@")[0] for step in again_uploads]
    uploaded = artifact["path"].split()
    assert [Path(path).name for path in uploaded] == ["refaudit.json", "refaudit.html"]
    assert all(Path(path).is_file() for path in uploaded)
    assert artifact["name"] == "refaudit-report"


def test_a_repository_without_code_scanning_still_gets_the_report_and_the_exit_code(
    workspace: Path, tmp_path: Path
) -> None:
    """A private repository without code scanning refuses the SARIF upload: the report is
    still uploaded, and the step still ends with refaudit's own code."""
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    with served_over_http(upstreams(WIDGETS)) as upstream:
        environment = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REFAUDIT_"))},
            **server_environment(tmp_path, upstream),
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_EVENT_NAME": "push",
            "GITHUB_REPOSITORY": "lab/paper",
        }
        outputs, _log, uploads = run_action(
            workspace,
            runner_temp,
            environment,
            {"sources": "crossref,openalex", "artifact": "refaudit-en"},  # a matrix job
            refused=frozenset({"github/codeql-action/upload-sarif"}),
        )
    sarif, artifact = uploads[-2:]
    assert sarif["uses"].split("@")[0] == "github/codeql-action/upload-sarif"
    assert Path(sarif["sarif_file"]).name == "refaudit.sarif"
    # Each job of the matrix has a category of its own, so none replaces another's results.
    assert sarif["category"] == "refaudit/refaudit-en"
    assert (artifact["uses"].split("@")[0], artifact["name"]) == (
        "actions/upload-artifact",
        "refaudit-en",
    )
    assert outputs["step exit"] == outputs["exit-code"] == "1"  # the fabricated reference


def test_args_that_are_one_option_reach_refaudit_check(workspace: Path, tmp_path: Path) -> None:
    runner_temp = tmp_path / "temp"
    runner_temp.mkdir()
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REFAUDIT_"))},
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "GITHUB_WORKSPACE": str(workspace),
        "RUNNER_TEMP": str(runner_temp),
        "REFAUDIT_DATA_DIR": str(tmp_path / "data"),
    }
    outputs, log, _uploads = run_action(workspace, runner_temp, environment, {"args": "--offline"})

    assert "expected one argument" not in log
    report = json.loads(Path(outputs["report-path"]).read_text(encoding="utf-8"))
    assert report["offline"] is True
    assert outputs["unverified"] == "2"
    assert outputs["step exit"] == outputs["exit-code"]


def test_action_without_inputs_to_check_exits_2_and_says_why(tmp_path: Path) -> None:
    empty = tmp_path / "repo"
    empty.mkdir()
    runner_temp = tmp_path / "temp"
    runner_temp.mkdir()
    summary = tmp_path / "summary.md"
    environment = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(ROOT),
        "GITHUB_WORKSPACE": str(empty),
        "GITHUB_STEP_SUMMARY": str(summary),
        "RUNNER_TEMP": str(runner_temp),
    }
    outputs, log, uploads = run_action(empty, runner_temp, environment, {})
    assert outputs["step exit"] == outputs["exit-code"] == "2"
    assert "::error::refaudit: no .tex file with a bibliography and no .bib file" in log
    assert "no .tex file with a bibliography" in summary.read_text(encoding="utf-8")
    assert [step["uses"].split("@")[0] for step in uploads] == ["actions/cache/restore"]


EXAMPLES = ROOT / "examples" / "workflows"


def test_the_docs_show_the_example_workflows_as_they_are() -> None:
    """docs/ci.md shows each example file whole, so what is linted is what users copy."""
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    for example in sorted(EXAMPLES.glob("*.yml")):
        assert example.read_text(encoding="utf-8") in blocks, example.name


def test_the_example_workflow_pins_a_commit_that_has_the_action() -> None:
    import shutil

    workflow = yaml.safe_load((EXAMPLES / "refaudit.yml").read_text(encoding="utf-8"))
    assert set(workflow[True]) == {"push", "pull_request"}  # YAML 1.1 reads `on` as True
    assert workflow["permissions"]["security-events"] == "write"
    lines = (EXAMPLES / "refaudit.yml").read_text(encoding="utf-8").splitlines()
    uses = [line for line in lines if "uses:" in line]
    assert uses and all(PINNED.match(line) for line in uses), uses
    ours = next(line for line in uses if "refaudit/refaudit@" in line)
    revision = ours.split("@", 1)[1].split()[0]
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    shown = subprocess.run(
        [git, "show", f"{revision}:action.yml"], cwd=ROOT, capture_output=True, text=True
    )
    if "shallow" in shown.stderr or "bad object" in shown.stderr:
        pytest.skip("a shallow clone does not hold the pinned commit")
    assert shown.returncode == 0 and "using: composite" in shown.stdout, shown.stderr


WORKFLOWS = [*sorted((ROOT / ".github" / "workflows").glob("*.yml")), EXAMPLES / "refaudit.yml"]


def _actionlint(*paths: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    import shutil

    actionlint = shutil.which("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (the test extra installs it)")
    return subprocess.run(
        [actionlint, "-no-color", *map(str, paths)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_actionlint_accepts_the_workflows_and_the_action_they_use() -> None:
    done = _actionlint(*WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_checks_the_action_through_the_workflow_that_runs_it(tmp_path: Path) -> None:
    """The repository's own workflow uses the action as `./`, so actionlint reads
    action.yml: an output the workflow reads that the action no longer declares fails."""
    workflow = tmp_path / ".github" / "workflows" / "action.yml"
    workflow.parent.mkdir(parents=True)
    (tmp_path / ".git").mkdir()  # actionlint resolves `./` from the repository's root
    workflow.write_text((ROOT / ".github" / "workflows" / "action.yml").read_text())
    broken = action()
    del broken["outputs"]["unverified"]
    (tmp_path / "action.yml").write_text(yaml.safe_dump(broken, sort_keys=False))
    done = _actionlint(workflow, cwd=tmp_path)
    assert done.returncode == 1
    assert 'property "unverified" is not defined' in done.stdout


def test_the_action_shell_steps_pass_shellcheck(tmp_path: Path) -> None:
    """actionlint runs shellcheck on a workflow's scripts but not on an action's."""
    import shutil

    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (.ci/run installs Debian's `shellcheck`)")
    for index, step in enumerate(action()["runs"]["steps"]):
        if "run" not in step:
            continue
        script = tmp_path / f"step-{index}.sh"
        script.write_text(step["run"], encoding="utf-8")
        done = subprocess.run(
            [shellcheck, "--shell=bash", "--format=gcc", str(script)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, (step["name"], done.stdout)
