"""dblp: search only, hit JSON quirks (string counters, single author object, missing hits)."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from refaudit.config import Settings
from refaudit.errors import SourceUnavailable, UnexpectedResponse
from refaudit.sources import registry
from refaudit.sources.base import SearchQuery
from refaudit.sources.dblp import DblpSource, search_texts, to_work
from tests.fakes import FIXTURES, FakeUpstreams, make_client

NAME = "dblp"
HITS = json.loads((FIXTURES / "dblp" / "hits.json").read_text())["result"]["hits"]["hit"]
NO_HITS = (FIXTURES / "dblp" / "no_hits.json").read_text()


def source(fake: FakeUpstreams) -> DblpSource:
    return DblpSource(make_client(fake, NAME), Settings())


@pytest.mark.anyio
async def test_search_sends_title_words_as_json_query() -> None:
    fake = FakeUpstreams()
    fake.fixture(NAME, r"/search/publ/api", "dblp/hits.json")

    works = await source(fake).search(
        SearchQuery(title="Attention is All you Need.", authors=["Vaswani"], limit=3)
    )

    assert [w.dblp_key for w in works] == [
        "conf/nips/VaswaniSPUJGKP17",
        "journals/corr/VaswaniSPUJGKP17",
        "conf/att/2021",
    ]
    params = fake.requests[0].url.params
    assert (params["q"], params["format"], params["h"]) == ("attention all you need", "json", "3")


@pytest.mark.anyio
async def test_zero_hits_has_no_hit_key_and_a_shorter_query_is_tried() -> None:
    fake = FakeUpstreams()

    def answer(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        query = request.url.params["q"]
        misspelled_word_required = "atention" in query and "|" not in query
        text = (
            NO_HITS if misspelled_word_required else (FIXTURES / "dblp" / "hits.json").read_text()
        )
        return httpx.Response(200, text=text)

    fake.route(NAME, r"/search/publ/api", answer)

    works = await source(fake).search(
        SearchQuery(title="Atention is all you need", authors=["Ashish Vaswani"])
    )

    assert len(works) == 3
    assert [r.url.params["q"] for r in fake.requests] == [
        "atention all you need",
        "vaswani atention|need|all|you",
    ]


@pytest.mark.anyio
async def test_no_hits_at_all_is_an_empty_answer() -> None:
    fake = FakeUpstreams()
    fake.fixture(NAME, r"/search/publ/api", "dblp/no_hits.json")

    assert await source(fake).search(SearchQuery(title="zzzq")) == []


@pytest.mark.anyio
async def test_an_answer_without_hits_is_unexpected() -> None:
    fake = FakeUpstreams()
    fake.json(NAME, r"/search/publ/api", {"result": {"status": {"@code": "200"}}})

    with pytest.raises(UnexpectedResponse, match="result.hits"):
        await source(fake).search(SearchQuery(title="anything"))


@pytest.mark.anyio
async def test_an_outage_is_reported_not_swallowed() -> None:
    fake = FakeUpstreams()
    fake.fixture(NAME, r"/search/publ/api", "dblp/no_hits.json")
    fake.fail(NAME, "drop", times=10)

    with pytest.raises(SourceUnavailable):
        await source(fake).search(SearchQuery(title="anything"))


def test_dblp_cannot_look_up_dois() -> None:
    assert "doi" not in registry.entry("dblp").capabilities


def test_search_texts_without_title_words_ask_nothing() -> None:
    assert search_texts(SearchQuery(title="?!")) == []


def test_to_work_strips_homonym_numbers_and_the_final_period() -> None:
    work = to_work(HITS[0])

    assert work.title == "Attention is All you Need"
    assert work.raw_title == "Attention is All you Need."
    assert [a.display() for a in work.authors] == ["Ashish Vaswani", "Wei Wang"]
    assert (work.year, work.venue, work.pages) == (2017, "NIPS", "5998-6008")
    assert work.type == "proceedings-article"
    assert work.doi is None
    assert work.score == 17.0


def test_to_work_reads_a_single_author_object_and_corr_ids() -> None:
    work = to_work(HITS[1])

    assert [a.family for a in work.authors] == ["Vaswani"]
    assert work.doi == "10.48550/arxiv.1706.03762"
    assert work.arxiv_id == "1706.03762"
    assert (work.type, work.venue, work.volume) == ("preprint", "CoRR", None)


def test_to_work_takes_the_first_of_list_valued_fields_and_no_authors() -> None:
    work = to_work(HITS[2])

    assert work.authors == []
    assert (work.venue, work.publisher, work.type) == ("ATT@NeurIPS", "IEEE", "proceedings")
    assert work.doi == "10.1109/att.2021"


def test_to_work_rejects_a_hit_without_a_key() -> None:
    with pytest.raises(UnexpectedResponse):
        to_work({"info": {"title": "x"}})
