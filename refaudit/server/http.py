"""The MCP server over streamable HTTP: the socket, transport security and the bearer token.

Loopback binds need no token; anything else must have one (`refaudit serve` refuses
to start without). Host and Origin are checked against the names the bind answers
to (DNS rebinding), and a session idle for `SESSION_IDLE_TIMEOUT_S` is closed, so
abandoned clients cannot pile up sessions.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp.server.transport_security import TransportSecuritySettings

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp, Receive, Scope, Send

MCP_PATH = "/mcp"
#: A session with no request for this long is closed (the SDK's default is 30 minutes).
SESSION_IDLE_TIMEOUT_S = 5 * 60
#: After SIGTERM or SIGINT, calls in flight have this long to finish before they are cut off.
SHUTDOWN_GRACE_S = 20
#: An idle kept-alive connection is closed after this long: longer than clients keep theirs
#: (httpx: 5 s), so a client never sends a call down a connection the server is closing.
KEEP_ALIVE_S = 65


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses: the only binds allowed without a token."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_form(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def mcp_url(host: str, port: int) -> str:
    """The URL clients reach the MCP endpoint at on this bind."""
    return f"http://{_host_form(host, port)}{MCP_PATH}"


def transport_security(
    host: str, port: int, extra_hosts: tuple[str, ...] = ()
) -> TransportSecuritySettings:
    """Host/Origin checks against DNS rebinding: only the names this bind answers to."""
    names = [host, *extra_hosts]
    if is_loopback(host):
        names += ["127.0.0.1", "localhost", "::1"]
    if host in ("0.0.0.0", "::"):
        names += ["127.0.0.1", "localhost", "::1", socket.gethostname(), socket.getfqdn()]
    hosts = list(dict.fromkeys(_host_form(name, port) for name in names))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{entry}" for entry in hosts]
        + [f"https://{entry}" for entry in hosts],
    )


class BearerTokenMiddleware:
    """Answers 401 to any HTTP request without `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            from starlette.responses import JSONResponse

            response = JSONResponse(
                {"error": "unauthorized", "message": "missing or wrong bearer token"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="refaudit"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                # RFC 7235: the scheme is case-insensitive ("bearer" is "Bearer").
                scheme, _, credentials = value.strip().partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(
                    credentials.strip(), self._token
                )
        return False


def http_app(
    server: MCPServer,
    *,
    host: str,
    port: int,
    token: str | None,
    extra_hosts: tuple[str, ...] = (),
) -> ASGIApp:
    """The streamable-HTTP ASGI app at /mcp, with Host/Origin checks and the optional token."""
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=transport_security(host, port, extra_hosts),
        host=host,
        session_idle_timeout=SESSION_IDLE_TIMEOUT_S,
    )
    return BearerTokenMiddleware(app, token) if token else app


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket, bound before serving so port 0 and bind errors surface early."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


async def serve_http(app: ASGIApp, sock: socket.socket, announce: Callable[[str], None]) -> None:
    """Serve `app` on the bound socket with uvicorn (its logs go to stderr).

    `announce` gets the URL once the socket accepts connections, so a caller waiting
    for that line never races the server. SIGTERM and SIGINT stop new connections,
    give the calls in flight `SHUTDOWN_GRACE_S` to be answered, close the sources
    and return: a stop asked for is a clean exit (0), not death by the signal, which
    uvicorn would otherwise raise again once it is done.
    """
    import signal

    import uvicorn

    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        timeout_keep_alive=KEEP_ALIVE_S,
    )
    host, port = sock.getsockname()[:2]
    announce(mcp_url(host, port))
    stopped = {sig: signal.signal(sig, _stopped) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        for sig, handler in stopped.items():
            signal.signal(sig, handler)


def _stopped(_signal: int, _frame: object) -> None:
    """What uvicorn re-raises a stop signal into once it has shut down: nothing more to do."""
