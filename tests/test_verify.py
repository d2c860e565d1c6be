"""Every finding code, produced from small evidence: what the sources said → verdict and findings.

Each case cites one real-looking work with one thing wrong (or one source down)
and says which finding and verdict `decide` must give. A last test checks that
the cases and the integrity screen together reach every code in the registry,
so a new code cannot land without a case here.
"""

from __future__ import annotations

import dataclasses
import datetime
from dataclasses import dataclass, field

import pytest

from refaudit.config import load_settings
from refaudit.evidence import Evidence
from refaudit.findings import FINDING_CODES, URL_CODES
from refaudit.models import Notice, Person, Reference, SourceStatus, Verdict, Work
from refaudit.notices import NOTICE_FINDING_CODES
from refaudit.parsing import parse_bibtex
from refaudit.retractions import findings_for
from refaudit.sources.doiorg import Registration
from refaudit.verify import decide

DOI = "10.1234/widgets.2019"
TITLE = "Deep learning for automated widget inspection on assembly lines"
AUTHORS = [Person("Lovelace", "Ada"), Person("Turing", "Alan"), Person("Hopper", "Grace")]
ARTICLE = Work(
    source="crossref",
    source_id=DOI,
    type="journal-article",
    doi=DOI,
    title=TITLE,
    authors=AUTHORS,
    year=2019,
    venue="Journal of Widget Science",
    volume="12",
    pages="101-118",
)
OTHER = Work(
    source="crossref",
    type="journal-article",
    doi="10.5555/soil.2003",
    title="Soil moisture dynamics in alpine meadows",
    authors=[Person("Keller", "Hans")],
    year=2003,
    venue="Alpine Ecology",
)
PREPRINT = Work(
    source="arxiv",
    type="preprint",
    arxiv_id="1901.00001",
    arxiv_version=2,
    title=TITLE,
    authors=AUTHORS,
    year=2019,
    venue="arXiv",
)
REGISTRIES = ("crossref", "openalex", "datacite", "semanticscholar")
# A Springer handbook and one of its chapters, as Crossref describes them.
BOOK = Work(
    source="crossref",
    type="edited-book",
    doi="10.1007/978-3-031-12897-4",
    title="Handbook of Health Informatics",
    year=2016,
    publisher="Springer International Publishing",
    isbn=["9783031128974"],
)
CHAPTER = Work(
    source="crossref",
    type="book-chapter",
    doi="10.1007/978-3-031-12897-4_2",
    title="A primer on interoperability",
    authors=[Person("Xu", "Chloe")],
    year=2016,
    venue="Handbook of Health Informatics",
    pages="65-83",
)


def chapter(**changes: object) -> Reference:
    """The chapter cited in its book, with the book's DOI."""
    fields: dict[str, object] = dict(
        key="xu2016primer",
        entry_type="incollection",
        title=CHAPTER.title,
        authors=list(CHAPTER.authors),
        year=2016,
        venue="Handbook of Health Informatics",
        pages="65--83",
        doi=BOOK.doi,
    )
    fields.update(changes)
    return Reference(**fields)  # type: ignore[arg-type]


def cited(**changes: object) -> Reference:
    """The article cited correctly, with `changes` applied."""
    fields: dict[str, object] = dict(
        key="lovelace2019",
        entry_type="article",
        title=TITLE,
        authors=list(AUTHORS),
        year=2019,
        venue="Journal of Widget Science",
        volume="12",
        pages="101--118",
        doi=DOI,
    )
    fields.update(changes)
    return Reference(**fields)  # type: ignore[arg-type]


def answered(*names: str) -> dict[str, SourceStatus]:
    return {name: SourceStatus("answered") for name in names}


@dataclass
class Case:
    reference: Reference
    verdict: Verdict
    code: str | None
    doi_records: list[Work] = field(default_factory=list)
    arxiv_records: list[Work] = field(default_factory=list)
    candidates: list[Work] = field(default_factory=list)
    statuses: dict[str, SourceStatus] = field(default_factory=lambda: answered(*REGISTRIES))
    doi_failed: set[str] = field(default_factory=set)
    doi_registration: Registration | None = None

    def evidence(self) -> Evidence:
        return Evidence(
            reference=self.reference,
            doi_records=self.doi_records,
            arxiv_records=self.arxiv_records,
            candidates=self.candidates,
            statuses=self.statuses,
            doi_failed=self.doi_failed,
            doi_registration=self.doi_registration,
        )


NEXT_YEARS = datetime.date.today().year + 2

CASES: dict[str, Case] = {
    "correct": Case(cited(), Verdict.VERIFIED, None, doi_records=[ARTICLE]),
    "title-word-changed": Case(
        cited(title=TITLE.replace("automated", "robotic")),
        Verdict.MISMATCH,
        "title-mismatch",
        doi_records=[ARTICLE],
    ),
    "title-misspelt": Case(
        cited(title=TITLE.replace("inspection", "inspectoin")),
        Verdict.MISMATCH,
        "title-typo",
        doi_records=[ARTICLE],
    ),
    "title-without-subtitle": Case(
        cited(),
        Verdict.VERIFIED,
        "title-form",
        doi_records=[dataclasses.replace(ARTICLE, title=f"{TITLE}: A survey and a benchmark")],
    ),
    "authors-replaced": Case(
        cited(authors=[Person("Smith", "John"), Person("Roe", "Jane"), Person("Brown", "Bob")]),
        Verdict.MISMATCH,
        "author-mismatch",
        doi_records=[ARTICLE],
    ),
    "author-misspelt": Case(
        cited(authors=[Person("Lovelase", "Ada"), *AUTHORS[1:]]),
        Verdict.MISMATCH,
        "author-misspelled",
        doi_records=[ARTICLE],
    ),
    "authors-reordered": Case(
        cited(authors=[AUTHORS[1], AUTHORS[0], AUTHORS[2]]),
        Verdict.VERIFIED,
        "author-order",
        doi_records=[ARTICLE],
    ),
    "placeholder-authors": Case(
        cited(authors=[Person("Doe", "John")]),
        Verdict.MISMATCH,
        "placeholder-authors",
        doi_records=[ARTICLE],
    ),
    "record-lists-one-author": Case(
        cited(),
        Verdict.VERIFIED,
        "author-list-short",
        doi_records=[dataclasses.replace(ARTICLE, authors=AUTHORS[:1])],
    ),
    "year-in-the-future": Case(
        cited(year=NEXT_YEARS), Verdict.MISMATCH, "future-date", doi_records=[ARTICLE]
    ),
    "year-wrong": Case(cited(year=2012), Verdict.MISMATCH, "year-mismatch", doi_records=[ARTICLE]),
    "year-one-off": Case(
        cited(year=2018), Verdict.MISMATCH, "year-adjacent", doi_records=[ARTICLE]
    ),
    "venue-wrong": Case(
        cited(venue="Annals of Botany"), Verdict.MISMATCH, "venue-mismatch", doi_records=[ARTICLE]
    ),
    "venue-abbreviation-that-leaves-out-a-word": Case(
        cited(venue="J. Widget"), Verdict.VERIFIED, "venue-unconfirmed", doi_records=[ARTICLE]
    ),
    "pages-wrong": Case(
        cited(pages="5--9"), Verdict.MISMATCH, "pages-mismatch", doi_records=[ARTICLE]
    ),
    "volume-wrong": Case(
        cited(volume="99"), Verdict.MISMATCH, "volume-mismatch", doi_records=[ARTICLE]
    ),
    "no-doi-cited": Case(cited(doi=None), Verdict.VERIFIED, "doi-available", candidates=[ARTICLE]),
    "preprint-cited-published-exists": Case(
        cited(doi=None, venue=None, volume=None, pages=None, arxiv_id="1901.00001"),
        Verdict.VERIFIED,
        "published-version-available",
        arxiv_records=[PREPRINT],
        candidates=[ARTICLE],
        statuses=answered(*REGISTRIES, "arxiv"),
    ),
    "arxiv-version-that-does-not-exist": Case(
        cited(
            doi=None, venue=None, volume=None, pages=None, arxiv_id="1901.00001", arxiv_version=7
        ),
        Verdict.VERIFIED,
        "arxiv-version",
        arxiv_records=[PREPRINT],
        statuses=answered(*REGISTRIES, "arxiv"),
    ),
    "doi-nobody-knows": Case(
        cited(doi="10.9999/made-up"),
        Verdict.MISMATCH,
        "doi-not-registered",
        candidates=[ARTICLE],
    ),
    "doi-outside-the-publishers-prefixes-with-ieee-alone": Case(
        cited(doi="10.91909/2020.84267", venue="IEEE Transactions on Widgets"),
        Verdict.MISMATCH,
        "doi-differs",
        candidates=[
            Work(
                source="ieee",
                doi="10.1109/tw.2019.8675309",
                title=TITLE,
                authors=list(AUTHORS),
                year=2019,
                venue="IEEE Transactions on Widgets",
                type="journal-article",
            )
        ],
        statuses=answered("ieee"),
    ),
    "doi-of-another-agency": Case(
        cited(doi="10.11501/3180371"),
        Verdict.VERIFIED,
        "doi-other-agency",
        doi_records=[dataclasses.replace(ARTICLE, source="openalex", doi="10.11501/3180371")],
        doi_registration=Registration(True, "JaLC"),
    ),
    "doi-of-another-agency-that-no-index-holds": Case(
        cited(doi="10.11501/3180371"),
        Verdict.UNVERIFIED,
        "doi-other-agency",
        doi_registration=Registration(True, "JaLC"),
    ),
    "doi-of-another-work": Case(
        cited(doi=OTHER.doi),
        Verdict.MISMATCH,
        "doi-points-elsewhere",
        doi_records=[OTHER],
        candidates=[ARTICLE],
    ),
    "chapter-cited-with-its-book-doi": Case(
        chapter(),
        Verdict.MISMATCH,
        "doi-of-book",
        doi_records=[BOOK],
        candidates=[CHAPTER],
    ),
    "chapter-without-a-doi-cited-with-its-book-doi": Case(
        chapter(),
        Verdict.VERIFIED,
        "doi-book-only",
        doi_records=[BOOK],
        candidates=[dataclasses.replace(CHAPTER, source="openalex", doi=None)],
    ),
    "chapter-cited-in-another-book-with-that-book-doi": Case(
        chapter(venue="Handbook of Soil Science", doi=OTHER.doi),
        Verdict.MISMATCH,
        "doi-points-elsewhere",
        doi_records=[OTHER],
        candidates=[CHAPTER],
    ),
    "real-doi-on-a-fabricated-citation": Case(
        cited(
            doi=OTHER.doi,
            title="Quantum annealing schedules for protein folding",
            authors=[Person("Nobody", "Nemo")],
        ),
        Verdict.NOT_FOUND,
        "doi-points-elsewhere",
        doi_records=[OTHER],
    ),
    "arxiv-id-of-another-work": Case(
        cited(doi=None, arxiv_id="2001.99999"),
        Verdict.MISMATCH,
        "arxiv-points-elsewhere",
        candidates=[ARTICLE],
        arxiv_records=[dataclasses.replace(OTHER, source="arxiv", arxiv_id="2001.99999")],
        statuses=answered(*REGISTRIES, "arxiv"),
    ),
    "arxiv-id-nobody-knows": Case(
        cited(doi=None, arxiv_id="2001.99999"),
        Verdict.MISMATCH,
        "arxiv-not-found",
        candidates=[ARTICLE],
        statuses=answered(*REGISTRIES, "arxiv"),
    ),
    "nothing-found": Case(cited(doi=None), Verdict.NOT_FOUND, "not-found"),
    "nothing-found-and-a-source-down": Case(
        cited(doi=None),
        Verdict.UNVERIFIED,
        "unverified",
        statuses={**answered("crossref", "openalex"), "semanticscholar": SourceStatus("failed")},
    ),
    "found-but-the-doi-registry-down": Case(
        cited(doi="10.1234/widgets.2019.v2"),
        Verdict.UNVERIFIED,
        "unconfirmed",
        candidates=[dataclasses.replace(ARTICLE, source="openalex")],
        statuses={**answered("openalex"), "crossref": SourceStatus("failed", "timeout")},
        doi_failed={"crossref"},
    ),
    "web-page-without-identifier": Case(
        cited(entry_type="online", doi=None), Verdict.SKIPPED, "skipped"
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_decide_gives_the_finding_and_verdict_the_evidence_calls_for(case: Case) -> None:
    result = decide(case.evidence())

    codes = [finding.code for finding in result.findings]
    assert result.verdict == case.verdict, (codes, result.reason)
    if case.code is None:
        assert codes == []
        return
    assert case.code in codes
    produced = next(finding for finding in result.findings if finding.code == case.code)
    entry = FINDING_CODES[case.code]
    assert produced.severity == entry.severity
    assert produced.message
    if entry.fields:
        assert produced.field in entry.fields
    if result.verdict in (Verdict.VERIFIED, Verdict.MISMATCH):
        assert result.matched is not None
        assert (result.matched.title or "").startswith(TITLE) or (
            result.matched.title == case.reference.title
        )
        assert (result.verdict == Verdict.MISMATCH) is any(
            FINDING_CODES[code].mismatch for code in codes
        )


@pytest.mark.parametrize("kind", NOTICE_FINDING_CODES, ids=str)
def test_each_notice_kind_becomes_its_integrity_finding(kind: object) -> None:
    settings = load_settings(
        overrides={"retraction_policy": {k.value: "warning" for k in NOTICE_FINDING_CODES}}
    )
    notice = Notice(kind=kind, notice_doi="10.1234/notice", source="publisher")  # type: ignore[arg-type]

    (produced,) = findings_for([notice], settings)

    assert produced.code == NOTICE_FINDING_CODES[kind]  # type: ignore[index]
    assert produced.record == "10.1234/notice"


def test_every_registered_code_is_produced_by_a_case() -> None:
    produced = {case.code for case in CASES.values() if case.code}
    # The URL codes come after the verdict (tests/test_urlcheck.py).
    assert produced | set(NOTICE_FINDING_CODES.values()) | URL_CODES == set(FINDING_CODES)


# A monograph and a review of it in a journal: the same title, other people, another year.
MONOGRAPH = Work(
    source="crossref",
    type="monograph",
    doi="10.4324/9781003712114",
    title="The Calculating Eye: Statistics and the State in Colonial India",
    authors=[Person("Miller", "Valentina")],
    year=2018,
    publisher="Routledge",
    isbn=["9781003712114"],
)
REVIEW = Work(
    source="crossref",
    type="journal-article",
    doi="10.1177/00943061195784580",
    title="The Calculating Eye: Statistics and the State in Colonial India",
    authors=[Person("Roberts", "Jennifer")],
    year=2019,
    venue="Contemporary Sociology: A Journal of Reviews",
    pages="856-858",
)


def book(**changes: object) -> Reference:
    fields: dict[str, object] = dict(
        key="miller2018calculating",
        entry_type="book",
        title=MONOGRAPH.title,
        authors=list(MONOGRAPH.authors),
        year=2018,
        publisher="Routledge",
    )
    fields.update(changes)
    return Reference(**fields)  # type: ignore[arg-type]


def test_a_book_is_matched_to_the_book_not_to_a_review_listed_first() -> None:
    result = decide(Evidence(reference=book(), candidates=[REVIEW, MONOGRAPH]))
    assert result.verdict == Verdict.VERIFIED
    assert result.matched is not None and result.matched.doi == MONOGRAPH.doi


def test_a_book_cited_with_its_reviewer_as_author_is_an_author_mismatch() -> None:
    reviewer = [Person("Roberts", "Jennifer")]
    result = decide(Evidence(reference=book(authors=reviewer), candidates=[REVIEW, MONOGRAPH]))
    assert result.verdict == Verdict.MISMATCH
    assert [f.code for f in result.findings if f.severity == "error"] == ["author-mismatch"]


def test_a_book_cited_with_the_doi_of_its_review_points_elsewhere() -> None:
    result = decide(
        Evidence(
            reference=book(doi=REVIEW.doi),
            doi_records=[REVIEW],
            candidates=[REVIEW, MONOGRAPH],
        )
    )
    assert result.matched is not None and result.matched.doi == MONOGRAPH.doi
    assert "doi-points-elsewhere" in [f.code for f in result.findings]


def test_a_journal_article_cited_as_a_book_is_still_found_when_no_book_has_its_title() -> None:
    result = decide(
        Evidence(reference=book(authors=REVIEW.authors, year=2019), candidates=[REVIEW])
    )
    assert result.matched is not None and result.matched.doi == REVIEW.doi


@pytest.mark.parametrize(
    "entry",
    [
        r"""@misc{openai2022, author = {{OpenAI}}, title = {Introducing {ChatGPT}}, year = {2022},
          howpublished = {\url{https://openai.com/blog/chatgpt}}, note = {Accessed: 2023-05-01}}""",
        r"""@misc{llama2card, title = {Llama 2 7B model card}, year = {2023},
          publisher = {Hugging Face}, url = {https://huggingface.co/meta-llama/Llama-2-7b}}""",
        r"""@online{pwc, title = {Image classification on ImageNet}, year = {2024},
          url = {https://paperswithcode.com/sota/image-classification-on-imagenet}}""",
    ],
)
def test_a_web_resource_is_skipped_as_not_a_scholarly_work(entry: str) -> None:
    (reference,) = parse_bibtex(entry, file="refs.bib").references
    result = decide(Evidence(reference=reference, statuses=answered(*REGISTRIES)))
    assert result.verdict == Verdict.SKIPPED
    assert not result.flagged


@pytest.mark.parametrize(
    ("fields", "url"),
    [
        # No URL: an invented paper is often cited as a bare @misc.
        ({}, None),
        # A URL of a paper host: an OpenReview submission.
        ({}, "https://openreview.net/forum?id=Hyg0vbWC-"),
        ({"howpublished": "arXiv preprint"}, "https://example.org/paper.pdf"),
    ],
)
def test_a_misc_that_may_be_a_paper_is_searched_and_can_be_not_found(
    fields: dict[str, str], url: str | None
) -> None:
    reference = Reference(
        key="paper", entry_type="misc", title=TITLE, year=2019, url=url, fields=fields
    )
    result = decide(Evidence(reference=reference, statuses=answered(*REGISTRIES)))
    assert result.verdict == Verdict.NOT_FOUND


THIS_YEAR = datetime.date.today().year


def test_a_preprint_posted_this_year_found_nowhere_is_too_recent_not_missing() -> None:
    reference = cited(entry_type="misc", doi=None, venue=None, volume=None, pages=None)
    reference = dataclasses.replace(reference, year=THIS_YEAR)
    result = decide(Evidence(reference=reference, statuses=answered(*REGISTRIES, "arxiv")))
    assert result.verdict == Verdict.UNVERIFIED
    assert "too recent" in (result.reason or "")


def test_a_recent_preprint_whose_arxiv_id_arxiv_does_not_know_is_still_an_error() -> None:
    reference = cited(
        entry_type="misc", doi=None, venue=None, volume=None, pages=None, arxiv_id="2601.99999"
    )
    reference = dataclasses.replace(reference, year=THIS_YEAR)
    result = decide(Evidence(reference=reference, statuses=answered(*REGISTRIES, "arxiv")))
    assert result.flagged
    assert "arxiv-not-found" in [f.code for f in result.findings]


def test_a_recent_paper_cited_in_a_journal_found_nowhere_is_not_found() -> None:
    reference = dataclasses.replace(cited(doi=None), year=THIS_YEAR)
    result = decide(Evidence(reference=reference, statuses=answered(*REGISTRIES)))
    assert result.verdict == Verdict.NOT_FOUND


def test_an_old_preprint_found_nowhere_is_not_found() -> None:
    reference = cited(entry_type="misc", doi=None, venue=None, volume=None, pages=None)
    reference = dataclasses.replace(reference, year=THIS_YEAR - 3)
    result = decide(Evidence(reference=reference, statuses=answered(*REGISTRIES, "arxiv")))
    assert result.verdict == Verdict.NOT_FOUND
