"""The retraction screen's Crossref look-ups ride along with look-ups sent during the search."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from refaudit.config import Settings
from refaudit.evidence import Evidence, complete_for_screening
from refaudit.models import Reference, RunStats
from refaudit.sources import open_sources
from tests.fakes import FakeUpstreams, crossref_work

pytestmark = pytest.mark.anyio

FOUND = "10.1016/s0140-6736(97)11096-0"  # the work a search identified: Crossref has notices
OTHER = "10.1002/14651858.cd004142.pub2"  # another reference's DOI, being looked up


def upstreams() -> FakeUpstreams:
    fake = FakeUpstreams()
    notice = {"DOI": "10.1016/s0140-6736(10)60175-4", "type": "retraction", "source": "publisher"}
    fake.serve_crossref(
        [crossref_work(FOUND, "Ileal-lymphoid-nodular hyperplasia", **{"updated-by": [notice]})]
        + [crossref_work(OTHER, "Exercise for dysmenorrhoea")]
    )
    return fake


async def screened(tmp_path: Path, fake: FakeUpstreams) -> Evidence:
    """Identify FOUND while OTHER's look-up waits to be sent, then complete the screening."""
    settings = Settings(sources=["crossref"], cache_dir=tmp_path, data_dir=tmp_path)
    settings.max_retries = 0
    item = Evidence(Reference(key="w", entry_type="article", title="Ileal-lymphoid hyperplasia"))
    async with open_sources(settings, RunStats(), transport=fake.transport()) as sources:
        crossref = sources.get("crossref")
        assert crossref is not None
        other = asyncio.ensure_future(crossref.lookup_doi(OTHER))
        await asyncio.sleep(0)
        ride = crossref.ride_doi(FOUND)
        assert ride is not None
        item.screening = (FOUND, asyncio.ensure_future(ride))
        await asyncio.gather(other, return_exceptions=True)
        await complete_for_screening([(item, FOUND)], sources)
    return item


async def test_a_doi_that_rode_along_is_not_asked_for_again(tmp_path: Path) -> None:
    fake = upstreams()

    item = await screened(tmp_path, fake)

    assert fake.count("crossref") == 1
    assert fake.requests[0].url.params["filter"] == f"doi:{OTHER},doi:{FOUND}"
    (record,) = item.candidates
    assert [n.kind.value for n in record.notices] == ["retraction"]


async def test_a_ride_that_failed_is_asked_again_at_the_end(tmp_path: Path) -> None:
    fake = upstreams()
    fake.fail("crossref", "503")

    item = await screened(tmp_path, fake)

    # An outage of the shared look-up must not leave the screen without the notices.
    assert fake.count("crossref") == 2
    assert fake.requests[1].url.params["filter"] == f"doi:{FOUND}"
    assert [n.kind.value for n in item.candidates[0].notices] == ["retraction"]


LATE = "10.1136/bmj.327.7414.557"  # a third reference's DOI, identified after the look-ups


async def test_a_doi_identified_between_look_ups_rides_with_the_next_one(tmp_path: Path) -> None:
    """Identified while no look-up waits to be sent, it neither sends one nor waits for
    the end: it goes with the next look-up the search sends."""
    fake = upstreams()
    settings = Settings(sources=["crossref"], cache_dir=tmp_path, data_dir=tmp_path)
    item = Evidence(Reference(key="w", entry_type="article", title="Ileal-lymphoid hyperplasia"))
    async with open_sources(settings, RunStats(), transport=fake.transport()) as sources:
        crossref = sources.get("crossref")
        assert crossref is not None
        ride = crossref.ride_doi(FOUND)
        assert ride is not None
        item.screening = (FOUND, asyncio.ensure_future(ride))
        await asyncio.sleep(0.05)
        assert fake.count("crossref") == 0  # a passenger sends nothing of its own

        await crossref.lookup_doi(OTHER)
        await complete_for_screening([(item, FOUND)], sources, [item])

    assert fake.count("crossref") == 1
    assert fake.requests[0].url.params["filter"] == f"doi:{OTHER},doi:{FOUND}"
    assert [n.kind.value for n in item.candidates[0].notices] == ["retraction"]


async def test_dois_no_look_up_carried_go_together_at_the_end_and_a_called_off_one_stays(
    tmp_path: Path,
) -> None:
    fake = upstreams()
    fake.serve_crossref(
        [crossref_work(FOUND, "Ileal-lymphoid-nodular hyperplasia")]
        + [crossref_work(LATE, "Effect of exercise"), crossref_work(OTHER, "Dysmenorrhoea")]
    )
    settings = Settings(sources=["crossref"], cache_dir=tmp_path, data_dir=tmp_path)
    found, late, changed = (
        Evidence(Reference(key=key, entry_type="article", title=key)) for key in "abc"
    )
    async with open_sources(settings, RunStats(), transport=fake.transport()) as sources:
        crossref = sources.get("crossref")
        assert crossref is not None
        for item, doi in ((found, FOUND), (late, LATE), (changed, OTHER)):
            ride = crossref.ride_doi(doi)
            assert ride is not None
            item.screening = (doi, asyncio.ensure_future(ride))
        # `changed`'s final verdict no longer rests on the DOI its early verdict found.
        await complete_for_screening(
            [(found, FOUND), (late, LATE)], sources, [found, late, changed]
        )

    assert fake.count("crossref") == 1
    assert fake.requests[0].url.params["filter"] == f"doi:{FOUND},doi:{LATE}"
    assert [w.doi for w in found.candidates + late.candidates] == [FOUND, LATE]
    assert changed.candidates == [] and changed.screening is None


async def test_a_doi_already_in_the_cache_rides_without_a_request(tmp_path: Path) -> None:
    settings = Settings(sources=["crossref"], cache_dir=tmp_path, data_dir=tmp_path)
    item = Evidence(Reference(key="w", entry_type="article", title="Ileal-lymphoid hyperplasia"))
    async with open_sources(settings, RunStats(), transport=upstreams().transport()) as sources:
        crossref = sources.get("crossref")
        assert crossref is not None
        await crossref.lookup_doi(FOUND)
    fake = upstreams()
    async with open_sources(settings, RunStats(), transport=fake.transport()) as sources:
        crossref = sources.get("crossref")
        assert crossref is not None
        ride = crossref.ride_doi(FOUND)
        assert ride is not None
        item.screening = (FOUND, asyncio.ensure_future(ride))
        await complete_for_screening([(item, FOUND)], sources, [item])

    assert fake.count("crossref") == 0
    assert [n.kind.value for n in item.candidates[0].notices] == ["retraction"]
