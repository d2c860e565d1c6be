"""OpenAlex: OR-filter batching, validation before batching, search and mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FIXTURES, FakeUpstreams, Overlap, make_client, openalex_list, openalex_work

from refaudit.config import Settings
from refaudit.errors import SourceUnavailable, UnexpectedResponse
from refaudit.sources.base import SearchQuery
from refaudit.sources.openalex import (
    BATCH_SIZE,
    RATE_LIMIT,
    OpenAlexSource,
    abstract_from_index,
    to_work,
)

pytestmark = pytest.mark.anyio


def source_for(fake: FakeUpstreams, settings: Settings | None = None) -> OpenAlexSource:
    settings = settings or Settings()
    return OpenAlexSource(make_client(fake, "openalex", settings=settings), settings)


def arxiv_copy() -> dict:
    return json.loads(Path(FIXTURES, "openalex", "work_arxiv_copy.json").read_text("utf-8"))


async def test_dois_go_in_one_or_filter_and_invalid_ones_never_join_the_batch() -> None:
    fake = FakeUpstreams()
    dois = [f"10.1000/oa.{n}" for n in range(30)]
    fake.serve_openalex([openalex_work(f"W{n}", f"Paper {n}", doi=d) for n, d in enumerate(dois)])

    found = await source_for(fake).lookup_dois([*dois, "not a doi", "10.12/too-short-prefix"])

    assert fake.count("openalex") == 1
    assert len(found) == 30 and found["10.1000/oa.3"].title == "Paper 3"
    filter_value = fake.requests[0].url.params["filter"]
    assert filter_value.startswith("doi:10.1000/oa.0|") and "not a doi" not in filter_value
    assert fake.requests[0].url.params["per_page"] == "30"


async def test_doi_with_filter_syntax_is_looked_up_alone() -> None:
    fake = FakeUpstreams()
    odd = "10.1000/a|b"
    fake.serve_openalex([openalex_work("W1", doi=odd), openalex_work("W2", doi="10.1000/ok")])

    found = await source_for(fake).lookup_dois([odd, "10.1000/ok"])

    assert set(found) == {odd, "10.1000/ok"}
    assert fake.count("openalex") == 2
    assert any(r.url.path.startswith("/works/doi:") for r in fake.requests)


async def test_lookup_by_openalex_ids_and_pmids() -> None:
    fake = FakeUpstreams()
    fake.serve_openalex([openalex_work("W2963403868", pmid="31234567"), openalex_work("W7")])
    openalex = source_for(fake)

    by_id = await openalex.lookup_ids(["https://openalex.org/W2963403868", "w7", "garbage"])
    by_pmid = await openalex.lookup_pmids(["31234567", "abc"])

    assert set(by_id) == {"W2963403868", "W7"}
    assert set(by_pmid) == {"31234567"}
    assert fake.requests[0].url.params["filter"] == "openalex:W2963403868|W7"
    assert fake.requests[1].url.params["filter"] == "ids.pmid:31234567"


async def test_key_and_mailto_are_sent_as_parameters() -> None:
    fake = FakeUpstreams()
    fake.serve_openalex([])
    settings = Settings(mailto="me@example.org", api_keys={"openalex": "sekrit"})

    await source_for(fake, settings).lookup_dois(["10.1000/x"])

    params = fake.requests[0].url.params
    assert params["mailto"] == "me@example.org" and params["api_key"] == "sekrit"


async def test_search_uses_the_title_only_and_the_year_range() -> None:
    fake = FakeUpstreams()
    fake.json("openalex", "/works", openalex_list([arxiv_copy()]))

    query = SearchQuery(title="Attention is all you need", authors=["Vaswani"], year_from=2017)
    works = await source_for(fake).search(query)

    params = fake.requests[0].url.params
    assert params["search"] == "Attention is all you need"
    assert params["filter"] == "publication_year:>2016"
    assert works[0].openalex_id == "W2963403868"


async def test_a_citation_string_without_a_title_is_searched_by_its_bylines_in_its_year() -> None:
    """ "J. Zauner, Z. fur Psychosom. Med. Psychoanal. (1978)": no title or abstract holds
    these words, so `search` would find nothing; the names and the year find the work."""
    fake = FakeUpstreams()
    work = openalex_work("W42", "Psychosomatic aspects of adolescence", authors=["J Zauner"])
    fake.json("openalex", "/works", openalex_list([work]))
    query = SearchQuery(
        free_text="J. Zauner, Z. fur Psychosom. Med. Psychoanal. (1978).",
        authors=["Zauner", "Zauner"],
        year=1978,
        year_from=1978,
        year_to=1978,
    )

    works = await source_for(fake).search(query)

    params = fake.requests[0].url.params
    assert "search" not in params
    assert params["filter"] == "raw_author_name.search:Zauner,publication_year:1978"
    assert [w.openalex_id for w in works] == ["W42"]


async def test_a_citation_string_with_no_year_to_keep_to_is_searched_as_text() -> None:
    fake = FakeUpstreams()
    fake.json("openalex", "/works", openalex_list([]))
    text = "Zauner J. Psychosomatische Aspekte der Adoleszenz. Z Psychosom Med Psychoanal."

    await source_for(fake).search(SearchQuery(free_text=text, authors=["Zauner"]))

    assert fake.requests[0].url.params["search"] == text


async def test_list_without_results_is_unexpected_and_outage_is_unavailable() -> None:
    fake = FakeUpstreams()
    fake.json("openalex", "/works", {"meta": {}})
    with pytest.raises(UnexpectedResponse, match="openalex"):
        await source_for(fake).lookup_dois(["10.1000/x"])

    fake.fail("openalex", "drop", times=50)
    with pytest.raises(SourceUnavailable, match="openalex"):
        await source_for(fake).lookup_dois(["10.1000/y"])


def test_mapping_reads_ids_authors_pages_abstract_and_arxiv_copy() -> None:
    work = to_work(arxiv_copy())

    assert work.doi == "10.5555/3295222.3295349"
    assert work.openalex_id == "W2963403868"
    assert (work.pmid, work.pmcid) == ("31234567", "PMC6543210")
    assert (work.arxiv_id, work.arxiv_version) == ("1706.03762", None)
    assert work.venue == "Neural Information Processing Systems"
    assert (work.year, work.date, work.volume, work.pages) == (
        2017,
        "2017-12-04",
        "30",
        "5998-6008",
    )
    vaswani, shazeer, beethoven = work.authors
    assert (vaswani.given, vaswani.family) == ("Ashish", "Vaswani")
    assert shazeer.orcid == "0000-0001-2345-6789" and shazeer.family == "Shazeer"
    assert (beethoven.given, beethoven.particle, beethoven.family) == ("Ludwig", "van", "Beethoven")
    assert work.abstract == "The dominant sequence transduction sequence"
    assert work.is_retracted is False and work.citation_count == 100000


def test_mapping_tolerates_nulls_everywhere_but_the_id() -> None:
    work = to_work(
        {
            "id": "https://openalex.org/W1",
            "doi": None,
            "title": None,
            "display_name": None,
            "authorships": [{"author": None, "raw_author_name": None}],
            "primary_location": None,
            "biblio": None,
            "ids": None,
            "is_retracted": None,
        }
    )
    assert work.openalex_id == "W1" and work.title is None and work.authors == []
    assert work.is_retracted is None and work.doi is None

    with pytest.raises(UnexpectedResponse):
        to_work({"display_name": "no id"})


def test_abstract_index_with_gaps_and_junk_is_rebuilt_in_order() -> None:
    assert abstract_from_index({"b": [1], "a": [0], "c": [3, "x"]}) == "a b c"
    assert abstract_from_index({}) is None and abstract_from_index(None) is None


async def test_citation_graph_asks_for_the_most_cited_neighbours_first() -> None:
    fake = FakeUpstreams()
    fake.json(
        "openalex",
        r"/works",
        openalex_list([openalex_work("W9", "Citing Paper", cited_by_count=41)]),
    )
    source = source_for(fake)

    citing = await source.citations("https://openalex.org/W2741809807", limit=20)
    cited = await source.references("W2741809807", limit=500)

    assert [work.title for work in citing] == ["Citing Paper"]
    assert citing[0].citation_count == 41
    first, second = (request.url.params for request in fake.requests)
    assert first["filter"] == "cites:W2741809807" and first["sort"] == "cited_by_count:desc"
    assert first["per_page"] == "20"
    assert second["filter"] == "cited_by:W2741809807" and second["per_page"] == "200"
    assert len(cited) == 1


async def test_citation_graph_needs_an_openalex_id() -> None:
    fake = FakeUpstreams()

    assert await source_for(fake).citations("10.1000/not-an-openalex-id") == []
    assert fake.count("openalex") == 0


async def test_doi_batches_are_sent_together() -> None:
    fake = FakeUpstreams()
    dois = [f"10.1000/oa.{n}" for n in range(3 * BATCH_SIZE)]
    fake.serve_openalex([openalex_work(f"W{n}", doi=d) for n, d in enumerate(dois)])
    wire = Overlap(fake.transport())
    client = make_client(wire, "openalex", settings=Settings(), limits={"default": RATE_LIMIT})

    found = await OpenAlexSource(client, Settings()).lookup_dois(dois)

    assert len(found) == len(dois) and fake.count("openalex") == 3
    assert wire.most == 3
