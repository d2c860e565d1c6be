"""Each client's share of a shared server: calls at once, references per minute.

Every session of one server shares one polite client per upstream source, so a
single agent sending bibliography after bibliography would otherwise spend the
upstream budget of everyone. This middleware admits a call to a tool that asks the
sources only while its client is under both limits of `ServeSettings`, and answers
any other with a tool error (`isError`) that names the limit and when to call again.

A client is the token's subject (OAuth), the bearer token (static token: everyone
holding it is one client), else the MCP session where the protocol version has
sessions, else the address the call comes from (the sessionless 2026 protocol: all
callers on one machine are one client). Over stdio the one client is the host that
started the server, with nobody to share with: no limit applies.
A call's references are counted from its arguments when it starts and corrected to
the number the answer reports (a bibliography's entries), so the window holds what
was actually checked. Each call's requests carry it as their `request_caller`, so the
source pools serve first the calls that have had least.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.types import CallToolResult, TextContent

from refaudit.config import ServeSettings
from refaudit.sources.pacing import Caller, request_caller

#: The window `client_references_per_minute` counts over.
WINDOW_S = 60.0
#: Idle clients are forgotten once this many are known.
FORGET_ABOVE = 256
_ENTRY = re.compile(r"^[ \t]*@(?!string\b|preamble\b|comment\b)\w+[ \t]*[{(]", re.I | re.M)
#: Arguments holding a list of references, by tool.
_LISTS = {
    "verify_references": "references",
    "check_retractions": "dois",
    "get_bibtex": "identifiers",
}


@dataclass(eq=False)
class _Client:
    """A client's calls running and recent references; by identity, as the pools count it."""

    running: int = 0
    #: (when, references) of the calls of the last minute
    window: deque[list[float]] = field(default_factory=deque)

    def checked(self, now: float) -> float:
        while self.window and self.window[0][0] <= now - WINDOW_S:
            self.window.popleft()
        return sum(count for _, count in self.window)


class FairUse:
    """`ServerMiddleware` holding each client to its share of the upstream tools."""

    def __init__(
        self,
        limits: ServeSettings,
        upstream_tools: Collection[str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._at_once = limits.client_concurrent_audits
        self._per_minute = limits.client_references_per_minute
        self._tools = frozenset(upstream_tools)
        self._clock = clock
        self._clients: dict[str, _Client] = {}

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        params = ctx.params or {}
        if ctx.method != "tools/call" or params.get("name") not in self._tools:
            return await call_next(ctx)
        identity = client_identity(ctx)
        if identity is None:
            return await call_next(ctx)
        name = str(params["name"])
        arguments = params.get("arguments") or {}
        client = self._clients.setdefault(identity, _Client())
        now = self._clock()
        references = max(1, _references_asked(name, arguments))
        refusal = self._refusal(client, references, now)
        if refusal is not None:
            return CallToolResult(content=[TextContent(type="text", text=refusal)], is_error=True)
        charge = [now, float(references)]
        client.window.append(charge)
        client.running += 1
        caller = request_caller.set(Caller(client))
        try:
            result = await call_next(ctx)
        finally:
            request_caller.reset(caller)
            client.running -= 1
        charge[1] = float(_references_answered(result) or references)
        self._forget_idle()
        return result

    def _refusal(self, client: _Client, references: int, now: float) -> str | None:
        """Why this call is refused (the limit, and when to call again), or None."""
        if client.running >= self._at_once:
            return (
                f"fair use: this client already has {client.running} calls running, the most "
                f"one client may have at once on this server ({self._at_once}); call again when "
                "one of them has been answered"
            )
        if references > self._per_minute:
            return (
                f"fair use: this call checks {references:,} references, more than one client "
                f"may check per minute on this server ({self._per_minute:,}); split it"
            )
        checked = client.checked(now)
        if checked + references <= self._per_minute:
            return None
        freed, wait = checked, WINDOW_S
        for when, count in client.window:
            freed -= count
            if freed + references <= self._per_minute:
                wait = when + WINDOW_S - now
                break
        return (
            f"fair use: this client has checked {checked:,.0f} references in the last minute and "
            f"this call adds {references:,}; one client may check {self._per_minute:,} per minute "
            f"on this server; call again in {max(1, math.ceil(wait))} s"
        )

    def _forget_idle(self) -> None:
        if len(self._clients) <= FORGET_ABOVE:
            return
        now = self._clock()
        for identity in [
            i for i, c in self._clients.items() if not c.running and not c.checked(now)
        ]:
            del self._clients[identity]


def client_identity(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """Who is calling over HTTP: token subject, static token, session or address."""
    request = ctx.request
    if request is None:
        return None
    user = request.scope.get("user")
    if isinstance(user, AuthenticatedUser):
        token = user.access_token
        issuer = (token.claims or {}).get("iss", "")
        return f"subject:{issuer}:{token.subject or token.client_id}"
    authorization = request.headers.get("authorization", "")
    if authorization:
        return "token:" + hashlib.sha256(authorization.encode()).hexdigest()[:16]
    session = request.headers.get("mcp-session-id")
    if session:
        return f"session:{session}"
    return f"address:{request.client.host if request.client else ''}"


def _references_asked(tool: str, arguments: dict[str, Any]) -> int:
    """References a call names in its arguments (a bibliography file counts when answered)."""
    listed = arguments.get(_LISTS.get(tool, ""))
    if isinstance(listed, list):
        return len(listed) + len(arguments.get("works") or [])
    bibtex = arguments.get("bibtex")
    if isinstance(bibtex, str):
        return len(_ENTRY.findall(bibtex))
    return 1


def _references_answered(result: HandlerResult) -> int | None:
    """The references an audit's answer reports (its summary's total), if it reports any."""
    if isinstance(result, CallToolResult):
        content = result.structured_content
    else:
        content = result.get("structuredContent") if isinstance(result, dict) else None
    summary = content.get("summary") if isinstance(content, dict) else None
    total = summary.get("total") if isinstance(summary, dict) else None
    return total if isinstance(total, int) and total > 0 else None
