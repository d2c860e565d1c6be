"""SourceClient: the one place refaudit talks HTTP to an upstream.

Each source gets its own client, which owns everything a polite, robust caller
needs: a rate-limit pool per published limit (`pacing`), retries with
exponential backoff and jitter that honour `Retry-After`, a circuit breaker and
hedging (`resilience`), the persistent cache, offline mode, keys kept out of
logs, caches and other hosts (`redaction`), and the translation of httpx errors
into `SourceError`s. Source modules only build requests (`request`) and read the
answers (`response.Fetched`); `connection` holds the TLS context and User-Agent.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from refaudit.cache import ResponseCache
from refaudit.config import Settings
from refaudit.errors import (
    OfflineMiss,
    RateLimited,
    SourceError,
    SourceUnavailable,
    UnexpectedResponse,
)
from refaudit.models import RunStats
from refaudit.sources.connection import tls_context, user_agent
from refaudit.sources.pacing import (
    MAX_RETRY_AFTER_S,
    Pool,
    RateLimit,
    Wire,
    request_priority,
    request_unwanted,
    shared_pacer,
)
from refaudit.sources.redaction import redact, without_secrets
from refaudit.sources.request import (
    Check,
    Outgoing,
    Params,
    RequestOptions,
    cache_key,
    query_pairs,
)
from refaudit.sources.resilience import (
    Breaker,
    CircuitOpen,
    Hedging,
    Unreachable,
    unreachable_reason,
)
from refaudit.sources.response import (
    KEPT_HEADERS,
    RETRY_STATUSES,
    Fetched,
    Malformed,
    excerpt,
    retryable_status,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

log = logging.getLogger(__name__)


class Gate(Protocol):
    """Admission for a key-gated source (`quota.Budget`): may refuse to send, reads answers."""

    def check(self, url: str) -> object: ...

    def admit(self, url: str) -> None: ...

    def answered(self, fetched: Fetched) -> None: ...


#: The stats of the run a long-lived client is working for (set by `open_sources` when it
#: hands out shared clients), so each run still counts its own requests and cache hits.
RUN_STATS: ContextVar[RunStats | None] = ContextVar("refaudit_run_stats", default=None)


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
        binary: bool = False,
    ) -> None:
        self.name = name
        #: bodies are bytes (an archive), kept byte for byte as Latin-1 text (`Fetched.content`)
        self._binary = binary
        self.gate = gate
        # A key's quota is not spent twice on one answer: gated sources never hedge.
        self._hedging = Hedging(name, sleep, enabled=hedging and gate is None)
        self.base_url = base_url.rstrip("/")
        self._settings = settings
        self._stats = stats
        self._cache = cache
        self._clock = clock
        self._sleep = sleep
        self._pools = {pool: Pool(limit, clock) for pool, limit in limits.items()}
        for pool_name, pool in self._pools.items():
            left = cache.pool_tokens(name, pool_name) if cache is not None else None
            if left is not None:
                pool.resume(*left)
        self._breaker = Breaker(name, clock)
        self._answered = False
        #: requests on their way, by cache key: an identical one waits for the answer
        self._sending: dict[str, asyncio.Event] = {}
        self._http = httpx.AsyncClient(
            transport=transport,
            verify=tls_context(),
            timeout=httpx.Timeout(settings.timeout, connect=min(10.0, settings.timeout)),
            headers={"User-Agent": user_agent(settings), **(default_headers or {})},
            follow_redirects=True,
            event_hooks={"request": [self._keep_keys_home]},
        )
        self._host = httpx.URL(self.base_url).host

    async def aclose(self) -> None:
        """Close the connections; a pool that sent requests leaves its tokens to the next run."""
        await self._hedging.aclose()
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

    def idle(self, pool: str) -> bool:
        """No call waits for `pool`'s turn and a slot is free: a request would leave now."""
        return self._pool(pool).idle()

    def waiting_first(self) -> int:
        """Calls waiting at priority 0 or lower (identifier look-ups first), in all its pools."""
        return sum(pool.waiting_first() for pool in self._pools.values())

    def now(self) -> float:
        """The client's clock (the one its pools pace by)."""
        return self._clock()

    async def pause(self, seconds: float) -> None:
        """Sleep as the client's pools do (a test's fake clock advances instead)."""
        await self._sleep(seconds)

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
        self, path: str, params: Params = None, **options: Unpack[RequestOptions]
    ) -> Fetched:
        return await self._request("GET", path, params, None, **options)

    async def post(
        self, path: str, json_body: Any, params: Params = None, **options: Unpack[RequestOptions]
    ) -> Fetched:
        return await self._request("POST", path, params, json_body, **options)

    async def _request(
        self,
        method: str,
        path: str,
        params: Params,
        json_body: Any,
        *,
        headers: Mapping[str, str] | None = None,
        ttl: str = "lookup",
        accept: Sequence[int] = (200, 404),
        check: Check | None = None,
        cache: bool = True,
        pool: str = "default",
        literal: str = "",
    ) -> Fetched:
        url = self.base_url + path
        pairs = query_pairs(params)
        body = json.dumps(json_body, sort_keys=True) if json_body is not None else None
        key = cache_key(method, url, pairs, body)
        use_cache = cache and self._settings.use_cache and self._cache is not None
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
            outgoing = Outgoing(method, url, pairs, json_body, headers, literal)
            fetched = await self._send_with_retries(outgoing, accept, check, self._pool(pool))
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

    def cached(self, path: str, params: Params = None) -> Fetched | None:
        """The cached answer to a GET, or None: nothing is sent either way."""
        if not (self._settings.use_cache or self._settings.offline):
            return None
        url = self.base_url + path
        return self._cached(cache_key("GET", url, query_pairs(params), None), url)

    def remember(self, path: str, params: Params, text: str, *, ttl: str = "lookup") -> None:
        """Keep `text` as the answer to a GET that was not sent itself: its part of the
        answer to a batched request, so a later run asks its own question from the cache."""
        if not self._settings.use_cache or self._cache is None:
            return
        secrets = self._settings.api_keys.values()
        self._cache.put(
            cache_key("GET", self.base_url + path, query_pairs(params), None),
            source=self.name,
            status=200,
            text=without_secrets(text, secrets),
            headers={},
            ttl=self._settings.ttl_days.get(ttl, 1.0) * 86400,
        )

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
        self, outgoing: Outgoing, accept: Sequence[int], check: Check | None, pool: Pool
    ) -> Fetched:
        url = outgoing.url
        probe = self._breaker.check(url)
        # The half-open probe asks once: a source that is still down reopens the circuit.
        attempts = 1 if probe else self._settings.max_retries + 1
        place = pool.place()
        last_error: SourceError | None = None
        for attempt in range(attempts):
            if attempt:
                # Calls that fail together open the circuit for the ones still retrying.
                self._breaker.check(url)
            try:
                if self.gate is not None:
                    self.gate.check(url)  # refused at once: no wait for a rate-limit token
                send = functools.partial(self._send_once, outgoing, pool, probe, place)
                fetched = await (send() if probe else self._hedging.send(send, pool, _usable))
                if self.gate is not None:
                    self.gate.answered(fetched)
                if fetched.status in RETRY_STATUSES:
                    raise retryable_status(self.name, fetched)
                pool.recover()
                if fetched.status not in accept:
                    self._breaker.close()  # it answered: the source is up
                    raise UnexpectedResponse(
                        self.name, f"HTTP {fetched.status}: {excerpt(fetched.text)}", url=url
                    )
                problem = fetched.malformed()
                if problem is not None:
                    raise Malformed(self.name, f"malformed answer: {problem}", url=fetched.url)
                self._breaker.close()
                if check is not None:
                    check(fetched)
                return fetched
            except CircuitOpen:
                raise
            except Unreachable as exc:
                last_error = exc
                wait = _backoff(attempt)
                self._breaker.record_failure(exc)
                if not self._answered:
                    self._breaker.open_unreachable()
                    break
            except RateLimited as exc:
                self._tally("rate_limited")
                last_error = exc
                if probe:
                    # A 429 is an answer: the source is up, only busy. Close the circuit
                    # (the pools are paused below) instead of leaving it probing forever.
                    self._breaker.close()
                wait = exc.retry_after if exc.retry_after is not None else _backoff(attempt)
                if wait > MAX_RETRY_AFTER_S:
                    self._breaker.record_failure(exc)
                    break
                pool.slow_down()
                for each in self._pools.values():
                    each.penalise(wait)
            except (SourceUnavailable, Malformed) as exc:
                last_error = exc
                wait = _backoff(attempt)
                self._breaker.record_failure(exc)
            if attempt + 1 < attempts:
                await self._sleep(wait)
        assert last_error is not None
        self._tally("failures")
        raise last_error

    async def _send_once(
        self,
        outgoing: Outgoing,
        pool: Pool,
        probe: bool = False,
        place: int | None = None,
        left: asyncio.Event | None = None,
        unwanted: Callable[[], bool] | None = None,
    ) -> Fetched:
        url = outgoing.url
        abandoned = request_unwanted.get()

        def unasked() -> bool:
            return any(check is not None and check() for check in (unwanted, abandoned))

        def stops() -> bool:
            return self._breaker.stops(probe) or unasked()

        if not await pool.enter(self._sleep, stops, request_priority.get(), place):
            if unasked():
                # A hedge whose first request answered meanwhile, or a batch whose
                # callers have all given up: nobody wants this request any more.
                raise asyncio.CancelledError
            raise self._breaker.open_error(url)
        wire = Wire(pool)
        try:
            pacer = shared_pacer.get()
            if pacer is not None:
                await pacer(self.name, pool.limit.rps, pool.limit.burst)
            if self._breaker.stops(probe):
                # The circuit opened while this call waited for its turn.
                raise self._breaker.open_error(url)
            if self.gate is not None:
                # Asked at the last moment: a quota spent while this call queued stops it.
                self.gate.admit(url)
            self._tally("requests")
            if left is not None:
                left.set()
            sent_at = self._clock()
            target, params = outgoing.target()
            response = await self._http.request(
                outgoing.method,
                target,
                params=params,
                json=outgoing.json_body,
                headers=outgoing.headers,
                extensions={"trace": wire},
            )
            text = response.content.decode("latin-1") if self._binary else response.text
            pool.answered_in(self._clock() - sent_at)
        except httpx.TimeoutException as exc:
            raise SourceUnavailable(
                self.name, f"timed out ({type(exc).__name__})", url=url
            ) from exc
        except httpx.ConnectError as exc:
            host = httpx.URL(url).host
            reason = unreachable_reason(exc, host)
            if reason is not None:
                raise Unreachable(self.name, reason, url=url) from exc
            raise SourceUnavailable(
                self.name, f"connection failed: {exc or type(exc).__name__}", url=url
            ) from exc
        except (httpx.TransportError, httpx.DecodingError) as exc:
            raise SourceUnavailable(
                self.name, f"connection failed: {exc or type(exc).__name__}", url=url
            ) from exc
        finally:
            wire.close()
        self._answered = True
        kept = {k.lower(): v for k, v in response.headers.items() if k.lower() in KEPT_HEADERS}
        self._adopt_announced_limits(kept, pool)
        return Fetched(
            response.status_code, text, redact(str(response.url)), kept, source=self.name
        )

    def _adopt_announced_limits(self, headers: dict[str, str], pool: Pool) -> None:
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

    def _pool(self, name: str) -> Pool:
        return self._pools.get(name) or self._pools["default"]


def _backoff(attempt: int) -> float:
    return min(30.0, 0.5 * 2**attempt) * (0.5 + random.random() / 2)


def _usable(fetched: Fetched) -> bool:
    """An answer a hedge may return: not one the client would retry."""
    return fetched.status not in RETRY_STATUSES
