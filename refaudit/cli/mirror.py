"""`refaudit mirror build | update | status`: a local copy of the bulk data files."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from refaudit.cli.common import ExitCode, fail, handle_errors, progress_bars
from refaudit.cli.options import ConfigOption, FormatOption, OutputFormat, load_config

if TYPE_CHECKING:
    from refaudit.config import Settings

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="SQLite file or postgresql:// URL (default: the mirror in refaudit's data folder, "
        "or REFAUDIT_MIRROR / \\[mirror] url).",
    ),
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")]


def register(app: typer.Typer) -> None:
    mirror_app = typer.Typer(
        help="Build and maintain a local mirror of Crossref, OpenAlex and Retraction Watch.",
        no_args_is_help=True,
    )
    mirror_app.command("build")(build_command)
    mirror_app.command("update")(update_command)
    mirror_app.command("status")(status_command)
    app.add_typer(mirror_app, name="mirror")


@handle_errors
def build_command(
    crossref: Annotated[
        list[Path] | None,
        typer.Option("--crossref", help="Crossref public data file(s) or folder (JSON Lines, gz)."),
    ] = None,
    openalex: Annotated[
        list[Path] | None,
        typer.Option("--openalex", help="OpenAlex snapshot folder (data/works/…) or part files."),
    ] = None,
    s2: Annotated[
        list[Path] | None,
        typer.Option(
            "--s2", help="Semantic Scholar Datasets `papers` file(s) or folder (JSON Lines, gz)."
        ),
    ] = None,
    retractions: Annotated[
        Path | None, typer.Option("--retractions", help="The Retraction Watch CSV.", dir_okay=False)
    ] = None,
    db: DbOption = None,
    quiet: QuietOption = False,
    config: ConfigOption = None,
) -> None:
    """Load bulk files into a new mirror; the previous one stays in use until it is complete.

    Example: refaudit mirror build --crossref dump/crossref --openalex dump/openalex
    --retractions dump/retraction_watch.csv
    """
    from refaudit.mirror import display_location
    from refaudit.mirror.build import build_mirror

    location = _location(load_config(config), db)
    with progress_bars(quiet, _rich_progress) as progress:
        report = build_mirror(
            location,
            inputs=dict(crossref=crossref or [], openalex=openalex or [], semanticscholar=s2 or []),
            retractions=retractions,
            progress=progress,
        )
    for sentence in report.interrupted:
        typer.echo(f"note: {sentence}", err=True)
    for problem in report.problems:
        typer.echo(f"skipped {problem}", err=True)
    if report.problem_count > len(report.problems):
        typer.echo(f"… and {report.problem_count - len(report.problems)} more", err=True)
    loaded = ", ".join(f"{count:,} {name}" for name, count in report.records.items())
    if report.retraction_rows:
        loaded = ", ".join(filter(None, (loaded, f"{report.retraction_rows:,} Retraction Watch")))
    typer.echo(
        f"built {display_location(location)}: {loaded or 'nothing'} in {report.seconds:.1f} s"
        + (f" ({report.problem_count} line(s) skipped)" if report.problem_count else "")
    )


@handle_errors
def update_command(
    db: DbOption = None,
    since: Annotated[
        datetime | None,
        typer.Option(
            "--since",
            formats=["%Y-%m-%d"],
            metavar="YYYY-MM-DD",
            help="Fetch changes since this day (default: the last update).",
        ),
    ] = None,
    skip: Annotated[
        list[str] | None,
        typer.Option("--skip", help="Leave out crossref, openalex or retractions (repeatable)."),
    ] = None,
    quiet: QuietOption = False,
    config: ConfigOption = None,
) -> None:
    """Bring the mirror forward from the live APIs: Crossref and OpenAlex changes, Retraction Watch.

    Example: refaudit mirror update --since 2026-11-01
    """
    import asyncio

    from refaudit.mirror import open_store
    from refaudit.mirror.update import PARTS, update_mirror

    unknown = sorted(set(skip or []) - set(PARTS))
    if unknown:
        fail(f"--skip: unknown part(s) {', '.join(unknown)}", hint=f"known: {', '.join(PARTS)}")
    settings = load_config(config)
    store = open_store(_location(settings, db), writable=True)
    try:
        with progress_bars(quiet, _rich_progress) as progress:
            report = asyncio.run(
                update_mirror(
                    store,
                    settings,
                    since=f"{since:%Y-%m-%d}" if since else None,
                    parts=[p for p in PARTS if p not in (skip or [])],
                    progress=progress,
                )
            )
    finally:
        store.close()
    for line in report.lines():
        typer.echo(line)
    if report.failed:
        raise typer.Exit(int(ExitCode.INCOMPLETE))


@handle_errors
def status_command(
    db: DbOption = None,
    output_format: FormatOption = OutputFormat.TABLE,
    config: ConfigOption = None,
) -> None:
    """Records per source, newest dates, size on disk and the last update.

    Example: refaudit mirror status
    """
    import dataclasses
    import json

    from refaudit.mirror import display_location, open_store

    store = open_store(_location(load_config(config), db))
    try:
        info = store.info()
    finally:
        store.close()
    info.location = display_location(info.location)
    if output_format == "json":
        data = dataclasses.asdict(info) | {"age_days": info.age_days()}
        typer.echo(json.dumps(data, indent=2))
        return
    size = f"{info.size_bytes / 1e6:,.1f} MB" if info.size_bytes is not None else "unknown"
    typer.echo(f"mirror:   {info.location} ({info.backend}, {size})")
    typer.echo(f"built:    {info.built_at or 'never'}")
    typer.echo(f"updated:  {info.updated_at or 'never'} ({info.age_days()} days old)")
    for name, count in info.records.items():
        newest = info.newest.get(name) or "—"
        typer.echo(f"  {name:<17} {count:>12,} records  newest {newest}")


def _location(settings: Settings, db: str | None) -> str:
    from refaudit.mirror import default_location, mirror_location

    return mirror_location(settings, db) or default_location(settings)


def _rich_progress() -> Any:
    import contextlib

    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TransferSpeedColumn,
    )

    from refaudit.cli.common import stderr_console

    class Bars:
        def __init__(self, progress: Progress) -> None:
            self._progress = progress
            self._task: Any = None

        def start(self, label: str, total_bytes: int) -> None:
            self._task = self._progress.add_task(label, total=total_bytes, lines="0")

        def advance(self, done_bytes: int, lines: int) -> None:
            if self._task is not None:
                self._progress.update(self._task, completed=done_bytes, lines=f"{lines:,}")

        def step(self, label: str) -> None:
            self._progress.console.print(f"[dim]{label}…[/]")

    @contextlib.contextmanager
    def bars() -> Any:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TextColumn("{task.fields[lines]} lines"),
            TimeElapsedColumn(),
            console=stderr_console(),
        ) as progress:
            yield Bars(progress)

    return bars()
