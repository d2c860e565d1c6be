"""The `refaudit` command line: a thin Typer layer over the pipeline functions.

Each command group lives in its own module and registers itself here. Command
modules import only typer at the top; the pipeline (httpx, mcp, …) is imported
inside the commands so `refaudit --help` stays fast.
"""

from __future__ import annotations

import os
import sys

import typer

from refaudit.cli import (
    batch,
    cache,
    check,
    discovery,
    lsp,
    mirror,
    novelty,
    parse,
    retractions,
    serve,
    sources,
)
from refaudit.cli.common import RefauditGroup, use_plain_type_labels
from refaudit.collector import collect_less

use_plain_type_labels()

app = typer.Typer(
    name="refaudit",
    cls=RefauditGroup,
    help="Audit bibliographies: find fabricated, mis-cited and retracted references.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

for module in (
    check,
    batch,
    parse,
    discovery,
    novelty,
    retractions,
    cache,
    mirror,
    sources,
    serve,
    lsp,
):
    module.register(app)


def _print_version(wanted: bool) -> None:
    if wanted:
        from refaudit.version import version_line

        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        help="Show the version and exit.",
        is_eager=True,
        callback=_print_version,
    ),
    debug: bool = typer.Option(
        False, "--debug", help="On an internal error, print the traceback (also REFAUDIT_DEBUG=1)."
    ),
) -> None:
    """Audit bibliographies: find fabricated, mis-cited and retracted references."""


def main(args: list[str] | None = None) -> None:
    """Run the CLI; an unexpected exception exits 4 with a bug-report line, never a traceback."""
    from refaudit.cli.common import report_internal_error

    argv = list(sys.argv[1:] if args is None else args)
    # --debug is accepted anywhere on the line, not only before the command.
    head = argv[: argv.index("--")] if "--" in argv else argv
    debug = "--debug" in head or os.environ.get("REFAUDIT_DEBUG", "") not in ("", "0")
    if "--debug" in head:
        argv.remove("--debug")
    collect_less()
    # The event loop shares the GIL with the threads that read the input and match records:
    # at Python's 5 ms switch interval each of its turns may wait that long for one of them,
    # and a request ready to leave waits with it (the first one for 40-80 ms).
    sys.setswitchinterval(0.001)
    # httpx imports its own command-line tool (rich, click, pygments: ~40 ms) unless it is
    # missing; refaudit never runs it, and a check's first request would wait for it.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    try:
        app(argv, prog_name="refaudit")
    except Exception as error:  # noqa: BLE001 - the one place every bug surfaces
        report_internal_error(error, debug=debug)
