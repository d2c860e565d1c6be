"""Crossref: batched DOI lookups, search, notices and the mapping of real-shaped records."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from fakes import (
    FIXTURES,
    FakeClock,
    FakeUpstreams,
    Overlap,
    YieldingClock,
    crossref_list,
    crossref_update,
    crossref_work,
    make_client,
)

from refaudit.cache import ResponseCache
from refaudit.config import Settings
from refaudit.errors import SourceUnavailable, UnexpectedResponse
from refaudit.models import NoticeKind
from refaudit.sources.base import SearchQuery
from refaudit.sources.crossref import CrossrefSource, filter_batches, rate_limits, to_work
from refaudit.sources.pacing import PACING, RateLimit

pytestmark = pytest.mark.anyio


def load(name: str) -> dict:
    return json.loads(Path(FIXTURES, "crossref", name).read_text(encoding="utf-8"))


def source_for(fake: FakeUpstreams, settings: Settings | None = None) -> CrossrefSource:
    settings = settings or Settings()
    return CrossrefSource(make_client(fake, "crossref", settings=settings), settings)


def _dois(batches: int) -> list[str]:
    """Short test DOIs that fill exactly `batches` requests."""
    per_batch = len(filter_batches([f"10.1000/t{n:05}" for n in range(10_000)])[0])
    return [f"10.1000/t{n:05}" for n in range(batches * per_batch)]


async def test_ninety_dois_cost_one_request_and_come_back_under_their_canonical_form() -> None:
    """Crossref bounds a filter by the URL's length, not by a count of values."""
    fake = FakeUpstreams()
    dois = [f"10.1038/Nature.{14539 + n}" for n in range(90)]
    fake.serve_crossref([crossref_work(doi, f"Paper {n}") for n, doi in enumerate(dois)])

    found = await source_for(fake).lookup_dois([f"https://doi.org/{d}" for d in dois])

    assert fake.count("crossref") == 1
    assert sorted(found) == sorted(d.lower() for d in dois)
    assert found["10.1038/nature.14546"].title == "Paper 7"
    request = fake.requests[0]
    assert request.url.params["rows"] == "90"
    assert len(str(request.url)) < 4096


async def test_the_filter_syntax_goes_unescaped_so_ninety_journal_dois_fit_one_url() -> None:
    """`doi:10.1016/x,doi:…` as Crossref's examples write it: escaping `:`, `/` and `,`
    would take three characters each and leave room for under eighty of these DOIs."""
    fake = FakeUpstreams()
    dois = [f"10.1016/j.neunet.2019.{n:05d}" for n in range(90)]
    fake.serve_crossref([crossref_work(doi, f"Paper {n}") for n, doi in enumerate(dois)])

    found = await source_for(fake, Settings(mailto="me@example.org")).lookup_dois(dois)

    assert fake.count("crossref") == 1 and len(found) == 90
    sent = fake.requests[0].url
    assert f"filter=doi:{dois[0]},doi:{dois[1]}," in str(sent)
    assert len(str(sent)) < 4096


async def test_dois_asked_one_at_a_time_together_share_one_filter_and_are_cached_alone(
    tmp_path: Path,
) -> None:
    """A search that names a DOI asks for Crossref's record of it alone; the DOIs asked
    about together go in one filter, and each is then in the cache on its own."""
    fake = FakeUpstreams()
    dois = ["10.1002/14651858.cd004142.pub2", "10.1038/nature14539", "10.1000/unknown"]
    fake.serve_crossref([crossref_work(doi, f"Paper {n}") for n, doi in enumerate(dois[:2])])
    cache = ResponseCache(tmp_path / "cache.sqlite3")
    crossref = CrossrefSource(make_client(fake, "crossref", cache=cache), Settings())

    found = await asyncio.gather(*(crossref.lookup_doi(doi) for doi in dois))
    again = CrossrefSource(make_client(fake, "crossref", cache=cache), Settings())
    later = [await again.lookup_doi(doi) for doi in reversed(dois)]

    assert [w.title if w else None for w in found] == ["Paper 0", "Paper 1", None]
    assert fake.count("crossref") == 1
    assert fake.requests[0].url.params["filter"].count("doi:") == 3
    assert [w.title if w else None for w in later] == [None, "Paper 1", "Paper 0"]


async def test_single_dois_asked_while_the_list_pool_is_busy_share_one_filter() -> None:
    """On a server each call checks one DOI (a citation, a retraction check): the first,
    asked while the list pool is idle, goes at once; those asked while its request is
    out go together in one filter rather than one request each."""
    fake = FakeUpstreams()
    dois = ["10.1000/first", "10.1000/second", "10.1000/third"]
    fake.serve_crossref([crossref_work(doi, f"Paper {n}") for n, doi in enumerate(dois)])
    limits = {
        "default": RateLimit(rps=10, burst=3, concurrency=3),
        "list": RateLimit(rps=3, burst=3, concurrency=1),
    }
    clock = YieldingClock()
    client = make_client(Overlap(fake.transport()), "crossref", clock=clock, limits=limits)
    crossref = CrossrefSource(client, Settings())

    first = asyncio.ensure_future(crossref.lookup_dois([dois[0]]))
    while client.idle("list"):
        await asyncio.sleep(0)
    later = await asyncio.gather(*(crossref.lookup_dois([doi]) for doi in dois[1:]))

    assert [w.title for w in (await first).values()] == ["Paper 0"]
    assert [[w.title for w in found.values()] for found in later] == [["Paper 1"], ["Paper 2"]]
    assert [r.url.params["filter"] for r in fake.requests] == [
        "doi:10.1000/first",
        "doi:10.1000/second,doi:10.1000/third",
    ]


async def test_a_released_ride_called_off_while_it_waits_for_its_turn_is_never_sent() -> None:
    """At the end of an audit the retraction screen releases the DOIs no look-up carried,
    then calls off those the verdicts no longer rest on: one still queued behind a
    request in flight must not be sent for nobody."""
    fake = FakeUpstreams()
    fake.serve_crossref([crossref_work(doi) for doi in ("10.1000/busy", "10.1000/ride")])
    limits = {
        "default": RateLimit(rps=10, burst=3, concurrency=3),
        "list": RateLimit(rps=3, burst=3, concurrency=1),
    }
    client = make_client(
        Overlap(fake.transport()), "crossref", clock=YieldingClock(), limits=limits
    )
    crossref = CrossrefSource(client, Settings())

    busy = asyncio.ensure_future(crossref.lookup_dois(["10.1000/busy"]))
    while client.idle("list"):
        await asyncio.sleep(0)
    ride = crossref.ride_doi("10.1000/ride")
    assert isinstance(ride, asyncio.Future)
    crossref.release_rides()
    await asyncio.sleep(0)
    ride.cancel()
    await busy
    for _ in range(20):
        await asyncio.sleep(0)

    assert [r.url.params["filter"] for r in fake.requests] == ["doi:10.1000/busy"]


async def test_more_dois_than_a_url_holds_are_split_and_unknown_ones_are_simply_absent() -> None:
    fake = FakeUpstreams()
    dois = _dois(1) + ["10.1000/t-one-more"]
    fake.serve_crossref([crossref_work(doi) for doi in dois[:-1]])

    found = await source_for(fake).lookup_dois(dois)

    assert fake.count("crossref") == 2
    assert len(found) == len(dois) - 1
    assert dois[-1] not in found
    assert all(len(str(r.url)) < 4096 for r in fake.requests)


async def test_doi_with_a_comma_is_fetched_alone_with_its_slash_kept() -> None:
    fake = FakeUpstreams()
    odd = "10.1002/(SICI)1097-4636(199909)47:3,2.0.CO;2-C"
    fake.serve_crossref([crossref_work(odd), crossref_work("10.1000/plain")])

    found = await source_for(fake).lookup_dois([odd, "10.1000/plain"])

    assert set(found) == {odd.lower(), "10.1000/plain"}
    single = [r for r in fake.requests if r.url.path != "/works"]
    assert len(single) == 1
    assert single[0].url.raw_path.startswith(b"/works/10.1002/")
    assert b"%2C" in single[0].url.raw_path
    listing = [r for r in fake.requests if r.url.path == "/works"]
    assert listing[0].url.params["filter"] == "doi:10.1000/plain"


async def test_single_doi_unknown_to_crossref_is_not_found_not_an_error() -> None:
    fake = FakeUpstreams()
    fake.serve_crossref([])
    assert await source_for(fake).lookup_dois(["10.1000/a,b"]) == {}


async def test_outage_raises_source_unavailable_naming_crossref() -> None:
    fake = FakeUpstreams()
    fake.serve_crossref([crossref_work("10.1000/x")])
    fake.fail("crossref", "503", times=50)

    with pytest.raises(SourceUnavailable, match="crossref"):
        await source_for(fake).lookup_dois(["10.1000/x"])


async def test_mailto_is_sent_as_a_parameter_and_selects_the_polite_pools() -> None:
    fake = FakeUpstreams()
    fake.serve_crossref([crossref_work("10.1000/x")])
    settings = Settings(mailto="me@example.org")

    await source_for(fake, settings).lookup_dois(["10.1000/x"])

    assert fake.requests[0].url.params["mailto"] == "me@example.org"
    assert rate_limits(settings)["list"].rps == 3
    assert rate_limits(Settings())["list"].rps == 1
    assert rate_limits(Settings())["list"].concurrency == 1


async def test_search_sends_one_bibliographic_query_and_keeps_scores() -> None:
    fake = FakeUpstreams()
    items = [crossref_work("10.1000/a", "Deep residual learning", score=88.5)]
    fake.json("crossref", "/works", crossref_list(items))

    query = SearchQuery(title="Deep residual learning", authors=["He"], year=2016, limit=3)
    works = await source_for(fake).search(query)

    params = fake.requests[0].url.params
    assert params["query.bibliographic"] == "Deep residual learning He 2016"
    assert params["rows"] == "3"
    assert "DOI" in params["select"].split(",")
    assert [w.doi for w in works] == ["10.1000/a"]
    assert works[0].score == 88.5


async def test_search_answer_without_items_is_an_unexpected_response() -> None:
    fake = FakeUpstreams()
    fake.json("crossref", "/works", {"status": "ok", "message": {}})
    with pytest.raises(UnexpectedResponse, match="message.items"):
        await source_for(fake).search(SearchQuery(title="x"))


async def test_fetch_bibtex_uses_content_negotiation_route() -> None:
    fake = FakeUpstreams()
    fake.serve_crossref([])
    bibtex = "@article{Wakefield_1998, title={Ileal…}}"
    fake.route(
        "crossref",
        r"/works/(?P<doi>.+)/transform/application/x-bibtex",
        lambda _r, m: (
            bibtex
            if m.group("doi") == "10.1016/s0140-6736(97)11096-0"
            else httpx.Response(404, text="Resource not found.")
        ),
    )
    crossref = source_for(fake)

    assert await crossref.fetch_bibtex("10.1016/S0140-6736(97)11096-0") == bibtex
    assert await crossref.fetch_bibtex("10.9999/missing") is None


def test_mapping_keeps_notices_with_their_source_record_id_and_date() -> None:
    work = to_work(load("work_with_notices.json")["message"])

    assert work.doi == "10.1016/s0140-6736(97)11096-0"
    assert work.year == 1998 and work.date == "1998-02"
    assert work.venue == "The Lancet" and work.pages == "637-641" and work.volume == "351"
    assert work.is_retracted is True
    kinds = [(n.kind, n.source, n.record_id, n.date) for n in work.notices]
    assert kinds == [
        (NoticeKind.CORRECTION, "retraction-watch", "17269", "2004-03-06"),
        (NoticeKind.RETRACTION, "retraction-watch", "4036", "2010-02-06"),
        (NoticeKind.RETRACTION, "publisher", None, "2010-02"),
    ]
    assert work.notices[1].notice_doi == "10.1016/s0140-6736(10)60175-4"
    assert all(n.target_doi == work.doi for n in work.notices)


def test_notice_record_points_at_the_work_it_corrects() -> None:
    work = to_work(load("correction_notice.json")["message"])

    assert work.is_retracted is None
    [notice] = work.notices
    assert notice.kind == NoticeKind.CORRECTION
    assert notice.notice_doi == "10.1002/job.1858"
    assert notice.target_doi == "10.1002/job.1787"


def test_mapping_tolerates_markup_nulls_organisations_and_missing_date_parts() -> None:
    work = to_work(load("quirky_item.json"))

    assert work.title == "Dirac fermions in Bi 2 films: a first-principles & model study"
    assert work.raw_title is not None and "<mml:math" in work.raw_title
    assert work.subtitle == "Ab initio results"
    first, org, bare = work.authors
    assert (first.given, first.family, first.suffix, first.orcid) == (
        "Jürgen",
        "Müller",
        "Jr.",
        "0000-0002-1825-009X",
    )
    assert org.is_organisation and org.family == "The LIGO Scientific Collaboration"
    assert (bare.family, bare.given) == ("Nakamura", "")
    assert work.year == 2019 and work.date == "2019-03"
    assert work.venue is None and work.venue_short is None and work.issue is None
    assert work.citation_count == 12
    assert work.isbn == ["9780123456786", "978-0-12-345678-6"]
    assert work.notices[0].kind == NoticeKind.EXPRESSION_OF_CONCERN
    assert work.notices[0].date == "2020"
    assert work.is_retracted is None


def test_item_without_doi_is_rejected_rather_than_guessed() -> None:
    with pytest.raises(UnexpectedResponse, match="DOI"):
        to_work({"title": ["No identifier"]})


def test_title_given_as_plain_string_and_empty_lists_are_accepted() -> None:
    item = crossref_work("10.1000/x", year=None) | {"title": "Plain string title", "author": None}
    work = to_work(item)
    assert work.title == "Plain string title"
    assert work.authors == [] and work.year is None and work.date is None


async def test_update_entries_built_by_the_fake_round_trip() -> None:
    fake = FakeUpstreams()
    retracted = crossref_work(
        "10.1000/r",
        updated_by=[crossref_update("withdrawal", "10.1000/notice", label="Withdrawal")],
    )
    fake.serve_crossref([retracted])

    work = (await source_for(fake).lookup_dois(["10.1000/r"]))["10.1000/r"]

    assert work.notices[0].kind == NoticeKind.WITHDRAWAL
    assert work.is_retracted is True


async def test_long_dois_are_batched_by_url_length_so_every_url_stays_under_4kb() -> None:
    fake = FakeUpstreams()
    dois = [
        f"10.1002/(SICI)1097-4571(1998{n:04d})49:8<693::AID-ASI{n}>3.0.CO;2-O" for n in range(80)
    ]
    fake.serve_crossref([crossref_work(doi) for doi in dois])

    found = await source_for(fake, Settings(mailto="me@example.org")).lookup_dois(dois)

    assert sorted(found) == sorted(d.lower() for d in dois)
    assert all(len(str(r.url)) < 4000 for r in fake.requests)
    assert 2 < fake.count("crossref") <= 4


async def test_doi_batches_are_sent_together_within_the_list_pools_three_in_flight() -> None:
    fake = FakeUpstreams()
    dois = _dois(4)
    fake.serve_crossref([crossref_work(doi) for doi in dois])
    wire = Overlap(fake.transport())
    settings = Settings(mailto="me@example.org")
    client = make_client(wire, "crossref", settings=settings, limits=rate_limits(settings))

    found = await CrossrefSource(client, settings).lookup_dois(dois)

    assert len(found) == len(dois) and fake.count("crossref") == 4
    # Four batches, one after the other, took four round trips; now the pool's cap decides.
    assert wire.most == 3


class _Clocked(httpx.AsyncBaseTransport):
    """Notes the fake time each request arrives at, then lets `inner` answer it."""

    def __init__(self, inner: httpx.AsyncBaseTransport, clock: FakeClock) -> None:
        self.inner, self.clock = inner, clock
        self.arrivals: list[float] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.arrivals.append(self.clock.now)
        return await self.inner.handle_async_request(request)


async def test_a_runs_first_three_doi_batches_arrive_together() -> None:
    """Crossref's polite list pool allows three requests a second: three may go at once."""
    fake, clock = FakeUpstreams(), FakeClock()
    dois = _dois(4)
    fake.serve_crossref([crossref_work(doi) for doi in dois])
    wire = _Clocked(fake.transport(), clock)
    settings = Settings(mailto="me@example.org")
    limits = rate_limits(settings)
    client = make_client(wire, "crossref", settings=settings, limits=limits, clock=clock)

    await CrossrefSource(client, settings).lookup_dois(dois)

    start = wire.arrivals[0]
    assert wire.arrivals[:3] == [start] * 3
    assert wire.arrivals[3] - start == pytest.approx(1 / (3 * PACING))


class _FirstFailsOthersHang(httpx.AsyncBaseTransport):
    """The first request's connection fails; the others never get an answer."""

    def __init__(self) -> None:
        self.sent = 0
        self.cancelled = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        if self.sent == 1:
            for _ in range(Overlap.TURNS):  # the others are on their way meanwhile
                await asyncio.sleep(0)
            raise httpx.ConnectError("connection reset", request=request)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")


async def test_a_failed_batch_fails_the_look_up_and_the_batches_in_flight_are_dropped() -> None:
    wire = _FirstFailsOthersHang()
    settings = Settings(max_retries=0)
    client = make_client(wire, "crossref", settings=settings)

    with pytest.raises(SourceUnavailable):
        await CrossrefSource(client, settings).lookup_dois(_dois(3))

    assert wire.sent == 3 and wire.cancelled == 2
