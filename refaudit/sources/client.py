"""SourceClient: the one place refaudit talks HTTP to an upstream.

Each source gets its own client, which owns everything a polite, robust caller
needs: a token-bucket rate limit and a concurrency cap per pool (read back
from response headers where the API sends them), retries with exponential
backoff and jitter that honour `Retry-After`, a circuit breaker, the
persistent cache, offline mode, and the translation of httpx errors into
`SourceError`s. Source modules only build requests and read bodies.
"""

from __future__ import annotations

import asyncio
import collections
import email.utils
import functools
import heapq
import itertools
import json
import logging
import os
import random
import re
import socket
import ssl
import statistics
import time
import xml.etree.ElementTree as ET
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote, quote_plus, urlencode

import certifi
import httpx
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as defused_fromstring

from refaudit.cache import ResponseCache
from refaudit.config import Settings
from refaudit.errors import (
    CIRCUIT_OPEN,
    OfflineMiss,
    RateLimited,
    SourceError,
    SourceUnavailable,
    UnexpectedResponse,
)
from refaudit.models import RunStats
from refaudit.version import installed_version

log = logging.getLogger(__name__)

SECRET_PARAMS = frozenset({"api_key", "apikey", "insttoken", "mailto", "email", "tool", "key"})
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 120.0
# Pace a little under the published rate: network jitter bunches requests up on arrival.
# A pool that is answered 429 anyway slows down by a step (to the slowest pace at most),
# and each answer it then gets back brings it a little nearer the usual pace again.
PACING = 0.97
PACING_STEP = 0.95
PACING_RECOVERY = 0.005
SLOWEST_PACING = 0.8
# Consecutive failed requests (any calls') that open a source's circuit: more than one
# call's retries, so one unlucky call cannot open it, and few enough that a dead source
# stops costing time while dozens of calls wait for their turn.
BREAKER_THRESHOLD = 6
BREAKER_COOLDOWN_S = 60.0
# Longest single sleep while waiting for a rate-limit token.
_NAP_S = 0.25
# Hedging: an answer this many times slower than the pool's median (and at least
# HEDGE_MIN_S) is overdue, and the same request goes out once more through the pool,
# paced and counted like any other; the first usable answer wins. The median is taken
# over the pool's last HEDGE_WINDOW answers, once it has HEDGE_MIN_SAMPLES of them.
HEDGE_FACTOR = 4.0
HEDGE_MIN_S = 2.0
# A hedge goes out only while the pool is idle (nobody queued, a slot free): in a busy
# pool its token would be taken from a waiting call. Until then, look again this often.
HEDGE_RECHECK_S = 0.5
HEDGE_WINDOW = 32
HEDGE_MIN_SAMPLES = 8
#: Set by `refaudit batch --engine ray` in each task: awaited (source, rps, burst) before
#: every request, so all the workers of a cluster share each source's published rate.
shared_pacer: ContextVar[Callable[[str, float, int], Awaitable[None]] | None] = ContextVar(
    "shared_pacer", default=None
)

#: The turn of the calls made in this context in their pool's queue: lower goes first.
#: Evidence gathering puts identifier look-ups (each unlocks many references) ahead of
#: searches, and a reference's later searches ahead of other references' first ones.
request_priority: ContextVar[float] = ContextVar("request_priority", default=0.0)

Params = Mapping[str, Any] | Sequence[tuple[str, Any]] | None


class Gate(Protocol):
    """Admission for a key-gated source (`quota.Budget`): may refuse to send, reads answers."""

    def check(self, url: str) -> object: ...

    def admit(self, url: str) -> None: ...

    def answered(self, fetched: Fetched) -> None: ...


Check = Callable[["Fetched"], None]
#: One try of a request, bound to its call: sets the event it is given when the request
#: leaves, and is not sent once the predicate it is given says so.
_Send = Callable[..., Awaitable["Fetched"]]
#: The stats of the run a long-lived client is working for (set by `open_sources` when it
#: hands out shared clients), so each run still counts its own requests and cache hits.
RUN_STATS: ContextVar[RunStats | None] = ContextVar("refaudit_run_stats", default=None)
_SECRET_VALUE = re.compile(r"(?<=[?&])(" + "|".join(sorted(SECRET_PARAMS)) + r")=[^&\s\"]*")
_UNPARSED: Any = object()


class _CircuitOpen(SourceUnavailable):
    """The source failed repeatedly; calls fail at once until the cooldown ends."""


class _Unreachable(SourceUnavailable):
    """The host's name does not resolve, it refuses connections, or its certificate fails.

    None of these mends itself within a run, so a source that has not answered
    yet opens its circuit on the first one instead of retrying with backoff.
    """


class _Malformed(UnexpectedResponse):
    """A body cut short or garbled in transit: retried like a 5xx, never cached."""


def redact(text: str) -> str:
    """Mask API keys and contact addresses in a URL (or a log line that contains one)."""
    return _SECRET_VALUE.sub(r"\1=***", text)


def without_secrets(text: str, secrets: Iterable[str]) -> str:
    """`text` with every API key (as written, or URL-encoded) replaced by `***`.

    Some APIs echo the request URL in their answers (OpenAlex's `meta`), so a key
    sent as a parameter would otherwise be stored in the cache in clear.
    """
    for secret in secrets:
        if len(secret) >= 4:
            for form in {secret, quote(secret, safe=""), quote_plus(secret)}:
                text = text.replace(form, "***")
    return text


class _RedactSecrets(logging.Filter):
    """httpx logs every request URL at INFO; keys sent as query parameters must not show."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True


logging.getLogger("httpx").addFilter(_RedactSecrets())


@dataclass(frozen=True)
class RateLimit:
    """Requests per second (token bucket), burst size, and in-flight cap (0 = none)."""

    rps: float
    burst: int = 1
    concurrency: int = 0


@dataclass
class Fetched:
    """A response (live or cached) reduced to what source modules need."""

    status: int
    text: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    from_cache: bool = False
    source: str = ""
    _json: Any = field(default=_UNPARSED, init=False, repr=False, compare=False)
    _xml: Any = field(default=_UNPARSED, init=False, repr=False, compare=False)

    def json(self) -> Any:
        if self._json is _UNPARSED:
            try:
                self._json = json.loads(self.text)
            except json.JSONDecodeError as exc:
                raise UnexpectedResponse(
                    self.source, f"invalid JSON ({exc.msg} at {exc.pos})", url=self.url
                ) from exc
        return self._json

    def xml(self) -> ET.Element:
        """The parsed XML body (parsed once: the client checks it before sources read it).

        defusedxml refuses entity expansion and external references, so a hostile
        upstream body cannot blow up memory or read local files.
        """
        if self._xml is _UNPARSED:
            try:
                self._xml = defused_fromstring(self.text)
            except (ET.ParseError, DefusedXmlException) as exc:
                raise UnexpectedResponse(self.source, f"invalid XML ({exc})", url=self.url) from exc
        return self._xml

    def malformed(self) -> str | None:
        """Why a body that its content type says is JSON or XML does not parse, if it does not."""
        kind = self.headers.get("content-type", "").lower()
        try:
            if "json" in kind:
                self.json()
            elif "xml" in kind:
                self.xml()
        except UnexpectedResponse as exc:
            return exc.reason
        return None


@dataclass(order=True)
class _Ticket:
    """A call waiting in a pool's queue, ordered by priority, then by arrival."""

    priority: float
    arrival: int
    #: resolved when the call may look again (it became the head, or a slot freed)
    turn: asyncio.Future[None] | None = field(default=None, compare=False)
    gone: bool = field(default=False, compare=False)


class _Pool:
    """A token bucket, an in-flight cap and a priority queue, on the injected clock and sleep.

    Only the head of the queue takes slots and tokens, so the order calls are sent
    in is their priority order; the others wait without polling until they are head.
    """

    def __init__(self, limit: RateLimit, clock: Callable[[], float]) -> None:
        self.limit = limit
        self.pacing = PACING
        self._clock = clock
        self._tokens = float(limit.burst)
        self._updated = clock()
        self._queue: list[_Ticket] = []
        self._arrivals = itertools.count()
        self._in_flight = 0
        #: calls waiting for their turn: all of them, and those at priority 0 or lower
        self._waiting = 0
        self._waiting_first = 0
        #: tokens taken by requests not yet on the wire (the server has not counted them)
        self._unsent = 0
        self._latencies: collections.deque[float] = collections.deque(maxlen=HEDGE_WINDOW)

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
        self.limit = RateLimit(min(rps or self.limit.rps, self.limit.rps), smaller, lowest)

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
        ticket = _Ticket(priority, self.place() if place is None else place)
        heapq.heappush(self._queue, ticket)
        first = priority <= 0
        self._waiting += 1
        self._waiting_first += first
        try:
            while not give_up():
                if self._queue[0] is not ticket or self._full():
                    ticket.turn = asyncio.get_running_loop().create_future()
                    await ticket.turn
                    continue
                self._refill()
                # Tolerate float rounding: a wait shorter than the clock's resolution would spin.
                if self._tokens >= 1 - 1e-6:
                    self._tokens -= 1
                    self._unsent += 1
                    self._in_flight += 1
                    return True
                # Short naps, so a circuit opening meanwhile releases the queue at once.
                wait = (1 - self._tokens) / (self.limit.rps * self.pacing)
                await sleep(min(wait, _NAP_S))
            return False
        finally:
            ticket.gone = True
            self._waiting -= 1
            self._waiting_first -= first
            while self._queue and self._queue[0].gone:
                heapq.heappop(self._queue)
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
        self._tokens = min(self._tokens, 1.0 - seconds * self.limit.rps * self.pacing)

    def sent_late(self) -> None:
        """The request just left, later than it took its token: count the token from now.

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

    def recover(self) -> None:
        """Answered without a 429: back towards the usual pace, a little at a time."""
        self.pacing = min(PACING, self.pacing + PACING_RECOVERY)

    def _refill(self) -> None:
        now = self._clock()
        refill = (now - self._updated) * self.limit.rps * self.pacing
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
        lowest = 1 - MAX_RETRY_AFTER_S * self.limit.rps * self.pacing
        refill = max(0.0, seconds_ago) * self.limit.rps * self.pacing
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

    def _wake_head(self) -> None:
        if self._queue:
            turn = self._queue[0].turn
            if turn is not None and not turn.done():
                turn.set_result(None)


class _Wire:
    """An httpcore trace hook telling a pool when its request really left."""

    def __init__(self, pool: _Pool) -> None:
        self.pool = pool
        self.sent = False

    async def __call__(self, event: str, _info: dict[str, Any]) -> None:
        if not self.sent and event.endswith("send_request_headers.started"):
            self.sent = True
            self.pool.sent_late()


@dataclass
class _Breaker:
    failures: int = 0
    opened_at: float | None = None
    reason: str = ""
    probing: bool = False
    unreachable: bool = False


class SourceClient:
    """HTTP for one source: rate limits, retries, circuit breaker, cache, offline mode."""

    def __init__(
        self,
        name: str,
        base_url: str,
        *,
        settings: Settings,
        stats: RunStats,
        limits: Mapping[str, RateLimit],
        cache: ResponseCache | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        default_headers: Mapping[str, str] | None = None,
        gate: Gate | None = None,
        hedging: bool = False,
    ) -> None:
        self.name = name
        self.gate = gate
        # A key's quota is not spent twice on one answer: gated sources never hedge.
        self._hedging = hedging and gate is None
        self.base_url = base_url.rstrip("/")
        self._settings = settings
        self._stats = stats
        self._cache = cache
        self._clock = clock
        self._sleep = sleep
        self._pools = {pool: _Pool(limit, clock) for pool, limit in limits.items()}
        for pool_name, pool in self._pools.items():
            left = cache.pool_tokens(name, pool_name) if cache is not None else None
            if left is not None:
                pool.resume(*left)
        self._breaker = _Breaker()
        self._answered = False
        #: requests on their way, by cache key: an identical one waits for the answer
        self._sending: dict[str, asyncio.Event] = {}
        #: requests that lost to their hedge, still holding their slots until answered
        self._unwanted: set[asyncio.Future[Fetched]] = set()
        self._http = httpx.AsyncClient(
            transport=transport,
            verify=_tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")),
            timeout=httpx.Timeout(settings.timeout, connect=min(10.0, settings.timeout)),
            headers={"User-Agent": user_agent(settings), **(default_headers or {})},
            follow_redirects=True,
            event_hooks={"request": [self._keep_keys_home]},
        )
        self._host = httpx.URL(self.base_url).host

    async def aclose(self) -> None:
        """Close the connections; a pool that sent requests leaves its tokens to the next run."""
        for attempt in self._unwanted:
            attempt.cancel()
        await asyncio.gather(*self._unwanted, return_exceptions=True)
        await self._http.aclose()
        if self._cache is not None:
            for pool_name, pool in self._pools.items():
                left = pool.tokens_left()
                if left < pool.limit.burst:
                    self._cache.save_pool_tokens(self.name, pool_name, left)

    async def _keep_keys_home(self, request: httpx.Request) -> None:
        """A redirect to another host does not take the key along.

        httpx drops only `Authorization` on such a redirect; keys travel in headers of
        their own (`x-api-key`, `Crossref-Plus-API-Token`), so any header holding one
        is removed before the request leaves for a host that is not the source's.
        """
        if request.url.host == self._host:
            return
        secrets = [key for key in self._settings.api_keys.values() if key]
        for name, value in list(request.headers.items()):
            if any(secret in value for secret in secrets):
                del request.headers[name]

    def _tally(self, counter: str) -> None:
        """Count one event for this source, in the client's stats and the current run's."""
        run = RUN_STATS.get()
        counted = [self._stats] if run is None or run is self._stats else [self._stats, run]
        for stats in counted:
            tally = getattr(stats, counter)
            tally[self.name] = tally.get(self.name, 0) + 1

    def backlog(self) -> int:
        """Calls this source has waiting for their turn or in flight, in all its pools."""
        return sum(pool.backlog() for pool in self._pools.values())

    def waiting_first(self) -> int:
        """Calls waiting at priority 0 or lower (identifier look-ups first), in all its pools."""
        return sum(pool.waiting_first() for pool in self._pools.values())

    @property
    def slowest_rps(self) -> float:
        """The pace of this source's slowest pool (what bounds a run that uses every pool)."""
        return min(pool.limit.rps for pool in self._pools.values())

    @property
    def health(self) -> str:
        """ "ok", or why the circuit breaker is open."""
        if self._breaker.opened_at is None:
            return "ok"
        return f"circuit open: {self._breaker.reason}"

    async def get(
        self,
        path: str,
        params: Params = None,
        *,
        headers: Mapping[str, str] | None = None,
        ttl: str = "lookup",
        accept: Sequence[int] = (200, 404),
        check: Check | None = None,
        cache: bool = True,
        pool: str = "default",
    ) -> Fetched:
        return await self._request(
            "GET", path, params, None, headers, ttl, accept, check, cache, pool
        )

    async def post(
        self,
        path: str,
        json_body: Any,
        params: Params = None,
        *,
        headers: Mapping[str, str] | None = None,
        ttl: str = "lookup",
        accept: Sequence[int] = (200, 404),
        check: Check | None = None,
        cache: bool = True,
        pool: str = "default",
    ) -> Fetched:
        return await self._request(
            "POST", path, params, json_body, headers, ttl, accept, check, cache, pool
        )

    async def _request(
        self,
        method: str,
        path: str,
        params: Params,
        json_body: Any,
        headers: Mapping[str, str] | None,
        ttl: str,
        accept: Sequence[int],
        check: Check | None,
        use_cache: bool,
        pool: str,
    ) -> Fetched:
        url = self.base_url + path
        pairs = _pairs(params)
        body = json.dumps(json_body, sort_keys=True) if json_body is not None else None
        key = _cache_key(method, url, pairs, body)
        use_cache = use_cache and self._settings.use_cache and self._cache is not None
        while True:
            if use_cache or self._settings.offline:
                hit = self._cached(key, url)
                if hit is not None:
                    return hit
            if self._settings.offline:
                raise OfflineMiss(self.name, "offline and not in the cache", url=url)
            sending = self._sending.get(key) if use_cache else None
            if sending is None:
                break
            # The same request is on its way for another reference: its answer will be in
            # the cache. (If it fails, nothing is cached and this call sends its own.)
            await sending.wait()
        done = asyncio.Event()
        if use_cache:
            self._sending[key] = done
        try:
            fetched = await self._send_with_retries(
                method, url, pairs, json_body, headers, accept, check, self._pool(pool)
            )
            if use_cache:
                band = "negative" if fetched.status == 404 else ttl
                secrets = self._settings.api_keys.values()
                self._cache.put(  # type: ignore[union-attr]
                    key,
                    source=self.name,
                    status=fetched.status,
                    text=without_secrets(fetched.text, secrets),
                    headers={k: without_secrets(v, secrets) for k, v in fetched.headers.items()},
                    ttl=self._settings.ttl_days.get(band, 1.0) * 86400,
                )
        finally:
            if self._sending.get(key) is done:
                del self._sending[key]
            done.set()
        return fetched

    def _cached(self, key: str, url: str) -> Fetched | None:
        """The cached answer, if it is there and whole (a garbled one is a miss, and heals)."""
        cached = self._cache.get(key) if self._cache else None
        if cached is None:
            return None
        hit = Fetched(cached.status, cached.text, url, cached.headers, True, self.name)
        if hit.malformed() is not None:
            return None
        self._tally("cache_hits")
        return hit

    async def _send_with_retries(
        self,
        method: str,
        url: str,
        pairs: list[tuple[str, str]],
        json_body: Any,
        headers: Mapping[str, str] | None,
        accept: Sequence[int],
        check: Check | None,
        pool: _Pool,
    ) -> Fetched:
        probe = self._check_breaker(url)
        # The half-open probe asks once: a source that is still down reopens the circuit.
        attempts = 1 if probe else self._settings.max_retries + 1
        place = pool.place()
        last_error: SourceError | None = None
        for attempt in range(attempts):
            if attempt:
                # Calls that fail together open the circuit for the ones still retrying.
                self._check_breaker(url)
            try:
                if self.gate is not None:
                    self.gate.check(url)  # refused at once: no wait for a rate-limit token
                send = functools.partial(
                    self._send_once, method, url, pairs, json_body, headers, pool, probe, place
                )
                fetched = await (send() if probe else self._hedged(send, pool))
                if self.gate is not None:
                    self.gate.answered(fetched)
                if fetched.status in RETRY_STATUSES:
                    raise _retryable_status(self.name, fetched)
                pool.recover()
                if fetched.status not in accept:
                    self._breaker = _Breaker()  # it answered: the source is up
                    raise UnexpectedResponse(
                        self.name, f"HTTP {fetched.status}: {_excerpt(fetched.text)}", url=url
                    )
                problem = fetched.malformed()
                if problem is not None:
                    raise _Malformed(self.name, f"malformed answer: {problem}", url=fetched.url)
                self._breaker = _Breaker()
                if check is not None:
                    check(fetched)
                return fetched
            except _CircuitOpen:
                raise
            except _Unreachable as exc:
                last_error = exc
                wait = _backoff(attempt)
                self._record_failure(exc)
                if not self._answered:
                    self._breaker.opened_at, self._breaker.unreachable = self._clock(), True
                    break
            except RateLimited as exc:
                self._tally("rate_limited")
                last_error = exc
                if probe:
                    # A 429 is an answer: the source is up, only busy. Close the circuit
                    # (the pools are paused below) instead of leaving it probing forever.
                    self._breaker = _Breaker()
                wait = exc.retry_after if exc.retry_after is not None else _backoff(attempt)
                if wait > MAX_RETRY_AFTER_S:
                    self._record_failure(exc)
                    break
                pool.slow_down()
                for each in self._pools.values():
                    each.penalise(wait)
            except (SourceUnavailable, _Malformed) as exc:
                last_error = exc
                wait = _backoff(attempt)
                self._record_failure(exc)
            if attempt + 1 < attempts:
                await self._sleep(wait)
        assert last_error is not None
        self._tally("failures")
        raise last_error

    async def _hedged(self, send: _Send, pool: _Pool) -> Fetched:
        """`send()`, and once more if its answer is overdue: the first usable answer wins.

        The watch starts when the request leaves, not while it queues. The second
        request goes out only while the pool is idle, so it takes no waiting call's
        turn; it takes its slot and token like any other (so the published rate and
        in-flight cap still hold, and it is counted as a request). The request that
        loses keeps its slot until its answer comes, as the server is still at work
        on it; one still waiting for its turn is simply not sent.
        """
        if not self._hedging:
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
            log.debug("%s: no answer after %.1f s, sending the request again", self.name, overdue)
            tries.append(asyncio.ensure_future(send(left[1], first.done)))
            waiting = set(tries)
            while waiting:
                done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    if task.cancelled() or task.exception() is not None:
                        continue
                    if task.result().status not in RETRY_STATUSES:
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

    def _let_finish(self, attempt: asyncio.Future[Fetched]) -> None:
        """An answer no longer wanted is still awaited (closing the client drops it)."""
        self._unwanted.add(attempt)
        attempt.add_done_callback(self._unwanted.discard)
        attempt.add_done_callback(_outcome_ignored)

    async def _send_once(
        self,
        method: str,
        url: str,
        pairs: list[tuple[str, str]],
        json_body: Any,
        headers: Mapping[str, str] | None,
        pool: _Pool,
        probe: bool = False,
        place: int | None = None,
        left: asyncio.Event | None = None,
        unwanted: Callable[[], bool] | None = None,
    ) -> Fetched:
        def stops() -> bool:
            return self._breaker_stops(probe) or (unwanted is not None and unwanted())

        if not await pool.enter(self._sleep, stops, request_priority.get(), place):
            if unwanted is not None and unwanted():
                raise asyncio.CancelledError  # a hedge whose first request answered meanwhile
            raise self._circuit_open(url)
        wire = _Wire(pool)
        try:
            pacer = shared_pacer.get()
            if pacer is not None:
                await pacer(self.name, pool.limit.rps, pool.limit.burst)
            if self._breaker_stops(probe):
                # The circuit opened while this call waited for its turn.
                raise self._circuit_open(url)
            if self.gate is not None:
                # Asked at the last moment: a quota spent while this call queued stops it.
                self.gate.admit(url)
            self._tally("requests")
            if left is not None:
                left.set()
            sent_at = self._clock()
            response = await self._http.request(
                method,
                url,
                params=tuple(pairs) or None,
                json=json_body,
                headers=headers,
                extensions={"trace": wire},
            )
            text = response.text
            pool.answered_in(self._clock() - sent_at)
        except httpx.TimeoutException as exc:
            raise SourceUnavailable(
                self.name, f"timed out ({type(exc).__name__})", url=url
            ) from exc
        except httpx.ConnectError as exc:
            host = httpx.URL(url).host
            reason = _unreachable_reason(exc, host)
            if reason is not None:
                raise _Unreachable(self.name, reason, url=url) from exc
            raise SourceUnavailable(
                self.name, f"connection failed: {exc or type(exc).__name__}", url=url
            ) from exc
        except (httpx.TransportError, httpx.DecodingError) as exc:
            raise SourceUnavailable(
                self.name, f"connection failed: {exc or type(exc).__name__}", url=url
            ) from exc
        finally:
            pool.leave(sent=wire.sent)
        self._answered = True
        kept = {k.lower(): v for k, v in response.headers.items() if k.lower() in _KEPT_HEADERS}
        self._adopt_announced_limits(kept, pool)
        return Fetched(
            response.status_code, text, redact(str(response.url)), kept, source=self.name
        )

    def _adopt_announced_limits(self, headers: dict[str, str], pool: _Pool) -> None:
        """Crossref announces its pool's rate and in-flight cap on every answer.

        The rate is a count of requests per interval: no more than that count may go
        at once, so it also bounds the burst.
        """
        limit, interval = headers.get("x-rate-limit-limit"), headers.get("x-rate-limit-interval")
        concurrency = headers.get("x-concurrency-limit")
        try:
            rps = float(limit) / float(interval.rstrip("s") or 1) if limit and interval else None
            burst = int(float(limit)) if limit and interval else None
            pool.adopt(rps, int(concurrency) if concurrency else None, burst)
        except (ValueError, ZeroDivisionError):
            log.debug("%s: unreadable rate-limit headers %s", self.name, headers)

    def _breaker_stops(self, probe: bool) -> bool:
        """An open circuit stops every waiting call except the half-open probe."""
        return not probe and self._breaker.opened_at is not None

    def _pool(self, name: str) -> _Pool:
        return self._pools.get(name) or self._pools["default"]

    def _check_breaker(self, url: str) -> bool:
        """Raise while the circuit is open; True when this call is the half-open probe."""
        breaker = self._breaker
        if breaker.opened_at is None:
            return False
        if breaker.probing or self._clock() - breaker.opened_at < BREAKER_COOLDOWN_S:
            raise self._circuit_open(url)
        breaker.probing = True
        return True

    def _circuit_open(self, url: str) -> _CircuitOpen:
        breaker = self._breaker
        reason = breaker.reason if breaker.unreachable else f"{CIRCUIT_OPEN}{breaker.reason}"
        return _CircuitOpen(self.name, reason, url=url)

    def _record_failure(self, error: SourceError) -> None:
        breaker = self._breaker
        breaker.failures += 1
        breaker.reason = error.reason
        if breaker.probing or breaker.failures >= BREAKER_THRESHOLD:
            breaker.opened_at, breaker.probing = self._clock(), False


_KEPT_HEADERS = frozenset(
    {
        "content-type",
        "retry-after",
        "x-rate-limit-limit",
        "x-rate-limit-interval",
        "x-concurrency-limit",
        "x-api-pool",
        "location",
        # the key-gated sources' quota and error headers (never the key they echo)
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
        "x-els-status",
        "x-error-detail-header",
    }
)


@functools.cache
def _tls_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """One TLS context for every client of the process, built as httpx builds its own.

    Loading the CA bundle takes ~60 ms: once per source client it put most of half a
    second before a run's first request. SSL_CERT_FILE, then SSL_CERT_DIR, replaces
    certifi's bundle as in httpx; they are the cache's key, so a changed one is read.
    """
    if cert_file:
        return ssl.create_default_context(cafile=cert_file)
    if cert_dir:
        return ssl.create_default_context(capath=cert_dir)
    return ssl.create_default_context(cafile=certifi.where())


def _outcome_ignored(attempt: asyncio.Future[Fetched]) -> None:
    """Retrieve an unwanted answer's error, so that asyncio does not report it as lost."""
    if not attempt.cancelled():
        attempt.exception()


def user_agent(settings: Settings) -> str:
    """Crossref and OpenAlex route callers with a contact address to their polite pools."""
    contact = f"; mailto:{settings.mailto}" if settings.mailto else ""
    return f"refaudit/{installed_version()} (https://github.com/refaudit/refaudit{contact})"


def _pairs(params: Params) -> list[tuple[str, str]]:
    if params is None:
        return []
    items = params.items() if isinstance(params, Mapping) else params
    return [(str(k), str(v)) for k, v in items if v is not None]


def _cache_key(method: str, url: str, pairs: list[tuple[str, str]], body: str | None) -> str:
    public = sorted((k, v) for k, v in pairs if k not in SECRET_PARAMS)
    return f"{method} {url}?{urlencode(public)} {body or ''}"


def _unreachable_reason(exc: BaseException, host: str) -> str | None:
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


def _backoff(attempt: int) -> float:
    return min(30.0, 0.5 * 2**attempt) * (0.5 + random.random() / 2)


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date); None if unreadable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None  # "soon" and other words: the caller backs off as usual
        seconds = parsed.timestamp() - time.time()
    if seconds != seconds or seconds == float("inf"):
        return None
    return max(0.0, seconds)


def _retryable_status(source: str, fetched: Fetched) -> SourceError:
    if fetched.status == 429:
        return RateLimited(
            source,
            "rate limited (HTTP 429)",
            url=fetched.url,
            retry_after=retry_after_seconds(fetched.headers.get("retry-after")),
        )
    return SourceUnavailable(source, f"HTTP {fetched.status}", url=fetched.url)


def _excerpt(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"
