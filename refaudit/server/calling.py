"""Running a tool's call: the server's state, the shared source clients, worker threads.

A tool is a thin layer; what every one of them does the same way is here: reach
the `ServerState`, run the pipeline call on the server's shared source clients,
add what it asked of the sources to their health, keep blocking work off the
event loop, and turn refaudit's errors into the `ToolError` the calling model reads.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from refaudit.errors import RefauditError
from refaudit.models import RunStats, SourceStatus
from refaudit.server.state import ServerState
from refaudit.sources import sharing

T = TypeVar("T")


def server_state(ctx: Context) -> ServerState:
    """The state the server's lifespan yielded (settings, shared sources, health)."""
    state = ctx.request_context.lifespan_context
    if not isinstance(state, ServerState):
        raise ToolError("the server was started without refaudit's lifespan")
    return state


async def pipeline(state: ServerState, call: Callable[[], Awaitable[T]]) -> T:
    """Run a pipeline call on the shared source clients, turning refaudit's errors into
    the CLI's message."""
    try:
        if state.sources is None:
            return await call()
        with sharing(state.sources):
            return await call()
    except RefauditError as exc:
        raise ToolError(_message(exc)) from exc


async def counted(
    state: ServerState,
    call: Callable[..., Awaitable[T]],
    subject: object,
    *,
    statuses: Callable[[T], list[Mapping[str, SourceStatus]]] = lambda _: [],
    **options: Any,
) -> T:
    """Run `call(subject, settings, **options)`, a library call that asks the sources, on
    the server's settings and transport, adding its counts and each source's state
    (`statuses` of the answer) to the server's source health."""
    stats = RunStats()
    transport = state.transport
    answer = await pipeline(
        state,
        lambda: call(subject, state.settings, transport=transport, stats=stats, **options),
    )
    state.record_statuses(statuses(answer))
    state.record_stats(stats)
    return answer


async def in_thread(function: Callable[[], T]) -> T:
    """Run blocking work (parsing, rendering, reading the snapshot) off the event loop."""
    try:
        return await anyio.to_thread.run_sync(function)
    except RefauditError as exc:
        raise ToolError(_message(exc)) from exc


def _message(exc: RefauditError) -> str:
    return f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message
