"""`refaudit serve`: the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from refaudit.cli.common import ExitCode, fail, handle_errors

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


class Transport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("serve")(serve)


@handle_errors
def serve(
    transport: Annotated[
        Transport,
        typer.Option("--transport", "-t", help="stdio for local hosts, http for a server."),
    ] = Transport.STDIO,
    host: Annotated[str, typer.Option(help="Address to bind (http only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind, 0 for any free port (http).")] = 8000,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="REFAUDIT_MCP_TOKEN",
            show_envvar=True,
            help="Bearer token clients must send (http); required beyond loopback.",
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="Extra Host name clients may use to reach the server (http; repeatable).",
        ),
    ] = None,
    root: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            file_okay=False,
            help="Directory verify_bibliography may read files from (no file access without it).",
        ),
    ] = None,
    offline: Annotated[bool, typer.Option(help="Answer only from the cache.")] = False,
) -> None:
    """Run refaudit as an MCP server so agents can verify references before citing them.

    Example:

        refaudit serve                                   # stdio, for Claude Desktop / Code

        refaudit serve --transport http --port 8000      # http://127.0.0.1:8000/mcp
    """
    from refaudit.config import load_settings

    if transport is Transport.HTTP:
        from refaudit.server import is_loopback

        if not is_loopback(host) and not token:
            fail(
                f"refusing to serve on {host} without a bearer token",
                hint="pass --token TOKEN (or set REFAUDIT_MCP_TOKEN), or bind to 127.0.0.1",
                code=ExitCode.USAGE,
            )
    settings = load_settings(overrides={"offline": offline or None})
    _configure_logging()

    from refaudit.server import build_server

    server = build_server(settings, root=root.resolve() if root else None)
    if transport is Transport.STDIO:
        server.run("stdio")
        return
    _serve_http(server, host=host, port=port, token=token, extra_hosts=tuple(allow_host or ()))


def _serve_http(
    server: MCPServer, *, host: str, port: int, token: str | None, extra_hosts: tuple[str, ...]
) -> None:
    import anyio

    from refaudit.server import bind_socket, http_app, serve_http

    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    bound_port = sock.getsockname()[1]
    app = http_app(server, host=host, port=bound_port, token=token, extra_hosts=extra_hosts)

    def announce(url: str) -> None:
        print(f"refaudit MCP server listening on {url}", file=sys.stderr, flush=True)

    with sock:
        anyio.run(serve_http, app, sock, announce)


def _configure_logging() -> None:
    """Logs go to stderr: on stdio, stdout carries the protocol and nothing else."""
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s: %(message)s")
