"""Semantic Scholar: one batched POST for every kind of id, title match, search, references."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from refaudit.config import Settings
from refaudit.errors import SourceUnavailable, UnexpectedResponse
from refaudit.sources.base import SearchQuery
from refaudit.sources.semanticscholar import SemanticScholarSource, to_work
from tests.fakes import FIXTURES, FakeUpstreams, json_response, make_client

BATCH = json.loads((FIXTURES / "semanticscholar" / "batch.json").read_text())
NAME = "semanticscholar"


def source(fake: FakeUpstreams, settings: Settings | None = None) -> SemanticScholarSource:
    settings = settings or Settings()
    return SemanticScholarSource(make_client(fake, NAME, settings=settings), settings)


def echo_batch(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
    """Answer a batch the way S2 does: one entry per id, null for ids it does not know."""
    ids = json.loads(request.content)["ids"]
    known = {"DOI:10.1126/science.aac4716": BATCH[2], "ARXIV:1706.03762": BATCH[0]}
    return json_response([known.get(i) for i in ids])


@pytest.mark.anyio
async def test_dois_arxiv_ids_and_pmids_go_through_the_batch_endpoint() -> None:
    fake = FakeUpstreams()
    fake.route(NAME, r"/graph/v1/paper/batch", echo_batch, method="POST")
    s2 = source(fake)

    by_doi = await s2.lookup_dois(["10.1126/science.aac4716", "10.1/unknown"])
    by_arxiv = await s2.lookup_arxiv(["1706.03762"])

    assert list(by_doi) == ["10.1126/science.aac4716"]
    assert by_arxiv["1706.03762"].s2_id == "204e3073870fae3d05bcbc2f6a8e263d9b72e776"
    sent = [json.loads(r.content)["ids"] for r in fake.requests]
    assert sent == [["DOI:10.1126/science.aac4716", "DOI:10.1/unknown"], ["ARXIV:1706.03762"]]
    assert "externalIds" in fake.requests[0].url.params["fields"]


@pytest.mark.anyio
async def test_300_ids_cost_one_post_and_700_cost_two() -> None:
    fake = FakeUpstreams()
    fake.route(NAME, r"/graph/v1/paper/batch", echo_batch, method="POST")
    s2 = source(fake)

    await s2.lookup_pmids([str(n) for n in range(300)])
    assert fake.count(NAME) == 1
    await s2.lookup_pmids([str(n) for n in range(1000, 1700)])
    assert [len(json.loads(r.content)["ids"]) for r in fake.requests[1:]] == [500, 200]


@pytest.mark.anyio
async def test_null_entries_in_a_batch_are_missing_not_errors() -> None:
    fake = FakeUpstreams()
    fake.json(NAME, r"/graph/v1/paper/batch", BATCH, method="POST")

    found = await source(fake).lookup_ids(["a" * 40, "b" * 40, "c" * 40])

    assert sorted(found) == ["a" * 40, "c" * 40]


@pytest.mark.anyio
async def test_a_batch_answer_of_the_wrong_length_is_unexpected() -> None:
    fake = FakeUpstreams()
    fake.json(NAME, r"/graph/v1/paper/batch", [None], method="POST")

    with pytest.raises(UnexpectedResponse, match="2 entries"):
        await source(fake).lookup_pmids(["1", "2"])


@pytest.mark.anyio
async def test_api_key_is_sent_as_header() -> None:
    fake = FakeUpstreams()
    fake.route(NAME, r"/graph/v1/paper/batch", echo_batch, method="POST")
    settings = Settings(api_keys={NAME: "secret-key"})

    await source(fake, settings).lookup_pmids(["1"])

    assert fake.requests[0].headers["x-api-key"] == "secret-key"


@pytest.mark.anyio
async def test_title_search_is_one_ranked_search_with_hyphens_split() -> None:
    """One request at the 1 request/s pool: the ranked search, title plus first author."""
    fake = FakeUpstreams()
    fake.fixture(NAME, r"/graph/v1/paper/search", "semanticscholar/search.json")

    works = await source(fake).search(
        SearchQuery(title="BERT: Pre-training of deep transformers", authors=["Jacob Devlin"])
    )

    assert [w.arxiv_id for w in works] == ["1810.04805", None]
    assert works[0].doi == "10.18653/v1/n19-1423"
    assert len(fake.requests) == 1
    search_request = fake.requests[0]
    assert search_request.url.params["query"] == "bert pre training of deep transformers devlin"
    assert search_request.url.params["limit"] == "5"


@pytest.mark.anyio
async def test_empty_search_result_has_no_data_key() -> None:
    fake = FakeUpstreams()
    fake.json(NAME, r"/graph/v1/paper/search", {"total": 0, "offset": 0})

    assert await source(fake).search(SearchQuery(free_text="nothing like this")) == []


@pytest.mark.anyio
async def test_references_keep_entries_s2_could_not_resolve() -> None:
    fake = FakeUpstreams()
    fake.fixture(NAME, r"/graph/v1/paper/[0-9a-f]+/references", "semanticscholar/references.json")

    works = await source(fake).references("204e3073870fae3d05bcbc2f6a8e263d9b72e776", limit=10)

    assert [w.title for w in works] == ["Long Short-Term Memory", "An unresolved reference"]
    assert works[0].authors[1].family == "Schmidhuber"
    assert works[1].s2_id is None
    assert fake.requests[0].url.params["limit"] == "10"


@pytest.mark.anyio
async def test_outage_raises_source_unavailable_after_retries() -> None:
    fake = FakeUpstreams()
    fake.route(NAME, r"/graph/v1/paper/batch", echo_batch, method="POST")
    fake.fail(NAME, "503", times=10)

    with pytest.raises(SourceUnavailable):
        await source(fake).lookup_dois(["10.1126/science.aac4716"])


def test_to_work_maps_every_field_refaudit_compares() -> None:
    work = to_work(BATCH[0])

    assert work.title == "Attention is All you Need"
    assert [(a.given, a.family) for a in work.authors] == [
        ("Ashish", "Vaswani"),
        ("Noam M.", "Shazeer"),
    ]
    assert (work.year, work.date) == (2017, "2017-06-12")
    assert work.venue == "Neural Information Processing Systems"
    assert work.venue_short == "NeurIPS"
    assert work.pages == "5998-6008"
    # S2 types it ["JournalArticle", "Conference"]: a NeurIPS paper is a conference paper.
    assert work.type == "proceedings-article"
    assert (work.arxiv_id, work.dblp_key) == ("1706.03762", "conf/nips/VaswaniSPUJGKP17")
    assert work.citation_count == 120000


def test_to_work_tolerates_nulls_markup_and_organisation_authors() -> None:
    work = to_work(BATCH[2])

    assert work.title == "Estimating the reproducibility of psychological science"
    assert work.raw_title == "Estimating the reproducibility of <i>psychological</i> science"
    assert work.authors[0].is_organisation and len(work.authors) == 1
    assert (work.year, work.venue, work.volume) == (2015, "Science", "349")
    assert (work.pmid, work.pmcid) == ("26315443", "PMC4596123")
    assert work.doi == "10.1126/science.aac4716"
    assert work.url is not None and work.type is None


def test_to_work_rejects_an_object_without_paper_id() -> None:
    with pytest.raises(UnexpectedResponse):
        to_work({"title": "no id"})
