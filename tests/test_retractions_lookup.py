"""check_dois and get_notice against fake Crossref / OpenAlex and the snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import FakeUpstreams, crossref_update, crossref_work, openalex_work

from refaudit.config import Settings, load_settings
from refaudit.models import NoticeKind
from refaudit.retractions import check_dois, get_notice
from refaudit.retractions.csvload import load_csv
from refaudit.retractions.store import snapshot_path

SAMPLE = Path(__file__).parent / "fixtures" / "retractionwatch" / "sample.csv"
WAKEFIELD = "10.1016/S0140-6736(97)11096-0"


def settings(**overrides: object) -> Settings:
    return load_settings(overrides={"max_retries": 0, **overrides})


def install_snapshot(config: Settings) -> None:
    path = snapshot_path(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    load_csv(SAMPLE, path, source_url="test")


def upstreams() -> FakeUpstreams:
    fake = FakeUpstreams()
    fake.serve_crossref(
        [
            crossref_work(
                "10.5555/retracted",
                "A retracted paper",
                updated_by=[crossref_update("retraction", "10.5555/notice", date=(2021, 5, 1))],
            ),
            crossref_work("10.5555/clean", "A clean paper"),
            crossref_work(
                "10.5555/notice",
                "Retraction notice",
                update_to=[crossref_update("retraction", "10.5555/retracted", date=(2021, 5, 1))],
            ),
        ]
    )
    fake.serve_openalex(
        [
            openalex_work("W1", "A retracted paper", doi="10.5555/retracted", is_retracted=True),
            openalex_work("W2", "A clean paper", doi="10.5555/clean"),
            openalex_work(
                "W3", "Flagged by OpenAlex only", doi="10.5555/oa-only", is_retracted=True
            ),
        ]
    )
    return fake


@pytest.mark.anyio
async def test_check_dois_canonicalises_and_batches_and_answers_in_input_order() -> None:
    fake = upstreams()
    inputs = [
        "https://doi.org/10.5555/RETRACTED",
        "doi:10.5555/clean",
        "10.5555/oa-only",
        "10.5555/retracted.",
        "not a doi",
    ]
    answers = await check_dois(inputs, settings(), transport=fake.transport())
    assert [a.doi for a in answers] == [
        "10.5555/retracted",
        "10.5555/clean",
        "10.5555/oa-only",
        "10.5555/retracted",
        None,
    ]
    assert [a.status for a in answers] == [
        "retraction",
        "clean",
        "retraction",
        "retraction",
        "invalid",
    ]
    assert answers[0].notices[0].notice_doi == "10.5555/notice"
    assert answers[2].notices[0].source == "openalex"
    assert answers[1].title == "A clean paper" and answers[1].found is True
    assert fake.count("crossref") == 1 and fake.count("openalex") == 1


@pytest.mark.anyio
async def test_an_outage_gives_unknown_never_clean() -> None:
    fake = upstreams()
    fake.fail("crossref", "503", times=5)
    fake.fail("openalex", "drop", times=5)
    (answer,) = await check_dois(["10.5555/clean"], settings(), transport=fake.transport())
    assert answer.found is None and answer.status == "unknown"
    assert answer.sources["crossref"].state == "failed"
    assert "HTTP 503" in (answer.sources["crossref"].reason or "")


@pytest.mark.anyio
async def test_one_source_down_still_reports_what_the_other_knows() -> None:
    fake = upstreams()
    fake.fail("crossref", "503", times=5)
    (answer,) = await check_dois(["10.5555/oa-only"], settings(), transport=fake.transport())
    assert answer.found is True and answer.status == "retraction"


@pytest.mark.anyio
async def test_crossref_down_is_unknown_even_when_openalex_knows_the_work() -> None:
    """Crossref carries the publishers' notices: without it, no notice is not clean."""
    fake = upstreams()
    fake.fail("crossref", "503", times=5)
    (answer,) = await check_dois(["10.5555/clean"], settings(), transport=fake.transport())
    assert answer.found is True and answer.title == "A clean paper"
    assert (answer.status, answer.unscreened) == ("unknown", ["crossref"])


@pytest.mark.anyio
async def test_unknown_doi_is_not_found_when_every_source_answered() -> None:
    (answer,) = await check_dois(["10.5555/missing"], settings(), transport=upstreams().transport())
    assert (answer.found, answer.status) == (False, "not-found")


@pytest.mark.anyio
async def test_offline_check_uses_the_snapshot_and_says_how_old_it_is() -> None:
    config = settings(offline=True)
    install_snapshot(config)
    fake = FakeUpstreams()
    (answer,) = await check_dois([WAKEFIELD], config, transport=fake.transport())
    assert fake.requests == []
    assert [(n.kind, n.date) for n in answer.notices] == [
        (NoticeKind.CORRECTION, "2004-03-06"),
        (NoticeKind.RETRACTION, "2010-02-06"),
    ]
    assert answer.found is None and answer.withdrawn
    assert answer.snapshot_age_days == 0.0
    assert answer.sources["crossref"].state == "failed"


@pytest.mark.anyio
async def test_get_notice_prefers_the_snapshot() -> None:
    config = settings()
    install_snapshot(config)
    fake = FakeUpstreams()
    lookup = await get_notice("10.1016/S0140-6736(10)60175-4", config, transport=fake.transport())
    assert lookup.origin == "retractionwatch snapshot" and fake.requests == []
    assert [r.original_doi for r in lookup.records] == ["10.1016/s0140-6736(97)11096-0"]


@pytest.mark.anyio
async def test_get_notice_falls_back_to_the_notice_record_in_crossref() -> None:
    lookup = await get_notice("10.5555/notice", settings(), transport=upstreams().transport())
    assert lookup.origin == "crossref" and lookup.found is True
    (notice,) = lookup.notices
    assert (notice.kind, notice.target_doi) == (NoticeKind.RETRACTION, "10.5555/retracted")

    missing = await get_notice("10.5555/none", settings(), transport=upstreams().transport())
    assert missing.found is False
