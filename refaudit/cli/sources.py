"""`refaudit sources`: which sources a run would ask, their keys, limits and quotas.

A fresh process has seen no source yet, so the health column is the MCP
resource's (`refaudit://sources`); `--format json` carries the same fields.
"""

from __future__ import annotations

from typing import Any

import typer

from refaudit.cli.common import handle_errors, stdout_console
from refaudit.cli.options import ConfigOption, FormatOption, OutputFormat, load_config


@handle_errors
def sources_command(
    output_format: FormatOption = OutputFormat.TABLE,
    config: ConfigOption = None,
) -> None:
    """Show each source: enabled or why not, key set or missing, limits, quota left.

    Example: refaudit sources --format json
    """
    import json

    from refaudit.sources.status import describe_sources

    described = describe_sources(load_config(config))
    if output_format == "json":
        typer.echo(json.dumps({"sources": described}, indent=2, ensure_ascii=False))
        return
    _print_table(described)


def _print_table(described: list[dict[str, Any]]) -> None:
    """A compact table; why a source is off and how to enable it follow, one line each."""
    from rich.table import Table

    console = stdout_console()
    table = Table(title="refaudit sources", title_justify="left")
    for column in ("source", "enabled", "key", "rate", "quota"):
        table.add_column(column, overflow="fold")
    for source in described:
        slowest = min(pool["rps"] for pool in source["rate_limits"].values())
        table.add_row(
            source["name"],
            "yes" if source["enabled"] else "no",
            source["key"],
            f"{slowest:.3g}/s",
            _quota_text(source["quota"]),
        )
    console.print(table)
    for source in described:
        if not source["enabled"]:
            console.print(f"{source['name']}: {source['why_not']}", highlight=False)


def _quota_text(quota: dict[str, Any] | None) -> str:
    if quota is None:
        return "—"
    if "used" not in quota:
        return f"{quota['calls']:,} a {quota['window']} (no key)"
    text = f"{quota['used']:,} used, {quota['left']:,} left of {quota['quota']:,}"
    if quota["spent_until"]:
        return f"{text}; spent until {quota['spent_until']}"
    if quota["resets_at"]:
        text += f"; resets {quota['resets_at']}"
    return text + ("" if quota["measured"] == "headers" else " (counted)")


def register(app: typer.Typer) -> None:
    """Add `sources` to the app."""
    app.command("sources")(sources_command)
