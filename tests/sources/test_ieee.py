"""IEEE Xplore: DOI and title queries, the key kept out of URLs, Mashery 403s, the daily budget.

Bodies and gateway errors are IEEE Xplore answers as scholarsim renders them
from recorded responses (integer years and ids, `authors.authors[]` with
`author_order`, no `articles` key without hits, 403s told apart by
X-Error-Detail-Header).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import httpx
import pytest

from refaudit.cache import ResponseCache
from refaudit.config import Settings
from refaudit.errors import KeyRejected, QuotaSpent
from refaudit.models import Reference, RunStats
from refaudit.sources import ieee, open_sources, registry
from refaudit.sources.base import SearchQuery
from refaudit.sources.client import SourceClient
from refaudit.sources.ieee import IeeeXploreSource, to_work
from refaudit.sources.pacing import RateLimit
from refaudit.sources.quota import Budget
from refaudit.sources.registry import Quota
from tests.fakes import FIXTURES, FakeClock, FakeUpstreams

NAME = "ieee"
KEY = "ieee-key-7f3a9c"
PATH = r"/api/v1/search/articles"
FOUND = json.loads((FIXTURES / "ieee" / "doi.json").read_text())
EMPTY = json.loads((FIXTURES / "ieee" / "empty.json").read_text())
DOI = "10.1109/cvpr46437.2021.01056"


def settings(tmp_path: Path) -> Settings:
    return Settings(sources=[NAME], api_keys={NAME: KEY}, cache_dir=tmp_path, max_retries=2)


def mashery(detail: str, retry_after: int | None = None) -> httpx.Response:
    headers = {"X-Error-Detail-Header": detail, "content-type": "text/xml"}
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    heading = {"Account Inactive": "Developer Inactive"}.get(detail, "Developer Over Rate")
    return httpx.Response(403, text=f"<h1>{heading}</h1>", headers=headers)


def client(fake: FakeUpstreams, config: Settings, ledger: ResponseCache | None) -> SourceClient:
    clock = FakeClock()
    return SourceClient(
        NAME,
        config.base_urls[NAME],
        settings=config,
        stats=RunStats(),
        limits={"default": RateLimit(rps=1000, burst=1000)},
        cache=ledger,
        transport=fake.transport(),
        clock=clock,
        sleep=clock.sleep,
        gate=Budget(registry.entry(NAME), KEY, ledger, ieee.classify),
    )


@pytest.mark.anyio
async def test_a_doi_is_one_call_with_the_key_as_apikey_and_authors_in_order(
    tmp_path: Path,
) -> None:
    fake = FakeUpstreams()
    shuffled = json.loads(json.dumps(FOUND))
    shuffled["articles"][0]["authors"]["authors"].reverse()
    fake.json(NAME, PATH, shuffled)

    async with open_sources(settings(tmp_path), RunStats(), transport=fake.transport()) as opened:
        found = await opened.get(NAME).lookup_dois([DOI.upper()])  # type: ignore[union-attr]

    work = found[DOI]
    (request,) = fake.requests
    assert request.url.params["doi"] == DOI
    assert request.url.params["apikey"] == KEY
    assert request.url.params["format"] == "json"
    assert [p.family for p in work.authors][:3] == ["Shen", "Wei", "Huang"]
    assert (
        work.venue == "2021 IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)"
    )
    assert (work.year, work.type, work.source_id) == (2021, "proceedings-article", "7289769")


@pytest.mark.anyio
async def test_the_key_never_reaches_a_logged_url_or_the_cache(tmp_path: Path) -> None:
    fake = FakeUpstreams()
    fake.json(NAME, PATH, FOUND)
    config = settings(tmp_path)
    ledger = ResponseCache.in_dir(tmp_path)

    fetched = await client(fake, config, ledger).get(PATH, {"doi": DOI, "apikey": KEY})

    assert KEY not in fetched.url
    stored = ledger._db.execute("SELECT key FROM responses").fetchall()
    assert stored and all(KEY not in row[0] for row in stored)


@pytest.mark.anyio
async def test_title_search_asks_words_within_a_year_window_then_ored_document_title(
    tmp_path: Path,
) -> None:
    fake = FakeUpstreams()

    def handler(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        return httpx.Response(200, json=FOUND if "querytext" in request.url.params else EMPTY)

    fake.route(NAME, PATH, handler)
    query = SearchQuery(title="Verifiabilty and Predictability: Interpreting Utilities", year=2021)

    async with open_sources(settings(tmp_path), RunStats(), transport=fake.transport()) as opened:
        works = await opened.get(NAME).search(query)  # type: ignore[union-attr]

    assert [w.doi for w in works] == [DOI]
    first, second = (r.url.params for r in fake.requests)
    assert first["article_title"] == "verifiabilty and predictability interpreting utilities"
    assert (first["start_year"], first["end_year"]) == ("2020", "2022")
    assert second["querytext"].startswith('("Document Title":')
    assert '"Document Title":predictability' in second["querytext"]


@pytest.mark.anyio
async def test_beside_the_free_indexes_a_title_ieee_lacks_costs_one_call_not_two(
    tmp_path: Path,
) -> None:
    fake = FakeUpstreams()
    fake.route(NAME, PATH, lambda _r, _m: httpx.Response(200, json=EMPTY))
    query = SearchQuery(title="Verifiabilty and Predictability: Interpreting Utilities", year=2021)
    config = Settings(
        sources=["crossref", "openalex", NAME], api_keys={NAME: KEY}, cache_dir=tmp_path
    )

    async with open_sources(config, RunStats(), transport=fake.transport()) as opened:
        works = await opened.get(NAME).search(query)  # type: ignore[union-attr]

    assert works == []
    assert ["article_title" in r.url.params for r in fake.requests] == [True]


@pytest.mark.anyio
async def test_account_inactive_turns_the_source_off_for_the_run(tmp_path: Path) -> None:
    fake = FakeUpstreams()
    fake.route(NAME, PATH, lambda _r, _m: mashery("Account Inactive"))

    async with open_sources(settings(tmp_path), RunStats(), transport=fake.transport()) as opened:
        source = opened.get(NAME)
        for doi in (DOI, "10.1109/5.771073"):
            with pytest.raises(KeyRejected) as rejected:
                await source.lookup_dois([doi])  # type: ignore[union-attr]

    assert fake.count(NAME) == 1
    assert "IEEE_API_KEY" in rejected.value.reason and KEY not in rejected.value.reason


@pytest.mark.anyio
async def test_over_queries_per_second_backs_off_and_retries(tmp_path: Path) -> None:
    fake = FakeUpstreams()
    replies = iter([mashery("Account Over Queries Per Second Limit", retry_after=1)])
    fake.route(NAME, PATH, lambda _r, _m: next(replies, httpx.Response(200, json=FOUND)))
    config = settings(tmp_path)
    http = client(fake, config, None)

    found = await IeeeXploreSource(http, config).lookup_dois([DOI])

    assert set(found) == {DOI}
    assert fake.count(NAME) == 2
    assert http.gate.view().used == 1  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_over_rate_limit_means_spent_until_midnight_for_this_and_the_next_run(
    tmp_path: Path,
) -> None:
    fake = FakeUpstreams()
    fake.route(NAME, PATH, lambda _r, _m: mashery("Account Over Rate Limit", retry_after=3600))

    for _run in range(2):
        async with open_sources(
            settings(tmp_path), RunStats(), transport=fake.transport()
        ) as opened:
            with pytest.raises(QuotaSpent) as spent:
                await opened.get(NAME).lookup_dois([DOI])  # type: ignore[union-attr]
            assert spent.value.reason == "IEEE Xplore daily quota spent until 00:00 UTC"

    assert fake.count(NAME) == 1


@pytest.mark.anyio
async def test_a_counted_budget_sends_nothing_once_the_days_calls_are_booked(
    tmp_path: Path,
) -> None:
    fake = FakeUpstreams()
    fake.json(NAME, PATH, EMPTY)
    config = settings(tmp_path)
    config.use_cache = False
    entry = dataclasses.replace(registry.entry(NAME), quota=Quota(3, "day", "utc-midnight"))
    ledger = ResponseCache.in_dir(tmp_path)
    http = client(fake, config, None)
    http.gate = Budget(entry, KEY, ledger, ieee.classify)
    source = IeeeXploreSource(http, config)

    await source.lookup_dois(["10.1109/a", "10.1109/b", "10.1109/c"])
    with pytest.raises(QuotaSpent):
        await source.lookup_dois(["10.1109/d"])

    assert fake.count(NAME) == 3
    shared = Budget(entry, KEY, ledger, ieee.classify).view()
    assert (shared.used, shared.left, shared.measured) == (3, 0, "counted")


@pytest.mark.parametrize(
    ("venue", "doi", "decides"),
    [
        ("IEEE Transactions on Pattern Analysis and Machine Intelligence", None, True),
        ("IET Computer Vision", None, True),
        ("Neural Computation", "10.1109/5.771073", True),
        ("ISIT", "10.23919/isit.2020.1", True),
        (None, "10.1049/el.2019.1", True),
        ("Nature", "10.1038/nature14539", False),
        ("Proceedings of the NeurIPS", None, False),
    ],
)
def test_ieee_is_asked_only_about_ieee_and_iet_venues_and_dois(
    venue: str | None, doi: str | None, decides: bool
) -> None:
    reference = Reference(key="k", title="A title", venue=venue, doi=doi)
    source = IeeeXploreSource.__new__(IeeeXploreSource)

    assert source.decides(reference) is decides


def test_an_article_without_pages_or_authors_keeps_what_it_has() -> None:
    article = {"title": "Standard for Floating-Point Arithmetic", "content_type": "Standards"}

    work = to_work(article)

    assert (work.authors, work.pages, work.type) == ([], None, "standard")
