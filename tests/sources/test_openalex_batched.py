"""OpenAlex: title searches that arrive together share one boolean-OR request."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakes import FakeUpstreams, Overlap, json_response, make_client, openalex_work

from refaudit.cache import ResponseCache
from refaudit.config import Settings
from refaudit.errors import SourceError
from refaudit.sources.base import SearchQuery
from refaudit.sources.openalex import OpenAlexSource
from refaudit.sources.pacing import RateLimit

pytestmark = pytest.mark.anyio

_STOP = {"a", "an", "and", "for", "in", "is", "of", "on", "the", "to", "with"}

WORKS = [
    openalex_work("W1", "Attention is all you need", year=2017),
    openalex_work("W2", "Deep residual learning for image recognition", year=2016),
    openalex_work("W3", "Deep residual networks for image recognition at scale", year=2019),
    openalex_work("W4", "Generative adversarial networks", year=2014),
    openalex_work("W5", "Long short-term memory", year=1997),
]


def _words(text: str) -> set[str]:
    words = {w.lower() for w in re.findall(r"[^\W_]+", text)}
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words} - _STOP


def openalex_search(works: list[dict[str, Any]]) -> Any:
    """OpenAlex's `search` of one title: its words ANDed (plurals stemmed, stop words
    dropped); meta.count counts every hit. (`FakeUpstreams` answers an OR of titles as
    the union of each title's search, as OpenAlex does.)"""

    def handler(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        wanted = _words(request.url.params["search"])
        hits = [w for w in works if wanted <= _words(w["title"])]
        per_page = int(request.url.params["per_page"])
        return json_response(
            {"meta": {"count": len(hits), "per_page": per_page}, "results": hits[:per_page]}
        )

    return handler


def source_for(fake: FakeUpstreams, cache: ResponseCache | None = None) -> OpenAlexSource:
    settings = Settings()
    return OpenAlexSource(make_client(fake, "openalex", settings=settings, cache=cache), settings)


def titles(works: list[Any]) -> list[list[str]]:
    return [[w.title for w in found] for found in works]


async def test_title_searches_arriving_together_share_one_request() -> None:
    fake = FakeUpstreams()
    fake.route("openalex", r"/works", openalex_search(WORKS))
    openalex = source_for(fake)

    found = await asyncio.gather(
        openalex.search(SearchQuery(title="Attention is all you need", authors=["Vaswani"])),
        openalex.search(SearchQuery(title="Deep residual learning for image recognition")),
        openalex.search(SearchQuery(title="Generative adversarial network")),
        openalex.search(SearchQuery(title="An invented title nobody wrote")),
    )

    assert fake.count("openalex") == 1
    params = fake.requests[0].url.params
    assert params["search"] == (
        "(Attention is all you need) OR (Deep residual learning for image recognition)"
        " OR (Generative adversarial network) OR (An invented title nobody wrote)"
    )
    assert params["per_page"] == "200"
    # Each title gets its own works only: the plural one stems to the singular.
    assert titles(found) == [
        ["Attention is all you need"],
        ["Deep residual learning for image recognition"],
        ["Generative adversarial networks"],
        [],
    ]


async def test_a_title_with_search_syntax_is_searched_alone() -> None:
    fake = FakeUpstreams()
    fake.route("openalex", r"/works", openalex_search(WORKS))
    openalex = source_for(fake)

    await asyncio.gather(
        openalex.search(SearchQuery(title="Long short-term memory")),
        openalex.search(SearchQuery(title="Why NOT (just) use attention")),
        openalex.search(SearchQuery(title="Generative adversarial networks")),
    )

    searches = sorted(r.url.params["search"] for r in fake.requests)
    assert searches == [
        "(Long short-term memory) OR (Generative adversarial networks)",
        "Why NOT (just) use attention",
    ]


async def test_works_overflowing_the_page_are_asked_again_in_smaller_batches() -> None:
    fake = FakeUpstreams()
    many = [openalex_work(f"W9{n}", f"Graph neural networks for molecules {n}") for n in range(199)]
    fake.route("openalex", r"/works", openalex_search([*WORKS, *many]))
    openalex = source_for(fake)

    found = await asyncio.gather(
        openalex.search(SearchQuery(title="Graph neural networks for molecules")),
        openalex.search(SearchQuery(title="Attention is all you need")),
        openalex.search(SearchQuery(title="Generative adversarial networks")),
    )

    # 201 works do not fit a page of 200: the batch is halved, and the first title,
    # alone, is asked for its own five best works.
    assert [len(works) for works in found] == [5, 1, 1]
    assert [r.url.params["search"] for r in fake.requests][1:] == [
        "Graph neural networks for molecules",
        "(Attention is all you need) OR (Generative adversarial networks)",
    ]


async def test_a_title_whose_works_exceed_its_own_page_is_asked_alone() -> None:
    fake = FakeUpstreams()
    fake.route("openalex", r"/works", openalex_search(WORKS))
    openalex = source_for(fake)

    found = await asyncio.gather(
        openalex.search(SearchQuery(title="Deep residual image recognition", limit=1)),
        openalex.search(SearchQuery(title="Attention is all you need")),
    )

    # Its own search ranks the two works and keeps one; the batch cannot rank them.
    assert [len(works) for works in found] == [1, 1]
    assert [r.url.params["search"] for r in fake.requests][1:] == [
        "Deep residual image recognition"
    ]
    assert fake.requests[1].url.params["per_page"] == "1"


async def test_each_title_is_cached_as_its_own_search(tmp_path: Path) -> None:
    fake = FakeUpstreams()
    fake.route("openalex", r"/works", openalex_search(WORKS))
    queries = [
        SearchQuery(title="Attention is all you need"),
        SearchQuery(title="Generative adversarial networks"),
        SearchQuery(title="An invented title nobody wrote"),
    ]
    cache = ResponseCache(tmp_path / "cache.sqlite3")
    openalex = source_for(fake, cache)
    first = await asyncio.gather(*(openalex.search(q) for q in queries[:2]))
    first.append(await source_for(fake, cache).search(queries[2]))
    sent = fake.count("openalex")

    # A later run asks in another order and other company: nothing is sent.
    again = [await source_for(fake, cache).search(q) for q in reversed(queries)]

    assert sent == 2 and fake.count("openalex") == sent
    assert titles(again) == list(reversed(titles(first)))


async def test_a_failed_batch_fails_every_search_in_it() -> None:
    fake = FakeUpstreams()
    fake.route("openalex", r"/works", openalex_search(WORKS))
    fake.fail("openalex", "503", times=20)
    openalex = source_for(fake)

    outcomes = await asyncio.gather(
        openalex.search(SearchQuery(title="Attention is all you need")),
        openalex.search(SearchQuery(title="An invented title nobody wrote")),
        return_exceptions=True,
    )

    # An outage is no answer: neither title may be reported as found nowhere.
    assert all(isinstance(outcome, SourceError) for outcome in outcomes)


async def test_single_dois_asked_while_the_pool_is_busy_share_one_filter_and_are_cached_alone(
    tmp_path: Path,
) -> None:
    """On a server each call checks one DOI: the first, asked while the pool is idle, goes
    at once; those asked while its request is out share one OR filter, and each DOI's part
    of that answer is then in the cache as its own."""
    fake = FakeUpstreams()
    dois = ["10.1000/first", "10.1000/second", "10.1000/third"]
    fake.serve_openalex([openalex_work(f"W{n}", f"Paper {n}", doi=d) for n, d in enumerate(dois)])
    cache = ResponseCache(tmp_path / "cache.sqlite3")
    limits = {"default": RateLimit(rps=10, burst=5, concurrency=1)}
    client = make_client(Overlap(fake.transport()), "openalex", cache=cache, limits=limits)
    openalex = OpenAlexSource(client, Settings())

    first = asyncio.ensure_future(openalex.lookup_dois([dois[0]]))
    while client.idle("default"):
        await asyncio.sleep(0)
    later = await asyncio.gather(*(openalex.lookup_dois([doi]) for doi in dois[1:]))
    again = source_for(fake, cache)
    cached = [await again.lookup_dois([doi]) for doi in reversed(dois)]

    assert [w.title for w in (await first).values()] == ["Paper 0"]
    assert [[w.title for w in found.values()] for found in later] == [["Paper 1"], ["Paper 2"]]
    assert [r.url.params["filter"] for r in fake.requests] == [
        "doi:10.1000/first",
        "doi:10.1000/second|10.1000/third",
    ]
    assert [[w.title for w in found.values()] for found in cached] == [
        ["Paper 2"],
        ["Paper 1"],
        ["Paper 0"],
    ]
