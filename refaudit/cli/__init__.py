"""The `refaudit` command line: a thin Typer layer over the pipeline functions.

Each command group lives in its own module and registers itself here. Command
modules import only typer at the top; the pipeline (httpx, mcp, …) is imported
inside the commands so `refaudit --help` stays fast.
"""

from __future__ import annotations

import typer

from refaudit.cli import cache, check, discovery, parse, retractions, serve

app = typer.Typer(
    name="refaudit",
    help="Audit bibliographies: find fabricated, mis-cited and retracted references.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

for module in (check, parse, discovery, retractions, cache, serve):
    module.register(app)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Show the version and exit."),
) -> None:
    """Audit bibliographies: find fabricated, mis-cited and retracted references."""
    if version:
        from importlib.metadata import version as package_version

        typer.echo(f"refaudit {package_version('refaudit')}")
        raise typer.Exit()


def main() -> None:
    app()
