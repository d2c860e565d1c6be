"""The MCP server: refaudit's pipeline as tools an agent can call before it cites.

- `tools`: one module-level function per tool, each a thin layer over the function
  the CLI calls (the typed results are `refaudit.report`'s models);
- `resources`: `refaudit://sources`, `refaudit://policy`, `refaudit://guide` and the
  `verify-before-citing` prompt;
- `state`: what the process shares across sessions (settings, the source clients
  opened once in the lifespan, per-source health);
- `http`: streamable HTTP with transport security, the bearer token and the socket;
- `oauth`: the OAuth resource-server mode (JWTs from one issuer, checked against its keys);
- `fairuse`: each client's share (audits at once, references per minute).

Only `refaudit serve` imports this package, which keeps `mcp` out of every other command.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import UserMessage
from pydantic import Field

from refaudit.config import Settings
from refaudit.models import RunStats
from refaudit.server import resources, tools
from refaudit.server.fairuse import FairUse
from refaudit.server.http import (
    bind_socket,
    http_app,
    is_loopback,
    mcp_url,
    serve_http,
    transport_security,
)
from refaudit.server.state import ServerState
from refaudit.version import installed_version

if TYPE_CHECKING:
    import httpx

    from refaudit.server.oauth import OAuthConfig

__all__ = [
    "ServerState",
    "bind_socket",
    "build_server",
    "http_app",
    "is_loopback",
    "mcp_url",
    "serve_http",
    "transport_security",
]

log = logging.getLogger(__name__)

SERVER_NAME = "refaudit"

INSTRUCTIONS = """\
refaudit checks scholarly references against Crossref, OpenAlex, Semantic Scholar, arXiv,
DataCite, PubMed and DBLP, and screens them for retractions. Verify every reference before
you cite it (verify_reference, verify_references, verify_bibliography) and never invent a
field refaudit did not return. Verdicts: verified, mismatch (found, but fields differ: see
findings), not_found (the sources answered and none knows the work), unverified (a source
failed: NOT evidence that the work does not exist), skipped (ignored by configuration).
Read refaudit://guide for how the tools fit together."""


def build_server(
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    root: Path | None = None,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    oauth: OAuthConfig | None = None,
) -> MCPServer[ServerState]:
    """An MCPServer whose tools run the pipeline with `settings`.

    `root` is the only directory `verify_bibliography` may read files from; without it the
    tool accepts BibTeX text only. `transport`, `clock` and `sleep` reach the source clients
    (tests pass fakes, so nothing waits on a real rate limit). With `oauth` the HTTP
    transport takes only the issuer's JWTs and publishes its Protected Resource Metadata.
    """
    from refaudit.sources import open_sources

    state = ServerState(settings=settings, root=root, transport=transport)

    @asynccontextmanager
    async def lifespan(_: MCPServer[ServerState]) -> AsyncIterator[ServerState]:
        log.info("refaudit MCP server: sources %s", ", ".join(settings.sources))
        # One set of clients for the whole process: every call and session shares their
        # rate limits, breakers, connections and cache. Each run counts its own stats.
        async with open_sources(
            settings, RunStats(), transport=transport, clock=clock, sleep=sleep
        ) as opened:
            state.sources = opened
            try:
                yield state
            finally:
                state.sources = None

    verifier = None
    if oauth is not None:
        from refaudit.server.oauth import JwtVerifier

        verifier = JwtVerifier(oauth)
    server: MCPServer[ServerState] = MCPServer(
        SERVER_NAME,
        title="refaudit",
        instructions=INSTRUCTIONS,
        version=installed_version(),
        lifespan=lifespan,
        auth=oauth.auth_settings() if oauth else None,
        token_verifier=verifier,
        middleware=[FairUse(settings.serve, tools.UPSTREAM_TOOL_NAMES)],
    )
    for function, title in tools.TOOLS:
        server.add_tool(function, title=title, annotations=tools.tool_annotations(function))
    _add_resources(server, state)
    _add_prompts(server)
    return server


def _add_resources(server: MCPServer[ServerState], state: ServerState) -> None:
    def sources() -> dict[str, Any]:
        """Each source: enabled or why not, key set, limits, quota and the health seen here."""
        return resources.sources_overview(state)

    def policy() -> dict[str, Any]:
        """Verdicts, the fail policy, the retraction policy and the finding codes."""
        return resources.policy_overview(state.settings)

    def guide() -> str:
        """Verify before citing, read unverified as unknown, prefer the corrected entry."""
        return resources.GUIDE

    # Each resource is served at refaudit://NAME, NAME being its function's name.
    for function, title, mime_type in (
        (sources, "Sources refaudit consults", "application/json"),
        (policy, "What refaudit counts as an error", "application/json"),
        (guide, "How to use refaudit's tools together", "text/markdown"),
    ):
        name = function.__name__
        server.resource(f"refaudit://{name}", name=name, title=title, mime_type=mime_type)(function)


def _add_prompts(server: MCPServer[ServerState]) -> None:
    @server.prompt(name="verify-before-citing", title="Verify references before citing")
    def verify_before_citing(
        citations: Annotated[
            str | None, Field(description="references you are about to cite (optional)")
        ] = None,
    ) -> list[UserMessage]:
        """How to check every reference before citing it, and how to read the verdicts."""
        text = resources.VERIFY_BEFORE_CITING
        if citations:
            text += f"\nThe references to check now:\n\n{citations}\n"
        return [UserMessage(text)]
