"""`retractions update` never replaces a good snapshot with a cut-off or tiny download."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import httpx
import pytest

from refaudit.config import load_settings
from refaudit.errors import UnexpectedResponse
from refaudit.retractions.download import download_snapshot
from refaudit.retractions.store import Snapshot

SAMPLE = Path(__file__).parents[1] / "fixtures" / "retractionwatch" / "sample.csv"
pytestmark = pytest.mark.anyio


def csv_with(rows: int, *, hollow: bool = False) -> bytes:
    """A Retraction Watch CSV of `rows` rows: the sample's rows, renumbered, over and over.

    `hollow` keeps each row's Record ID and columns but empties every other field, as a
    broken export would.
    """
    header, *sample = list(csv.reader(io.StringIO(SAMPLE.read_bytes().decode("cp1252"))))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for n in range(rows):
        row = [""] * len(header) if hollow else list(sample[n % len(sample)])
        row[0] = str(100_000 + n)
        writer.writerow(row)
    return out.getvalue().encode("utf-8")


def serving(body: bytes, *, length: int | None = None) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "text/csv"}
        if length is not None:
            headers["content-length"] = str(length)
        return httpx.Response(200, content=body, headers=headers)

    return httpx.MockTransport(handler)


def installed_rows(settings: object) -> int:
    snapshot = Snapshot.open(settings)
    assert snapshot is not None
    try:
        return snapshot.status().rows
    finally:
        snapshot.close()


async def test_a_truncated_download_keeps_the_installed_snapshot() -> None:
    settings = load_settings()
    full = csv_with(400)
    await download_snapshot(settings, transport=serving(full))
    assert installed_rows(settings) == 400

    cut = full[: int(len(full) * 0.4)]
    with pytest.raises(UnexpectedResponse, match="far fewer than the 400"):
        await download_snapshot(settings, transport=serving(cut))
    assert installed_rows(settings) == 400


async def test_fewer_rows_can_be_installed_on_purpose() -> None:
    settings = load_settings()
    await download_snapshot(settings, transport=serving(csv_with(400)))
    report = await download_snapshot(
        settings, transport=serving(csv_with(100)), allow_fewer_rows=True
    )
    assert report.rows == 100 and installed_rows(settings) == 100


async def test_a_body_shorter_than_its_content_length_is_refused() -> None:
    settings = load_settings()
    full = csv_with(50)
    await download_snapshot(settings, transport=serving(full))
    with pytest.raises(UnexpectedResponse, match="cut short"):
        await download_snapshot(settings, transport=serving(full[:-300], length=len(full)))
    assert installed_rows(settings) == 50


async def test_a_download_far_smaller_than_the_installed_csv_is_refused() -> None:
    settings = load_settings()
    await download_snapshot(settings, transport=serving(csv_with(400)))
    hollow = csv_with(400, hollow=True)
    with pytest.raises(UnexpectedResponse, match="far smaller than the"):
        await download_snapshot(settings, transport=serving(hollow, length=len(hollow)))
    snapshot = Snapshot.open(settings)
    assert snapshot is not None
    try:
        assert snapshot.status().rows == 400
        assert snapshot.record("10.1056/NEJMc2021225"), "the installed notices are still there"
    finally:
        snapshot.close()


async def test_a_header_without_rows_is_refused_even_on_purpose() -> None:
    settings = load_settings()
    await download_snapshot(settings, transport=serving(csv_with(30)))
    with pytest.raises(UnexpectedResponse, match="no rows"):
        await download_snapshot(settings, transport=serving(csv_with(0)), allow_fewer_rows=True)
    assert installed_rows(settings) == 30
