"""PubMed: batched esummary, DOI lookups through esearch, rate errors in 200 bodies, notices."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from refaudit.config import Settings
from refaudit.errors import RateLimited
from refaudit.models import NoticeKind
from refaudit.sources.base import SearchQuery
from refaudit.sources.pubmed import (
    DOI_BATCH_SIZE,
    PubMedSource,
    rate_limits,
    search_terms,
    to_work,
)
from tests.fakes import FIXTURES, FakeUpstreams, Overlap, json_response, make_client

NAME = "pubmed"
ESUMMARY = json.loads((FIXTURES / "pubmed" / "esummary.json").read_text())
WAKEFIELD = ESUMMARY["result"]["9500320"]
OSC = ESUMMARY["result"]["26315443"]


def source(fake: FakeUpstreams, settings: Settings | None = None) -> PubMedSource:
    settings = settings or Settings(mailto="me@example.org")
    return PubMedSource(make_client(fake, NAME, settings=settings), settings)


def echo_summaries(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
    """Docsums for every asked PMID: the fixture's when it has one, else a copy of Wakefield."""
    ids = request.url.params["id"].split(",")
    result: dict[str, object] = {"uids": ids}
    for uid in ids:
        result[uid] = ESUMMARY["result"].get(uid) or {**WAKEFIELD, "uid": uid}
    return json_response({"header": {"type": "esummary", "version": "0.3"}, "result": result})


@pytest.mark.anyio
async def test_250_pmids_take_two_esummary_calls_with_etiquette() -> None:
    fake = FakeUpstreams()
    fake.route(NAME, r"/esummary.fcgi", echo_summaries)

    found = await source(fake).lookup_pmids([str(n) for n in range(1, 251)])

    assert len(found) == 250
    params = [r.url.params for r in fake.requests]
    assert [len(p["id"].split(",")) for p in params] == [200, 50]
    assert all(p["retmode"] == "json" and p["db"] == "pubmed" for p in params)
    assert params[0]["tool"] == "refaudit" and params[0]["email"] == "me@example.org"


@pytest.mark.anyio
async def test_unknown_pmids_are_missing() -> None:
    fake = FakeUpstreams()
    fake.json(NAME, r"/esummary.fcgi", ESUMMARY)

    found = await source(fake).lookup_pmids(["9500320", "99999999", "26315443"])

    assert sorted(found) == ["26315443", "9500320"]


@pytest.mark.anyio
async def test_dois_are_found_with_one_esearch_and_one_esummary() -> None:
    fake = FakeUpstreams()
    fake.fixture(NAME, r"/esearch.fcgi", "pubmed/esearch.json")
    fake.json(NAME, r"/esummary.fcgi", ESUMMARY)

    found = await source(fake).lookup_dois(
        ["https://doi.org/10.1016/S0140-6736(97)11096-0", "10.1126/science.aac4716", "10.1/none"]
    )

    assert sorted(found) == ["10.1016/s0140-6736(97)11096-0", "10.1126/science.aac4716"]
    term = fake.requests[0].url.params["term"]
    assert term.startswith('"10.1016/s0140-6736(97)11096-0"[doi] OR "10.1126/science.aac4716"')
    assert fake.count(NAME) == 2


@pytest.mark.anyio
async def test_rate_error_inside_a_200_body_is_retried() -> None:
    fake = FakeUpstreams()
    answers = iter(
        [json.loads((FIXTURES / "pubmed" / "rate_limit_error.json").read_text()), ESUMMARY]
    )
    fake.route(NAME, r"/esummary.fcgi", lambda _r, _m: json_response(next(answers)))
    stats_source = source(fake)

    found = await stats_source.lookup_pmids(["9500320"])

    assert "9500320" in found
    assert fake.count(NAME) == 2


@pytest.mark.anyio
async def test_rate_error_that_never_clears_raises_rate_limited() -> None:
    fake = FakeUpstreams()
    fake.fixture(NAME, r"/esummary.fcgi", "pubmed/rate_limit_error.json")

    with pytest.raises(RateLimited):
        await source(fake).lookup_pmids(["9500320"])


@pytest.mark.anyio
async def test_search_drops_the_author_when_title_and_author_find_nothing() -> None:
    fake = FakeUpstreams()

    def esearch(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        fixture = "esearch_none.json" if "[au]" in request.url.params["term"] else "esearch.json"
        return httpx.Response(200, text=(FIXTURES / "pubmed" / fixture).read_text())

    fake.route(NAME, r"/esearch.fcgi", esearch)
    fake.json(NAME, r"/esummary.fcgi", ESUMMARY)

    works = await source(fake).search(
        SearchQuery(title="Ileal-lymphoid-nodular hyperplasia", authors=["Wakefeld AJ"])
    )

    assert [w.pmid for w in works] == ["9500320", "26315443"]
    terms = [r.url.params["term"] for r in fake.requests if "esearch" in r.url.path]
    assert terms == [
        'ileal[ti] AND lymphoid[ti] AND nodular[ti] AND hyperplasia[ti] AND "Wakefeld"[au]',
        "ileal[ti] AND lymphoid[ti] AND nodular[ti] AND hyperplasia[ti]",
    ]


def test_search_terms_restrict_publication_years_only_when_asked() -> None:
    terms = search_terms(SearchQuery(title="Colitis", year=1998, year_from=1997, year_to=1999))

    assert terms == ["colitis[ti] AND 1997:1999[dp]"]


def test_an_api_key_raises_the_rate_limit_to_ten_per_second() -> None:
    assert rate_limits(Settings())["default"].rps == 3
    assert rate_limits(Settings(api_keys={NAME: "k"}))["default"].rps == 10


def test_to_work_reads_a_retracted_paper_with_its_notices() -> None:
    work = to_work(WAKEFIELD)

    assert work.title.startswith("Ileal-lymphoid-nodular hyperplasia") and work.title[-1] != "."
    assert work.raw_title.endswith("children.")
    assert [(a.family, a.given) for a in work.authors] == [
        ("Wakefield", "A. J."),
        ("Murch", "S. H."),
        ("Walker-Smith", "J. A."),
    ]
    assert (work.year, work.date, work.pages) == (1998, "1998-02-28", "637-641")
    assert (work.venue, work.venue_short, work.volume, work.issue) == (
        "Lancet (London, England)",
        "Lancet",
        "351",
        "9103",
    )
    assert work.doi == "10.1016/s0140-6736(97)11096-0"
    assert work.is_retracted is True
    assert [(n.kind, n.date) for n in work.notices] == [
        (NoticeKind.RETRACTION, "2004-03-06"),
        (NoticeKind.RETRACTION, "2010-02-06"),
    ]
    assert "PMID 20137807" in (work.notices[1].label or "")


def test_a_record_typed_several_ways_takes_the_most_specific_type() -> None:
    """PubMed types a retraction notice "Journal Article" too; it is the notice."""
    assert to_work(WAKEFIELD).type == "journal-article"
    notice = WAKEFIELD | {"pubtype": ["Journal Article", "Retraction of Publication"]}
    assert to_work(notice).type == "retraction-notice"
    assert to_work(WAKEFIELD | {"pubtype": ["Comment"]}).type is None


def test_to_work_reads_collective_authors_markup_pmc_and_concerns() -> None:
    work = to_work(OSC)

    assert work.title == "PSYCHOLOGY. Estimating the reproducibility of psychological science"
    assert work.authors[0].is_organisation
    assert work.authors[0].family == "Open Science Collaboration"
    assert work.pmcid == "PMC4596123"
    assert work.pages == "aac4716"
    assert work.is_retracted is False
    assert [n.kind for n in work.notices] == [NoticeKind.EXPRESSION_OF_CONCERN]


@pytest.mark.anyio
async def test_doi_batches_are_sent_together_each_esummary_after_its_esearch() -> None:
    fake = FakeUpstreams()
    fake.fixture(NAME, r"/esearch.fcgi", "pubmed/esearch.json")
    fake.json(NAME, r"/esummary.fcgi", ESUMMARY)
    wire = Overlap(fake.transport())
    client = make_client(wire, NAME, settings=Settings(mailto="me@example.org"))
    dois = [f"10.1000/pm.{n}" for n in range(2 * DOI_BATCH_SIZE)]

    await PubMedSource(client, Settings(mailto="me@example.org")).lookup_dois(dois)

    paths = [r.url.path.rsplit("/", 1)[-1] for r in fake.requests]
    assert paths == ["esearch.fcgi", "esearch.fcgi", "esummary.fcgi", "esummary.fcgi"]
    assert wire.most == 2
