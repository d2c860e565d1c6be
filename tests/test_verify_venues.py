"""Venue findings: a preprint-typed record that names the cited venue is not "only a preprint"."""

from __future__ import annotations

import pytest

from refaudit.evidence import Evidence
from refaudit.models import Person, Reference, Verdict, Work
from refaudit.verify import decide

AUTHORS = [Person("Zhou", "Sheng"), Person("Wang", "Yucheng"), Person("Chen", "Defang")]
TITLE = "Distilling Holistic Knowledge with Graph Neural Networks"


def _record(venue: str) -> Work:
    return Work(
        source="openalex", type="preprint", title=TITLE, authors=AUTHORS, year=2021, venue=venue
    )


@pytest.mark.parametrize(
    ("record_venue", "verdict"),
    [
        ("2021 IEEE/CVF International Conference on Computer Vision (ICCV)", Verdict.VERIFIED),
        ("arXiv (Cornell University)", Verdict.MISMATCH),
    ],
    ids=["record-names-the-proceedings", "record-is-only-an-arxiv-preprint"],
)
def test_a_published_venue_cited_for_a_preprint_typed_record(
    record_venue: str, verdict: Verdict
) -> None:
    reference = Reference(
        key="zhou2021",
        entry_type="inproceedings",
        title=TITLE,
        authors=AUTHORS,
        year=2021,
        venue="ICCV",
    )
    result = decide(Evidence(reference=reference, candidates=[_record(record_venue)]))
    assert result.verdict == verdict
    assert any(f.code == "venue-mismatch" for f in result.findings) is (verdict == Verdict.MISMATCH)


@pytest.mark.parametrize(
    ("cited_venue", "verdict"),
    [("British Film Institute", Verdict.VERIFIED), ("Journal of Film Studies", Verdict.MISMATCH)],
    ids=["publisher", "a-journal"],
)
def test_a_book_cited_by_its_publisher(cited_venue: str, verdict: Verdict) -> None:
    book = Work(
        source="openalex",
        type="book",
        title="The Cinema of Small Nations",
        authors=[Person("Hjort", "Mette")],
        year=2007,
        venue="BJPsych International",
        publisher="British Film Institute",
    )
    reference = Reference(
        key="hjort2007",
        entry_type="misc",
        title=book.title,
        authors=book.authors,
        year=2007,
        venue=cited_venue,
    )
    assert decide(Evidence(reference=reference, candidates=[book])).verdict == verdict
