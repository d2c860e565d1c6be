"""Coalescer: when calls share a request, and when one goes without waiting for others."""

from __future__ import annotations

import asyncio

import pytest
from fakes import FakeClock

from refaudit.sources.coalesce import Coalescer
from refaudit.sources.pacing import request_priority

pytestmark = pytest.mark.anyio


class Upstream:
    """Answers each batch with its queries upper-cased, and notes every batch it was sent."""

    def __init__(self, most: int = 10) -> None:
        self.batches: list[list[str]] = []
        self.clock = FakeClock()
        self.coalescer: Coalescer[str, str] = Coalescer(
            self.send, lambda batch: len(batch) <= most, lambda: 0.5, self.clock, self.clock.sleep
        )

    async def send(self, batch: list[str]) -> list[str]:
        self.batches.append(list(batch))
        return [query.upper() for query in batch]


async def test_calls_of_one_moment_share_a_request_and_each_gets_its_own_answer() -> None:
    upstream = Upstream()

    answers = await asyncio.gather(*(upstream.coalescer.ask(q) for q in ["a", "b", "c"]))

    assert answers == ["A", "B", "C"]
    assert upstream.batches == [["a", "b", "c"]]
    assert upstream.clock.sleeps == []  # after a quiet spell nothing waits


async def test_a_call_soon_after_another_waits_for_company() -> None:
    upstream = Upstream()
    await upstream.coalescer.ask("first")

    answers = await asyncio.gather(
        upstream.coalescer.ask("second"), upstream.coalescer.ask("third")
    )

    assert answers == ["SECOND", "THIRD"]
    assert upstream.batches == [["first"], ["second", "third"]]
    assert upstream.clock.sleeps == [0.5]


async def test_a_call_after_one_sent_at_once_does_not_wait_for_company() -> None:
    """A call sent at once (its pool was idle) is no sign that more are coming: the call
    after it, the only one of its kind, does not wait half a second for others."""
    upstream = Upstream()
    await upstream.coalescer.ask("looked up alone", at_once=True)

    assert await upstream.coalescer.ask("next") == "NEXT"
    assert upstream.batches == [["looked up alone"], ["next"]]
    assert upstream.clock.sleeps == []


async def test_a_call_that_would_not_fit_sends_the_batch_it_found_and_starts_another() -> None:
    upstream = Upstream(most=2)

    await asyncio.gather(*(upstream.coalescer.ask(q) for q in "abcde"))

    assert upstream.batches == [["a", "b"], ["c", "d"], ["e"]]


async def test_a_call_sent_ahead_of_its_turn_takes_the_waiting_calls_along_at_once() -> None:
    upstream = Upstream()
    await upstream.coalescer.ask("first")
    waiting = asyncio.ensure_future(upstream.coalescer.ask("waiting"))
    await asyncio.sleep(0)

    async def ahead() -> str:
        request_priority.set(-1.0)
        return await upstream.coalescer.ask("ahead")

    assert await ahead() == "AHEAD"
    assert await waiting == "WAITING"
    assert upstream.batches == [["first"], ["waiting", "ahead"]]


async def test_a_failed_request_fails_every_call_in_it() -> None:
    clock = FakeClock()

    async def down(batch: list[str]) -> list[str]:
        raise ConnectionError("down")

    coalescer: Coalescer[str, str] = Coalescer(
        down, lambda batch: True, lambda: 0.5, clock, clock.sleep
    )
    outcomes = await asyncio.gather(coalescer.ask("a"), coalescer.ask("b"), return_exceptions=True)

    assert [type(outcome) for outcome in outcomes] == [ConnectionError, ConnectionError]


async def test_a_passenger_joins_a_batch_about_to_be_sent_but_never_sends_one() -> None:
    upstream = Upstream()
    await upstream.coalescer.ask("first")
    waiting = asyncio.ensure_future(upstream.coalescer.ask("waiting"))
    await asyncio.sleep(0)

    passenger = upstream.coalescer.ride("passenger")

    assert (await waiting, await passenger) == ("WAITING", "PASSENGER")
    assert upstream.batches == [["first"], ["waiting", "passenger"]]


async def test_a_passenger_with_no_batch_open_waits_for_the_next_one_sent() -> None:
    upstream = Upstream()
    await upstream.coalescer.ask("first")
    early = upstream.coalescer.ride("early")
    for _ in range(5):
        await asyncio.sleep(0)
    assert not early.done()  # nothing was sent for it

    assert await upstream.coalescer.ask("later") == "LATER"
    assert await early == "EARLY"
    assert upstream.batches == [["first"], ["later", "early"]]


async def test_passengers_board_while_there_is_room_and_the_rest_wait_for_the_next() -> None:
    upstream = Upstream(most=3)
    passengers = [upstream.coalescer.ride(q) for q in "abcd"]

    await upstream.coalescer.ask("x")

    assert upstream.batches == [["x", "a", "b"]]
    assert [p.done() for p in passengers] == [True, True, False, False]


async def test_released_passengers_go_together_and_those_called_off_stay_behind() -> None:
    upstream = Upstream(most=2)
    passengers = {q: upstream.coalescer.ride(q) for q in "abcd"}
    passengers["b"].cancel()

    upstream.coalescer.release()

    assert [await passengers[q] for q in "acd"] == ["A", "C", "D"]
    assert upstream.batches == [["a", "c"], ["d"]]
    upstream.coalescer.release()  # nobody left waiting: nothing more is sent
    await asyncio.sleep(0)
    assert len(upstream.batches) == 2
