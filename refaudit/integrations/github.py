"""The GitHub Action's logic (`action.yml`): one audit, and from its JSON report everything
GitHub shows — annotations, the job summary, step outputs, SARIF and the HTML page.

The action's shell only installs refaudit and calls `python -m refaudit.integrations.github
run`; every decision is here, where it is tested. GitHub reads what this writes from
the files its runner names: `$GITHUB_STEP_SUMMARY` (Markdown, at most 1 MiB a step),
`$GITHUB_OUTPUT` (step outputs) and stdout (workflow commands, of which a step shows
at most 10 errors, 10 warnings and 10 notices).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from refaudit.errors import RefauditError
from refaudit.integrations.saved import read_report
from refaudit.models import SEVERITY_RANK, AuditReport, Verdict
from refaudit.policy import report_tally
from refaudit.render import RenderContext, Row, render, rows
from refaudit.render.github import annotation, plain_annotation, problem_annotation
from refaudit.render.markdown import FINDINGS_HEAD, cell, detail_line, issue_line
from refaudit.render.table import outcome_lines, summary_lines

#: Annotations a step shows per kind; past that GitHub drops them silently.
SHOWN_PER_KIND = 10
#: GitHub refuses a step summary over 1 MiB; the rest of the job's summary stays safe.
SUMMARY_LIMIT = 1_000_000
ARTIFACT = "refaudit-report"

_HAS_BIBLIOGRAPHY = re.compile(
    r"^[^%\n]*\\(?:bibliography|addbibresource|addglobalbib|begin\s*\{thebibliography\})",
    re.MULTILINE,
)
_COMMAND_ORDER = {"error": 0, "warning": 1, "notice": 2}
#: `refaudit check` options the action sets itself: its outputs are read from that report.
_ACTION_OWNS = ("--format", "--output")


def default_inputs(workspace: Path) -> list[Path]:
    """Every .tex file that has a bibliography, else every .bib file (hidden folders skipped)."""
    papers = [path for path in _files(workspace, "*.tex") if _has_bibliography(path)]
    return papers or _files(workspace, "*.bib")


def resolve_inputs(patterns: str, workspace: Path) -> list[Path]:
    """The files named by `patterns` (whitespace-separated paths or globs, `**` included),
    relative to `workspace`; each file once, in the order named."""
    found: dict[Path, None] = {}
    for pattern in patterns.split():
        if any(char in pattern for char in "*?["):
            found.update(dict.fromkeys(sorted(workspace.glob(pattern))))
        else:
            found[workspace / pattern] = None
    return [path.relative_to(workspace) if path.is_absolute() else path for path in found]


def _files(workspace: Path, pattern: str) -> list[Path]:
    return sorted(
        path.relative_to(workspace)
        for path in workspace.rglob(pattern)
        if path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(workspace).parts)
    )


def _has_bibliography(path: Path) -> bool:
    try:
        return bool(_HAS_BIBLIOGRAPHY.search(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


@dataclass
class Inputs:
    """The action's inputs, as `action.yml` passes them."""

    paths: str = ""
    fail_on: str = ""
    sources: str = ""
    mailto: str = ""
    args: str = ""
    sarif: bool = True
    html: bool = True
    artifact: str = ARTIFACT


def check_command(files: Sequence[Path], inputs: Inputs, report: Path) -> list[str]:
    """The one `refaudit check` the action runs: a JSON report, the user's options after ours."""
    extra = shlex.split(inputs.args)
    taken = [arg for arg in extra if arg.split("=")[0] in _ACTION_OWNS or arg[:2] in ("-f", "-o")]
    if taken:
        raise ValueError(
            f"`args` may not set {' '.join(taken)}: the action writes the JSON report its "
            "annotations, summary and outputs are made from (the HTML report is in the artifact)"
        )
    command = [sys.executable, "-m", "refaudit", "check", *map(str, files)]
    command += ["--format", "json", "--output", str(report)]
    for flag, value in (
        ("--fail-on", inputs.fail_on),
        ("--sources", inputs.sources),
        ("--mailto", inputs.mailto),
    ):
        if value.strip():
            command += [flag, value.strip()]
    return command + extra


def run(inputs: Inputs, workspace: Path, out_dir: Path, environ: dict[str, str]) -> int:
    """Audit once, derive everything from the report, and return refaudit's exit code.

    The caller's final step exits with that code, after every upload has happened.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    report_path = out_dir / "refaudit.json"
    report_path.unlink(missing_ok=True)
    files = resolve_inputs(inputs.paths, workspace) if inputs.paths.strip() else None
    if files is None:
        files = default_inputs(workspace)
    outputs: dict[str, str] = {"failing": "0", "unverified": "0", "report-path": ""}
    if not files:
        if inputs.paths.strip():
            message = f"`paths` ({' '.join(inputs.paths.split())}) names no file"
            hint = "check the names and globs against the repository"
        else:
            message = "no .tex file with a bibliography and no .bib file in the repository"
            hint = "name them in `paths`"
        print(plain_annotation("error", f"refaudit: {message}; {hint}"))
        _append(environ.get("GITHUB_STEP_SUMMARY"), f"# refaudit\n\n{message}.\n")
        code = 2
    else:
        print(f"refaudit: checking {' '.join(map(str, files))}", flush=True)
        code = subprocess.run(
            check_command(files, inputs, report_path), cwd=workspace, check=False
        ).returncode
        if report_path.is_file():
            outputs |= derive(report_path, inputs, out_dir, environ)
        else:
            _append(
                environ.get("GITHUB_STEP_SUMMARY"),
                f"# refaudit\n\n`refaudit check` stopped with exit {code} before writing a "
                "report; the step's log says why.\n",
            )
    outputs["exit-code"] = str(code)
    _write_outputs(environ.get("GITHUB_OUTPUT"), outputs)
    return code


def derive(
    report_path: Path, inputs: Inputs, out_dir: Path, environ: dict[str, str]
) -> dict[str, str]:
    """Annotations on stdout, the job summary, SARIF and HTML files; returns the step outputs."""
    report, context = read_report(report_path)
    for line in bounded_annotations(report, context):
        print(line)
    summary = job_summary(report, context, artifact=inputs.artifact)
    _append(environ.get("GITHUB_STEP_SUMMARY"), summary)
    tally = report_tally(report, context.fail_on, context.baseline)
    outputs = {
        "failing": str(tally.failing),
        "unverified": str(tally.verdicts[Verdict.UNVERIFIED]),
        "report-path": str(report_path),
        "sarif-path": "",
        "html-path": "",
    }
    if inputs.sarif:
        sarif = out_dir / "refaudit.sarif"
        sarif.write_text(render(report, "sarif", context), encoding="utf-8")
        why_not = sarif_upload_refused(environ)
        if why_not:
            print(plain_annotation("notice", f"refaudit: SARIF not uploaded: {why_not}"))
        else:
            outputs["sarif-path"] = str(sarif)
            # Jobs of a matrix each name their artifact; the same category from two of
            # them would make code scanning keep only the last job's results.
            outputs["sarif-category"] = (
                "refaudit" if inputs.artifact == ARTIFACT else f"refaudit/{inputs.artifact}"
            )
    if inputs.html:
        html = out_dir / "refaudit.html"
        html.write_text(render(report, "html", context), encoding="utf-8")
        outputs["html-path"] = str(html)
    return outputs


def sarif_upload_refused(environ: dict[str, str]) -> str | None:
    """Why code scanning cannot take the SARIF (a fork's pull request has a read-only token)."""
    event_path = environ.get("GITHUB_EVENT_PATH")
    if not event_path or environ.get("GITHUB_EVENT_NAME") != "pull_request":
        return None
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    head = (event.get("pull_request") or {}).get("head") or {}
    base = (event.get("pull_request") or {}).get("base") or {}
    head_repo = (head.get("repo") or {}).get("full_name")
    base_repo = (base.get("repo") or {}).get("full_name") or environ.get("GITHUB_REPOSITORY")
    if head_repo and base_repo and head_repo != base_repo:
        return (
            f"this pull request comes from the fork {head_repo}, whose token cannot write "
            "code-scanning results; the annotations and the job summary show the findings"
        )
    return None


def bounded_annotations(report: AuditReport, context: RenderContext) -> Iterator[str]:
    """The annotations a step can show: the most severe first (failing findings before the
    rest), at most SHOWN_PER_KIND of each kind, then one notice counting what was left out."""
    ranked: list[tuple[tuple[int, int, int], str, str]] = []
    for index, result in enumerate(report.results):
        for row in rows(result, context):
            if row.finding.suppressed:
                continue
            command, line = annotation(row)
            rank = (not row.failing, -SEVERITY_RANK[row.finding.severity], index)
            ranked.append((rank, command, line))
    for problem in report.problems:
        command, line = problem_annotation(problem)
        ranked.append(((True, -SEVERITY_RANK[problem.severity], len(ranked)), command, line))
    ranked.sort(key=lambda item: (_COMMAND_ORDER[item[1]], item[0]))
    total = len(ranked)
    # Room for the closing notice among the notices a step shows.
    notices = SHOWN_PER_KIND - 1 if total > _shown_count(ranked, SHOWN_PER_KIND) else SHOWN_PER_KIND
    limits = {"error": SHOWN_PER_KIND, "warning": SHOWN_PER_KIND, "notice": notices}
    shown = 0
    for _rank, command, line in ranked:
        if limits[command] > 0:
            limits[command] -= 1
            shown += 1
            yield line
    if shown < total:
        yield plain_annotation(
            "notice",
            f"refaudit: {total - shown} more finding(s) are not annotated (GitHub shows "
            f"{SHOWN_PER_KIND} of each kind a step); the job summary lists them all",
        )


def _shown_count(ranked: list[tuple[tuple[int, int, int], str, str]], per_kind: int) -> int:
    kinds = [command for _rank, command, _line in ranked]
    return sum(min(kinds.count(kind), per_kind) for kind in _COMMAND_ORDER)


def job_summary(
    report: AuditReport,
    context: RenderContext,
    *,
    artifact: str = ARTIFACT,
    limit: int = SUMMARY_LIMIT,
) -> str:
    """The job summary: counts, then the failing references with their evidence, then the
    other findings; cut at `limit` bytes with a pointer to the full report."""
    counts, cost, *notes = summary_lines(report, context)
    head = ["# refaudit", "", f"**{counts}**", "", cost, ""]
    for line in [*notes, *(text for text, _style in outcome_lines(report, context))]:
        head += [cell(line).strip(), ""]
    failing: list[Row] = []
    other: list[Row] = []
    for result in report.results:
        for row in rows(result, context):
            if not row.finding.suppressed:
                (failing if row.failing else other).append(row)
    body: list[str] = []
    if failing:
        body += ["## Failing references", "", *FINDINGS_HEAD[2:]]
        body += [issue_line(row) for row in failing]
        evidence = [line for line in map(detail_line, failing) if line]
        if evidence:
            body += ["", "### Evidence", "", *evidence]
        body.append("")
    if other:
        body += ["## Other findings", "", *FINDINGS_HEAD[2:], *map(issue_line, other), ""]
    if report.problems:
        body += ["## Input problems", ""]
        for problem in report.problems:
            where = ":".join(str(p) for p in (problem.file, problem.line) if p is not None)
            body.append(f"- {cell(where)}: {cell(problem.message)}")
        body.append("")
    return _cut("\n".join(head) + "\n", body, limit, artifact)


def _cut(head: str, body: list[str], limit: int, artifact: str) -> str:
    """`head` and as many whole lines of `body` as fit in `limit` bytes with the cut notice."""
    notice = (
        "\n*The summary stops here ({left} more line(s)): GitHub takes at most 1 MiB. "
        f"The full report is in the `{artifact}` artifact of this run.*\n"
    )
    size = len(head.encode("utf-8"))
    room = limit - len(notice.format(left=len(body)).encode("utf-8"))
    kept: list[str] = []
    for line in body:
        size += len(line.encode("utf-8")) + 1
        if size > room:
            return head + "\n".join(kept) + "\n" + notice.format(left=len(body) - len(kept))
        kept.append(line)
    return head + "\n".join(kept) + ("\n" if kept else "")


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)


def _write_outputs(path: str | None, outputs: dict[str, str]) -> None:
    """Step outputs in `$GITHUB_OUTPUT` (values are single lines: counts and paths)."""
    lines = "".join(f"{name}={value}\n" for name, value in outputs.items())
    if path:
        _append(path, lines)
    else:
        print(lines, end="")


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m refaudit.integrations.github run`: what the action's main step calls.

    It exits 0 once the outputs are written: refaudit's own code is the `exit-code`
    output, which the action's last step exits with after the uploads.
    """
    parser = argparse.ArgumentParser(prog="python -m refaudit.integrations.github")
    parser.add_argument("command", choices=["run"])
    parser.add_argument("--paths", default="")
    parser.add_argument("--fail-on", default="")
    parser.add_argument("--sources", default="")
    parser.add_argument("--mailto", default="")
    parser.add_argument("--args", default="")
    parser.add_argument("--sarif", default="true")
    parser.add_argument("--html", default="true")
    parser.add_argument("--artifact", default=ARTIFACT)
    parser.add_argument("--out-dir", type=Path, required=True)
    options = parser.parse_args(argv)
    inputs = Inputs(
        paths=options.paths,
        fail_on=options.fail_on,
        sources=options.sources,
        mailto=options.mailto,
        args=options.args,
        sarif=options.sarif.strip().lower() == "true",
        html=options.html.strip().lower() == "true",
        artifact=options.artifact or ARTIFACT,
    )
    workspace = Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd())
    try:
        run(inputs, workspace, options.out_dir, dict(os.environ))
    except (RefauditError, ValueError) as exc:
        # An unusable input (`args` with an open quote, an unreadable report): exit 2,
        # given to the final step like any other code.
        print(plain_annotation("error", f"refaudit: {exc}"))
        _write_outputs(os.environ.get("GITHUB_OUTPUT"), {"exit-code": "2"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
