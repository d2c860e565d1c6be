"""`refaudit batch`: many inputs, one results line each (the engine is in refaudit.batch)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from refaudit.cli.common import (
    ExitCode,
    exit_when_unverified,
    fail,
    handle_errors,
    progress_bars,
    stderr_console,
)
from refaudit.cli.options import (
    NO_FLAGS,
    AllowUnverifiedOption,
    FailOnOption,
    OptionalValueCommand,
    QuietOption,
    SettingsFlags,
    settings_options,
)


def register(app: typer.Typer) -> None:
    app.command("batch", cls=OptionalValueCommand)(batch_command)


@handle_errors
@settings_options()
def batch_command(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            help=".bib/.tex/.bbl/.docx/.pdf files, folders of them, or manifests listing them."
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Results file: one JSON line per input.")
    ],
    workers: Annotated[
        int, typer.Option("--workers", "-w", help="Inputs audited at once.", min=1)
    ] = 1,
    engine: Annotated[
        str, typer.Option("--engine", help="local (process pool) or ray.", metavar="ENGINE")
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", help="An existing Ray cluster (default: start one here)."),
    ] = None,
    fail_on: FailOnOption = None,
    allow_unverified: AllowUnverifiedOption = False,
    quiet: QuietOption = False,
    flags: SettingsFlags = NO_FLAGS,
) -> None:
    """Audit many bibliographies or manuscripts; resumable, one JSON line per input.

    Example: refaudit batch submissions/ --workers 2 --mirror -o results.jsonl
    """
    from refaudit.batch import INPUT_SUFFIXES, expand_inputs, run_batch
    from refaudit.safewrite import refuse_overwriting_inputs

    if engine not in ("local", "ray"):
        fail(f"unknown engine {engine!r}", hint="choose local or ray")
    if ray_address and engine != "ray":
        fail("--ray-address needs --engine ray")
    if engine == "ray":
        from refaudit.batch.cluster import ray_module

        ray_module()
    if output.suffix.lower() in INPUT_SUFFIXES:
        fail(f"{output}: the results file would overwrite an input", hint="use -o results.jsonl")
    settings = flags.settings(fail_on=fail_on)
    paths = expand_inputs(inputs)
    refuse_overwriting_inputs(output, [*inputs, *paths])
    if not paths:
        fail(
            f"no {', '.join(INPUT_SUFFIXES)} input found", hint="name files, folders or a manifest"
        )
    with progress_bars(quiet, lambda: _bar(len(paths))) as advance:
        summary = run_batch(
            paths,
            settings,
            output,
            workers=workers,
            engine=engine,  # type: ignore[arg-type]
            ray_address=ray_address,
            on_line=advance,
        )
    _print_summary(summary, output, quiet=quiet)
    if summary.errors:
        raise typer.Exit(int(ExitCode.INCOMPLETE))
    if summary.failing:
        raise typer.Exit(int(ExitCode.FLAGGED))
    allowed = None if allow_unverified else settings.require_verified
    exit_when_unverified(summary.unverified_share, allowed, set_by="require_verified =")


def _print_summary(summary: Any, output: Path, *, quiet: bool) -> None:
    from rich.table import Table

    from refaudit.cli.common import stdout_console

    rate = summary.references / summary.elapsed_s if summary.elapsed_s else 0.0
    if not quiet and summary.lines:
        table = Table(title=f"batch → {output}", title_justify="left")
        for column in ("input", "refs", "verified", "mismatch", "not found", "retracted"):
            table.add_column(column, justify="left" if column == "input" else "right")
        table.add_column("failing / error", overflow="fold")
        for line in summary.lines:
            counts = line.counts
            table.add_row(
                Path(line.input).name,
                str(line.references),
                *(str(counts.get(k, "")) for k in ("verified", "mismatch", "not_found")),
                str(counts.get("retracted", "")),
                line.error or ", ".join(item["key"] for item in line.failing),
            )
        stdout_console().print(table)
    typer.echo(
        f"{len(summary.lines)} input(s) audited, {summary.skipped} already done · "
        f"{summary.references} references in {summary.elapsed_s:.1f} s ({rate:.0f}/s) · "
        f"{summary.failing} with failing references · {summary.unverified} unverified"
        f" references · {summary.errors} error(s)",
        err=True,
    )


@contextlib.contextmanager
def _bar(total: int) -> Iterator[Callable[[Any], None]]:
    """Inputs done and references audited."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("inputs"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[references]} references"),
        console=stderr_console(),
        transient=True,
    ) as progress:
        task = progress.add_task("batch", total=total, references=0)
        seen = {"references": 0}

        def advance(line: Any) -> None:
            seen["references"] += line.references
            progress.update(task, advance=1, references=seen["references"])

        yield advance
