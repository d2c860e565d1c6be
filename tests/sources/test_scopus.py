"""Scopus Search: batched DOI queries, title searches, views, key and quota errors.

Bodies are Scopus Search answers as scholarsim renders them from recorded
responses (string counters, `@_fa` flags, the "Result set was empty" entry, the
two error shapes and the X-RateLimit-* headers).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from refaudit.config import Settings
from refaudit.errors import KeyRejected, QuotaSpent
from refaudit.models import RunStats
from refaudit.sources import open_sources
from refaudit.sources.base import SearchQuery
from refaudit.sources.scopus import to_work
from tests.fakes import FIXTURES, FakeUpstreams

NAME = "scopus"
KEY = "0123456789abcdef-scopus-key"
TOKEN = "institution-token-42"
PATH = r"/content/search/scopus"
BATCH = json.loads((FIXTURES / "scopus" / "doi_batch.json").read_text())
ENTRIES = BATCH["search-results"]["entry"]
EMPTY = json.loads((FIXTURES / "scopus" / "empty.json").read_text())
COMPLETE = json.loads((FIXTURES / "scopus" / "complete.json").read_text())
LANCET = "10.1016/s0140-6736(20)31180-6"
BECKER = "10.1007/s00120-009-1989-1"
QUOTA_HEADERS = {"X-RateLimit-Limit": "20000", "X-ELS-Status": "OK"}


def settings(tmp_path: Path, **keys: str) -> Settings:
    return Settings(
        sources=[NAME],
        api_keys={NAME: KEY, **keys},
        cache_dir=tmp_path,
        max_retries=1,
    )


def answer(entries: list[dict[str, Any]], remaining: int = 19_990) -> httpx.Response:
    body = copy.deepcopy(EMPTY if not entries else BATCH)
    results = body["search-results"]
    if entries:
        results["entry"] = entries
    results["opensearch:totalResults"] = str(len(entries))
    headers = {**QUOTA_HEADERS, "X-RateLimit-Remaining": str(remaining)}
    headers["X-RateLimit-Reset"] = "1796065417"
    return httpx.Response(200, json=body, headers=headers)


def serve_dois(fake: FakeUpstreams, entries: list[dict[str, Any]] = ENTRIES) -> None:
    """Answer `DOI(a) OR DOI(b) …` queries from these entries, as Scopus does."""

    def handler(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        asked = {
            d.strip('"').lower() for d in re.findall(r"DOI\((.+?)\)(?: OR |$)", query(request))
        }
        return answer([e for e in entries if e["prism:doi"].lower() in asked])

    fake.route(NAME, PATH, handler)


def query(request: httpx.Request) -> str:
    return request.url.params["query"]


async def lookup(fake: FakeUpstreams, config: Settings, dois: list[str]) -> dict[str, Any]:
    async with open_sources(config, RunStats(), transport=fake.transport()) as opened:
        return await opened.get(NAME).lookup_dois(dois)  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_dois_are_asked_in_one_or_query_with_the_key_in_a_header(tmp_path: Path) -> None:
    fake = FakeUpstreams()
    serve_dois(fake)

    found = await lookup(fake, settings(tmp_path), [LANCET, BECKER, "10.9999/not.in.scopus"])

    assert set(found) == {LANCET, BECKER}
    (request,) = fake.requests
    # A DOI with parentheses is quoted, so they cannot unbalance the query.
    assert query(request) == f'DOI("{LANCET}") OR DOI({BECKER}) OR DOI(10.9999/not.in.scopus)'
    assert request.url.params["count"] == "3"
    assert request.url.params["view"] == "STANDARD"
    assert request.headers["X-ELS-APIKey"] == KEY
    assert KEY not in str(request.url)


@pytest.mark.anyio
async def test_more_dois_than_the_count_limit_take_several_requests(tmp_path: Path) -> None:
    fake = FakeUpstreams()
    serve_dois(fake)

    await lookup(fake, settings(tmp_path), [f"10.1000/x{i}" for i in range(30)])

    assert [len(query(r).split(" OR ")) for r in fake.requests] == [25, 5]


def test_the_standard_view_names_only_the_first_author_and_says_so() -> None:
    lancet = to_work(ENTRIES[0])

    assert [(p.family, p.given) for p in lancet.authors] == [("Mehra", "M. R.")]
    assert lancet.authors_partial is True
    assert (lancet.title or "").startswith("Hydroxychloroquine or chloroquine")
    assert lancet.venue == "The Lancet"
    assert (lancet.year, lancet.doi, lancet.citation_count) == (2020, LANCET, 900)
    assert lancet.type == "journal-article"


def test_subtype_tb_is_scopus_retraction_mark() -> None:
    assert to_work(ENTRIES[0]).is_retracted is True
    assert to_work(ENTRIES[1]).is_retracted is None


def test_the_complete_view_lists_every_author() -> None:
    work = to_work(COMPLETE["search-results"]["entry"][0])

    assert [p.family for p in work.authors][:2] == ["Becker", "Tilki"]
    assert len(work.authors) == 5
    assert work.authors_partial is False


@pytest.mark.anyio
async def test_an_institution_token_asks_for_complete_and_falls_back_when_not_entitled(
    tmp_path: Path,
) -> None:
    fake = FakeUpstreams()
    views: list[str] = []

    def handler(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        views.append(request.url.params["view"])
        if request.url.params["view"] == "COMPLETE":
            error = {
                "statusCode": "AUTHORIZATION_ERROR",
                "statusText": "The requestor is not authorized to access the requested view "
                "or fields of the resource",
            }
            return httpx.Response(401, json={"service-error": {"status": error}})
        assert "X-ELS-Insttoken" not in request.headers
        return answer([ENTRIES[1]])

    fake.route(NAME, PATH, handler)
    config = settings(tmp_path, **{f"{NAME}.insttoken": TOKEN})

    async with open_sources(config, RunStats(), transport=fake.transport()) as opened:
        source = opened.get(NAME)
        first = await source.lookup_dois([BECKER])  # type: ignore[union-attr]
        await source.lookup_dois(["10.1000/other"])  # type: ignore[union-attr]

    assert set(first) == {BECKER}
    assert views == ["COMPLETE", "STANDARD", "STANDARD"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "body",
    [
        {"error-response": {"error-code": "APIKEY_INVALID", "error-message": "Invalid API Key"}},
        {
            "service-error": {
                "status": {"statusCode": "AUTHENTICATION_ERROR", "statusText": "Invalid API Key"}
            }
        },
    ],
    ids=["error-response", "service-error"],
)
async def test_a_rejected_key_turns_the_source_off_for_the_run(
    tmp_path: Path, body: dict[str, Any]
) -> None:
    fake = FakeUpstreams()
    fake.json(NAME, PATH, body, status=401)

    async with open_sources(settings(tmp_path), RunStats(), transport=fake.transport()) as opened:
        source = opened.get(NAME)
        with pytest.raises(KeyRejected) as first:
            await source.lookup_dois([LANCET])  # type: ignore[union-attr]
        with pytest.raises(KeyRejected) as second:
            await source.search(SearchQuery(title="Deep residual learning"))  # type: ignore[union-attr]

    assert fake.count(NAME) == 1
    assert "Scopus refused the API key" in first.value.reason
    assert "ELSEVIER_API_KEY" in first.value.reason
    assert KEY not in first.value.reason
    assert second.value.reason == first.value.reason


@pytest.mark.anyio
async def test_quota_exceeded_stops_asking_until_the_reset_across_runs(tmp_path: Path) -> None:
    fake = FakeUpstreams()
    body = {
        "service-error": {
            "status": {"statusCode": "QUOTA_EXCEEDED", "statusText": "Quota Exceeded"}
        }
    }
    headers = {"X-ELS-Status": "QUOTA_EXCEEDED - Quota Exceeded", "X-RateLimit-Reset": "4102444800"}
    fake.route(NAME, PATH, lambda _r, _m: httpx.Response(429, json=body, headers=headers))

    for _run in range(2):
        async with open_sources(
            settings(tmp_path), RunStats(), transport=fake.transport()
        ) as opened:
            source = opened.get(NAME)
            for doi in (LANCET, BECKER):
                with pytest.raises(QuotaSpent) as spent:
                    await source.lookup_dois([doi])  # type: ignore[union-attr]
                assert spent.value.reason == "Scopus weekly quota spent until 2100-01-01 00:00 UTC"

    assert fake.count(NAME) == 1


@pytest.mark.anyio
async def test_the_budget_follows_what_scopus_says_is_left(tmp_path: Path) -> None:
    fake = FakeUpstreams()
    fake.route(NAME, PATH, lambda _r, _m: answer([ENTRIES[1]], remaining=123))

    async with open_sources(settings(tmp_path), RunStats(), transport=fake.transport()) as opened:
        await opened.get(NAME).lookup_dois([BECKER])  # type: ignore[union-attr]
        view = opened.clients[NAME].gate.view()  # type: ignore[union-attr]

    assert (view.quota, view.used, view.left, view.measured) == (20_000, 19_877, 123, "headers")
    assert view.resets_at == "2026-11-30T19:03:37Z"


@pytest.mark.anyio
async def test_title_search_uses_a_phrase_and_a_year_window_then_ored_words(
    tmp_path: Path,
) -> None:
    fake = FakeUpstreams()

    def handler(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        return answer([ENTRIES[1]] if " OR " in query(request) else [])

    fake.route(NAME, PATH, handler)
    title = "Urologische Notfälle bei Kindern: Hodentorsion"

    async with open_sources(settings(tmp_path), RunStats(), transport=fake.transport()) as opened:
        works = await opened.get(NAME).search(SearchQuery(title=title, year=2009))  # type: ignore[union-attr]

    assert [w.doi for w in works] == [BECKER]
    first, second = (query(r) for r in fake.requests)
    years = " AND PUBYEAR > 2007 AND PUBYEAR < 2011"
    assert first == f'TITLE("urologische notfälle bei kindern hodentorsion"){years}'
    assert second.startswith("TITLE(") and second.endswith(years)
    assert set(second.split("(", 1)[1].split(")")[0].split(" OR ")) == {
        "urologische",
        "notfälle",
        "kindern",
        "hodentorsion",
        "bei",
    }
