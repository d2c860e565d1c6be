"""What keeps a failing or slow source from costing a run its time.

The circuit `Breaker` opens after BREAKER_THRESHOLD failed requests in a row
(or at once when the host cannot be reached at all): waiting calls give up
instead of retrying, and after BREAKER_COOLDOWN_S one call probes the source.
`Hedging` sends a request once more when its answer is overdue by the pool's own
measure (`Pool.hedge_after`); the first usable answer wins.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from refaudit.errors import CIRCUIT_OPEN, SourceError, SourceUnavailable
from refaudit.sources.pacing import Pool

log = logging.getLogger(__name__)

T = TypeVar("T")
#: One try of a request, bound to its call: sets the event it is given when the request
#: leaves, and is not sent once the predicate it is given says so.
_Send = Callable[..., Awaitable[T]]

# Consecutive failed requests (any calls') that open a source's circuit: more than one
# call's retries, so one unlucky call cannot open it, and few enough that a dead source
# stops costing time while dozens of calls wait for their turn.
BREAKER_THRESHOLD = 6
BREAKER_COOLDOWN_S = 60.0
# A hedge goes out only while the pool is idle (nobody queued, a slot free): in a busy
# pool its token would be taken from a waiting call. Until then, look again this often.
HEDGE_RECHECK_S = 0.5


class CircuitOpen(SourceUnavailable):
    """The source failed repeatedly; calls fail at once until the cooldown ends."""


class Unreachable(SourceUnavailable):
    """The host's name does not resolve, it refuses connections, or its certificate fails.

    None of these mends itself within a run, so a source that has not answered
    yet opens its circuit on the first one instead of retrying with backoff.
    """


@dataclass
class Breaker:
    """One source's circuit: closed, open since `opened_at`, or half open (`probing`)."""

    source: str
    clock: Callable[[], float]
    failures: int = 0
    opened_at: float | None = None
    reason: str = ""
    probing: bool = False
    unreachable: bool = False

    def close(self) -> None:
        """The source answered: it is up, and its failures are forgotten."""
        self.failures, self.opened_at, self.reason = 0, None, ""
        self.probing = self.unreachable = False

    def open_unreachable(self) -> None:
        """A source that never answered cannot be reached: open at once, no retries."""
        self.opened_at, self.unreachable = self.clock(), True

    def stops(self, probe: bool) -> bool:
        """An open circuit stops every waiting call except the half-open probe."""
        return not probe and self.opened_at is not None

    def check(self, url: str) -> bool:
        """Raise while the circuit is open; True when this call is the half-open probe."""
        if self.opened_at is None:
            return False
        if self.probing or self.clock() - self.opened_at < BREAKER_COOLDOWN_S:
            raise self.open_error(url)
        self.probing = True
        return True

    def open_error(self, url: str) -> CircuitOpen:
        reason = self.reason if self.unreachable else f"{CIRCUIT_OPEN}{self.reason}"
        return CircuitOpen(self.source, reason, url=url)

    def record_failure(self, error: SourceError) -> None:
        self.failures += 1
        self.reason = error.reason
        if self.probing or self.failures >= BREAKER_THRESHOLD:
            self.opened_at, self.probing = self.clock(), False


class Hedging:
    """A source's hedged requests, and the losing ones still being answered."""

    def __init__(
        self, source: str, sleep: Callable[[float], Awaitable[None]], *, enabled: bool
    ) -> None:
        self.source = source
        self.enabled = enabled
        self._sleep = sleep
        #: requests that lost to their hedge, still holding their slots until answered
        self._unwanted: set[asyncio.Future[Any]] = set()

    async def send(self, send: _Send[T], pool: Pool, usable: Callable[[T], bool]) -> T:
        """`send()`, and once more if its answer is overdue: the first usable answer wins.

        The watch starts when the request leaves, not while it queues. The second
        request goes out only while the pool is idle, so it takes no waiting call's
        turn; it takes its slot and token like any other (so the published rate and
        in-flight cap still hold, and it is counted as a request). The request that
        loses keeps its slot until its answer comes, as the server is still at work
        on it; one still waiting for its turn is simply not sent.
        """
        if not self.enabled:
            return await send()
        left = [asyncio.Event(), asyncio.Event()]
        tries = [asyncio.ensure_future(send(left[0]))]
        first = tries[0]
        watches: list[asyncio.Future[Any]] = []
        try:
            watches.append(asyncio.ensure_future(left[0].wait()))
            await asyncio.wait([first, watches[-1]], return_when=asyncio.FIRST_COMPLETED)
            overdue = pool.hedge_after()
            if first.done() or overdue is None:
                return await first
            wait = overdue
            while True:
                watches.append(asyncio.ensure_future(self._sleep(wait)))
                await asyncio.wait([first, watches[-1]], return_when=asyncio.FIRST_COMPLETED)
                if first.done():
                    return await first
                if pool.idle():
                    break
                wait = HEDGE_RECHECK_S
            log.debug("%s: no answer after %.1f s, sending the request again", self.source, overdue)
            tries.append(asyncio.ensure_future(send(left[1], first.done)))
            waiting = set(tries)
            while waiting:
                done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    if task.cancelled() or task.exception() is not None:
                        continue
                    if usable(task.result()):
                        return task.result()
            return await first  # neither answer is usable: the first one's outcome counts
        finally:
            for watch in watches:
                watch.cancel()
            for attempt, sent in zip(tries, left, strict=False):
                if attempt.done():
                    continue
                if sent.is_set():
                    self._let_finish(attempt)
                else:
                    attempt.cancel()

    def _let_finish(self, attempt: asyncio.Future[Any]) -> None:
        """An answer no longer wanted is still awaited (closing the client drops it)."""
        self._unwanted.add(attempt)
        attempt.add_done_callback(self._unwanted.discard)
        attempt.add_done_callback(_outcome_ignored)

    async def aclose(self) -> None:
        """Drop the answers no longer wanted (the client is closing)."""
        for attempt in self._unwanted:
            attempt.cancel()
        await asyncio.gather(*self._unwanted, return_exceptions=True)


def _outcome_ignored(attempt: asyncio.Future[Any]) -> None:
    """Retrieve an unwanted answer's error, so that asyncio does not report it as lost."""
    if not attempt.cancelled():
        attempt.exception()


def unreachable_reason(exc: BaseException, host: str) -> str | None:
    """Why `host` cannot be reached at all, in words, or None for a passing connection error."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, socket.gaierror):
            return f"name resolution failed for {host}"
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"certificate verification failed for {host}"
        if isinstance(cause, ConnectionRefusedError):
            return f"connection refused by {host}"
        cause = cause.__cause__ or cause.__context__
    return None
