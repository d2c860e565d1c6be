"""SourceClient: retries, Retry-After, breaker, pacing, cache and offline mode, on a fake clock."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import FakeClock, FakeUpstreams, json_response, make_client

from refaudit.cache import ResponseCache
from refaudit.config import Settings
from refaudit.errors import OfflineMiss, RateLimited, SourceUnavailable, UnexpectedResponse
from refaudit.models import RunStats
from refaudit.sources.client import BREAKER_COOLDOWN_S, PACING, RateLimit

pytestmark = pytest.mark.anyio


def ok_fake(body: object = None) -> FakeUpstreams:
    fake = FakeUpstreams()
    fake.json("crossref", r"/works.*", body if body is not None else {"status": "ok"})
    return fake


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


async def test_malformed_and_truncated_json_are_unexpected_responses() -> None:
    fake = FakeUpstreams()
    fake.route("crossref", "/bad", lambda _r, _m: "{not json")
    fake.json("crossref", "/cut", {"message": {"items": list(range(50))}})
    fake.fail("crossref", "truncate", times=1)
    client = make_client(fake, "crossref")

    with pytest.raises(UnexpectedResponse, match="crossref: invalid JSON"):
        (await client.get("/cut")).json()
    with pytest.raises(UnexpectedResponse, match="invalid JSON"):
        (await client.get("/bad")).json()


async def test_unexpected_status_is_an_unexpected_response_not_a_retry() -> None:
    fake = FakeUpstreams()
    fake.json("crossref", "/works", {"message": "bad filter"}, status=400)
    with pytest.raises(UnexpectedResponse, match="HTTP 400"):
        await make_client(fake, "crossref").get("/works")
    assert fake.count("crossref") == 1


async def test_breaker_opens_after_repeated_failures_and_half_opens_after_cooldown() -> None:
    fake, clock = ok_fake(), FakeClock()
    client = make_client(fake, "crossref", clock=clock, settings=Settings(max_retries=0))
    fake.fail("crossref", "503", times=3)
    for n in range(3):
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
    assert clock.now - start == pytest.approx(2.0 / PACING)


async def test_named_pools_pace_independently() -> None:
    fake, clock = ok_fake(), FakeClock()
    limits = {"default": RateLimit(rps=100, burst=1), "list": RateLimit(rps=1, burst=1)}
    client = make_client(fake, "crossref", clock=clock, limits=limits)
    for n in range(3):
        await client.get("/works", {"n": n}, pool="list")
    assert clock.now - 1000.0 == pytest.approx(2.0 / PACING)


async def test_lower_limit_announced_in_headers_is_adopted() -> None:
    fake, clock = FakeUpstreams(), FakeClock()
    headers = {"x-rate-limit-limit": "1", "x-rate-limit-interval": "1s"}
    fake.route("crossref", "/works", lambda _r, _m: json_response({}, headers=headers))
    client = make_client(
        fake, "crossref", clock=clock, limits={"default": RateLimit(rps=50, burst=1)}
    )
    for n in range(4):
        await client.get("/works", {"n": n})
    assert clock.now - 1000.0 == pytest.approx(3.0 / PACING, abs=0.1)


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
