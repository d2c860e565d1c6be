"""`refaudit serve`: the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

import dataclasses
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from refaudit.cli.common import ExitCode, fail, handle_errors
from refaudit.cli.options import ConfigOption, load_config, option_group

if TYPE_CHECKING:
    from refaudit.config import Settings


class Transport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("serve")(serve)


@dataclasses.dataclass(frozen=True)
class ServeFlags:
    """The options for `refaudit serve` as a shared service: the `[serve]` settings."""

    oauth_issuer: Annotated[
        str | None,
        typer.Option(help="Accept only JWTs from this OAuth authorization server (http)."),
    ] = None
    oauth_resource: Annotated[
        str | None,
        typer.Option(help="This server's public URL, the tokens' audience (default: the bind)."),
    ] = None
    oauth_scopes: Annotated[
        list[str] | None,
        typer.Option("--oauth-scope", help="Scope every token must carry (repeatable)."),
    ] = None
    oauth_jwks_url: Annotated[
        str | None,
        typer.Option(help="The issuer's keys (default: read from the issuer's metadata)."),
    ] = None
    client_concurrent_audits: Annotated[
        int | None,
        typer.Option(help="Calls asking the sources one client may run at once (default 4)."),
    ] = None
    client_references_per_minute: Annotated[
        int | None,
        typer.Option(help="References one client may check per minute (default 600)."),
    ] = None


NO_SERVE_FLAGS = ServeFlags()


@handle_errors
@option_group(ServeFlags)
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
            help="Bearer token clients must send (http); required beyond loopback without OAuth.",
        ),
    ] = None,
    flags: ServeFlags = NO_SERVE_FLAGS,
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
    config: ConfigOption = None,
) -> None:
    """Run refaudit as an MCP server so agents can verify references before citing them.

    Example:

        refaudit serve                                   # stdio, for Claude Desktop / Code

        refaudit serve --transport http --port 8000      # http://127.0.0.1:8000/mcp

        refaudit serve -t http --host 0.0.0.0 --oauth-issuer https://auth.example.org \\
            --oauth-resource https://refaudit.example.org/mcp --oauth-scope refaudit
    """
    from refaudit.config import with_serve_flags

    settings = with_serve_flags(
        load_config(config, {"offline": offline or None}), **dataclasses.asdict(flags)
    )
    if transport is Transport.HTTP:
        from refaudit.server import is_loopback

        if token and settings.serve.oauth_issuer:
            fail(
                "give either a bearer token or an OAuth issuer, not both",
                hint="the token is for one user; OAuth is for a shared server",
                code=ExitCode.USAGE,
            )
        if not is_loopback(host) and not token and not settings.serve.oauth_issuer:
            fail(
                f"refusing to serve on {host} without a bearer token",
                hint="pass --token TOKEN (or set REFAUDIT_MCP_TOKEN), or --oauth-issuer URL, "
                "or bind to 127.0.0.1",
                code=ExitCode.USAGE,
            )
    _configure_logging()

    from refaudit.server import build_server

    resolved_root = root.resolve() if root else None
    if transport is Transport.STDIO:
        build_server(settings, root=resolved_root).run("stdio")
        return
    _serve_http(
        settings,
        root=resolved_root,
        host=host,
        port=port,
        token=token,
        extra_hosts=tuple(allow_host or ()),
    )


def _serve_http(
    settings: Settings,
    *,
    root: Path | None,
    host: str,
    port: int,
    token: str | None,
    extra_hosts: tuple[str, ...],
) -> None:
    """Bind first: the URL the socket answers on is the OAuth resource unless one is named."""
    import anyio

    from refaudit.server import bind_socket, build_server, http_app, mcp_url, serve_http
    from refaudit.server.oauth import OAuthConfig

    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    bound_port = sock.getsockname()[1]
    with sock:
        oauth = OAuthConfig.from_settings(settings.serve, mcp_url(host, bound_port))
        server = build_server(settings, root=root, oauth=oauth)
        app = http_app(server, host=host, port=bound_port, token=token, extra_hosts=extra_hosts)

        def announce(url: str) -> None:
            print(f"refaudit MCP server listening on {url}", file=sys.stderr, flush=True)
            if oauth is not None:
                print(
                    f"OAuth: tokens from {oauth.issuer} for {oauth.resource}",
                    file=sys.stderr,
                    flush=True,
                )

        anyio.run(serve_http, app, sock, announce)


def _configure_logging() -> None:
    """Logs go to stderr: on stdio, stdout carries the protocol and nothing else."""
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s: %(message)s")
