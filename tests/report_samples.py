"""Hand-made AuditReports covering every verdict, for the renderer, policy and CLI tests.

The findings mirror what the verification engine emits (codes, fields, sources,
record ids), so renderers are exercised on realistic evidence without a network.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from refaudit.models import (
    AuditReport,
    Finding,
    InputProblem,
    Notice,
    NoticeKind,
    Person,
    Reference,
    Result,
    RunStats,
    SourceStatus,
    Verdict,
    Work,
)
from refaudit.policy import Tally

BIB = "refs.bib"

BIB_TEXT = """% Bibliography for the paper. Keep this comment.
@string{nips = "Advances in Neural Information Processing Systems"}

@inproceedings{vaswani2017attention,
  title     = {Attention Is All You Need},
  author    = {Vaswani, Ashish and Shazeer, Noam},
  booktitle = nips,
  year      = {2017},
}

@article{lecun2015deep,
	title = {Deep Learning},
	author = {LeCun, Yann and Bengio, Yoshua and Hinton, Geoffrey},
	journal = {Nature},
	year = {2016},
	volume = {521},
	pages = {436--445},
	note = {A review},
}

@article{smith2021quantum,
  title = {Quantum Gravity for Large Language Models},
  author = {Smith, John},
  journal = {Journal of Imaginary Results},
  year = {2021},
}

@article{wakefield1998,
  title = {Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive
           developmental disorder in children},
  author = {Wakefield, A. J. and Murch, S. H.},
  journal = {The Lancet},
  year = {1998},
  doi = {10.1016/S0140-6736(97)11096-0},
}

@misc{offline2020,
  title = {Some Report},
  author = {Doe, Jane},
  year = {2020},
}

@misc{website,
  title = {Project homepage},
  howpublished = {\\url{https://example.org}},
}
"""


def _work_attention() -> Work:
    return Work(
        source="crossref",
        source_id="10.5555/3295222.3295349",
        type="proceedings-article",
        title="Attention is All you Need",
        authors=[Person("Vaswani", "Ashish"), Person("Shazeer", "Noam")],
        year=2017,
        venue="Advances in Neural Information Processing Systems",
        doi="10.5555/3295222.3295349",
        pages="5998-6008",
        volume="30",
    )


def _work_lecun() -> Work:
    return Work(
        source="crossref",
        source_id="10.1038/nature14539",
        type="journal-article",
        title="Deep learning",
        authors=[Person("LeCun", "Yann"), Person("Bengio", "Yoshua"), Person("Hinton", "Geoffrey")],
        year=2015,
        venue="Nature",
        volume="521",
        issue="7553",
        pages="436-444",
        doi="10.1038/nature14539",
    )


def _work_wakefield() -> Work:
    return Work(
        source="crossref",
        source_id="10.1016/s0140-6736(97)11096-0",
        type="journal-article",
        title="RETRACTED: Ileal-lymphoid-nodular hyperplasia, non-specific colitis, "
        "and pervasive developmental disorder in children",
        authors=[Person("Wakefield", "A.J."), Person("Murch", "S.H.")],
        year=1998,
        venue="The Lancet",
        doi="10.1016/s0140-6736(97)11096-0",
    )


def sample_report() -> AuditReport:
    """Six references: verified, mismatch, not_found, retracted, unverified, skipped."""
    answered = SourceStatus("answered")
    verified = Result(
        reference=Reference(
            key="vaswani2017attention",
            entry_type="inproceedings",
            file=BIB,
            line=4,
            title="Attention Is All You Need",
            year=2017,
            fields={
                "title": "Attention Is All You Need",
                "author": "Vaswani, Ashish and Shazeer, Noam",
                "booktitle": "Advances in Neural Information Processing Systems",
                "year": "2017",
            },
        ),
        verdict=Verdict.VERIFIED,
        confidence=0.98,
        matched=_work_attention(),
        sources={"crossref": answered, "openalex": SourceStatus("cached")},
    )
    mismatch = Result(
        reference=Reference(
            key="lecun2015deep",
            entry_type="article",
            file=BIB,
            line=11,
            title="Deep Learning",
            year=2016,
            pages="436--445",
            fields={
                "title": "Deep Learning",
                "author": "LeCun, Yann and Bengio, Yoshua and Hinton, Geoffrey",
                "journal": "Nature",
                "year": "2016",
                "volume": "521",
                "pages": "436--445",
                "note": "A review",
            },
        ),
        verdict=Verdict.MISMATCH,
        confidence=0.95,
        findings=[
            Finding(
                "year-mismatch",
                "error",
                "year 2016 differs from the record (2015)",
                field="year",
                cited="2016",
                found="2015",
                source="crossref",
                record="10.1038/nature14539",
            ),
            Finding(
                "pages-mismatch",
                "warning",
                "pages 436--445 differ from the record (436-444)",
                field="pages",
                cited="436--445",
                found="436-444",
                source="crossref",
                record="10.1038/nature14539",
            ),
            Finding(
                "doi-available",
                "info",
                "the record has a DOI the entry lacks",
                field="doi",
                found="10.1038/nature14539",
                source="crossref",
                record="10.1038/nature14539",
            ),
        ],
        matched=_work_lecun(),
        sources={"crossref": answered},
    )
    not_found = Result(
        reference=Reference(
            key="smith2021quantum",
            entry_type="article",
            file=BIB,
            line=21,
            title="Quantum Gravity for Large Language Models",
            year=2021,
        ),
        verdict=Verdict.NOT_FOUND,
        findings=[
            Finding(
                "not-found",
                "error",
                "No such work found in crossref, openalex, semanticscholar",
            )
        ],
        sources={"crossref": answered, "openalex": answered, "semanticscholar": answered},
    )
    retracted = Result(
        reference=Reference(
            key="wakefield1998",
            entry_type="article",
            file=BIB,
            line=28,
            year=1998,
            doi="10.1016/s0140-6736(97)11096-0",
        ),
        verdict=Verdict.VERIFIED,
        confidence=0.99,
        matched=_work_wakefield(),
        integrity=[
            Notice(
                NoticeKind.RETRACTION,
                notice_doi="10.1016/s0140-6736(10)60175-4",
                date="2010-02-06",
                source="crossref",
                record_id="10.1016/s0140-6736(10)60175-4",
            )
        ],
        findings=[
            Finding(
                "retracted",
                "error",
                "retracted on 2010-02-06 (notice 10.1016/s0140-6736(10)60175-4)",
                source="crossref",
                record="10.1016/s0140-6736(10)60175-4",
            )
        ],
        sources={"crossref": answered},
    )
    unverified = Result(
        reference=Reference(key="offline2020", entry_type="misc", file=BIB, line=37, year=2020),
        verdict=Verdict.UNVERIFIED,
        reason="every source failed",
        findings=[Finding("unverified", "warning", "crossref: timeout; openalex: HTTP 503")],
        sources={
            "crossref": SourceStatus("failed", "timeout after 20 s"),
            "openalex": SourceStatus("failed", "HTTP 503"),
        },
    )
    skipped = Result(
        reference=Reference(
            key="website",
            entry_type="misc",
            file=BIB,
            line=43,
            ignore_reason="web page, not a publication",
        ),
        verdict=Verdict.SKIPPED,
        reason="web page, not a publication",
        findings=[Finding("skipped", "info", "web page, not a publication")],
    )
    return AuditReport(
        results=[verified, mismatch, not_found, retracted, unverified, skipped],
        problems=[
            InputProblem(
                file=BIB,
                line=50,
                key="broken",
                message="entry has no closing brace",
                code="parse-error",
            )
        ],
        files=[BIB],
        stats=RunStats(
            requests={"crossref": 7, "openalex": 3},
            cache_hits={"openalex": 2},
            elapsed_s=1.25,
        ),
    )


def suppressed_report() -> AuditReport:
    """A mismatch whose only finding an ignore rule suppressed: it must not fail the run."""
    report = sample_report()
    mismatch = report.results[1]
    for finding in mismatch.findings:
        finding.suppressed = "print edition"
    report.results = [report.results[0], mismatch]
    report.problems = []
    return report


def streamed(
    report: AuditReport,
    on_batch: Callable[[list[Result]], Sequence[Result]] | None = None,
    tally: Tally | None = None,
    *,
    batch: int = 2,
) -> AuditReport:
    """`report` handed back as `audit_references` hands it: its results in batches of
    `batch`, each counted into `tally` (which the report then carries) and given to
    `on_batch`, the report keeping what `on_batch` returns."""
    results, kept = report.results, []
    for start in range(0, len(results), batch):
        part = results[start : start + batch]
        for result in part:
            if tally is not None:
                tally.add(result)
        kept += on_batch(part) if on_batch else part
    report.results, report.tally = kept, tally
    return report
