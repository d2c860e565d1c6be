"""`refaudit lsp`: the language server for editors, over stdio."""

from __future__ import annotations

from typing import Annotated

import typer

from refaudit.cli.common import handle_errors
from refaudit.cli.options import NO_FLAGS, FailOnOption, SettingsFlags, settings_options


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("lsp", help=lsp.__doc__)(lsp)


@handle_errors
@settings_options("no_cache")
def lsp(
    stdio: Annotated[
        bool, typer.Option("--stdio", help="Talk over stdin/stdout (the only transport).")
    ] = True,
    fail_on: FailOnOption = None,
    flags: SettingsFlags = NO_FLAGS,
) -> None:
    """Run the language server (stdio) that shows findings in .bib, .tex and .bbl files.

    Example: refaudit lsp --sources mirror
    """
    from refaudit.integrations.lsp import build_server

    settings = flags.settings(fail_on=fail_on)
    build_server(settings).start_io()
