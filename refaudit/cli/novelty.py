"""`refaudit novelty`: has this research idea been done already?

A thin command over `refaudit.novelty.assess_novelty`; everything beyond typer is
imported inside the command so `refaudit --help` stays fast.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from refaudit.cli.common import (
    Card,
    ExitCode,
    fail,
    handle_errors,
    print_note,
    stdout_console,
    work_cards,
)


class NoveltyFormat(enum.StrEnum):
    TABLE = "table"
    JSON = "json"
    JSONL = "jsonl"


#: Ideas assessed at once from an --ideas file; the sources' rate limits pace them.
BATCH_CONCURRENCY = 4


def register(app: typer.Typer) -> None:
    """Add this module's command to the app."""
    app.command("novelty")(novelty)


@handle_errors
def novelty(
    idea: Annotated[
        str | None, typer.Argument(help="The idea, in a sentence or a short paragraph.")
    ] = None,
    context: Annotated[
        str | None,
        typer.Option("--context", help="Background (field, setting) that steers the searches."),
    ] = None,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold", min=0.0, max=1.0, help="Least similarity for a paper to be listed."
        ),
    ] = 0.25,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=100, help="Similar papers listed.")
    ] = 20,
    ideas: Annotated[
        Path | None,
        typer.Option("--ideas", help='JSON Lines file of {"id", "idea", "context"?} objects.'),
    ] = None,
    output_format: Annotated[NoveltyFormat, typer.Option("--format", "-f")] = NoveltyFormat.TABLE,
) -> None:
    """Search the literature for an idea and say how much of it is already done.

    Exit status: 0 assessed, 3 could not assess (sources failed), 2 bad input.

    Example: refaudit novelty "graph neural networks for protein folding" --format json
    """
    import asyncio

    from refaudit.config import load_settings

    if (idea is None) == (ideas is None):
        fail("give one idea, or --ideas FILE.jsonl")
    settings = load_settings()
    if ideas is not None:
        if output_format != NoveltyFormat.JSONL:
            fail("--ideas writes one JSON line per idea: add --format jsonl")
        code = asyncio.run(_assess_file(ideas, settings, context, threshold, limit))
        raise typer.Exit(int(code))
    from refaudit.novelty import assess_novelty

    report = asyncio.run(
        assess_novelty(idea or "", settings, context=context, threshold=threshold, limit=limit)
    )
    if output_format == NoveltyFormat.TABLE:
        _print_table(report)
    else:
        typer.echo(
            report.model_dump_json(indent=2 if output_format == NoveltyFormat.JSON else None)
        )
    if report.message:
        print_note(report.message)
    if report.status == "unverified":
        raise typer.Exit(int(ExitCode.INCOMPLETE))


def _read_ideas(path: Path) -> list[tuple[str, dict[str, Any] | str]]:
    """(id, idea object) per line, or (id, error message) for a line that is not one."""
    from refaudit.errors import InputError

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", file=str(path)) from exc
    read: list[tuple[str, dict[str, Any] | str]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            read.append((f"line {number}", f"{path}:{number}: not JSON ({exc})"))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("idea"), str):
            read.append((f"line {number}", f'{path}:{number}: expected {{"id", "idea"}}'))
            continue
        read.append((str(item.get("id", f"line {number}")), item))
    return read


async def _assess_file(
    path: Path, settings: Any, context: str | None, threshold: float, limit: int
) -> ExitCode:
    """One JSON line per idea, in input order; sources shared by every idea."""
    import asyncio

    from refaudit.errors import RefauditError
    from refaudit.models import RunStats
    from refaudit.novelty import assess_novelty
    from refaudit.sources import open_sources, sharing

    items = _read_ideas(path)
    gate = asyncio.Semaphore(BATCH_CONCURRENCY)

    async def one(idea_id: str, item: dict[str, Any] | str) -> dict[str, Any]:
        if isinstance(item, str):
            return {"id": idea_id, "status": "invalid", "message": item}
        try:
            async with gate:
                report = await assess_novelty(
                    item["idea"],
                    settings,
                    context=item.get("context") or context,
                    threshold=threshold,
                    limit=limit,
                )
        except RefauditError as exc:
            return {"id": idea_id, "status": "invalid", "message": exc.message}
        return {"id": idea_id, **report.model_dump()}

    async with open_sources(settings, RunStats()) as sources:
        with sharing(sources):
            tasks = [asyncio.ensure_future(one(i, item)) for i, item in items]
            results = []
            for task in tasks:
                result = await task
                results.append(result)
                typer.echo(json.dumps(result, ensure_ascii=False))
    if any(result["status"] == "invalid" for result in results):
        return ExitCode.USAGE
    if any(result["status"] == "unverified" for result in results):
        return ExitCode.INCOMPLETE
    return ExitCode.CLEAN


def _print_table(report: Any) -> None:
    from rich.markup import escape

    console = stdout_console()
    if report.novelty_score is None:
        console.print("[bold]could not assess[/]: no source could be searched", highlight=False)
    else:
        console.print(
            f"novelty [bold]{report.novelty_score:.2f}[/] · {report.assessment} · "
            f"recommendation: [bold]{report.recommendation}[/]",
            highlight=False,
        )
    console.print(f"key concepts: {escape('; '.join(report.concepts))}", highlight=False)
    if report.gaps:
        console.print(f"not covered by any similar paper: {escape('; '.join(report.gaps))}")
    if not report.similar_papers:
        if report.novelty_score is not None:
            console.print("no paper reaches the similarity threshold", highlight=False)
        return
    cards = []
    for paper in report.similar_papers:
        authors = paper.authors[0] if paper.authors else ""
        if len(paper.authors) > 1:
            authors += " et al."
        identifier = paper.doi or (f"arXiv:{paper.arxiv_id}" if paper.arxiv_id else "")
        covers = f"covers: {'; '.join(paper.covers) or '-'}"
        cards.append(
            Card(
                f"{paper.similarity:.2f}",
                paper.title or "",
                authors,
                paper.venue,
                covers,
                paper.year,
                identifier,
                paper.citation_count,
            )
        )
    console.print(work_cards(("Sim", "Paper"), 4, cards))
