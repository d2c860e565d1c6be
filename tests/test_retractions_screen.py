"""Screening: notices from Crossref, OpenAlex, PubMed and the snapshot → integrity + findings."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fakes import crossref_update, crossref_work, openalex_work

from refaudit.config import load_settings
from refaudit.models import Notice, NoticeKind, Reference, Result, SourceStatus, Verdict, Work
from refaudit.retractions import CREDIT, collect_notices, merge_notices, screen_results
from refaudit.retractions.csvload import load_csv
from refaudit.retractions.store import Snapshot
from refaudit.sources import crossref, openalex, pubmed

FIXTURES = Path(__file__).parent / "fixtures"
WAKEFIELD = "10.1016/S0140-6736(97)11096-0"


@pytest.fixture
def snapshot(tmp_path: Path) -> Snapshot:
    db = tmp_path / "rw.sqlite3"
    downloaded = datetime(2026, 1, 1, tzinfo=UTC)
    load_csv(
        FIXTURES / "retractionwatch" / "sample.csv", db, source_url="t", downloaded_at=downloaded
    )
    opened = Snapshot(db)
    yield opened
    opened.close()


def wakefield_crossref() -> Work:
    """Crossref's record as the live API returns it: RW-sourced correction and retraction."""
    return crossref.to_work(
        crossref_work(
            WAKEFIELD,
            "RETRACTED: Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and "
            "pervasive developmental disorder in children",
            year=1998,
            updated_by=[
                crossref_update(
                    "correction",
                    "10.1016/s0140-6736(04)15715-2",
                    date=(2004, 3, 6),
                    source="retraction-watch",
                    record_id="17269",
                ),
                crossref_update(
                    "retraction",
                    "10.1016/s0140-6736(10)60175-4",
                    date=(2010, 2, 6),
                    source="retraction-watch",
                    record_id="4036",
                ),
            ],
        )
    )


def wakefield_pubmed() -> Work:
    body = json.loads((FIXTURES / "pubmed" / "esummary.json").read_text(encoding="utf-8"))
    return pubmed.to_work(body["result"]["9500320"])


def result_for(reference: Reference, matched: Work | None = None) -> Result:
    verdict = Verdict.VERIFIED if matched else Verdict.NOT_FOUND
    return Result(reference=reference, verdict=verdict, matched=matched)


def test_wakefield_shows_the_2004_correction_then_the_2010_retraction(snapshot: Snapshot) -> None:
    work = wakefield_crossref()
    result = result_for(Reference(key="wakefield1998", doi=WAKEFIELD.lower()), work)
    screen_results([result], [[work, wakefield_pubmed()]], load_settings(), snapshot=snapshot)
    assert [(n.kind, n.date) for n in result.integrity] == [
        (NoticeKind.CORRECTION, "2004-03-06"),
        (NoticeKind.RETRACTION, "2010-02-06"),
    ]
    retraction = result.integrity[1]
    assert retraction.notice_doi == "10.1016/s0140-6736(10)60175-4"
    assert retraction.record_id == "4036"
    assert retraction.reason and "Falsification" in retraction.reason
    assert retraction.reported_by == "crossref, retractionwatch snapshot, pubmed"
    codes = [(f.code, f.severity, f.record) for f in result.findings]
    assert codes == [
        ("corrected", "info", "10.1016/s0140-6736(04)15715-2"),
        ("retracted", "error", "10.1016/s0140-6736(10)60175-4"),
    ]
    assert all(f.field is None and CREDIT in f.message for f in result.findings)
    assert result.flagged


def test_publisher_and_retraction_watch_entries_for_one_notice_become_one(
    snapshot: Snapshot,
) -> None:
    work = crossref.to_work(
        crossref_work(
            "10.1016/j.ejogrb.2014.02.038",
            updated_by=[
                crossref_update(
                    "expression_of_concern", "10.1016/j.ejogrb.2024.06.039", date=(2024, 8, 1)
                ),
                crossref_update(
                    "expression_of_concern",
                    "10.1016/j.ejogrb.2024.06.039",
                    date=(2024, 6, 27),
                    source="retraction-watch",
                    record_id="70752",
                ),
            ],
        )
    )
    (notice,) = collect_notices([work])
    assert (notice.source, notice.date, notice.record_id) == ("publisher", "2024-08-01", "70752")


def test_crossref_retraction_and_snapshot_withdrawal_of_one_notice_become_one_retraction(
    snapshot: Snapshot,
) -> None:
    # Crossref carries Retraction Watch rows with their nature ("Retraction"); the snapshot
    # reads "Withdrawn as Out of Date" in the reasons.
    work = crossref.to_work(
        crossref_work(
            "10.1002/14651858.CD011411",
            updated_by=[
                crossref_update(
                    "retraction",
                    "10.1002/14651858.CD011411.pub2",
                    date=(2017, 9, 7),
                    source="retraction-watch",
                    record_id="90002",
                )
            ],
        )
    )
    (notice,) = collect_notices([work], snapshot.lookup_doi("10.1002/14651858.CD011411"))
    assert (notice.kind, notice.date) == (NoticeKind.RETRACTION, "2017-09-07")
    assert "Withdrawn" in (notice.reason or "")
    assert notice.reported_by == "crossref, retractionwatch snapshot"


def test_a_withdrawal_that_retraction_watch_calls_a_retraction_stays_a_retraction() -> None:
    work = crossref.to_work(
        crossref_work(
            "10.1002/14651858.CD004142.pub2",
            updated_by=[
                crossref_update("withdrawal", "10.1002/14651858.CD004142.pub3", date=(2017, 2, 14)),
                crossref_update(
                    "retraction",
                    "10.1002/14651858.CD004142.pub3",
                    date=(2017, 2, 14),
                    source="retraction-watch",
                    record_id="90001",
                ),
            ],
        )
    )
    (notice,) = collect_notices([work], [])
    assert notice.kind is NoticeKind.RETRACTION
    assert notice.label == "Withdrawal" and notice.record_id == "90001"


def test_a_publisher_notice_merged_with_retraction_watch_credits_the_data() -> None:
    work = crossref.to_work(
        crossref_work(
            "10.1038/nature12968",
            updated_by=[
                crossref_update("retraction", "10.1038/nature13598", date=(2014, 7, 2)),
                crossref_update(
                    "retraction",
                    "10.1038/nature13598",
                    date=(2014, 7, 2),
                    source="retraction-watch",
                    record_id="2081",
                ),
            ],
        )
    )
    result = result_for(Reference(key="stap", doi="10.1038/nature12968"), work)
    screen_results([result], [[work]], load_settings(), snapshot=None)
    (finding,) = result.findings
    assert result.integrity[0].source == "publisher" and result.integrity[0].record_id == "2081"
    assert finding.code == "retracted" and CREDIT in finding.message

    publisher_only = crossref.to_work(
        crossref_work(
            "10.1038/other",
            updated_by=[crossref_update("retraction", "10.1038/notice", date=(2014, 7, 2))],
        )
    )
    alone = result_for(Reference(key="p", doi="10.1038/other"), publisher_only)
    screen_results([alone], [[publisher_only]], load_settings(), snapshot=None)
    assert CREDIT not in alone.findings[0].message


def test_severity_follows_the_policy_and_new_versions_are_never_flagged() -> None:
    work = crossref.to_work(
        crossref_work(
            "10.5555/paper",
            updated_by=[
                crossref_update("expression_of_concern", "10.5555/eoc", date=(2019, 1, 1)),
                crossref_update("erratum", "10.5555/err", date=(2018, 1, 1)),
                crossref_update("new_version", "10.5555/v2", date=(2020, 1, 1)),
            ],
        )
    )
    default = result_for(Reference(key="k", doi="10.5555/paper"), work)
    screen_results([default], [[work]], load_settings(), snapshot=None)
    assert [(f.code, f.severity) for f in default.findings] == [
        ("corrected", "info"),
        ("expression-of-concern", "warning"),
    ]
    assert not default.flagged

    strict = load_settings(
        overrides={"retraction_policy": {"expression_of_concern": "error", "correction": "ignore"}},
    )
    overridden = result_for(Reference(key="k", doi="10.5555/paper"), work)
    screen_results([overridden], [[work]], strict, snapshot=None)
    assert [(f.code, f.severity) for f in overridden.findings] == [
        ("expression-of-concern", "error")
    ]
    assert overridden.flagged


def test_openalex_is_retracted_alone_gives_a_dateless_openalex_notice() -> None:
    flagged = openalex.to_work(openalex_work("W1", doi="10.5555/x", is_retracted=True))
    (notice,) = collect_notices([flagged])
    assert (notice.kind, notice.source, notice.date, notice.notice_doi) == (
        NoticeKind.RETRACTION,
        "openalex",
        None,
        None,
    )
    named = crossref.to_work(
        crossref_work(
            "10.5555/x", updated_by=[crossref_update("retraction", "10.5555/r", date=(2021, 5, 1))]
        )
    )
    assert [n.source for n in collect_notices([named, flagged])] == ["publisher"]


def test_notices_a_record_issues_about_other_works_are_not_its_own() -> None:
    notice_record = crossref.to_work(
        crossref_work(
            "10.5555/the-notice",
            "Retraction notice",
            update_to=[crossref_update("retraction", "10.5555/the-paper", date=(2021, 1, 1))],
        )
    )
    assert collect_notices([notice_record]) == []


def test_merging_is_chronological_with_undated_notices_last() -> None:
    notices = [
        Notice(NoticeKind.RETRACTION, source="openalex"),
        Notice(
            NoticeKind.RETRACTION, notice_doi="10.5555/r", date="2021-05-01", source="publisher"
        ),
        Notice(NoticeKind.CORRECTION, notice_doi="10.5555/c", date="2019-02", source="publisher"),
        Notice(NoticeKind.CORRECTION, date="2019-02-11", source="pubmed", reported_by="pubmed"),
    ]
    merged = merge_notices(notices)
    assert [(n.kind, n.date) for n in merged] == [
        (NoticeKind.CORRECTION, "2019-02-11"),
        (NoticeKind.RETRACTION, "2021-05-01"),
    ]


def test_an_unresolved_doi_is_neither_flagged_nor_called_clean(snapshot: Snapshot) -> None:
    result = result_for(Reference(key="ghost", doi="10.9999/nowhere", title="Ghost paper"))
    screen_results([result], [[]], load_settings(), snapshot=snapshot)
    assert result.integrity == [] and result.findings == []


def test_a_reference_without_identifiers_is_matched_on_title_and_year(snapshot: Snapshot) -> None:
    reference = Reference(
        key="smith", title="A Study with no DOI anywhere in the record", year=2016
    )
    wrong_year = Reference(key="smith2", title=reference.title, year=2010)
    results = [result_for(reference), result_for(wrong_year)]
    screen_results(results, [[], []], load_settings(), snapshot=snapshot)
    assert [n.record_id for n in results[0].integrity] == ["90004"]
    assert results[0].findings[0].code == "retracted"
    assert results[1].integrity == []


def test_snapshot_alone_flags_a_reference_found_by_pmid(snapshot: Snapshot) -> None:
    result = result_for(Reference(key="mehra", pmid="32356626"))
    screen_results([result], [[]], load_settings(), snapshot=snapshot)
    assert [f.code for f in result.findings] == ["expression-of-concern", "retracted"]
    assert all(f.source == "retractionwatch snapshot" for f in result.findings)


def _found_by_semantic_scholar_while(crossref_state: str, openalex_state: str) -> Result:
    """Wakefield 1998 identified by Semantic Scholar alone (it carries no notices)."""
    work = Work(
        source="semanticscholar",
        title="Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive "
        "developmental disorder in children",
        year=1998,
        doi=WAKEFIELD,
    )
    result = result_for(Reference(key="wakefield1998ileal", doi=WAKEFIELD), work)
    result.sources = {
        "crossref": SourceStatus(crossref_state, "connection refused by 127.0.0.1"),
        "openalex": SourceStatus(openalex_state, "connection refused by 127.0.0.1"),
        "semanticscholar": SourceStatus("answered"),
    }
    return result


def test_a_work_no_retraction_source_could_screen_is_unverified_not_cleared() -> None:
    result = _found_by_semantic_scholar_while("failed", "failed")
    screen_results([result], [[result.matched]], load_settings(), snapshot=None)
    assert result.verdict is Verdict.UNVERIFIED
    (finding,) = result.findings
    assert finding.code == "unverified"
    assert "crossref" in finding.message and "openalex" in finding.message


def test_a_screen_that_ran_or_had_the_snapshot_keeps_the_verdict(snapshot: Snapshot) -> None:
    answered = _found_by_semantic_scholar_while("answered", "failed")
    screen_results([answered], [[answered.matched]], load_settings(), snapshot=None)
    assert answered.verdict is Verdict.VERIFIED and not answered.findings

    with_snapshot = _found_by_semantic_scholar_while("failed", "failed")
    screen_results([with_snapshot], [[with_snapshot.matched]], load_settings(), snapshot=snapshot)
    assert with_snapshot.verdict is Verdict.VERIFIED
    assert "retracted" in [f.code for f in with_snapshot.findings]
