"""Rate-limit pools: a token bucket, an in-flight cap and a priority queue each.

A source client keeps one `Pool` per limit its API publishes (a polite and a
public pool, a search and a batch endpoint). A pool paces a little under the
published rate, slows down a step when it is answered 429 anyway, tightens its
limits when the server announces lower ones, and times its answers, so that the
client can tell when one is overdue.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
import math
import statistics
import weakref
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

#: The longest Retry-After a run waits out; a longer one fails the call.
MAX_RETRY_AFTER_S = 120.0
# Pace a little under the published rate: network jitter bunches requests up on arrival.
# A pool that is answered 429 anyway slows down by a step (to the slowest pace at most),
# and comes back a step only once PACING_HOLD_S have passed without another 429: what
# bunches arrivals up (a loaded host, a congested path) lasts minutes, so a pool that
# came back within ten answers was refused again a minute later. A 1 request/s pool has
# no burst to absorb jitter: one request that arrives late is one that arrives early.
PACING = 0.97
#: A pool without a burst (one request at a time) whose server counts its published interval
#: leaves at least this much more than that interval between two requests: the server counts
#: each request when it arrives, and with no token to spare, a request that arrives this much
#: sooner after the one before than it was sent (a busy server host, a congested path) is
#: refused. An absolute margin, as that jitter is: 3 % of a 1 request/s interval (30 ms) was
#: seen overrun under load. A pace refaudit keeps of its own accord (`RateLimit.enforced`
#: False: the server publishes no interval and only blocks floods) needs no margin until
#: the server answers 429 after all.
ARRIVAL_JITTER_S = 0.05
PACING_STEP = 0.95
PACING_HOLD_S = 300.0
SLOWEST_PACING = 0.8
# Longest single sleep while waiting for a rate-limit token.
_NAP_S = 0.25
# An answer this many times slower than the pool's median (and at least HEDGE_MIN_S)
# is overdue, and the request is hedged (`resilience.Hedging`). The median is taken
# over the pool's last HEDGE_WINDOW answers, once it has HEDGE_MIN_SAMPLES of them.
HEDGE_FACTOR = 4.0
HEDGE_MIN_S = 2.0
HEDGE_WINDOW = 32
HEDGE_MIN_SAMPLES = 8
#: Set by `refaudit batch --engine ray` in each task: awaited (source, rps, burst) before
#: every request, so all the workers of a cluster share each source's published rate.
shared_pacer: ContextVar[Callable[[str, float, int], Awaitable[None]] | None] = ContextVar(
    "shared_pacer", default=None
)

#: The turn of the calls made in this context among their caller's calls waiting in a
#: pool: lower goes first. Evidence gathering puts identifier look-ups (each unlocks many
#: references) ahead of searches, and a reference's later searches ahead of other
#: references' first ones.
request_priority: ContextVar[float] = ContextVar("request_priority", default=0.0)
# A call waiting in a pool ranks one place better for each AGING_INTERVALS of the pool's
# intervals it has gone without a request served there, so a long call is held back,
# never starved.
AGING_INTERVALS = 10.0


class Caller:
    """One call of a client of the MCP server, as the source pools see it.

    A pool serves first the waiting call it has served the fewest requests so far:
    a DOI check or one citation is not queued behind the hundredth request of
    another client's bibliography. Between calls that have had as much, the one
    whose `client` (any object that stands for it while it is known) has had the
    fewest goes first: a session whose calls fell behind catches up, rather than
    arriving last again at every pool.
    """

    __slots__ = ("__weakref__", "client", "members")

    def __init__(self, client: object = None, members: tuple[Caller, ...] = ()) -> None:
        self.client = client
        #: the calls one shared request is for (`together`); empty for a call of its own
        self.members = members

    @classmethod
    def together(cls, callers: Iterable[Caller | None]) -> Caller | None:
        """The calls one shared request (a coalesced batch) is for: it takes the turn of
        the one served least, as any of them would have, and counts as served for each."""
        distinct = list(dict.fromkeys(c for c in callers if c is not None))
        if len(distinct) < 2:
            return distinct[0] if distinct else None
        return cls(members=tuple(m for c in distinct for m in (c.members or (c,))))


#: The call the requests made in this context are for (None: a run of its own, which
#: has its pools to itself).
request_caller: ContextVar[Caller | None] = ContextVar("request_caller", default=None)

#: Set while a batch of several calls' queries is sent (`coalesce`): True once every one
#: of those calls has given up, so a request still waiting for its turn is not sent for
#: nobody (a retraction screen's ride called off at the end of an audit).
request_unwanted: ContextVar[Callable[[], bool] | None] = ContextVar(
    "request_unwanted", default=None
)


@dataclass(frozen=True)
class RateLimit:
    """Requests per second (token bucket), burst size, and in-flight cap (0 = none)."""

    rps: float
    burst: int = 1
    concurrency: int = 0
    #: the server publishes this limit and refuses what arrives beyond it; False for a
    #: pace refaudit keeps of its own accord where none is published (dblp)
    enforced: bool = True


@dataclass(order=True)
class _Ticket:
    """A request waiting in a pool's queue, ordered among its call's by priority, arrival."""

    priority: float
    arrival: int
    caller: Caller | None = field(compare=False)
    #: when it started waiting (on the pool's clock)
    since: float = field(compare=False)
    #: resolved when the call may look again (it became the head, or a slot freed)
    turn: asyncio.Future[None] | None = field(default=None, compare=False)
    gone: bool = field(default=False, compare=False)


class _FairQueue:
    """Each call's waiting requests in priority order, and the calls by service had.

    The head is the best request of the call served the fewest requests here so
    far, less one for each `AGING_INTERVALS` intervals it has waited since a request
    of it was last served here (or since it began to wait); between equals, that of
    the client served the fewest, then the one that came first. Aging counts from the
    call's last service, not from when each request queued: a bibliography's searches
    all queue at once and are served in turn, and had each gained a place for every
    interval it waited, ten bibliographies sharing a pool would soon all rank ahead
    of a fresh call, though none of them is starved.
    """

    def __init__(self) -> None:
        self._waiting: dict[Caller | None, list[_Ticket]] = {}
        #: when each waiting call was last served here, or began to wait if later
        self._since: dict[Caller | None, float] = {}
        #: requests served here per call and per client, for as long as each is known
        self._served: weakref.WeakKeyDictionary[object, int] = weakref.WeakKeyDictionary()

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def push(self, ticket: _Ticket) -> None:
        if ticket.caller not in self._waiting:
            self._since[ticket.caller] = ticket.since
        heapq.heappush(self._waiting.setdefault(ticket.caller, []), ticket)

    def head(self, now: float, interval: float) -> _Ticket | None:
        """The request to serve next (None: nothing waits)."""
        if len(self._waiting) < 2:
            return next((tickets[0] for tickets in self._waiting.values()), None)

        def rank(item: tuple[Caller | None, list[_Ticket]]) -> tuple[int, int, int]:
            caller, tickets = item
            aged = math.floor((now - self._since[caller]) / (interval * AGING_INTERVALS))
            served, client = min(
                (self._count(call), self._count(call.client if call else None))
                for call in _calls(caller)
            )
            return (served - aged, client, tickets[0].arrival)

        return min(self._waiting.items(), key=rank)[1][0]

    def _count(self, who: object) -> int:
        return self._served.get(who, 0) if who is not None else 0

    def remove(self, ticket: _Ticket, *, served: bool, now: float) -> None:
        """The request leaves the queue: served, or given up."""
        ticket.gone = True
        if served and ticket.caller is not None:
            calls = _calls(ticket.caller)
            for who in dict.fromkeys([*calls, *(c.client for c in calls if c is not None)]):
                if who is not None:
                    self._served[who] = self._served.get(who, 0) + 1
        tickets = self._waiting.get(ticket.caller)
        if tickets is None:
            return
        if served:
            self._since[ticket.caller] = now
        while tickets and tickets[0].gone:
            heapq.heappop(tickets)
        if not tickets:
            del self._waiting[ticket.caller]
            del self._since[ticket.caller]


def _calls(caller: Caller | None) -> tuple[Caller | None, ...]:
    """The calls a request is for: those sharing it, or its own."""
    return caller.members if caller is not None and caller.members else (caller,)


class Pool:
    """A token bucket, an in-flight cap and a fair queue, on the injected clock and sleep.

    Only the head of the queue takes slots and tokens, so the requests are sent in the
    queue's order (the call served least first, each call's requests by priority);
    the others wait without polling until they are head.
    """

    def __init__(self, limit: RateLimit, clock: Callable[[], float]) -> None:
        self.limit = limit
        self.pacing = PACING
        self._clock = clock
        self._tokens = float(limit.burst)
        self._updated = clock()
        self._queue = _FairQueue()
        self._arrivals = itertools.count()
        self._in_flight = 0
        #: calls waiting for their turn: all of them, and those at priority 0 or lower
        self._waiting = 0
        self._waiting_first = 0
        #: tokens taken by requests not yet on the wire (the server has not counted them)
        self._unsent = 0
        self._latencies: collections.deque[float] = collections.deque(maxlen=HEDGE_WINDOW)
        #: when the pace last changed after a 429 (a step back comes PACING_HOLD_S later)
        self._paced_at = clock()
        #: answered 429 in this run: its server counts arrivals, whatever it publishes
        self._refused = False

    def place(self) -> int:
        """A place in the queue, in arrival order: a call keeps it for its retries and hedge."""
        return next(self._arrivals)

    def answered_in(self, seconds: float) -> None:
        """An answer came back `seconds` after its request left."""
        self._latencies.append(seconds)

    def hedge_after(self) -> float | None:
        """Seconds after which an answer is overdue here (None: too few answers seen yet)."""
        if len(self._latencies) < HEDGE_MIN_SAMPLES:
            return None
        return max(HEDGE_MIN_S, HEDGE_FACTOR * statistics.median(self._latencies))

    def adopt(
        self, rps: float | None = None, concurrency: int | None = None, burst: int | None = None
    ) -> None:
        """Tighten the limits when the server announces lower ones (never loosen them).

        A smaller burst also takes back the tokens beyond it: the requests just sent
        count against the new bucket as they did against the old one.
        """
        lowest = self.limit.concurrency
        if concurrency and concurrency > 0 and (not lowest or concurrency < lowest):
            lowest = concurrency
        smaller = min(max(1, burst or self.limit.burst), self.limit.burst)
        self._tokens -= self.limit.burst - smaller
        self.limit = RateLimit(
            min(rps or self.limit.rps, self.limit.rps),
            smaller,
            lowest,
            enforced=self.limit.enforced or rps is not None,
        )

    async def enter(
        self,
        sleep: Callable[[float], Awaitable[None]],
        give_up: Callable[[], bool],
        priority: float = 0.0,
        place: int | None = None,
    ) -> bool:
        """Wait for this call's turn, a free slot and a token (True, holding the slot).

        False as soon as `give_up()` says so. The slot is taken before the token: a
        call that waited for a slot with a token in hand would be sent right after
        the one before it, faster than the rate. A retry or a hedge comes with the
        `place` its call was given, so it does not queue behind the calls made since.
        """
        arrival = self.place() if place is None else place
        ticket = _Ticket(priority, arrival, request_caller.get(), self._clock())
        self._queue.push(ticket)
        first = priority <= 0
        self._waiting += 1
        self._waiting_first += first
        served = False
        try:
            while not give_up():
                if self._head() is not ticket or self._full():
                    # Another request may have become head while this one napped (it waited
                    # long enough to rank first): it is told, as it may be waiting too.
                    self._wake_head()
                    ticket.turn = asyncio.get_running_loop().create_future()
                    await ticket.turn
                    continue
                self._refill()
                # Tolerate float rounding: a wait shorter than the clock's resolution would spin.
                if self._tokens >= 1 - 1e-6:
                    self._tokens -= 1
                    self._unsent += 1
                    self._in_flight += 1
                    served = True
                    return True
                # Short naps, so a circuit opening meanwhile releases the queue at once.
                wait = (1 - self._tokens) / self._rate()
                await sleep(min(wait, _NAP_S))
            return False
        finally:
            self._queue.remove(ticket, served=served, now=self._clock())
            self._waiting -= 1
            self._waiting_first -= first
            self._wake_head()

    def leave(self, *, sent: bool) -> None:
        """The call is answered: its slot is free for the head of the queue.

        A request whose transport never said it left no longer holds back the bucket.
        """
        if not sent:
            self._unsent -= 1
        self._in_flight -= 1
        self._wake_head()

    def penalise(self, seconds: float) -> None:
        """After a 429, stop everyone in this pool for `seconds`, and no longer.

        The next token comes exactly when the server said to retry (Retry-After is
        rounded up to whole seconds already): a second's wait on top would leave a
        1 request/s pool idle for one request in every 429.
        """
        self._refill()
        self._tokens = min(self._tokens, 1.0 - seconds * self._rate())

    def sent_late(self) -> None:
        """The request has just been written out, later than it took its token: count
        the token from now.

        Between the token and the wire the event loop may be busy, or a connection
        opens; the server counts arrivals, so its bucket keeps filling (up to full)
        until the request arrives. The client's bucket holds tokens and the requests
        that took one but are not sent yet, never more than the burst in all: tokens
        that would overfill it while a burst's requests open their connections were
        never the server's, and one taken back when the first of them arrived lets
        the next request out a fraction of an interval early, into a 429. A slow
        connection never leaves the pool in debt either: the server refilled too.
        """
        self._refill()
        self._unsent -= 1

    def slow_down(self) -> None:
        """Answered 429 at this pace: the requests arrive bunched up; pace a step slower."""
        self.pacing = max(SLOWEST_PACING, self.pacing * PACING_STEP)
        self._paced_at = self._clock()
        self._refused = True

    def recover(self) -> None:
        """Answered without a 429: a step back towards the usual pace, once the last
        429 (or the last step back) is PACING_HOLD_S old."""
        if self.pacing < PACING and self._clock() - self._paced_at >= PACING_HOLD_S:
            self.pacing = min(PACING, self.pacing / PACING_STEP)
            self._paced_at = self._clock()

    def _rate(self) -> float:
        """Tokens a second: a little under the published rate and, without a burst where
        the server counts the interval, ARRIVAL_JITTER_S more than it apart at least."""
        rate = self.limit.rps * self.pacing
        if self.limit.burst > 1 or not (self.limit.enforced or self._refused):
            return rate
        return min(rate, 1 / (1 / self.limit.rps + ARRIVAL_JITTER_S))

    def _refill(self) -> None:
        now = self._clock()
        refill = (now - self._updated) * self._rate()
        self._tokens = min(float(self.limit.burst - self._unsent), self._tokens + refill)
        self._updated = now

    def resume(self, tokens: float, seconds_ago: float) -> None:
        """Start from the tokens the last run left this pool, refilled since.

        The server still counts that run's last requests: a new run starting with a
        full bucket right after it would send its first burst into a 429. A clock
        that went back refills nothing. No run leaves a pool lower than the longest
        Retry-After it waits out, so nothing lower is believed.
        """
        self._refill()
        lowest = 1 - MAX_RETRY_AFTER_S * self._rate()
        refill = max(0.0, seconds_ago) * self._rate()
        self._tokens = min(self._tokens, max(lowest, tokens) + refill)

    def tokens_left(self) -> float:
        """Tokens in the bucket now (below zero while a 429's wait lasts)."""
        self._refill()
        return self._tokens

    def backlog(self) -> int:
        """Calls waiting for their turn or in flight."""
        return self._waiting + self._in_flight

    def waiting_first(self) -> int:
        """Calls waiting at priority 0 or lower: identifier look-ups, searches sent ahead."""
        return self._waiting_first

    def idle(self) -> bool:
        """No call waits for its turn and a slot is free: a request now takes from no one."""
        return not self._full() and not self._waiting

    def _full(self) -> bool:
        return bool(self.limit.concurrency) and self._in_flight >= self.limit.concurrency

    def _head(self) -> _Ticket | None:
        return self._queue.head(self._clock(), 1 / self._rate())

    def _wake_head(self) -> None:
        head = self._head()
        if head is not None and head.turn is not None and not head.turn.done():
            head.turn.set_result(None)


class Wire:
    """An httpcore trace hook telling a pool when its request has left, whole.

    The server counts a request when it has arrived, so the pool counts its token
    from when the last byte was written, not from when the first was: a request whose
    writing was held up (a busy event loop, a full socket buffer) would otherwise be
    followed by the next one sooner than the interval, as the server sees them.
    """

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        #: the request began to leave: the server may count it
        self.sent = False
        self._counted = False

    async def __call__(self, event: str, _info: dict[str, Any]) -> None:
        if event.endswith("send_request_headers.started"):
            self.sent = True
        elif event.endswith("send_request_body.complete"):
            self._count()

    def close(self) -> None:
        """Answered or failed: the slot is free (a request cut off while it was being
        written counts from now, as it may have reached the server)."""
        self._count()
        self.pool.leave(sent=self.sent)

    def _count(self) -> None:
        if self.sent and not self._counted:
            self._counted = True
            self.pool.sent_late()
