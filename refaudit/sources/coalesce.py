"""Calls that arrive close together, answered by one request.

A search engine whose query language has OR (OpenAlex's `search`) answers many
references' title searches in one request. They do not arrive together: each
reference reaches its search when its own look-ups and earlier searches answer.
A `Coalescer` holds the first call of a batch for a short while (a few of the
pool's intervals, so it costs no more than waiting in the pool's queue would),
adds every call that arrives meanwhile, and sends the batch when that time is up
or when the next call would no longer fit one request. It holds nothing back when
holding back gains nothing or costs most:
- a call after a quiet spell (no other call within the linger, but for calls sent
  `at_once`) goes at once: calls come one at a time (a single citation checked), and
  the next may never come;
- a call sent ahead of its turn (`request_priority` below 0, a search that feeds an
  idle slow pool) goes at once, taking the calls already waiting with it.

A passenger (`ride`) is a query worth asking but not worth a request of its own: it
waits for the next batch sent with room for it, however long that takes, and goes on
its own only when its caller can wait no longer (`release`).

Where concurrent audits share a source (the MCP server), their calls may share a
batch; its request takes the turn in the pool of the call among them served least,
and counts as served for each (`Caller.together`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from refaudit.sources.pacing import Caller, request_caller, request_priority, request_unwanted

if TYPE_CHECKING:
    from refaudit.sources.client import SourceClient

Q = TypeVar("Q")
A = TypeVar("A")

#: How long the first call of a batch waits for others, in the client's slowest pool's
#: intervals: no longer than it could wait in that pool's queue.
LINGER_INTERVALS = 5


@dataclass
class _Batch(Generic[Q, A]):
    queries: list[Q] = field(default_factory=list)
    waiting: list[asyncio.Future[A]] = field(default_factory=list)
    #: the best turn (lowest `request_priority`) among the calls it holds
    priority: float = float("inf")
    #: the calls it holds, as the pools count them (`request_caller`)
    callers: list[Caller | None] = field(default_factory=list)


class Coalescer(Generic[Q, A]):
    """Gathers calls into batches; `send` answers a batch, one answer per query, in order.

    `fits(queries)` says whether the queries still make one request; `linger()` is
    how long the first call of a batch waits for others.
    """

    def __init__(
        self,
        send: Callable[[list[Q]], Awaitable[Sequence[A]]],
        fits: Callable[[list[Q]], bool],
        linger: Callable[[], float],
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[None]],
    ) -> None:
        self._send = send
        self._fits = fits
        self._linger = linger
        self._clock = clock
        self._sleep = sleep
        self._last_call = float("-inf")
        self._open: _Batch[Q, A] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: passengers no batch has had room for yet, in the order they came
        self._passengers: list[tuple[Q, asyncio.Future[A]]] = []

    async def ask(self, query: Q, *, at_once: bool = False) -> A:
        """The answer to `query`, sent in the batch it joins; a batch it opens `at_once`
        takes only the calls made at this very moment."""
        now, linger = self._clock(), self._linger()
        quiet = at_once or now - self._last_call >= linger
        if not at_once:
            # A call sent at once waited for no other: it is no sign that more are coming.
            self._last_call = now
        batch = self._open
        if batch is not None and not self._fits([*batch.queries, query]):
            self._dispatch(batch, None)
            batch = None
        if batch is None:
            batch = self._open = _Batch()
            # After a quiet spell only the calls of this very moment join it.
            self._dispatch(batch, 0.0 if quiet else linger)
        answer: asyncio.Future[A] = asyncio.get_running_loop().create_future()
        batch.queries.append(query)
        batch.waiting.append(answer)
        batch.priority = min(batch.priority, request_priority.get())
        batch.callers.append(request_caller.get())
        if batch.priority < 0:
            # Sent from this call's own task: no turn of the event loop is lost.
            if self._open is batch:
                self._open = None
            await self._flush(batch, None, sender=answer)
        return await answer

    def ride(self, query: Q) -> asyncio.Future[A]:
        """`query`'s answer, carried by the batch waiting to be sent if it has room, else
        by the next batch sent that has. A passenger never makes a request of its own
        until `release`; cancelling its answer takes it off."""
        answer: asyncio.Future[A] = asyncio.get_running_loop().create_future()
        batch = self._open
        if batch is not None and self._fits([*batch.queries, query]):
            batch.queries.append(query)
            batch.waiting.append(answer)
        else:
            self._passengers.append((query, answer))
        return answer

    def release(self) -> None:
        """Send the passengers no batch has carried yet, now, in as few batches as hold them."""
        while self._passengers:
            batch: _Batch[Q, A] = _Batch(priority=request_priority.get())
            self._board(batch)
            if not self._passengers and not batch.queries:
                return  # their callers no longer want them
            if not batch.queries:
                # Too long for any batch, even alone: it goes by itself anyway.
                query, answer = self._passengers.pop(0)
                batch.queries.append(query)
                batch.waiting.append(answer)
            self._dispatch(batch, None)

    def _board(self, batch: _Batch[Q, A]) -> None:
        """The waiting passengers join `batch`, in turn, while it has room for them."""
        staying: list[tuple[Q, asyncio.Future[A]]] = []
        for query, answer in self._passengers:
            if answer.done():
                continue  # its caller no longer wants it
            if not staying and self._fits([*batch.queries, query]):
                batch.queries.append(query)
                batch.waiting.append(answer)
            else:
                staying.append((query, answer))
        self._passengers = staying

    def _dispatch(self, batch: _Batch[Q, A], wait: float | None) -> None:
        """Send `batch` now (None), or in `wait` seconds, taking the calls that join it
        meanwhile (0: those made at this moment, before the event loop turns)."""
        if wait is None and self._open is batch:
            self._open = None
        task = asyncio.ensure_future(self._flush(batch, wait))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _flush(
        self, batch: _Batch[Q, A], wait: float | None, sender: asyncio.Future[A] | None = None
    ) -> None:
        """Send `batch` (after `wait`, unless it was sent meanwhile) and hand out the answers.

        `sender`: the call whose own task sends it; should that call be cancelled, the
        batch's other calls are sent again without it.
        """
        if wait is not None:
            await (self._sleep(wait) if wait else asyncio.sleep(0))
            if self._open is not batch:
                return  # it was sent at once meanwhile
            self._open = None
        if all(answer.done() for answer in batch.waiting):
            return  # every caller gave up (the audit was abandoned)
        self._board(batch)
        request_priority.set(batch.priority)
        request_caller.set(Caller.together(batch.callers))
        # Reset after: the call's own task may be the one sending.
        abandoned = request_unwanted.set(lambda: all(answer.done() for answer in batch.waiting))
        try:
            answers = await self._send(batch.queries)
        except Exception as exc:
            for answer in batch.waiting:
                if not answer.done():
                    answer.set_exception(exc)
            return
        except BaseException:
            if sender is not None:
                sender.cancel()
                rest: _Batch[Q, A] = _Batch(priority=batch.priority, callers=batch.callers)
                for query, answer in zip(batch.queries, batch.waiting, strict=True):
                    if not answer.done():
                        rest.queries.append(query)
                        rest.waiting.append(answer)
                self._dispatch(rest, None)
            else:
                for answer in batch.waiting:
                    answer.cancel()
            raise
        finally:
            request_unwanted.reset(abandoned)
        for answer, result in zip(batch.waiting, answers, strict=True):
            if not answer.done():
                answer.set_result(result)


def client_coalescer(
    client: SourceClient,
    send: Callable[[list[Q]], Awaitable[Sequence[A]]],
    fits: Callable[[list[Q]], bool],
) -> Coalescer[Q, A]:
    """A `Coalescer` on `client`'s clock whose batches linger `LINGER_INTERVALS` of its
    slowest pool."""
    return Coalescer(
        send, fits, lambda: LINGER_INTERVALS / client.slowest_rps, client.now, client.pause
    )
