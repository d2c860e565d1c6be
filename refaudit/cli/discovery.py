"""`refaudit search`, `refaudit bibtex` and `refaudit show`: find works and cite them safely.

Thin commands over `refaudit.discovery`; everything beyond typer is imported
inside the commands so `refaudit --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from refaudit.cli.common import (
    Card,
    ExitCode,
    fail,
    handle_errors,
    print_note,
    stderr_console,
    stdout_console,
    work_cards,
)
from refaudit.cli.options import FormatOption, OutputFormat, SourcesOption, source_names


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("search")(search)
    app.command("bibtex")(bibtex)
    app.command("show")(show)


@handle_errors
def search(
    query: Annotated[str, typer.Argument(help="Words, a title, or a title with author names.")],
    year_from: Annotated[
        int | None, typer.Option("--year-from", help="Earliest publication year.")
    ] = None,
    year_to: Annotated[
        int | None, typer.Option("--year-to", help="Latest publication year.")
    ] = None,
    sources: SourcesOption = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=100, help="Number of works.")
    ] = 10,
    output_format: FormatOption = OutputFormat.TABLE,
    with_bibtex: Annotated[
        bool, typer.Option("--bibtex", help="Also print BibTeX for every hit.")
    ] = False,
) -> None:
    """Search the databases; one row per work, merged across sources.

    Example: refaudit search "attention is all you need" --year-from 2017 --limit 5
    """
    import asyncio

    from refaudit.config import load_settings
    from refaudit.discovery import bibtex_entries, search_works
    from refaudit.discovery.integrity import withdrawal_note

    settings = load_settings()
    outcome = asyncio.run(
        search_works(
            query,
            settings,
            year_from=year_from,
            year_to=year_to,
            sources=source_names(sources),
            limit=limit,
        )
    )
    entries = asyncio.run(bibtex_entries(outcome.works, settings)) if with_bibtex else []
    if output_format == OutputFormat.JSON:
        from refaudit.models import to_dict

        data = {"query": query, **to_dict(outcome)}
        if with_bibtex:
            data["bibtex"] = to_dict(entries)
        _print_json(data)
    else:
        _print_search_table(outcome)
        for entry in entries:
            if entry.status == "ok":
                typer.echo(entry.bibtex)
            elif entry.work is not None:
                stderr_console().print(
                    f"[yellow]warning:[/] {entry.identifier} is retracted; its BibTeX is not"
                    f" printed ({withdrawal_note(entry.work)}). `refaudit bibtex"
                    " --allow-retracted` writes it with a note naming the notice.",
                    highlight=False,
                )
    if outcome.message:
        print_note(outcome.message)
    if outcome.status == "unverified":
        raise typer.Exit(int(ExitCode.INCOMPLETE))


@handle_errors
def bibtex(
    identifiers: Annotated[
        list[str] | None,
        typer.Argument(help="DOIs, arXiv ids, PMIDs, S2 or OpenAlex ids, or exact titles."),
    ] = None,
    from_file: Annotated[
        Path | None,
        typer.Option("--from", help="Read identifiers from FILE, one per line (# comments)."),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Append the entries to this .bib file.")
    ] = None,
    rename: Annotated[
        bool,
        typer.Option("--rename", help="With -o: give entries whose key is taken a new key."),
    ] = False,
    allow_retracted: Annotated[
        bool,
        typer.Option(
            "--allow-retracted",
            help="Write retracted works too (to discuss the retraction), with a note "
            "naming the notice.",
        ),
    ] = False,
) -> None:
    """Print database-backed BibTeX for each identifier or title.

    Titles are searched first and only a work whose title agrees is used. Exit
    status: 0 all found, 1 something not found or retracted (not written unless
    --allow-retracted), 3 sources failed, 2 bad input. With -o, an entry whose DOI
    (or key and DOI) the file already has is not appended again.

    Example: refaudit bibtex 10.1038/nature14539 arXiv:1706.03762 -o refs.bib
    """
    import asyncio

    from refaudit.config import load_settings
    from refaudit.discovery import append_to_bib, bibtex_entries

    wanted = list(identifiers or [])
    if from_file is not None:
        wanted += _read_identifiers(from_file)
    if not wanted:
        fail("give at least one identifier or title, or --from FILE")
    if rename and output is None:
        fail("--rename only applies with -o/--output")
    entries = asyncio.run(bibtex_entries(wanted, load_settings()))
    console = stderr_console()
    kept = ("ok", "retracted") if allow_retracted else ("ok",)
    found = [entry for entry in entries if entry.status in kept]
    if output is not None:
        written, skipped = append_to_bib(output, found, rename=rename)
        keys = ", ".join(entry.key or "" for entry in written)
        console.print(f"appended {len(written)} entries to {output}: {keys}", highlight=False)
        for entry, why in skipped:
            console.print(f"[dim]not appended {entry.identifier}: {why}[/]", highlight=False)
    else:
        typer.echo("\n".join(entry.bibtex or "" for entry in found), nl=False)
    for entry in entries:
        if entry.status == "retracted" and allow_retracted:
            console.print(
                f"[yellow]warning:[/] {entry.identifier} is retracted; written with a note "
                f"naming the notice ({entry.message}). Cite it only to discuss the retraction.",
                highlight=False,
            )
        elif entry.status == "retracted":
            console.print(
                f"[red]error:[/] {entry.identifier} is retracted; not written"
                f" ({entry.message}). Cite it only to discuss the retraction,"
                " with --allow-retracted.",
                highlight=False,
            )
        elif entry.status != "ok":
            console.print(
                f"[red]{entry.status}:[/] {entry.identifier}: {entry.message}", highlight=False
            )
        elif entry.message:
            console.print(f"[dim]{entry.key}: {entry.message}[/]", highlight=False)
    statuses: list[str] = [entry.status for entry in entries]
    if allow_retracted:
        statuses = ["ok" if status == "retracted" else status for status in statuses]
    raise typer.Exit(int(_exit_code(statuses)))


@handle_errors
def show(
    identifier: Annotated[
        str, typer.Argument(help="A DOI, arXiv id, PMID, S2 or OpenAlex id, or a title.")
    ],
    references: Annotated[
        bool, typer.Option("--references", help="List the works it cites.")
    ] = False,
    citations: Annotated[bool, typer.Option("--citations", help="List works citing it.")] = False,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=1000, help="Graph entries shown.")
    ] = 20,
    output_format: FormatOption = OutputFormat.TABLE,
) -> None:
    """Show one work merged across sources, where sources disagree, notices, citations.

    Example: refaudit show '10.1016/S0140-6736(97)11096-0' --citations
    """
    import asyncio

    from refaudit.config import load_settings
    from refaudit.discovery import paper_details

    details = asyncio.run(
        paper_details(
            identifier, load_settings(), references=references, citations=citations, limit=limit
        )
    )
    if output_format == OutputFormat.JSON:
        from refaudit.models import to_dict

        _print_json(to_dict(details))
    else:
        _print_details(details, references=references, citations=citations)
    raise typer.Exit(int(_exit_code([details.status])))


def _exit_code(statuses: list[str]) -> ExitCode:
    if "invalid" in statuses:
        return ExitCode.USAGE
    if "not_found" in statuses or "retracted" in statuses:
        return ExitCode.FLAGGED
    if "unverified" in statuses:
        return ExitCode.INCOMPLETE
    return ExitCode.CLEAN


def _read_identifiers(path: Path) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{path}: cannot read: {exc}")
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def _print_json(data: Any) -> None:
    import json

    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _authors(work: Any) -> str:
    if not work.authors:
        return ""
    first = work.authors[0].full_family
    return (
        f"{first} et al."
        if len(work.authors) > 2
        else " & ".join(person.full_family for person in work.authors)
    )


def _identifier(work: Any) -> str:
    if work.doi:
        return work.doi
    if work.arxiv_id:
        return f"arXiv:{work.arxiv_id}"
    return work.s2_id or work.openalex_id or ""


def _print_search_table(outcome: Any) -> None:
    console = stdout_console()
    if not outcome.works:
        if outcome.status != "unverified":  # else nobody answered: nothing is known
            console.print("no works found", highlight=False)
        return
    cards = [
        Card(
            str(number),
            work.title or "",
            _authors(work),
            work.venue_short or work.venue,
            f"found in {', '.join(work.found_in)}",
            work.year,
            _identifier(work),
            work.citation_count,
        )
        for number, work in enumerate(outcome.works, start=1)
    ]
    console.print(work_cards(("#", "Work"), 2, cards))


def _works_table(title: str, works: list[Any]) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in ("Title", "Authors", "Year", "DOI / arXiv", "Cites"):
        table.add_column(column, overflow="fold")
    for work in works:
        table.add_row(
            work.title or "",
            _authors(work),
            str(work.year or ""),
            _identifier(work),
            "" if work.citation_count is None else str(work.citation_count),
        )
    return table


def _print_details(details: Any, *, references: bool, citations: bool) -> None:
    from rich.table import Table

    console = stdout_console()
    if details.work is None:
        stderr_console().print(f"[red]{details.status}:[/] {details.message}", highlight=False)
        return
    table = Table(title=details.work.title, title_justify="left")
    for column in ("Field", "Value", "Source", "Other sources say"):
        table.add_column(column, overflow="fold")
    for origin in details.fields:
        others = "; ".join(f"{source}: {value}" for source, value in origin.others.items())
        table.add_row(origin.field, origin.value, origin.source, others)
    console.print(table)
    ids = Table(title="Records", title_justify="left")
    for column in ("Source", "Id", "URL"):
        ids.add_column(column, overflow="fold")
    for name, record in details.records.items():
        ids.add_row(name, record.source_id or "", record.url or "")
    console.print(ids)
    if details.notices:
        notices = Table(title="Integrity notices", title_justify="left")
        for column in ("Kind", "Date", "Notice DOI", "Reported by"):
            notices.add_column(column, overflow="fold")
        for notice in details.notices:
            notices.add_row(
                notice.kind.value,
                notice.date or "",
                notice.notice_doi or "",
                notice.source or notice.reported_by or "",
            )
        console.print(notices)
    graph = (
        ("References", references, details.references),
        ("Cited by", citations, details.citations),
    )
    for title, wanted, works in graph:
        if works:
            console.print(_works_table(f"{title} (most cited first)", works))
        elif wanted:
            console.print(f"{title}: none known to the sources asked", highlight=False)
    failed = [f"{n}: {s.reason}" for n, s in details.sources.items() if s.state == "failed"]
    if details.message:
        stderr_console().print(f"[yellow]{details.message}[/]", highlight=False)
    if failed:
        stderr_console().print(f"[yellow]sources failed:[/] {'; '.join(failed)}", highlight=False)
