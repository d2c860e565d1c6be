"""Answers that must not wedge or crash a run: 429 to the breaker's probe, odd Retry-After."""

from __future__ import annotations

import httpx
import pytest

from refaudit.config import Settings
from refaudit.errors import RateLimited, SourceUnavailable
from refaudit.sources.client import SourceClient
from refaudit.sources.resilience import BREAKER_COOLDOWN_S, BREAKER_THRESHOLD
from tests.fakes import FakeClock, make_client

pytestmark = pytest.mark.anyio
JSON = {"content-type": "application/json"}


def client_answering(
    answers: list[httpx.Response], clock: FakeClock, retries: int = 0
) -> SourceClient:
    """A Crossref client whose upstream gives `answers` in order, then 200s."""
    queue = list(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        return queue.pop(0) if queue else httpx.Response(200, json={"status": "ok"}, headers=JSON)

    return make_client(
        httpx.MockTransport(handler),
        "crossref",
        settings=Settings(max_retries=retries),
        clock=clock,
    )


async def test_a_429_answer_to_the_half_open_probe_closes_the_circuit_for_the_run() -> None:
    clock = FakeClock()
    outage = [httpx.Response(503, text="down") for _ in range(BREAKER_THRESHOLD)]
    probe_answer = httpx.Response(429, text="slow down", headers={"retry-after": "1"})
    client = client_answering([*outage, probe_answer], clock)
    for n in range(BREAKER_THRESHOLD):
        with pytest.raises(SourceUnavailable):
            await client.get("/works", {"n": n})
    assert client.health.startswith("circuit open")

    clock.now += BREAKER_COOLDOWN_S + 1
    with pytest.raises(RateLimited):
        await client.get("/works", {"n": "probe"})

    # The source answered (it is up, only busy): later calls are sent, not refused.
    assert client.health == "ok"
    assert (await client.get("/works", {"n": "after"})).status == 200


@pytest.mark.parametrize("value", ["soon", "", "Thu, 99 Foo 2024", "-5", "1e400"])
async def test_an_unreadable_retry_after_falls_back_to_backoff(value: str) -> None:
    clock = FakeClock()
    client = client_answering(
        [httpx.Response(429, text="busy", headers={"retry-after": value})], clock, retries=1
    )
    fetched = await client.get("/works")
    assert fetched.status == 200
    assert clock.sleeps and all(0 <= wait <= 120 for wait in clock.sleeps)
