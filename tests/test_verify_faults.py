"""A source that fails may cost a verdict, never silently clear a wrong citation.

Each case is the evidence of a fault-free run that ends in `mismatch` or
`not_found`. Taking away any one source's records and marking that source
failed (as an outage would) must leave the reference `mismatch`, `not_found`
or `unverified`, never `verified`; when it ends `unverified` on a field, the
failing source is named.
"""

from __future__ import annotations

import dataclasses

import pytest

from refaudit.evidence import Evidence
from refaudit.models import Person, Reference, SourceStatus, Verdict, Work
from refaudit.verify import decide

AUTHORS = [Person("Hadjipantelis", "Pantelis Z."), Person("Aston", "John A. D.")]
TITLE = "Unifying Amplitude and Phase Analysis: A Compositional Data Approach"


def _work(source: str, **fields: object) -> Work:
    base: dict[str, object] = dict(title=TITLE, authors=AUTHORS, year=2015)
    return Work(source=source, **{**base, **fields})  # type: ignore[arg-type]


PUBLISHED = dict(doi="10.1080/01621459.2014.990961", venue="JASA", type="journal-article")


def fabricated_doi() -> Evidence:
    """A real title with an invented DOI: every DOI source answered "unknown"."""
    reference = Reference(
        key="fabricated_doi", title=TITLE, authors=AUTHORS, year=2015, doi="10.9999/made.up.42"
    )
    evidence = Evidence(reference, doi_asked={"10.9999/made.up.42"})
    evidence.candidates = [_work("openalex", **PUBLISHED), _work("crossref", **PUBLISHED)]
    for name in ("crossref", "openalex", "datacite", "semanticscholar"):
        evidence.answered(name)
    return evidence


def preprint_as_published() -> Evidence:
    """An arXiv-only work cited as a conference paper: only the preprint is known."""
    reference = Reference(
        key="preprint", title=TITLE, authors=AUTHORS, year=2015, venue="ICLR 2015"
    )
    evidence = Evidence(reference)
    evidence.candidates = [
        _work("openalex", type="preprint", venue="arXiv (Cornell University)"),
        _work("semanticscholar"),
    ]
    for name in ("openalex", "crossref", "semanticscholar"):
        evidence.answered(name)
    return evidence


def wrong_arxiv_id() -> Evidence:
    """A published paper cited with an arXiv id arXiv does not know."""
    reference = Reference(
        key="arxiv", title=TITLE, authors=AUTHORS, year=2015, venue="JASA", arxiv_id="1501.99999"
    )
    evidence = Evidence(reference)
    evidence.candidates = [_work("crossref", **PUBLISHED)]
    for name in ("arxiv", "semanticscholar", "crossref", "openalex"):
        evidence.answered(name)
    return evidence


def fabricated_work() -> Evidence:
    reference = Reference(
        key="fabricated", title="Quantum Gradient Folding for Sparse Lattices", year=2021
    )
    evidence = Evidence(reference)
    for name in ("openalex", "crossref", "semanticscholar", "dblp"):
        evidence.answered(name)
    return evidence


CASES = [fabricated_doi, preprint_as_published, wrong_arxiv_id, fabricated_work]


def _with_outage(evidence: Evidence, source: str) -> Evidence:
    """The same evidence had `source` been down: none of its records, and a failed call."""
    broken = dataclasses.replace(
        evidence,
        doi_records=[w for w in evidence.doi_records if w.source != source],
        arxiv_records=[w for w in evidence.arxiv_records if w.source != source],
        candidates=[w for w in evidence.candidates if w.source != source],
        statuses=dict(evidence.statuses),
        doi_failed=set(evidence.doi_failed),
        arxiv_failed=set(evidence.arxiv_failed),
    )
    broken.failed(source, "HTTP 503")
    if evidence.reference.doi and source in ("crossref", "openalex", "datacite", "semanticscholar"):
        broken.doi_failed.add(source)
    if evidence.reference.arxiv_id and source in ("arxiv", "semanticscholar"):
        broken.arxiv_failed.add(source)
    return broken


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
def test_the_fault_free_evidence_is_a_wrong_citation(case) -> None:  # type: ignore[no-untyped-def]
    assert decide(case()).verdict in (Verdict.MISMATCH, Verdict.NOT_FOUND)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
@pytest.mark.parametrize(
    "source", ["crossref", "openalex", "semanticscholar", "datacite", "arxiv", "dblp"]
)
def test_an_outage_never_turns_a_wrong_citation_verified(case, source: str) -> None:  # type: ignore[no-untyped-def]
    result = decide(_with_outage(case(), source))
    assert result.verdict is not Verdict.VERIFIED
    if result.verdict is Verdict.UNVERIFIED:
        assert source in (result.reason or "")


def test_a_fabricated_doi_on_a_real_title_is_unconfirmed_when_crossref_is_down() -> None:
    result = decide(_with_outage(fabricated_doi(), "crossref"))
    assert result.verdict is Verdict.UNVERIFIED
    finding = next(f for f in result.findings if f.code == "unconfirmed")
    assert (finding.field, finding.cited, finding.source) == (
        "doi",
        "10.9999/made.up.42",
        "crossref",
    )
    assert result.matched is not None and result.matched.doi == PUBLISHED["doi"]


def test_a_failure_that_could_not_hide_anything_keeps_the_verdict() -> None:
    """PubMed failing for a paper every answering source describes in full changes nothing."""
    reference = Reference(key="ok", title=TITLE, authors=AUTHORS, year=2015, venue="JASA")
    evidence = Evidence(reference, candidates=[_work("crossref", **PUBLISHED)])
    evidence.answered("crossref")
    evidence.failed("pubmed", "HTTP 503")
    assert decide(evidence).verdict is Verdict.VERIFIED
    assert evidence.statuses["pubmed"] == SourceStatus("failed", "HTTP 503")
