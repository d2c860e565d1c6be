"""SourceClient: retries, Retry-After, breaker, pacing, cache and offline mode, on a fake clock."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Sequence
from pathlib import Path

import certifi
import httpx
import pytest
from fakes import FakeClock, FakeUpstreams, YieldingClock, json_response, make_client

from refaudit.cache import ResponseCache
from refaudit.config import Settings
from refaudit.errors import OfflineMiss, RateLimited, SourceUnavailable, UnexpectedResponse
from refaudit.models import RunStats
from refaudit.sources.client import SourceClient
from refaudit.sources.coalesce import Coalescer
from refaudit.sources.pacing import (
    AGING_INTERVALS,
    ARRIVAL_JITTER_S,
    HEDGE_MIN_S,
    HEDGE_MIN_SAMPLES,
    PACING,
    PACING_HOLD_S,
    PACING_STEP,
    Caller,
    RateLimit,
    request_caller,
    request_priority,
)
from refaudit.sources.resilience import BREAKER_COOLDOWN_S, BREAKER_THRESHOLD, HEDGE_RECHECK_S

pytestmark = pytest.mark.anyio
JSON = {"content-type": "application/json"}


def ok_fake(body: object = None) -> FakeUpstreams:
    fake = FakeUpstreams()
    fake.json("crossref", r"/works.*", body if body is not None else {"status": "ok"})
    return fake


def spaced(rps: float) -> float:
    """Seconds between two requests of a pool of `rps` without a burst, at the usual pace."""
    return max(1 / (rps * PACING), 1 / rps + ARRIVAL_JITTER_S)


async def test_429_is_retried_after_the_announced_wait() -> None:
    fake, clock = ok_fake(), FakeClock()
    fake.fail("crossref", "429", times=1, retry_after=7)
    stats = RunStats()
    client = make_client(fake, "crossref", clock=clock, stats=stats)

    fetched = await client.get("/works")

    assert fetched.status == 200 and fake.count("crossref") == 2
    assert 7 in clock.sleeps
    assert stats.rate_limited["crossref"] == 1


async def test_429_that_never_ends_raises_rate_limited_with_the_wait() -> None:
    fake, clock = ok_fake(), FakeClock()
    fake.fail("crossref", "429", times=99, retry_after=2)
    client = make_client(fake, "crossref", clock=clock, settings=Settings(max_retries=2))

    with pytest.raises(RateLimited) as raised:
        await client.get("/works")

    assert raised.value.retry_after == 2 and fake.count("crossref") == 3


async def test_a_burst_of_5xx_is_retried_until_success() -> None:
    fake = ok_fake()
    fake.fail("crossref", "503", times=2)
    fake.fail("crossref", "500", times=1)
    client = make_client(fake, "crossref")

    assert (await client.get("/works")).status == 200
    assert fake.count("crossref") == 4


async def test_persistent_503_gives_source_unavailable_naming_the_source() -> None:
    fake = ok_fake()
    fake.fail("crossref", "503", times=99)
    client = make_client(fake, "crossref", settings=Settings(max_retries=3))

    with pytest.raises(SourceUnavailable, match=r"^crossref: HTTP 503") as raised:
        await client.get("/works")

    assert raised.value.source == "crossref"
    assert fake.count("crossref") == 4


async def test_timeouts_and_dropped_connections_are_retried_then_reported() -> None:
    fake = ok_fake()
    fake.fail("crossref", "timeout", times=1)
    fake.fail("crossref", "drop", times=1)
    client = make_client(fake, "crossref")
    assert (await client.get("/works")).status == 200

    fake.fail("crossref", "timeout", times=99)
    with pytest.raises(SourceUnavailable, match="timed out"):
        await client.get("/works", {"q": "other"})


async def test_a_truncated_body_is_retried_and_never_cached(tmp_path: Path) -> None:
    fake = FakeUpstreams()
    fake.json(
        "crossref", "/works", {"message": {"items": [{"DOI": f"10.1/{n}"} for n in range(50)]}}
    )
    fake.fail("crossref", "truncate", times=1)
    cache = ResponseCache(tmp_path / "c.sqlite3")
    client = make_client(fake, "crossref", cache=cache)

    fetched = await client.get("/works", {"filter": "doi:10.1/0"})

    assert len(fetched.json()["message"]["items"]) == 50 and fake.count("crossref") == 2
    cached = make_client(fake, "crossref", cache=cache)
    assert (await cached.get("/works", {"filter": "doi:10.1/0"})).from_cache
    assert fake.count("crossref") == 2


async def test_a_body_that_never_parses_ends_as_unexpected_response_after_retries() -> None:
    fake = FakeUpstreams()
    garbled = httpx.Response(200, text='{"message": {"items": [', headers=JSON)
    fake.route("crossref", "/works", lambda _r, _m: garbled)
    fake.route("crossref", "/plain", lambda _r, _m: "{not json")
    stats = RunStats()
    client = make_client(fake, "crossref", settings=Settings(max_retries=2), stats=stats)

    with pytest.raises(UnexpectedResponse, match="crossref: malformed answer: invalid JSON"):
        await client.get("/works")
    assert fake.count("crossref") == 3 and stats.failures["crossref"] == 1
    # A body whose content type promises no JSON is only judged when a source parses it.
    with pytest.raises(UnexpectedResponse, match="crossref: invalid JSON"):
        (await client.get("/plain")).json()


async def test_a_garbled_cache_entry_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite3")
    fake = ok_fake({"status": "ok", "message": {"items": []}})
    client = make_client(fake, "crossref", cache=cache)
    await client.get("/works", {"q": "x"})
    [key] = [row[0] for row in cache._db.execute("SELECT key FROM responses")]
    cache.put(key, source="crossref", status=200, text='{"status": "o', headers=JSON, ttl=86400)

    again = await make_client(fake, "crossref", cache=cache).get("/works", {"q": "x"})

    assert not again.from_cache and again.json()["status"] == "ok"
    assert fake.count("crossref") == 2
    assert cache.get(key).text == again.text  # type: ignore[union-attr]


async def test_a_truncated_atom_feed_is_retried() -> None:
    feed = '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry/></feed>'
    fake = FakeUpstreams()
    atom = {"content-type": "application/atom+xml; charset=utf-8"}
    fake.route("arxiv", "/api/query", lambda _r, _m: httpx.Response(200, text=feed, headers=atom))
    fake.fail("arxiv", "truncate", times=1)

    fetched = await make_client(fake, "arxiv").get("/api/query", {"id_list": "1706.03762"})

    assert fetched.text == feed and fake.count("arxiv") == 2


async def test_unexpected_status_is_an_unexpected_response_not_a_retry() -> None:
    fake = FakeUpstreams()
    fake.json("crossref", "/works", {"message": "bad filter"}, status=400)
    with pytest.raises(UnexpectedResponse, match="HTTP 400"):
        await make_client(fake, "crossref").get("/works")
    assert fake.count("crossref") == 1


async def test_breaker_opens_after_repeated_failures_and_half_opens_after_cooldown() -> None:
    fake, clock = ok_fake(), FakeClock()
    client = make_client(fake, "crossref", clock=clock, settings=Settings(max_retries=0))
    fake.fail("crossref", "503", times=BREAKER_THRESHOLD)
    for n in range(BREAKER_THRESHOLD):
        with pytest.raises(SourceUnavailable):
            await client.get("/works", {"n": n})
    sent = fake.count("crossref")

    with pytest.raises(SourceUnavailable, match="circuit open"):
        await client.get("/works", {"n": "blocked"})
    assert fake.count("crossref") == sent
    assert client.health.startswith("circuit open")

    clock.now += BREAKER_COOLDOWN_S + 1
    assert (await client.get("/works", {"n": "probe"})).status == 200
    assert client.health == "ok"


async def test_an_open_breaker_stops_requests_already_waiting_or_retrying() -> None:
    """A dead source costs a few requests, not every queued call's every retry."""
    fake, clock = ok_fake(), FakeClock()
    fake.fail("crossref", "drop", times=10_000)
    client = make_client(
        fake,
        "crossref",
        clock=clock,
        settings=Settings(max_retries=4),
        limits={"default": RateLimit(rps=1, burst=1, concurrency=3)},
    )

    outcomes = await asyncio.gather(
        *(client.get("/works", {"n": n}) for n in range(30)), return_exceptions=True
    )

    assert all(isinstance(outcome, SourceUnavailable) for outcome in outcomes)
    assert fake.count("crossref") <= 3 * BREAKER_THRESHOLD * 5
    assert sum("circuit open" in str(outcome) for outcome in outcomes) >= 20


async def test_half_open_sends_one_probe_while_other_calls_fail_fast() -> None:
    fake, clock = ok_fake(), FakeClock()
    fake.fail("crossref", "drop", times=10_000)
    client = make_client(fake, "crossref", clock=clock, settings=Settings(max_retries=4))
    for n in range(BREAKER_THRESHOLD):
        with pytest.raises(SourceUnavailable):
            await client.get("/works", {"n": n})
    clock.now += BREAKER_COOLDOWN_S + 1
    sent = fake.count("crossref")

    outcomes = await asyncio.gather(
        *(client.get("/works", {"n": f"later{n}"}) for n in range(10)), return_exceptions=True
    )

    assert fake.count("crossref") == sent + 1
    assert all(isinstance(outcome, SourceUnavailable) for outcome in outcomes)
    assert client.health.startswith("circuit open")


async def test_requests_are_spaced_by_the_rate_limit() -> None:
    fake, clock = ok_fake(), FakeClock()
    client = make_client(
        fake, "crossref", clock=clock, limits={"default": RateLimit(rps=2, burst=1)}
    )
    start = clock.now
    for n in range(5):
        await client.get("/works", {"n": n})
    assert fake.count("crossref") == 5
    # Four gaps of 0.5 s, paced a little under the published rate.
    assert clock.now - start == pytest.approx(4 * spaced(2))


async def _burst_of_three(cache: ResponseCache, first: int) -> float:
    """Send three requests through a fresh client (Crossref's list pool: 3/s, burst 3)
    on `cache`; the seconds its pacing made them wait."""
    clock = FakeClock()
    client = make_client(
        ok_fake(), "crossref", clock=clock, cache=cache, limits={"default": RateLimit(3, 3)}
    )
    for n in range(first, first + 3):
        await client.get("/works", {"query.bibliographic": f"title {n}"})
    await client.aclose()
    return sum(clock.sleeps)


async def test_a_run_right_after_another_starts_from_the_tokens_it_left(tmp_path: Path) -> None:
    """The server still counts the last run's requests: a run starting half a second
    later has only the tokens refilled since, not a full burst that would draw a 429."""
    wall = FakeClock(start=1_700_000_000.0)
    cache = ResponseCache(tmp_path / "responses.sqlite3", clock=wall)

    assert await _burst_of_three(cache, 0) == 0
    wall.now += 0.5
    waited = await _burst_of_three(cache, 3)
    # 1.5 tokens came back in half a second; the other 1.5 take another half second.
    assert waited == pytest.approx((3 - 0.5 * 3 * PACING) / (3 * PACING), abs=0.01)
    wall.now += 10
    assert await _burst_of_three(cache, 6) == 0, "a bucket left alone refills"


class Upstream(httpx.AsyncBaseTransport):
    """Answers after `latencies` seconds of fake time (one per request, then the last),
    yielding meanwhile so that other calls run; notes when each request arrived."""

    def __init__(
        self,
        clock: FakeClock,
        latencies: list[float],
        replies: Sequence[httpx.Response] = (),
        wire_delays: Sequence[float] = (),
        writing: Sequence[float] = (),
    ) -> None:
        self.clock, self.latencies, self.replies = clock, latencies, list(replies)
        self.wire_delays, self.writing = list(wire_delays), list(writing)
        self.arrivals: list[tuple[float, str]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        trace = request.extensions["trace"]
        # A connection to open, or a busy event loop: the request leaves this much later.
        self.clock.now += self.wire_delays.pop(0) if self.wire_delays else 0.0
        await trace("http11.send_request_headers.started", {})
        # Its writing held up: the server has it, and counts it, only once it is written.
        self.clock.now += self.writing.pop(0) if self.writing else 0.0
        await trace("http11.send_request_body.complete", {})
        self.arrivals.append((self.clock.now, request.url.params.get("n", "")))
        latency = self.latencies[min(len(self.arrivals), len(self.latencies)) - 1]
        for _ in range(5):
            await asyncio.sleep(0)
        self.clock.now += latency
        if self.replies:
            return self.replies.pop(0)
        return httpx.Response(200, json={}, headers=JSON)


async def test_calls_that_waited_for_a_slot_still_arrive_at_the_rate() -> None:
    """One slow answer (8 s) at one request in flight must not bunch up the next ones."""
    clock = FakeClock()
    upstream = Upstream(clock, [8.0, 0.3])
    limits = {"default": RateLimit(rps=1, burst=1, concurrency=1)}
    client = make_client(upstream, "semanticscholar", clock=clock, limits=limits)

    await asyncio.gather(*(client.get("/paper/search", {"n": n}) for n in range(4)))

    times = [t for t, _ in upstream.arrivals]
    assert min(b - a for a, b in itertools.pairwise(times)) >= 1.0


def _one_request_a_second(source: str) -> tuple[Upstream, SourceClient]:
    """A client of `source` limited to one request a second (no burst), and its upstream
    answering each request in 0.1 s on a clock that lets every waiting call run."""
    clock = YieldingClock()
    upstream = Upstream(clock, [0.1])
    limits = {"default": RateLimit(rps=1, burst=1)}
    return upstream, make_client(upstream, source, clock=clock, limits=limits)


async def test_the_pool_sends_queued_calls_in_priority_order() -> None:
    upstream, client = _one_request_a_second("crossref")

    async def call(n: str, priority: float) -> None:
        request_priority.set(priority)
        await client.get("/works", {"n": n})

    await asyncio.gather(call("first", 10), call("search", 10), call("lookup", 0))

    assert [n for _, n in upstream.arrivals] == ["first", "lookup", "search"]


async def test_a_short_call_is_not_queued_behind_a_long_calls_requests() -> None:
    """One MCP client's burst of searches does not all go before other clients' calls."""
    upstream, client = _one_request_a_second("crossref")
    long_call, short_call, other_call = Caller(), Caller(), Caller()

    async def call(n: str, caller: Caller) -> None:
        request_caller.set(caller)
        await client.get("/works", {"n": n})

    burst = [call(f"a{i}", long_call) for i in range(5)]
    await asyncio.gather(*burst, call("b0", short_call), call("c0", other_call))
    # a0 leaves the queue at once; then the calls served least go first.
    assert [n for _, n in upstream.arrivals] == ["a0", "b0", "c0", "a1", "a2", "a3", "a4"]


async def test_a_callers_look_ups_do_not_all_go_before_another_callers_search() -> None:
    """Priority orders each call's own requests; between calls, the one served least goes."""
    upstream, client = _one_request_a_second("semanticscholar")
    agent_a, agent_b = Caller(), Caller()

    async def call(n: str, caller: Caller, priority: float) -> None:
        request_caller.set(caller)
        request_priority.set(priority)
        await client.get("/paper/search", {"n": n})

    await asyncio.gather(
        *(call(f"a-lookup{i}", agent_a, 0) for i in range(4)),
        call("a-search", agent_a, 10),
        call("b-search", agent_b, 10),
        call("b-lookup", agent_b, 0),
    )

    assert [n for _, n in upstream.arrivals] == [
        "a-lookup0",
        "b-lookup",
        "a-lookup1",
        "b-search",
        "a-lookup2",
        "a-lookup3",
        "a-search",
    ]


class Session:
    """An MCP client as the pools count it: any object that stands for it."""


async def test_between_fresh_calls_the_client_served_least_goes_first() -> None:
    """A session that fell behind is not last again at every pool it reaches."""
    upstream, client = _one_request_a_second("crossref")
    ahead, behind = Session(), Session()

    async def call(n: str, session: Session) -> None:
        request_caller.set(Caller(session))
        await client.get("/works", {"n": n})

    await asyncio.gather(*(call(f"ahead{i}", ahead) for i in range(2)))
    await asyncio.gather(
        call("ahead-again", ahead), call("behind-first", behind), call("other", Session())
    )

    # Three fresh calls queue together: the session served twice already goes last.
    assert [n for _, n in upstream.arrivals][2:] == ["behind-first", "other", "ahead-again"]


async def test_a_long_calls_request_waits_its_turn_but_is_never_starved() -> None:
    """A request ranks one place better per AGING_INTERVALS intervals it has waited."""
    clock = FakeClock()
    limits = {"default": RateLimit(rps=1, burst=1, concurrency=1)}
    client = make_client(FakeUpstreams(), "semanticscholar", clock=clock, limits=limits)
    pool = client._pools["default"]

    async def turn(caller: Caller) -> bool:
        request_caller.set(caller)
        return await pool.enter(clock.sleep, lambda: False)

    def answered() -> None:
        pool.sent_late()
        pool.leave(sent=True)

    long_call = Caller()
    for _ in range(3):  # the long call has had three requests served
        assert await turn(long_call)
        answered()
    assert await turn(Caller())  # a slot taken: the calls below wait for it
    places = AGING_INTERVALS / PACING
    waiting = asyncio.ensure_future(turn(long_call))
    await asyncio.sleep(0)
    clock.now += 2 * places  # waited two places' worth: one place still behind a fresh call
    fresh = asyncio.ensure_future(turn(Caller()))
    await asyncio.sleep(0)
    answered()
    await asyncio.wait([waiting, fresh], return_when=asyncio.FIRST_COMPLETED)
    assert fresh.done() and not waiting.done()
    clock.now += 2 * places
    later = asyncio.ensure_future(turn(Caller()))
    await asyncio.sleep(0)
    answered()
    await asyncio.wait([waiting, later], return_when=asyncio.FIRST_COMPLETED)

    assert waiting.done() and not later.done()
    answered()
    assert await later


async def test_bibliographies_served_in_turn_do_not_all_rank_ahead_of_a_fresh_call() -> None:
    """Twenty calls queue five searches each at once; each is served in its turn, so
    none is starved: a call arriving a minute later goes next, not after all twenty."""
    upstream, client = _one_request_a_second("semanticscholar")
    long_calls = [Caller() for _ in range(20)]

    async def call(n: str, caller: Caller) -> None:
        request_caller.set(caller)
        await client.get("/paper/search", {"n": n})

    async def fresh() -> None:
        while len(upstream.arrivals) < 60:
            await asyncio.sleep(0)
        await call("fresh", Caller())

    searches = [call(f"{c}-{i}", caller) for c, caller in enumerate(long_calls) for i in range(5)]
    await asyncio.gather(*searches, fresh())

    names = [n for _, n in upstream.arrivals]
    assert names.index("fresh") == 60


async def test_a_pool_answered_429_keeps_a_slower_pace_while_429s_are_recent() -> None:
    """What bunched arrivals up (a loaded host) lasts: the pace comes back after a quiet hold."""
    fake, clock = ok_fake(), FakeClock()
    fake.fail("crossref", "429", times=1, retry_after=0)
    client = make_client(
        fake, "crossref", clock=clock, limits={"default": RateLimit(rps=1, burst=1)}
    )

    async def gaps(calls: int) -> list[float]:
        spent = []
        for _ in range(calls):
            start = clock.now
            await client.get("/works", {"n": clock.now})
            spent.append(clock.now - start)
        return spent

    await client.get("/works", {"n": "refused"})
    slowed = await gaps(100)
    clock.now += PACING_HOLD_S
    back = await gaps(3)

    assert slowed == pytest.approx([1 / (PACING * PACING_STEP)] * 100)
    assert back[1:] == pytest.approx([spaced(1)] * 2)


async def test_after_a_429_the_pool_waits_what_retry_after_says_and_no_longer() -> None:
    """Semantic Scholar's 1 request/s pool: a 429 costs the announced second, not two."""
    clock = FakeClock()
    too_many = httpx.Response(429, text="Too Many Requests", headers={"Retry-After": "1"})
    upstream = Upstream(clock, [0.0], [too_many])
    limits = {"default": RateLimit(rps=1, burst=1)}
    client = make_client(upstream, "semanticscholar", clock=clock, limits=limits)

    await client.get("/paper/search", {"n": "a"})
    await client.get("/paper/search", {"n": "b"})

    start, retry, after = (t - 1000.0 for t, _ in upstream.arrivals)
    # One token's time at the slowed pace (which is longer than Retry-After's second).
    assert retry - start == pytest.approx(1 / (PACING * PACING_STEP))
    assert after - retry == pytest.approx(1 / (PACING * PACING_STEP))


async def test_the_next_token_counts_from_when_a_late_request_left() -> None:
    clock = FakeClock()
    upstream = Upstream(clock, [0.0], wire_delays=[0.3])
    client = make_client(
        upstream, "semanticscholar", clock=clock, limits={"default": RateLimit(rps=1, burst=1)}
    )

    await client.get("/paper/search", {"n": "late"})
    await client.get("/paper/search", {"n": "next"})

    (late, _), (following, _) = upstream.arrivals
    assert following - late == pytest.approx(spaced(1))


async def test_a_pool_without_a_burst_spaces_arrivals_beyond_the_published_interval() -> None:
    """Semantic Scholar's one request a second, no burst: the server counts arrivals, so
    the next request waits from when the one before was written out, and leaves room for
    the jitter of its arrival, whatever delayed the writing."""
    clock = FakeClock()
    upstream = Upstream(clock, [0.3], writing=[0.0, 0.2, 0.0, 0.05, 0.0])
    client = make_client(
        upstream, "semanticscholar", clock=clock, limits={"default": RateLimit(rps=1, burst=1)}
    )

    for n in range(5):
        await client.get("/paper/search", {"n": n})

    times = [t for t, _ in upstream.arrivals]
    assert min(b - a for a, b in itertools.pairwise(times)) == pytest.approx(1.0 + ARRIVAL_JITTER_S)


async def test_a_pace_kept_of_its_own_accord_leaves_no_arrival_margin_until_a_429() -> None:
    """dblp publishes no interval: refaudit's one request a second is its own, and a request
    arriving a few milliseconds early is refused by nobody. Once the server answers 429 it
    counts arrivals after all, and the margin stays once the pace has come back."""
    clock = FakeClock()
    too_many = httpx.Response(429, text="Too Many Requests", headers={"Retry-After": "0"})
    answers = [httpx.Response(200, json={})] * 4 + [too_many]
    upstream = Upstream(clock, [0.2], answers)
    limits = {"default": RateLimit(rps=1, burst=1, enforced=False)}
    client = make_client(upstream, "dblp", clock=clock, limits=limits)

    for n in range(4):
        await client.get("/search/publ/api", {"q": n})
    await client.get("/search/publ/api", {"q": "refused"})
    clock.now += PACING_HOLD_S
    for n in range(3):
        await client.get("/search/publ/api", {"q": f"later {n}"})

    times = [t for t, _ in upstream.arrivals]
    assert [b - a for a, b in itertools.pairwise(times[:4])] == pytest.approx([1 / PACING] * 3)
    assert [b - a for a, b in itertools.pairwise(times[-2:])] == pytest.approx([spaced(1)])
    assert spaced(1) > 1 / PACING


async def test_a_pool_with_a_burst_keeps_its_pace_close_to_the_published_rate() -> None:
    """The margin is for pools without a token to spare: a burst absorbs the jitter."""
    fake, clock = ok_fake(), FakeClock()
    client = make_client(
        fake, "crossref", clock=clock, limits={"default": RateLimit(rps=2, burst=2)}
    )
    for n in range(12):
        await client.get("/works", {"n": n})
    # The first two leave at once; the ten after them one paced interval apart each.
    assert sum(clock.sleeps) == pytest.approx(10 * 0.5 / PACING)


async def test_a_slow_connection_does_not_leave_the_pool_in_debt() -> None:
    """3 s to the wire at 2 requests/s: the next call waits one interval, not the 3 s again."""
    clock = FakeClock()
    upstream = Upstream(clock, [0.0], wire_delays=[3.0])
    client = make_client(
        upstream, "crossref", clock=clock, limits={"default": RateLimit(rps=2, burst=1)}
    )

    for n in range(3):
        await client.get("/works", {"n": n})

    times = [t for t, _ in upstream.arrivals]
    assert [b - a for a, b in itertools.pairwise(times)] == pytest.approx([spaced(2)] * 2)


class Connecting(Upstream):
    """The first `together` requests open their connections at once: all of them leave
    `delay` seconds of fake time after the last one was handed over, as on a new run."""

    def __init__(self, clock: FakeClock, together: int, delay: float) -> None:
        super().__init__(clock, [0.0])
        self.together, self.delay = together, delay
        self.handed: list[asyncio.Event] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if len(self.handed) < self.together:
            self.handed.append(asyncio.Event())
            if len(self.handed) == self.together:
                self.clock.now += self.delay
                for each in self.handed:
                    each.set()
            await self.handed[-1].wait()
        return await super().handle_async_request(request)


async def test_a_burst_that_connects_slowly_does_not_earn_tokens_meanwhile() -> None:
    """Crossref's list pool, 3 at once: the fourth waits a whole interval from their arrival."""
    clock = FakeClock()
    upstream = Connecting(clock, together=3, delay=0.3)
    limits = {"default": RateLimit(rps=3, burst=3, concurrency=0)}
    client = make_client(upstream, "crossref", clock=clock, limits=limits)

    async def fourth() -> None:
        while len(upstream.arrivals) < 3:
            await asyncio.sleep(0)
        await client.get("/works", {"n": 3})

    await asyncio.gather(*(client.get("/works", {"n": n}) for n in range(3)), fourth())

    times = [t for t, _ in upstream.arrivals]
    assert times[:3] == pytest.approx([1000.3] * 3)
    assert times[3] - times[0] == pytest.approx(1 / (3 * PACING))


async def test_identical_requests_in_flight_together_are_sent_once(tmp_path: Path) -> None:
    """Two references citing the same work search it at the same moment: one request."""
    clock = FakeClock()
    upstream = Upstream(clock, [0.5])
    cache = ResponseCache(tmp_path / "c.sqlite3")
    client = make_client(upstream, "openalex", clock=clock, cache=cache)

    answers = await asyncio.gather(*(client.get("/works", {"search": "gan"}) for _ in range(3)))

    assert len(upstream.arrivals) == 1
    assert [a.status for a in answers] == [200, 200, 200]


async def test_named_pools_pace_independently() -> None:
    fake, clock = ok_fake(), FakeClock()
    limits = {"default": RateLimit(rps=100, burst=1), "list": RateLimit(rps=1, burst=1)}
    client = make_client(fake, "crossref", clock=clock, limits=limits)
    for n in range(3):
        await client.get("/works", {"n": n}, pool="list")
    assert clock.now - 1000.0 == pytest.approx(2 * spaced(1))


async def _four_requests_announced_one_a_second(limit: RateLimit) -> float:
    """Seconds four Crossref requests take when every answer announces one a second."""
    fake, clock = FakeUpstreams(), FakeClock()
    headers = {"x-rate-limit-limit": "1", "x-rate-limit-interval": "1s"}
    fake.route("crossref", "/works", lambda _r, _m: json_response({}, headers=headers))
    client = make_client(fake, "crossref", clock=clock, limits={"default": limit})
    for n in range(4):
        await client.get("/works", {"n": n})
    return clock.now - 1000.0


async def test_lower_limit_announced_in_headers_is_adopted() -> None:
    elapsed = await _four_requests_announced_one_a_second(RateLimit(rps=50, burst=1))
    assert elapsed == pytest.approx(3 * spaced(1), abs=0.1)


async def test_a_lower_count_announced_per_interval_also_lowers_the_burst() -> None:
    """One request a second announced: the two tokens left of a burst of three go too."""
    elapsed = await _four_requests_announced_one_a_second(RateLimit(rps=3, burst=3))
    assert elapsed == pytest.approx(3 * spaced(1))


async def test_secrets_stay_out_of_the_cache_key(tmp_path: Path) -> None:
    fake = ok_fake()
    cache = ResponseCache(tmp_path / "c.sqlite3")
    client = make_client(fake, "crossref", cache=cache)

    await client.get("/works", {"q": "x", "mailto": "me@example.org", "api_key": "SEKRIT"})
    again = await client.get(
        "/works", {"q": "x", "mailto": "other@example.org", "api_key": "OTHER"}
    )

    assert again.from_cache and fake.count("crossref") == 1
    keys = [row[0] for row in cache._db.execute("SELECT key FROM responses")]
    assert keys and not any("SEKRIT" in k or "example.org" in k for k in keys)


async def test_warm_rerun_sends_zero_requests(tmp_path: Path) -> None:
    fake = ok_fake()
    stats = RunStats()
    first = make_client(fake, "crossref", cache=ResponseCache(tmp_path / "c.sqlite3"))
    await first.get("/works", {"q": "a"})
    await first.get("/works/10.1000/missing")  # a 404 is cached too (negative TTL)
    sent = fake.count("crossref")

    second = make_client(fake, "crossref", cache=ResponseCache(tmp_path / "c.sqlite3"), stats=stats)
    await second.get("/works", {"q": "a"})
    await second.get("/works/10.1000/missing")

    assert fake.count("crossref") == sent
    assert stats.cache_hits["crossref"] == 2 and not stats.requests


async def test_offline_mode_answers_from_cache_or_raises_offline_miss(tmp_path: Path) -> None:
    fake = ok_fake()
    cache = ResponseCache(tmp_path / "c.sqlite3")
    await make_client(fake, "crossref", cache=cache).get("/works", {"q": "cached"})

    offline = make_client(fake, "crossref", cache=cache, settings=Settings(offline=True))
    assert (await offline.get("/works", {"q": "cached"})).from_cache
    with pytest.raises(OfflineMiss, match="crossref"):
        await offline.get("/works", {"q": "never seen"})
    assert fake.count("crossref") == 1


async def test_cache_disabled_sends_every_request(tmp_path: Path) -> None:
    fake = ok_fake()
    cache = ResponseCache(tmp_path / "c.sqlite3")
    client = make_client(fake, "crossref", cache=cache, settings=Settings(use_cache=False))
    await client.get("/works")
    await client.get("/works")
    assert fake.count("crossref") == 2


async def test_unrouted_request_fails_loudly() -> None:
    client = make_client(FakeUpstreams(), "crossref")
    with pytest.raises(AssertionError, match="no fake route"):
        await client.get("/nowhere")


async def test_keys_sent_as_parameters_never_reach_logs_or_urls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = ok_fake()
    caplog.set_level(logging.DEBUG)
    client = make_client(fake, "crossref")

    fetched = await client.get("/works", {"q": "x", "api_key": "SEKRIT-123", "mailto": "me@x.org"})

    assert fake.requests[0].url.params["api_key"] == "SEKRIT-123"
    assert "HTTP Request" in caplog.text
    assert "SEKRIT" not in caplog.text and "me@x.org" not in caplog.text
    assert "SEKRIT" not in fetched.url and "api_key=***" in fetched.url


async def test_in_flight_cap_holds_and_a_lower_announced_cap_is_adopted() -> None:
    in_flight, peaks = 0, []
    announced = {"x-concurrency-limit": "2", "x-rate-limit-limit": "50"}

    async def slow(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight
        in_flight += 1
        peaks.append(in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return json_response({"status": "ok"}, headers=announced)

    client = SourceClient(
        "crossref",
        "https://api.crossref.org",
        settings=Settings(),
        stats=RunStats(),
        limits={"default": RateLimit(rps=1000, burst=1000, concurrency=5)},
        transport=httpx.MockTransport(slow),
    )
    await asyncio.gather(*(client.get("/works", {"n": n}) for n in range(5)))
    assert max(peaks) == 5  # nothing announced yet: the configured cap of 5

    peaks.clear()
    await asyncio.gather(*(client.get("/works", {"n": n}) for n in range(5, 15)))
    assert max(peaks) == 2


def _client_over(
    handler: object, clock: FakeClock, source: str = "crossref", limit: RateLimit | None = None
) -> SourceClient:
    """A client whose every request goes to `handler` (a function of the request)."""
    settings = Settings(max_retries=4)
    return SourceClient(
        source,
        settings.base_urls[source],
        settings=settings,
        stats=RunStats(),
        limits={"default": limit or RateLimit(rps=1000, burst=1000)},
        transport=httpx.MockTransport(handler),  # type: ignore[arg-type]
        clock=clock,
        sleep=clock.sleep,
    )


def _unresolvable(request: httpx.Request) -> httpx.Response:
    import socket

    raise httpx.ConnectError("[Errno -2] Name or service not known", request=request) from (
        socket.gaierror(-2, "Name or service not known")
    )


async def test_a_host_that_does_not_resolve_opens_the_circuit_on_the_first_try() -> None:
    """No network: one request per source, no backoff, and the reason names the host."""
    clock = FakeClock()
    client = _client_over(_unresolvable, clock)
    outcomes = await asyncio.gather(
        *(client.get("/works", {"n": n}) for n in range(5)), return_exceptions=True
    )
    assert [str(o) for o in outcomes] == [
        "crossref: name resolution failed for api.crossref.org"
    ] * 5
    assert clock.sleeps == [], "nothing to wait for"
    assert client.health == "circuit open: name resolution failed for api.crossref.org"


async def test_a_source_that_answered_before_retries_a_failed_connection() -> None:
    fake, clock = ok_fake(), FakeClock()
    answers = iter([None, "fail", None])

    def flaky(request: httpx.Request) -> httpx.Response:
        if next(answers) == "fail":
            return _unresolvable(request)
        return fake.handler(request)

    client = _client_over(flaky, clock)
    assert (await client.get("/works", {"n": 1})).status == 200
    assert (await client.get("/works", {"n": 2})).status == 200, "retried after one failure"
    assert client.health == "ok"


async def test_a_circuit_opening_releases_calls_queued_for_a_rate_limit_token() -> None:
    """arXiv allows one request per 3 s: a dead arXiv must not cost 3 s per queued call."""
    clock = FakeClock()
    client = _client_over(
        _unresolvable, clock, "arxiv", RateLimit(rps=1 / 3, burst=1, concurrency=1)
    )
    outcomes = await asyncio.gather(
        *(client.get("/query", {"n": n}) for n in range(10)), return_exceptions=True
    )
    assert all(isinstance(o, SourceUnavailable) for o in outcomes)
    assert sum(clock.sleeps) < 1.0


async def test_a_retry_keeps_its_place_in_the_queue() -> None:
    """Answered 429, a call waits as told, then goes before the calls queued behind it."""
    clock = YieldingClock()
    refused = httpx.Response(429, text="slow down", headers={"retry-after": "0"})
    upstream = Upstream(clock, [0.1], replies=[refused])
    limits = {"default": RateLimit(rps=1, burst=1, concurrency=1)}
    client = make_client(upstream, "semanticscholar", clock=clock, limits=limits)

    await asyncio.gather(*(client.get("/paper/search", {"n": n}) for n in "ABC"))

    assert [n for _, n in upstream.arrivals] == ["A", "A", "B", "C"]


class Stalling(httpx.AsyncBaseTransport):
    """Answers after a few turns, except the first request for a `stalled` n: never."""

    def __init__(self, stalled: set[str]) -> None:
        self.stalled = stalled
        self.sent: list[str] = []
        self.dropped: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        n = request.url.params.get("n", "")
        self.sent.append(n)
        if n in self.stalled:
            self.stalled.discard(n)
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.dropped.append(n)
                raise
        for _ in range(5):  # a round trip: other calls run meanwhile
            await asyncio.sleep(0)
        return httpx.Response(200, json={"n": n, "copy": self.sent.count(n)}, headers=JSON)


class Held(httpx.AsyncBaseTransport):
    """Answers at once, or, once `hold` is set, when the test sets `release`."""

    def __init__(self) -> None:
        self.hold = False
        self.release = asyncio.Event()
        self.sent: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        n = request.url.params.get("n", "")
        self.sent.append(n)
        if self.hold:
            await self.release.wait()
        return httpx.Response(200, json={"n": n}, headers=JSON)


class Frozen(FakeClock):
    """Once `frozen`, no time passes while a call naps for a token (a longer wait still ends)."""

    frozen = False

    async def sleep(self, seconds: float) -> None:
        if self.frozen and seconds < HEDGE_MIN_S:
            self.sleeps.append(seconds)
            await asyncio.Event().wait()
        await super().sleep(seconds)


class Still(FakeClock):
    """A fake clock on which no time passes while a call sleeps: a sleep never ends."""

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.Event().wait()


async def warm_up(client: SourceClient, answers: int = HEDGE_MIN_SAMPLES) -> None:
    for n in range(answers):
        await client.get("/paper/search", {"n": f"warm{n}"})


async def test_an_overdue_answer_is_asked_again_and_the_first_usable_answer_wins() -> None:
    wire, clock, stats = Stalling({"slow"}), FakeClock(), RunStats()
    client = make_client(wire, "semanticscholar", clock=clock, stats=stats, hedging=True)
    await warm_up(client)

    fetched = await client.get("/paper/search", {"n": "slow"})

    assert fetched.json() == {"n": "slow", "copy": 2}
    assert clock.sleeps[-1] == HEDGE_MIN_S  # answers here take no time: the least wait
    assert stats.requests["semanticscholar"] == HEDGE_MIN_SAMPLES + 2  # the copy counts
    # The server still works on the first request: it keeps its slot until it answers.
    assert client._pools["default"]._in_flight == 1 and not wire.dropped
    await client.aclose()
    assert wire.dropped == ["slow"] and client._pools["default"]._in_flight == 0


async def test_a_copy_still_waiting_for_a_token_when_the_answer_comes_is_not_sent() -> None:
    wire, clock = Held(), Frozen()
    limits = {"default": RateLimit(rps=0.1, burst=1, concurrency=2)}
    client = make_client(wire, "semanticscholar", clock=clock, limits=limits, hedging=True)
    await warm_up(client)
    clock.now += 60  # a full bucket: the slow request leaves at once
    wire.hold, clock.frozen = True, True
    call = asyncio.ensure_future(client.get("/paper/search", {"n": "slow"}))
    while not client._pools["default"]._queue:  # overdue: the copy waits for the next token
        await asyncio.sleep(0)
    wire.release.set()

    assert (await call).json() == {"n": "slow"}
    assert wire.sent.count("slow") == 1


async def test_an_overdue_answer_is_not_asked_again_while_other_calls_wait_their_turn() -> None:
    wire, clock = Held(), FakeClock()
    limits = {"default": RateLimit(rps=1000, burst=1000, concurrency=1)}
    client = make_client(wire, "semanticscholar", clock=clock, limits=limits, hedging=True)
    await warm_up(client)
    wire.hold = True
    slow = asyncio.ensure_future(client.get("/paper/search", {"n": "slow"}))
    queued = asyncio.ensure_future(client.get("/paper/search", {"n": "queued"}))
    while len(clock.sleeps) < 4:  # overdue, then looked at again: the pool is never idle
        await asyncio.sleep(0)

    assert wire.sent[-1] == "slow" and clock.sleeps[1:4] == [HEDGE_RECHECK_S] * 3
    wire.release.set()
    await asyncio.gather(slow, queued)
    assert wire.sent.count("slow") == 1 and wire.sent[-1] == "queued"


async def test_an_answer_in_time_is_not_asked_again() -> None:
    wire, clock, stats = Stalling(set()), Still(), RunStats()
    client = make_client(wire, "semanticscholar", clock=clock, stats=stats, hedging=True)
    await warm_up(client)

    fetched = await client.get("/paper/search", {"n": "quick"})

    assert fetched.json() == {"n": "quick", "copy": 1}
    # The answer came while the watch waited for it to be overdue: nothing more was sent.
    assert wire.sent.count("quick") == 1 and clock.sleeps[-1] == HEDGE_MIN_S


async def test_no_answer_is_overdue_before_the_pool_has_seen_enough_of_them() -> None:
    wire, clock = Stalling({"slow"}), FakeClock()
    client = make_client(wire, "semanticscholar", clock=clock, hedging=True)
    await warm_up(client, HEDGE_MIN_SAMPLES - 1)
    slow = asyncio.ensure_future(client.get("/paper/search", {"n": "slow"}))
    for _ in range(50):
        await asyncio.sleep(0)

    assert wire.sent.count("slow") == 1 and not clock.sleeps
    slow.cancel()


def test_every_client_shares_one_tls_context_until_the_ca_setting_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def context_of(name: str) -> object:
        settings = Settings()
        client = SourceClient(
            name, settings.base_urls[name], settings=settings, stats=RunStats(), limits={}
        )
        return client._http._transport._pool._ssl_context  # type: ignore[attr-defined]

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    first, second = context_of("crossref"), context_of("openalex")
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())

    assert first is second and context_of("crossref") is not first


async def test_a_shared_request_goes_at_the_turn_of_its_call_served_least() -> None:
    """A batch that a long call opened and a fresh call joined waits the fresh call's turn,
    not the long call's; and it counts as served for both."""
    upstream, client = _one_request_a_second("openalex")
    long_call, other = Caller(), Caller()

    async def send(batch: list[str]) -> list[str]:
        await client.get("/works", {"n": "+".join(batch)})
        return batch

    coalescer: Coalescer[str, str] = Coalescer(
        send, lambda batch: True, lambda: 0.5, client.now, client.pause
    )

    async def call(n: str, caller: Caller, *, shared: bool = False) -> None:
        request_caller.set(caller)
        await (coalescer.ask(n) if shared else client.get("/works", {"n": n}))

    await asyncio.gather(*(call(f"long{i}", long_call) for i in range(3)))
    await call("other0", other)
    await asyncio.gather(
        call("other1", other),
        call("long-again", long_call),
        call("long-shared", long_call, shared=True),
        call("fresh-shared", Caller(), shared=True),
    )

    assert [n for _, n in upstream.arrivals][4:] == [
        "long-shared+fresh-shared",
        "other1",
        "long-again",
    ]
