"""Screening on recorded upstream data: real Crossref `updated-by` and real Retraction Watch rows.

Reads ../shared/upstream-samples at test time (skipped when absent): retraction-check's
cached Crossref `/works/{doi}` messages, 13 genuine rows of the Retraction Watch CSV and
its labelled reading lists (retracted / concern / clean).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import shared_path

from refaudit.config import load_settings
from refaudit.identifiers import find_dois
from refaudit.models import NoticeKind, Work
from refaudit.notices import WITHDRAWING_KINDS
from refaudit.retractions import CREDIT, collect_notices, findings_for
from refaudit.retractions.csvload import load_csv
from refaudit.retractions.store import Snapshot
from refaudit.sources import crossref

pytestmark = pytest.mark.shared
SAMPLES = ("upstream-samples",)


@pytest.fixture(scope="module")
def recorded() -> dict[str, Work]:
    folder = shared_path(*SAMPLES, "crossref", "retraction-check-fixtures")
    works = {}
    for file in folder.glob("*.json"):
        work = crossref.to_work(json.loads(file.read_text(encoding="utf-8"))["message"])
        works[work.doi or ""] = work
    return works


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    rows = shared_path(*SAMPLES, "retractionwatch", "retraction-check_retractionwatch-sample.csv")
    db = tmp_path_factory.mktemp("rw") / "rw.sqlite3"
    load_csv(rows, db, source_url="sample")
    opened = Snapshot(db)
    yield opened
    opened.close()


def reading_list(name: str) -> list[str]:
    path: Path = shared_path(*SAMPLES, "labelled", "retraction-check", f"{name}.txt")
    lines = path.read_text(encoding="utf-8").splitlines()
    return [doi for line in lines if not line.startswith("#") for doi in find_dois(line)]


def screen(doi: str, recorded: dict[str, Work], snapshot: Snapshot) -> list:
    return collect_notices([recorded[doi]], snapshot.lookup_doi(doi))


def test_the_labelled_reading_lists_get_their_labels(
    recorded: dict[str, Work], snapshot: Snapshot
) -> None:
    settings = load_settings()
    clean = reading_list("clean")
    retracted = [doi for doi in reading_list("retracted") if doi not in clean]
    assert retracted and all(
        any(n.kind in WITHDRAWING_KINDS for n in screen(doi, recorded, snapshot))
        for doi in retracted
    )
    for doi in reading_list("concern"):
        findings = findings_for(screen(doi, recorded, snapshot), settings)
        assert [(f.code, f.severity) for f in findings] == [("expression-of-concern", "warning")]
    for doi in clean:
        assert screen(doi, recorded, snapshot) == []


def test_wakefield_live_and_snapshot_give_one_chronological_history(
    recorded: dict[str, Work], snapshot: Snapshot
) -> None:
    notices = screen("10.1016/s0140-6736(97)11096-0", recorded, snapshot)
    assert [(n.kind, n.date, n.record_id) for n in notices] == [
        (NoticeKind.CORRECTION, "2004-03-06", "17269"),
        (NoticeKind.RETRACTION, "2010-02-06", "4036"),
    ]
    assert all(n.source == "retraction-watch" for n in notices)
    assert all(n.reported_by == "crossref, retractionwatch snapshot" for n in notices)
    findings = findings_for(notices, load_settings())
    assert [f.severity for f in findings] == ["info", "error"]
    assert all(CREDIT in f.message for f in findings)


def test_every_recorded_notice_is_listed_once_and_new_versions_never_flag(
    recorded: dict[str, Work], snapshot: Snapshot
) -> None:
    for doi in recorded:
        notices = screen(doi, recorded, snapshot)
        keys = [(n.kind, n.notice_doi) for n in notices]
        assert len(keys) == len(set(keys)), doi
    cochrane = recorded["10.1002/14651858.cd008900.pub3"]
    assert [n.kind for n in cochrane.notices] == [NoticeKind.NEW_VERSION]
    assert findings_for(cochrane.notices, load_settings()) == []
