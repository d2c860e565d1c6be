"""DataCite: one request per DOI, arXiv DOIs, search sanitising and mapping."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from fakes import FIXTURES, FakeClock, FakeUpstreams, datacite_record, make_client

from refaudit.config import Settings
from refaudit.errors import SourceUnavailable
from refaudit.sources.base import SearchQuery
from refaudit.sources.datacite import DataCiteSource, rate_limits, to_work

pytestmark = pytest.mark.anyio


def source_for(fake: FakeUpstreams) -> DataCiteSource:
    settings = Settings()
    return DataCiteSource(make_client(fake, "datacite", settings=settings), settings)


def arxiv_record() -> dict:
    return json.loads(Path(FIXTURES, "datacite", "arxiv_preprint.json").read_text("utf-8"))["data"]


async def test_each_doi_is_one_request_and_unknown_dois_are_absent() -> None:
    fake = FakeUpstreams()
    fake.serve_datacite([arxiv_record(), datacite_record("10.5281/zenodo.48440")])

    found = await source_for(fake).lookup_dois(
        ["10.48550/arXiv.1706.03762", "10.5281/ZENODO.48440", "10.5061/dryad.missing"]
    )

    assert set(found) == {"10.48550/arxiv.1706.03762", "10.5281/zenodo.48440"}
    assert fake.count("datacite") == 3
    assert {r.url.raw_path for r in fake.requests} >= {b"/dois/10.48550/arxiv.1706.03762"}


async def test_outage_is_reported_as_unavailable() -> None:
    fake = FakeUpstreams()
    fake.serve_datacite([])
    fake.fail("datacite", "timeout", times=50)
    with pytest.raises(SourceUnavailable, match="datacite"):
        await source_for(fake).lookup_dois(["10.5281/zenodo.1"])


async def test_search_strips_query_syntax_and_limits_page_size() -> None:
    fake = FakeUpstreams()
    fake.json("datacite", "/dois", {"data": [arxiv_record()], "meta": {"total": 1}})

    works = await source_for(fake).search(
        SearchQuery(title="Attention: is (all) you need?", authors=["Vaswani"], limit=2)
    )

    params = fake.requests[0].url.params
    assert params["query"] == "Attention is all you need Vaswani"
    assert params["page[size]"] == "2"
    assert works[0].arxiv_id == "1706.03762"


async def test_fetch_bibtex_uses_the_mime_route() -> None:
    fake = FakeUpstreams()
    fake.route(
        "datacite",
        r"/dois/application/x-bibtex/(?P<doi>.+)",
        lambda _r, m: (
            "@misc{x}"
            if m.group("doi") == "10.5281/zenodo.1"
            else httpx.Response(404, json={"errors": []})
        ),
    )
    datacite = source_for(fake)
    assert await datacite.fetch_bibtex("10.5281/ZENODO.1") == "@misc{x}"
    assert await datacite.fetch_bibtex("10.5281/zenodo.2") is None


def test_arxiv_record_maps_to_a_preprint_pointing_at_its_published_version() -> None:
    work = to_work(arxiv_record())

    assert work.doi == "10.48550/arxiv.1706.03762"
    assert (work.arxiv_id, work.arxiv_version) == ("1706.03762", 7)
    assert work.type == "preprint" and work.year == 2017 and work.date == "2017"
    assert work.published_version_doi == "10.5555/3295222.3295349"
    vaswani, shazeer, brain = work.authors
    assert (vaswani.given, vaswani.family) == ("Ashish", "Vaswani")
    assert (shazeer.given, shazeer.family, shazeer.orcid) == (
        "Noam",
        "Shazeer",
        "0000-0001-2345-6789",
    )
    assert brain.is_organisation and brain.family == "Google Brain"
    assert work.abstract and work.abstract.startswith("The dominant")
    assert work.publisher == "arXiv"


def test_dataset_with_publisher_object_string_year_and_no_titles() -> None:
    record = datacite_record(
        "10.5061/dryad.8515",
        title=None,
        year=None,
        publicationYear="2011",
        publisher={"name": "Dryad"},
        creators=[{"name": "Ollomo, Benjamin", "nameType": "Personal"}],
        container={"type": "Journal", "title": "PLoS Pathogens", "volume": "7", "firstPage": "e1"},
        relatedIdentifiers=[
            {
                "relationType": "IsVersionOf",
                "relatedIdentifier": "10.5061/dryad.x",
                "relatedIdentifierType": "DOI",
            }
        ],
    )
    work = to_work(record)

    assert work.title is None and work.year == 2011 and work.publisher == "Dryad"
    assert (work.authors[0].given, work.authors[0].family) == ("Benjamin", "Ollomo")
    assert work.venue == "PLoS Pathogens" and work.volume == "7" and work.pages == "e1"
    assert work.type == "dataset"
    assert work.published_version_doi is None


@pytest.mark.parametrize(("mailto", "allowed"), [(None, 500), ("me@example.org", 1000)])
async def test_lookups_stay_within_the_published_five_minute_allowance(
    mailto: str | None, allowed: int
) -> None:
    fake, clock = FakeUpstreams(), FakeClock()
    sent: list[float] = []

    def answer(_request: httpx.Request, match: re.Match[str]) -> dict:
        sent.append(clock.now)
        return {"data": datacite_record(match.group(1))}

    fake.route("datacite", r"/dois/(.+)", answer)
    settings = Settings(mailto=mailto)
    client = make_client(
        fake, "datacite", settings=settings, clock=clock, limits=rate_limits(settings)
    )
    dois = [f"10.5281/zenodo.{n}" for n in range(allowed + 100)]

    found = await DataCiteSource(client, settings).lookup_dois(dois)

    assert len(found) == len(dois)
    busiest = max(sum(1 for t in sent if start <= t < start + 300) for start in sent)
    assert allowed * 0.8 < busiest <= allowed
    assert sent[4] == sent[0] < sent[5]  # a burst of five, then the steady rate
