"""The Retraction Watch snapshot: download, validation, atomic install and queries."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from conftest import shared_path

from refaudit.config import load_settings
from refaudit.errors import SourceUnavailable, UnexpectedResponse
from refaudit.models import NoticeKind
from refaudit.retractions.csvload import COLUMNS, load_csv, rw_date, rw_kind, rw_pmid
from refaudit.retractions.download import download_snapshot, raw_csv_url
from refaudit.retractions.store import Snapshot

SAMPLE = Path(__file__).parent / "fixtures" / "retractionwatch" / "sample.csv"
LABS = "https://api.labs.crossref.org/data/retractionwatch"
GITLAB_RAW = "https://gitlab.com/crossref/retraction-watch-data/-/raw/main/retraction_watch.csv"
WAKEFIELD = "10.1016/S0140-6736(97)11096-0"


@pytest.fixture
def snapshot(tmp_path: Path) -> Snapshot:
    db = tmp_path / "rw.sqlite3"
    load_csv(SAMPLE, db, source_url="test", downloaded_at=datetime(2026, 1, 1, tzinfo=UTC))
    opened = Snapshot(db, now=lambda: datetime(2026, 1, 11, 12, tzinfo=UTC))
    yield opened
    opened.close()


def csv_transport(body: bytes, seen: list[httpx.Request], status: int = 200) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, content=body, headers={"content-type": "text/csv"})

    return httpx.MockTransport(handler)


def test_loading_counts_rows_repairs_bad_bytes_and_records_the_newest_date(tmp_path: Path) -> None:
    report = load_csv(SAMPLE, tmp_path / "rw.sqlite3", source_url="test")
    assert (report.rows, report.repaired_rows, report.newest_notice_date) == (8, 1, "2024-11-19")


def test_a_byte_that_is_not_utf8_is_read_as_windows_1252(snapshot: Snapshot) -> None:
    (row,) = snapshot.lookup_doi("10.1111/jnc.12345")
    assert row.authors == ["Hans Müller", "Anna Schmidt"]
    assert row.kind is NoticeKind.REINSTATEMENT


def test_rows_carry_iso_dates_canonical_dois_and_no_zero_pmids(snapshot: Snapshot) -> None:
    correction, retraction = sorted(snapshot.lookup_doi(WAKEFIELD), key=lambda r: r.notice_date)
    assert (correction.notice_date, correction.kind) == ("2004-03-06", NoticeKind.CORRECTION)
    assert (retraction.notice_date, retraction.kind) == ("2010-02-06", NoticeKind.RETRACTION)
    assert retraction.notice_doi == "10.1016/s0140-6736(10)60175-4"
    assert retraction.original_date == "1998-02-28"
    assert retraction.original_pmid == "9500320"
    (withdrawn,) = snapshot.lookup_doi("10.1002/14651858.cd011411")
    assert withdrawn.notice_pmid is None and withdrawn.original_pmid is None


def test_nature_and_reasons_give_removal_and_withdrawal(snapshot: Snapshot) -> None:
    assert snapshot.lookup_doi("10.1016/j.ajcnut.2024.11.014")[0].kind is NoticeKind.REMOVAL
    assert snapshot.lookup_doi("10.1002/14651858.CD011411")[0].kind is NoticeKind.WITHDRAWAL
    assert rw_kind("Expression of concern", None) is NoticeKind.EXPRESSION_OF_CONCERN
    assert rw_kind("Retraction", "+Withdrawn to Publish in Different Journal") is (
        NoticeKind.WITHDRAWAL
    )


def test_value_parsers_follow_the_csv_conventions() -> None:
    assert rw_date("3/6/2004 0:00") == "2004-03-06"
    assert rw_date("") is None and rw_date("13/45/2020 0:00") is None
    assert rw_pmid("0") is None and rw_pmid("15016483") == "15016483"


def test_lookups_by_doi_spelling_pmid_and_title(snapshot: Snapshot) -> None:
    assert len(snapshot.lookup_doi(f"https://doi.org/{WAKEFIELD}")) == 2
    assert len(snapshot.lookup_pmid("9500320")) == 2
    assert snapshot.lookup_pmid("0") == []
    title = "A study with NO DOI anywhere in the record."
    assert [r.record_id for r in snapshot.lookup_title(title, 2016)] == ["90004"]
    assert snapshot.lookup_title(title, 2012) == []


def test_author_search_accepts_the_usual_name_forms(snapshot: Snapshot) -> None:
    for name in ("Wakefield", "Wakefield AJ", "Andrew J Wakefield", "Wakefield, Andrew"):
        assert {r.record_id for r in snapshot.by_author(name)} == {"17269", "4036"}, name
    assert snapshot.by_author("Wakefield, B.") == []
    assert [r.record_id for r in snapshot.by_author("Muller")] == ["90003"]


def test_search_filters_by_words_journal_date_and_kind(snapshot: Snapshot) -> None:
    assert {r.record_id for r in snapshot.search("covid mortality")} == {"23525", "23530"}
    hits = snapshot.search(journal="new england", nature="expression-of-concern")
    assert [r.record_id for r in hits] == ["23525"]
    assert [r.record_id for r in snapshot.search(since="2022-01-01")] == ["90001", "90004"]


def test_recent_and_record_and_status(snapshot: Snapshot) -> None:
    recent = snapshot.recent(days=1300)  # since 2022-06-21 by the snapshot's clock
    assert [r.record_id for r in recent] == ["90001", "90004"]
    assert snapshot.recent(limit=1)[0].record_id == "90001"
    assert [r.record_id for r in snapshot.record("10.1056/NEJMc2021225")] == ["23530"]
    status = snapshot.status()
    assert (status.rows, status.repaired_rows, status.age_days) == (8, 1, 10.5)


def test_a_file_that_is_not_the_retraction_watch_csv_is_rejected(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("doi,title\n10.1/x,Something\n", encoding="utf-8")
    with pytest.raises(UnexpectedResponse, match="missing columns"):
        load_csv(wrong, tmp_path / "rw.sqlite3", source_url="test")
    empty = tmp_path / "empty.csv"
    empty.write_text(",".join(COLUMNS) + ",\n", encoding="utf-8")
    with pytest.raises(UnexpectedResponse, match="no rows"):
        load_csv(empty, tmp_path / "rw.sqlite3", source_url="test")


@pytest.mark.anyio
async def test_update_streams_the_labs_csv_with_mailto_and_installs_it() -> None:
    settings = load_settings(overrides={"mailto": "me@example.org"})
    seen: list[httpx.Request] = []
    report = await download_snapshot(settings, transport=csv_transport(SAMPLE.read_bytes(), seen))
    assert report.rows == 8 and report.repaired_rows == 1
    assert seen[0].url.params["mailto"] == "me@example.org"
    assert str(seen[0].url).startswith(LABS)
    snapshot = Snapshot.open(settings)
    assert snapshot is not None and snapshot.status().source_url == LABS
    snapshot.close()


@pytest.mark.anyio
@pytest.mark.parametrize(
    "given",
    [
        "gitlab",
        "https://gitlab.com/crossref/retraction-watch-data",
        "https://gitlab.com/crossref/retraction-watch-data/-/blob/main/retraction_watch.csv",
        GITLAB_RAW,
    ],
)
async def test_update_reads_the_repository_csv_from_its_page_or_file_url(given: str) -> None:
    settings = load_settings(overrides={"mailto": "me@example.org"})
    seen: list[httpx.Request] = []
    report = await download_snapshot(
        settings, url=given, transport=csv_transport(SAMPLE.read_bytes(), seen)
    )
    assert str(seen[0].url) == GITLAB_RAW and report.source_url == GITLAB_RAW
    assert "mailto" not in seen[0].url.params


def test_github_mirrors_and_shorthands_map_to_the_raw_file() -> None:
    mirror = "https://github.com/someone/retraction-watch-data"
    raw = "https://raw.githubusercontent.com/someone/retraction-watch-data"
    assert raw_csv_url(mirror) == f"{raw}/HEAD/retraction_watch.csv"
    assert raw_csv_url(f"{mirror}/blob/v2/retraction_watch.csv") == f"{raw}/v2/retraction_watch.csv"
    assert raw_csv_url("labs") == LABS
    assert raw_csv_url("https://example.org/rw.csv") == "https://example.org/rw.csv"


def test_a_cut_off_last_row_is_left_out_and_reported(tmp_path: Path) -> None:
    cut = tmp_path / "cut.csv"
    cut.write_bytes(SAMPLE.read_bytes() + b'99999,"Title cut off in the middle of a')
    report = load_csv(cut, tmp_path / "rw.sqlite3", source_url="test")
    assert report.rows == 8 and report.repaired_records == ["90003"]
    assert report.skipped == ["line 11: 2 columns instead of 20"]


def test_a_damaged_file_is_rejected_and_the_previous_snapshot_kept(tmp_path: Path) -> None:
    settings = load_settings()
    asyncio.run(download_snapshot(settings, url=str(SAMPLE)))
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    shifted = tmp_path / "shifted.csv"
    shifted.write_bytes(lines[0] + b"".join(b"x;" + line for line in lines[1:] * 3))
    with pytest.raises(UnexpectedResponse, match="24 rows do not have the CSV's columns"):
        asyncio.run(download_snapshot(settings, url=str(shifted)))
    huge = tmp_path / "huge.csv"
    huge.write_bytes(SAMPLE.read_bytes() + b'1,"' + b"x" * 200_000 + b'"\n')
    with pytest.raises(UnexpectedResponse, match="malformed CSV at line"):
        asyncio.run(download_snapshot(settings, url=str(huge)))
    lfs = tmp_path / "lfs.csv"
    lfs.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:ab\n", encoding="utf-8")
    with pytest.raises(UnexpectedResponse, match="Git LFS pointer"):
        asyncio.run(download_snapshot(settings, url=str(lfs)))
    snapshot = Snapshot.open(settings)
    assert snapshot is not None and snapshot.status().rows == 8
    assert snapshot.status().repaired_records == ["90003"]
    snapshot.close()


@pytest.mark.anyio
async def test_a_failed_or_invalid_download_keeps_the_previous_snapshot() -> None:
    settings = load_settings()
    await download_snapshot(settings, transport=csv_transport(SAMPLE.read_bytes(), []))
    with pytest.raises(UnexpectedResponse):
        html = b"<!DOCTYPE html><html><body>Sign in</body></html>"
        await download_snapshot(settings, transport=csv_transport(html, []))
    with pytest.raises(SourceUnavailable, match="HTTP 503"):
        await download_snapshot(settings, transport=csv_transport(b"busy", [], status=503))

    def drop(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("connection reset", request=request)

    with pytest.raises(SourceUnavailable, match="download failed"):
        await download_snapshot(settings, transport=httpx.MockTransport(drop))
    snapshot = Snapshot.open(settings)
    assert snapshot is not None and snapshot.status().rows == 8
    snapshot.close()
    leftovers = [p.name for p in settings.resolved_data_dir().iterdir()]
    assert leftovers == ["retractionwatch.sqlite3"]


def test_snapshot_age_counts_days_since_download(tmp_path: Path) -> None:
    db = tmp_path / "rw.sqlite3"
    downloaded = datetime(2026, 3, 1, tzinfo=UTC)
    load_csv(SAMPLE, db, source_url="test", downloaded_at=downloaded)
    snapshot = Snapshot(db, now=lambda: downloaded + timedelta(days=45))
    assert snapshot.age_days == 45
    snapshot.close()


@pytest.mark.shared
def test_the_real_retraction_watch_rows_load_and_keep_wakefield_history(tmp_path: Path) -> None:
    sample = shared_path(
        "upstream-samples", "retractionwatch", "retraction-check_retractionwatch-sample.csv"
    )
    report = load_csv(sample, tmp_path / "rw.sqlite3", source_url="sample")
    assert report.rows == 13 and report.repaired_rows == 0
    snapshot = Snapshot(tmp_path / "rw.sqlite3")
    kinds = [(r.notice_date, r.kind) for r in snapshot.lookup_doi(WAKEFIELD)]
    assert sorted(kinds) == [
        ("2004-03-06", NoticeKind.CORRECTION),
        ("2010-02-06", NoticeKind.RETRACTION),
    ]
    assert snapshot.lookup_doi("10.1016/j.ajcnut.2024.11.014")[0].kind is NoticeKind.REMOVAL
    snapshot.close()


@pytest.mark.shared
def test_a_processed_derivative_of_the_csv_is_not_mistaken_for_it(tmp_path: Path) -> None:
    derived = shared_path(
        "upstream-samples", "retractionwatch", "mdpi-sprint_retraction_watch_etl_sampled.csv"
    )
    with pytest.raises(UnexpectedResponse, match="not the Retraction Watch CSV"):
        load_csv(derived, tmp_path / "rw.sqlite3", source_url="sample")
