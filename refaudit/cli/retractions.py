"""`refaudit retractions …`: the Retraction Watch snapshot and direct integrity look-ups.

Exit codes of `check`: 0 nothing retracted, 1 a DOI is retracted, withdrawn or
removed, 2 bad input, 3 some DOI could not be checked (sources failed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from refaudit.cli.common import (
    Columns,
    ExitCode,
    fail,
    handle_errors,
    stdout_console,
    task_progress,
)
from refaudit.cli.options import FormatOption, OutputFormat

retractions_app = typer.Typer(
    name="retractions",
    help="Retraction Watch snapshot and integrity look-ups (retractions, concerns, corrections).",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.add_typer(retractions_app)


def _settings(**overrides: Any) -> Any:
    from refaudit.config import load_settings

    return load_settings(overrides=overrides)


def _emit_json(data: Any) -> None:
    from refaudit.models import to_dict

    typer.echo(json.dumps(to_dict(data), indent=2, ensure_ascii=False))


def _emit_credited_json(data: dict[str, Any]) -> None:
    """JSON carrying Retraction Watch data, with the credit its CC BY licence asks for."""
    from refaudit.retractions.store import CREDIT

    _emit_json({**data, "credit": CREDIT})


def _print_table(table: Any, *, credit: bool = True) -> None:
    """Print a table; `credit` adds the attribution Retraction Watch's CC BY licence asks for."""
    console = stdout_console()
    console.print(table)
    if credit:
        _print_credit()


def _print_credit() -> None:
    from refaudit.retractions.store import CREDIT

    stdout_console().print(f"[dim]{CREDIT}[/]", highlight=False)


@retractions_app.command()
@handle_errors
def update(
    url: str = typer.Option(
        None,
        "--url",
        help="labs, gitlab, the CSV's URL, a retraction-watch-data repository URL or a local"
        " file (default: Crossref Labs, or REFAUDIT_RETRACTIONWATCH_URL).",
    ),
    output: FormatOption = OutputFormat.TABLE,
    allow_fewer_rows: bool = typer.Option(
        False,
        "--allow-fewer-rows",
        help="Install the download even when it is far smaller than the installed snapshot.",
    ),
) -> None:
    """Download the Retraction Watch CSV and install it as the local snapshot.

    A failed download, a file that is not the Retraction Watch CSV, one cut short
    (shorter than announced, far fewer notices or bytes than the installed snapshot)
    leaves the previous snapshot in place and says why.

    Example: refaudit retractions update
    """
    from refaudit.errors import RefauditError

    settings = _settings()
    try:
        report = _download(
            settings,
            url,
            bar=sys.stderr.isatty() and output is OutputFormat.TABLE,
            allow_fewer_rows=allow_fewer_rows,
        )
    except RefauditError as exc:
        exc.hint = exc.hint or _kept_snapshot(settings)
        raise
    for sentence in report.interrupted:
        typer.echo(f"note: {sentence}", err=True)
    if output is OutputFormat.JSON:
        _emit_credited_json(_plain(report))
        return
    console = stdout_console()
    console.print(
        f"Loaded {report.rows:,} notices ({report.bytes:,} bytes) from {report.source_url}",
        highlight=False,
    )
    if report.repaired_rows:
        console.print(
            f"[yellow]{report.repaired_rows} rows had bytes that are not UTF-8;"
            " they were read as Windows-1252[/] (records "
            f"{_listing(report.repaired_records, report.repaired_rows)}).",
            highlight=False,
        )
    if report.skipped:
        console.print(
            f"[yellow]{len(report.skipped)} malformed rows left out[/]"
            f" ({_listing(report.skipped, len(report.skipped))}).",
            highlight=False,
        )
    console.print(f"Newest notice: {report.newest_notice_date or 'unknown'}", highlight=False)
    console.print(f"Snapshot: {report.path}", highlight=False)
    _print_credit()


def _download(settings: Any, url: str | None, *, bar: bool, allow_fewer_rows: bool) -> Any:
    """Run the download, with a progress bar on a terminal."""
    import asyncio
    import functools

    from refaudit.retractions import download_snapshot

    download = functools.partial(download_snapshot, allow_fewer_rows=allow_fewer_rows)
    if not bar:
        return asyncio.run(download(settings, url=url))
    from rich.progress import DownloadColumn, Progress, TransferSpeedColumn

    columns = (*Progress.get_default_columns(), DownloadColumn(), TransferSpeedColumn())
    with task_progress("Retraction Watch CSV", *columns) as advance:
        return asyncio.run(download(settings, url=url, progress=advance))


def _kept_snapshot(settings: Any) -> str:
    """What the user still has after a failed update."""
    from refaudit.retractions import Snapshot

    snapshot = Snapshot.open(settings)
    if snapshot is None:
        return "no snapshot is installed yet; retry later or pass --url gitlab"
    with snapshot:
        info = snapshot.status()
    return (
        f"the previous snapshot is unchanged: {info.rows:,} notices,"
        f" downloaded {info.downloaded_at[:10]} ({info.age_days:.0f} days ago)"
    )


def _listing(items: list[str], total: int) -> str:
    shown = ", ".join(items[:5])
    return shown if total <= 5 else f"{shown} and {total - 5} more"


@retractions_app.command()
@handle_errors
def status(output: FormatOption = OutputFormat.TABLE) -> None:
    """Show when the snapshot was downloaded, from where, and how many notices it holds."""
    from refaudit.retractions.lookup import require_snapshot

    with require_snapshot(_settings()) as snapshot:
        info = snapshot.status()
    if output is OutputFormat.JSON:
        _emit_credited_json(_plain(info))
        return
    from rich.table import Table

    table = Table(show_header=False, title="Retraction Watch snapshot")
    for label, value in (
        ("path", info.path),
        ("downloaded", info.downloaded_at),
        ("age", f"{info.age_days:.1f} days"),
        ("source", info.source_url),
        ("notices", f"{info.rows:,}"),
        ("repaired rows", _repaired(info)),
        ("malformed rows left out", str(info.skipped_rows)),
        ("newest notice", info.newest_notice_date or "unknown"),
    ):
        table.add_row(label, value)
    _print_table(table)


def _repaired(info: Any) -> str:
    if not info.repaired_rows:
        return "0"
    return f"{info.repaired_rows} (records {_listing(info.repaired_records, info.repaired_rows)})"


@retractions_app.command()
@handle_errors
def check(
    dois: Annotated[
        list[str] | None, typer.Argument(help="DOIs in any form (URL, doi: prefix, bare).")
    ] = None,
    from_file: Annotated[
        Path | None,
        typer.Option("--from", help="Read DOIs from a file (any text containing DOIs)."),
    ] = None,
    offline: bool = typer.Option(
        False, "--offline", help="Use the snapshot and the cache only; send no requests."
    ),
    output: FormatOption = OutputFormat.TABLE,
) -> None:
    """Check DOIs for retractions, withdrawals, expressions of concern and corrections.

    Exit 1 when a DOI is retracted, partially retracted, withdrawn or removed; 2 on bad
    input; 3 when a DOI could not be checked because its sources failed.

    Example: refaudit retractions check '10.1016/S0140-6736(97)11096-0'
    """
    import asyncio

    from refaudit.identifiers import find_dois
    from refaudit.retractions import check_dois

    inputs = list(dois or [])
    if from_file is not None:
        try:
            text = from_file.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            fail(f"{from_file}: cannot read: {exc.strerror or exc}")
        inputs.extend(find_dois(text))
    if not inputs:
        fail("no DOIs given", hint="pass DOIs as arguments or --from FILE")
    settings = _settings(offline=offline or None)
    screenings = asyncio.run(check_dois(inputs, settings))
    if output is OutputFormat.JSON:
        _emit_credited_json(
            {
                "results": [
                    {**_plain(s), "status": s.status, "withdrawn": s.withdrawn} for s in screenings
                ]
            }
        )
    else:
        _check_table(screenings, offline=settings.offline)
    if any(not s.valid for s in screenings):
        raise typer.Exit(int(ExitCode.USAGE))
    if any(s.withdrawn for s in screenings):
        raise typer.Exit(int(ExitCode.FLAGGED))
    if any(s.status == "unknown" for s in screenings):
        raise typer.Exit(int(ExitCode.INCOMPLETE))


def _plain(value: Any) -> Any:
    from refaudit.models import to_dict

    return to_dict(value)


_STATUS_STYLE = {
    "retraction": "bold red",
    "partial_retraction": "bold red",
    "withdrawal": "bold red",
    "removal": "bold red",
    "expression_of_concern": "yellow",
    "correction": "cyan",
    "reinstatement": "cyan",
    "clean": "green",
    "unknown": "magenta",
    "not-found": "magenta",
    "invalid": "red",
}


def _check_table(screenings: list[Any], *, offline: bool) -> None:
    from rich.table import Table

    table = Table(title="Integrity check")
    for column in ("DOI", "status", "notices", "title", "sources"):
        table.add_column(column, overflow="fold")
    for screening in screenings:
        state = screening.status
        notices = "\n".join(
            f"{n.kind.value.replace('_', ' ')} {n.date or '(no date)'} {n.notice_doi or ''}".strip()
            for n in screening.notices
        )
        sources = ", ".join(
            name if st.state in ("answered", "cached") else f"{name} {st.state}: {st.reason}"
            for name, st in screening.sources.items()
        )
        table.add_row(
            screening.doi or screening.input,
            f"[{_STATUS_STYLE.get(state, '')}]{state.replace('_', ' ')}[/]",
            notices or "-",
            screening.title or "",
            sources or "-",
        )
    _print_table(table, credit=any(_shows_rw(s) for s in screenings))
    ages = {s.snapshot_age_days for s in screenings if s.snapshot_age_days is not None}
    console = stdout_console()
    if ages:
        console.print(f"Snapshot age: {max(ages):.0f} days", highlight=False)
    elif offline:
        console.print("[yellow]Offline and no snapshot: run `refaudit retractions update`.[/]")
    if any(s.status == "unknown" for s in screenings):
        console.print(
            "[magenta]unknown[/] = a source failed, so no notice is not a clean result.",
            highlight=False,
        )


def _shows_rw(screening: Any) -> bool:
    from refaudit.retractions.screen import shows_retraction_watch_data

    return screening.snapshot_age_days is not None or any(
        shows_retraction_watch_data(n) for n in screening.notices
    )


#: Snapshot notices as the listing commands print them; a narrow terminal loses the record first.
_NOTICE_COLUMNS = Columns(
    ("date", "kind", "original DOI", "title", "journal", "notice DOI", "record"),
    prose=("title", "journal"),
    drop_order=("record", "journal", "notice DOI", "kind"),
)


def _records_output(records: list[Any], output: OutputFormat, title: str) -> None:
    if output is OutputFormat.JSON:
        _emit_credited_json({"records": _plain(records)})
        return
    from refaudit.cli.common import fitted_table

    rows = [
        [
            record.notice_date or "",
            record.kind.value.replace("_", " "),
            record.original_doi or "",
            record.title,
            record.journal or "",
            record.notice_doi or "",
            record.record_id,
        ]
        for record in records
    ]
    _print_table(fitted_table(f"{title} ({len(records)})", _NOTICE_COLUMNS, rows))


@retractions_app.command()
@handle_errors
def author(
    name: str = typer.Argument(..., help='"Wakefield", "Wakefield AJ" or "Andrew J Wakefield".'),
    limit: int = typer.Option(50, "--limit", min=1),
    output: FormatOption = OutputFormat.TABLE,
) -> None:
    """List snapshot notices on papers by an author.

    Example: refaudit retractions author "Wakefield AJ"
    """
    from refaudit.retractions import retractions_by_author

    records = retractions_by_author(name, _settings(), limit=limit)
    _records_output(records, output, f"Notices for {name}")


@retractions_app.command()
@handle_errors
def search(
    query: str = typer.Argument(None, help="Words that must all occur in the title."),
    journal: str = typer.Option(None, "--journal", help="Part of the journal name."),
    since: str = typer.Option(None, "--since", help="Notices on or after this date (YYYY-MM-DD)."),
    kind: str = typer.Option(
        None, "--type", help="retraction, withdrawal, expression-of-concern, correction, …"
    ),
    limit: int = typer.Option(50, "--limit", min=1),
    output: FormatOption = OutputFormat.TABLE,
) -> None:
    """Search the snapshot by title words, journal, date and notice type.

    Example: refaudit retractions search --journal Lancet --since 2020-01-01 covid
    """
    from datetime import date

    from refaudit.retractions import search_retractions

    if since is not None:
        try:
            date.fromisoformat(since)
        except ValueError:
            fail(f"--since {since!r} is not a date", hint="use YYYY-MM-DD")
    if not (query or journal or since or kind):
        fail("give a query or at least one of --journal, --since, --type")
    if kind is not None:
        from refaudit.notices import NOTICE_FINDING_CODES, normalize_notice_kind

        if normalize_notice_kind(kind) not in NOTICE_FINDING_CODES:
            known = ", ".join(k.value.replace("_", "-") for k in NOTICE_FINDING_CODES)
            fail(f"--type {kind!r} is not a notice type", hint=f"use one of {known}")
    records = search_retractions(
        _settings(), query=query, journal=journal, since=since, nature=kind, limit=limit
    )
    _records_output(records, output, "Matching notices")


@retractions_app.command()
@handle_errors
def recent(
    days: int = typer.Option(None, "--days", min=1, help="Notices of the last N days."),
    limit: int = typer.Option(None, "--limit", min=1, help="The N newest notices (default 20)."),
    output: FormatOption = OutputFormat.TABLE,
) -> None:
    """List the newest notices in the snapshot.

    Example: refaudit retractions recent --days 30
    """
    from refaudit.retractions import recent_retractions

    if days is not None and limit is not None:
        fail("use --days or --limit, not both")
    records = recent_retractions(_settings(), days=days, limit=limit)
    _records_output(records, output, "Recent notices")


@retractions_app.command()
@handle_errors
def record(
    notice_doi: str = typer.Argument(..., help="DOI of a retraction or other notice."),
    output: FormatOption = OutputFormat.TABLE,
) -> None:
    """Show one notice: the snapshot's rows, or its Crossref record when not in the snapshot.

    Example: refaudit retractions record '10.1016/S0140-6736(10)60175-4'
    """
    import asyncio

    from refaudit.retractions import get_notice
    from refaudit.retractions.screen import shows_retraction_watch_data

    lookup = asyncio.run(get_notice(notice_doi, _settings()))
    if output is OutputFormat.JSON:
        _emit_credited_json(_plain(lookup))
    elif lookup.records:
        _records_output(lookup.records, output, f"Notice {lookup.notice_doi}")
    else:
        from rich.table import Table

        table = Table(title=f"Notice {lookup.notice_doi} ({lookup.origin or 'not found'})")
        for column in ("kind", "date", "about DOI", "label", "source"):
            table.add_column(column, overflow="fold")
        for notice in lookup.notices:
            table.add_row(
                notice.kind.value.replace("_", " "),
                notice.date or "",
                notice.target_doi or "",
                notice.label or "",
                notice.source or "",
            )
        _print_table(table, credit=any(shows_retraction_watch_data(n) for n in lookup.notices))
        if lookup.reason:
            stdout_console().print(lookup.reason, highlight=False)
    if lookup.found is None:
        raise typer.Exit(int(ExitCode.INCOMPLETE))
    if not lookup.found:
        raise typer.Exit(int(ExitCode.FLAGGED))
