"""arXiv: batched id_list lookups with max_results, error feeds, pacing, search queries."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import httpx
import pytest

from refaudit.config import Settings
from refaudit.errors import UnexpectedResponse
from refaudit.sources.arxiv import NS, RATE_LIMIT, ArxivSource, parse_feed, search_queries, to_work
from refaudit.sources.base import SearchQuery
from refaudit.sources.pacing import PACING
from refaudit.sources.response import Fetched
from tests.fakes import FIXTURES, FakeClock, FakeUpstreams, make_client

NAME = "arxiv"
TWO_ENTRIES = (FIXTURES / "arxiv" / "two_entries.xml").read_text()
ERROR_FEED = (FIXTURES / "arxiv" / "error_bad_id.xml").read_text()
ATOM = {"content-type": "application/atom+xml; charset=utf-8"}


def source(fake: FakeUpstreams, clock: FakeClock | None = None, paced: bool = False) -> ArxivSource:
    limits = {"default": RATE_LIMIT} if paced else None
    client = make_client(fake, NAME, clock=clock, limits=limits)
    return ArxivSource(client, Settings())


def feed_of(ids: list[str]) -> str:
    """A feed with one minimal entry per id (version 2), shaped like export.arxiv.org's."""
    entries = "".join(
        f"<entry><id>http://arxiv.org/abs/{i}v2</id><title>Paper {i}</title>"
        f"<published>2020-01-01T00:00:00Z</published>"
        f"<author><name>Ada Lovelace</name></author></entry>"
        for i in ids
    )
    return (
        '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom" '
        'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
        f"<opensearch:totalResults>{len(ids)}</opensearch:totalResults>{entries}</feed>"
    )


def echo_ids(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
    ids = request.url.params["id_list"].split(",")
    return httpx.Response(200, text=feed_of(ids), headers=ATOM)


@pytest.mark.anyio
async def test_120_ids_take_two_requests_each_with_max_results_set() -> None:
    fake = FakeUpstreams()
    fake.route(NAME, r"/api/query", echo_ids)
    ids = [f"2001.{n:05d}" for n in range(120)]

    found = await source(fake).lookup_arxiv(ids)

    assert len(found) == 120 and found["2001.00007"].arxiv_version == 2
    params = [r.url.params for r in fake.requests]
    assert [p["max_results"] for p in params] == ["100", "20"]
    assert [len(p["id_list"].split(",")) for p in params] == [100, 20]


@pytest.mark.anyio
async def test_ids_are_asked_without_version_and_malformed_ones_never_sent() -> None:
    fake = FakeUpstreams()
    fake.route(NAME, r"/api/query", echo_ids)

    found = await source(fake).lookup_arxiv(["arXiv:1706.03762v5", "not an id", "1706.03762"])

    assert list(found) == ["1706.03762"]
    assert fake.requests[0].url.params["id_list"] == "1706.03762"


@pytest.mark.anyio
async def test_requests_are_paced_three_seconds_apart() -> None:
    fake = FakeUpstreams()
    fake.route(NAME, r"/api/query", echo_ids)
    clock = FakeClock()

    await source(fake, clock, paced=True).lookup_arxiv([f"2001.{n:05d}" for n in range(250)])

    assert fake.count(NAME) == 3
    assert sum(clock.sleeps) == pytest.approx(6.0 / PACING)


@pytest.mark.anyio
async def test_an_id_arxiv_rejects_is_skipped_and_the_rest_asked_again() -> None:
    fake = FakeUpstreams()

    def answer(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        if "1706.0376," in request.url.params["id_list"] + ",":
            return httpx.Response(400, text=ERROR_FEED, headers=ATOM)
        return httpx.Response(200, text=TWO_ENTRIES, headers=ATOM)

    fake.route(NAME, r"/api/query", answer)

    found = await source(fake).lookup_arxiv(["1706.0376", "1706.03762", "hep-th/9711200"])

    assert sorted(found) == ["1706.03762", "hep-th/9711200"]
    assert [r.url.params["id_list"] for r in fake.requests] == [
        "1706.0376,1706.03762,hep-th/9711200",
        "1706.03762,hep-th/9711200",
    ]


@pytest.mark.anyio
async def test_an_empty_feed_means_unknown_ids() -> None:
    fake = FakeUpstreams()
    fake.route(NAME, r"/api/query", lambda _r, _m: httpx.Response(200, text=feed_of([])))

    assert await source(fake).lookup_arxiv(["0000.00000"]) == {}


@pytest.mark.anyio
async def test_a_body_that_is_not_atom_is_unexpected() -> None:
    fake = FakeUpstreams()
    fake.route(NAME, r"/api/query", lambda _r, _m: httpx.Response(200, text="<html>oops"))

    with pytest.raises(UnexpectedResponse, match="arxiv"):
        await source(fake).lookup_arxiv(["1706.03762"])


@pytest.mark.anyio
async def test_search_tries_the_title_phrase_then_its_words() -> None:
    fake = FakeUpstreams()

    def answer(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        query = request.url.params["search_query"]
        return httpx.Response(200, text=feed_of([] if '"' in query else ["1706.03762"]))

    fake.route(NAME, r"/api/query", answer)

    works = await source(fake).search(
        SearchQuery(title="Attention is all you need", authors=["Ashish Vaswani"], limit=3)
    )

    assert [w.arxiv_id for w in works] == ["1706.03762"]
    assert [r.url.params["search_query"] for r in fake.requests] == [
        'ti:"attention is all you need" AND au:vaswani',
        "ti:attention AND ti:all AND ti:you AND ti:need",
    ]
    assert fake.requests[0].url.params["max_results"] == "3"


def test_search_queries_join_multi_word_family_names_with_underscores() -> None:
    queries = search_queries(SearchQuery(title="Quantum chaos", authors=["Adolfo del Maestro"]))

    assert queries[0] == 'ti:"quantum chaos" AND au:del_maestro'


def test_to_work_reads_version_doi_journal_ref_and_category() -> None:
    entries, rejected = parse_feed(Fetched(200, TWO_ENTRIES, "https://export.arxiv.org/api/query"))
    attention, maldacena = (to_work(e) for e in entries)

    assert rejected is None
    assert attention.title == "Attention Is All You Need"
    assert (attention.arxiv_id, attention.arxiv_version) == ("1706.03762", 7)
    assert (attention.year, attention.date) == (2017, "2017-06-12")
    assert attention.authors[2].family == "Kaiser" and attention.authors[2].given == "Łukasz"
    assert (attention.type, attention.venue, attention.primary_category) == (
        "preprint",
        "arXiv",
        "cs.CL",
    )
    assert attention.doi == "10.48550/arxiv.1706.03762"
    assert attention.published_version_doi is None
    assert maldacena.published_version_doi == "10.1023/a:1026654312961"
    assert maldacena.journal_ref == "Adv.Theor.Math.Phys.2:231-252,1998"
    assert maldacena.arxiv_id == "hep-th/9711200"


def test_to_work_rejects_an_entry_without_an_abstract_url() -> None:
    entry = ET.fromstring(f'<entry xmlns="{NS["atom"]}"><id>urn:x</id></entry>')

    with pytest.raises(UnexpectedResponse):
        to_work(entry)


def test_an_all_capital_family_name_is_not_read_as_initials() -> None:
    feed = feed_of(["1907.06632"]).replace("Ada Lovelace", "Koushik MV")
    entries, _ = parse_feed(Fetched(200, feed, "https://export.arxiv.org/api/query"))

    author = to_work(entries[0]).authors[0]

    assert (author.given, author.family) == ("Koushik", "MV")
