"""`refaudit parse`: show what refaudit reads from an input, without asking any source.

Useful to check a .bib/.tex before an audit: which entries come through, with
which identifiers, and which input problems (bad entries, undefined citations).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from refaudit.cli.common import Columns, handle_errors, stderr_console, stdout_console
from refaudit.cli.options import FormatOption, OutputFormat


def register(app: typer.Typer) -> None:
    """Add `refaudit parse` to the app."""
    app.command("parse")(parse_command)


@handle_errors
def parse_command(
    files: Annotated[list[Path], typer.Argument(help=".bib, .tex, .bbl or .docx files to read.")],
    output_format: FormatOption = OutputFormat.TABLE,
    all_entries: Annotated[
        bool, typer.Option("--all-entries", help="For .tex input, keep uncited entries too.")
    ] = False,
) -> None:
    """Parse bibliography files and print the references found (no network).

    Example: refaudit parse paper.tex --format json
    """
    from refaudit.models import Bibliography, to_dict
    from refaudit.parsing import parse_file

    merged = Bibliography(cited_keys=None)
    for path in files:
        bibliography = parse_file(path, all_entries=all_entries)
        merged.references.extend(bibliography.references)
        merged.problems.extend(bibliography.problems)
        merged.files.extend(bibliography.files)
        if bibliography.cited_keys is not None:
            merged.cited_keys = (merged.cited_keys or []) + bibliography.cited_keys
    _print_problems(merged)
    if output_format == OutputFormat.JSON:
        typer.echo(json.dumps(to_dict(merged), ensure_ascii=False, indent=2))
    else:
        _print_table(merged)


def _print_problems(bibliography: Any) -> None:
    console = stderr_console()
    for problem in bibliography.problems:
        location = problem.file + (f":{problem.line}" if problem.line else "")
        key = f" [{problem.key}]" if problem.key else ""
        console.print(f"{location}{key}: {problem.message}", highlight=False, markup=False)


#: The references as `parse` lists them; a narrow terminal loses the line first.
_REFERENCE_COLUMNS = Columns(
    ("key", "type", "line", "year", "first author", "title", "ids"),
    prose=("first author", "title"),
    drop_order=("line", "type", "first author", "year"),
)


def _print_table(bibliography: Any) -> None:
    from refaudit.cli.common import fitted_table

    rows = []
    wide = stdout_console().width >= 160
    for reference in bibliography.references:
        first_author = reference.authors[0].full_family if reference.authors else ""
        if reference.authors and (len(reference.authors) > 1 or reference.authors_truncated):
            first_author += " et al."
        ids = [
            f"{name}:{value}"
            for name, value in (
                ("doi", reference.doi),
                ("arXiv", reference.arxiv_id),
                ("pmid", reference.pmid),
                ("pmcid", reference.pmcid),
                ("isbn", reference.isbn),
            )
            if value
        ]
        if not ids and reference.url:
            # A URL is never cut: on a narrow terminal it is only marked (JSON has it).
            ids.append(reference.url if wide else "url")
        rows.append(
            [
                reference.key,
                reference.entry_type,
                str(reference.line or ""),
                str(reference.year or ""),
                first_author,
                reference.title or (reference.free_text or "")[:80],
                "\n".join(ids),
            ]
        )
    table = fitted_table(f"{len(bibliography.references)} references", _REFERENCE_COLUMNS, rows)
    stdout_console().print(table)
