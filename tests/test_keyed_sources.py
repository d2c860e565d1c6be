"""The key-gated sources in a whole run: asked only where they decide, quotas said plainly.

IEEE Xplore is asked about references the free sources left open and that it
can decide (IEEE/IET venue or DOI); a spent quota makes those references
unverified with one reason, never not found; Scopus' first-author-only records
never make a co-author a discrepancy; its `tb` subtype is a retraction notice.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from refaudit.audit import audit_references
from refaudit.config import Settings
from refaudit.models import AuditReport, Person, Reference, Verdict
from refaudit.render import RenderContext
from refaudit.render.table import summary_lines
from tests.fakes import FIXTURES, FakeUpstreams, crossref_work, openalex_list, openalex_work

IEEE_ARTICLE = json.loads((FIXTURES / "ieee" / "doi.json").read_text())
IEEE_EMPTY = json.loads((FIXTURES / "ieee" / "empty.json").read_text())
SCOPUS = json.loads((FIXTURES / "scopus" / "doi_batch.json").read_text())
CVPR_TITLE = IEEE_ARTICLE["articles"][0]["title"]
CVPR = Reference(
    key="shen2021",
    entry_type="inproceedings",
    title=CVPR_TITLE,
    authors=[Person("Shen", "Wen"), Person("Wei", "Zhihua")],
    authors_truncated=True,
    year=2021,
    venue="IEEE/CVF Conference on Computer Vision and Pattern Recognition",
)
INVENTED_NATURE = Reference(
    key="ghost2020",
    entry_type="article",
    title="Quantum gravitational lensing of ferroelectric tea leaves",
    authors=[Person("Nobody", "Ann")],
    year=2020,
    venue="Nature",
)
IEEE_ON_CROSSREF = Reference(
    key="known2019",
    entry_type="article",
    title="Sparse coding for radar clutter suppression in coastal waters",
    authors=[Person("Lovelace", "Ada")],
    year=2019,
    venue="IEEE Transactions on Signal Processing",
    doi="10.1109/tsp.2019.1",
)


def settings(tmp_path: Path, sources: list[str]) -> Settings:
    return Settings(
        sources=sources,
        api_keys={"ieee": "ieee-key", "scopus": "scopus-key"},
        cache_dir=tmp_path / "cache",
        data_dir=tmp_path / "data",
        max_retries=1,
    )


def free_upstreams() -> FakeUpstreams:
    """Crossref knows only the IEEE article with a DOI; its searches find nothing else."""
    fake = FakeUpstreams()
    fake.serve_crossref(
        [
            crossref_work(
                "10.1109/tsp.2019.1",
                IEEE_ON_CROSSREF.title,
                authors=[("Ada", "Lovelace")],
                year=2019,
                venue="IEEE Transactions on Signal Processing",
            )
        ]
    )
    return fake


def serve_ieee(fake: FakeUpstreams, reply: httpx.Response | None = None) -> None:
    def handler(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        if reply is not None:
            return reply
        title = request.url.params.get("article_title", "")
        return httpx.Response(200, json=IEEE_ARTICLE if "verifiability" in title else IEEE_EMPTY)

    fake.route("ieee", r"/api/v1/search/articles", handler)


async def audit(fake: FakeUpstreams, config: Settings, references: list[Reference]) -> AuditReport:
    return await audit_references(references, config, transport=fake.transport())


@pytest.mark.anyio
async def test_ieee_is_asked_only_about_ieee_references_the_free_sources_left_open(
    tmp_path: Path,
) -> None:
    fake = free_upstreams()
    serve_ieee(fake)

    report = await audit(
        fake, settings(tmp_path, ["crossref", "ieee"]), [IEEE_ON_CROSSREF, CVPR, INVENTED_NATURE]
    )

    verdicts = {r.reference.key: r.verdict for r in report.results}
    assert verdicts == {
        "known2019": Verdict.VERIFIED,
        "shen2021": Verdict.VERIFIED,
        "ghost2020": Verdict.NOT_FOUND,
    }
    asked = [r.url.params.get("article_title") for r in fake.requests_to("ieee")]
    assert asked == [
        "verifiability and predictability interpreting utilities of network "
        "architectures for point cloud processing"
    ]
    assert report.results[1].matched is not None and report.results[1].matched.source == "ieee"


def openalex_searching(found: dict[str, object]) -> FakeUpstreams:
    """Crossref as in `free_upstreams`; OpenAlex's search answers `found` for those titles."""
    fake = free_upstreams()

    def search(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        text = request.url.params.get("search", "").lower()
        hits = [work for words, work in found.items() if words in text]
        return httpx.Response(200, json=openalex_list(hits))  # type: ignore[arg-type]

    fake.route("openalex", r"/works", search)
    return fake


@pytest.mark.anyio
async def test_ieee_is_asked_only_where_its_record_can_confirm_or_refute_a_near_one(
    tmp_path: Path,
) -> None:
    """HALLMARK's invented CVPR papers: OpenAlex found nothing near, so IEEE cannot help.

    A near record only OpenAlex gave (other authors, no DOI) is what IEEE's own
    record can settle; a Crossref record of an IEEE DOI is IEEE's own deposit.
    """
    invented = Reference(
        key="ghostcvpr2023",
        entry_type="inproceedings",
        title="Self-supervised holographic gait priors for monocular avatar relighting",
        authors=[Person("Nobody", "Ann")],
        year=2023,
        venue="IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)",
    )
    other_authors = Reference(
        key="roe2021",
        entry_type="inproceedings",
        title=CVPR_TITLE,
        authors=[Person("Roe", "Jane")],
        year=2021,
        venue="IEEE/CVF Conference on Computer Vision and Pattern Recognition",
    )
    wrong_authors_with_doi = Reference(
        key="doe2019",
        entry_type="article",
        title=IEEE_ON_CROSSREF.title,
        authors=[Person("Doe", "John")],
        year=2019,
        venue="IEEE Transactions on Signal Processing",
        doi="10.1109/tsp.2019.1",
    )
    fake = openalex_searching(
        {"verifiability": openalex_work("W1", CVPR_TITLE, authors=["Wen Shen"], year=2021)}
    )
    serve_ieee(fake)
    references = [invented, other_authors, wrong_authors_with_doi]

    report = await audit(fake, settings(tmp_path, ["crossref", "openalex", "ieee"]), references)

    asked = [r.url.params.get("article_title") for r in fake.requests_to("ieee")]
    assert asked == [
        "verifiability and predictability interpreting utilities of network "
        "architectures for point cloud processing"
    ]
    invented_result, other_result, doi_result = report.results
    assert invented_result.verdict is Verdict.NOT_FOUND
    assert invented_result.sources["ieee"].why == "decided"
    assert "OpenAlex searched and found nothing near" in (
        invented_result.sources["ieee"].reason or ""
    )
    assert other_result.sources["ieee"].state == "answered"
    assert doi_result.verdict is Verdict.MISMATCH
    assert "publisher's own record" in (doi_result.sources["ieee"].reason or "")


@pytest.mark.anyio
async def test_a_spent_daily_quota_leaves_its_references_unverified_with_one_reason(
    tmp_path: Path,
) -> None:
    fake = free_upstreams()
    over = httpx.Response(
        403,
        text="<h1>Developer Over Rate</h1>",
        headers={"X-Error-Detail-Header": "Account Over Rate Limit", "Retry-After": "600"},
    )
    serve_ieee(fake, over)
    second_ieee_ref = Reference(
        key="other2018",
        entry_type="article",
        title="Adaptive beamforming for underwater acoustic arrays with sparse priors",
        year=2018,
        venue="IEEE Journal of Oceanic Engineering",
    )

    report = await audit(
        fake, settings(tmp_path, ["crossref", "ieee"]), [CVPR, second_ieee_ref, INVENTED_NATURE]
    )

    verdicts = [r.verdict for r in report.results]
    assert verdicts == [Verdict.UNVERIFIED, Verdict.UNVERIFIED, Verdict.NOT_FOUND]
    reason = "IEEE Xplore daily quota spent until 00:00 UTC"
    assert all(reason in (r.reason or "") for r in report.results[:2])
    assert len(fake.requests_to("ieee")) == 1
    summary = "\n".join(summary_lines(report, RenderContext()))
    unverified_line = [line for line in summary.splitlines() if "unverified" in line]
    assert sum(line.count(reason) for line in unverified_line) <= 1


def ieee_article(doi: str, title: str) -> dict[str, object]:
    """The recorded Xplore article, as the record of another IEEE paper."""
    return {**IEEE_ARTICLE["articles"][0], "doi": doi, "title": title}


@pytest.mark.anyio
async def test_ieee_alone_past_its_daily_quota_never_calls_a_real_doi_unregistered(
    tmp_path: Path,
) -> None:
    """`--sources ieee` on more real IEEE papers than the day's calls cover."""
    papers = {
        f"10.1109/joe.2018.{n}": f"Adaptive beamforming for underwater arrays, part {word}"
        for n, word in enumerate(("one", "two", "three", "four", "five", "six"), start=8000001)
    }
    quota = 2
    fake = FakeUpstreams()

    def xplore(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        if len(fake.requests_to("ieee")) > quota:
            return httpx.Response(
                403,
                text="<h1>Developer Over Rate</h1>",
                headers={"X-Error-Detail-Header": "Account Over Rate Limit", "Retry-After": "7200"},
            )
        doi = request.url.params.get("doi", "")
        hits = [ieee_article(doi, papers[doi])] if doi in papers else []
        return httpx.Response(200, json={"total_records": len(hits), "articles": hits})

    fake.route("ieee", r"/api/v1/search/articles", xplore)
    references = [
        Reference(
            key=f"paper{index}",
            entry_type="inproceedings",
            title=title,
            authors=[Person("Shen", "Wen")],
            authors_truncated=True,
            year=2021,
            venue="2021 IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)",
            doi=doi,
        )
        for index, (doi, title) in enumerate(papers.items())
    ]

    report = await audit(fake, settings(tmp_path, ["ieee"]), references)

    verdicts = [r.verdict for r in report.results]
    assert verdicts.count(Verdict.VERIFIED) == quota
    assert verdicts.count(Verdict.UNVERIFIED) == len(papers) - quota
    for result in report.results:
        assert not result.flagged, [(f.code, f.message) for f in result.findings]
        assert not any(f.code == "doi-not-registered" for f in result.findings)
    spent = [r for r in report.results if r.verdict is Verdict.UNVERIFIED]
    for result in spent:
        note = next(f for f in result.findings if f.code in ("unconfirmed", "unverified"))
        assert "ieee: IEEE Xplore daily quota spent" in note.message


@pytest.mark.anyio
async def test_ieee_alone_never_calls_a_doi_outside_its_prefixes_unregistered(
    tmp_path: Path,
) -> None:
    """Xplore holds IEEE's and IET's DOIs only: its silence about a Nature DOI proves nothing."""
    fake = FakeUpstreams()
    fake.json("ieee", r"/api/v1/search/articles", IEEE_EMPTY)
    nature = Reference(
        key="nature2020",
        entry_type="article",
        title="A real paper in a journal IEEE Xplore does not index",
        year=2020,
        venue="Nature",
        doi="10.1038/s41586-020-0000-0",
    )
    ieee = Reference(key="ieee2018", doi="10.1109/joe.2018.9999999")

    report = await audit(fake, settings(tmp_path, ["ieee"]), [nature, ieee])

    outside, inside = report.results
    assert not any(f.code == "doi-not-registered" for f in outside.findings)
    assert any(f.code == "doi-not-registered" for f in inside.findings)


INITIALS = {"Becker": "M.", "Tilki": "D.", "Stief": "C. G."}


def scopus_serving(entry_index: int) -> FakeUpstreams:
    """A Scopus that answers every query with one entry of the recorded batch."""
    fake = FakeUpstreams()
    entry = SCOPUS["search-results"]["entry"][entry_index]
    body = {"search-results": {**SCOPUS["search-results"], "entry": [entry]}}
    fake.json("scopus", r"/content/search/scopus", body)
    return fake


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("cited", "author_findings"),
    [
        (["Becker", "Tilki", "Stief"], {}),
        (["Tilki", "Becker", "Stief"], {"author-order": "warning"}),
    ],
    ids=["first-author-first", "first-author-cited-second"],
)
async def test_a_first_author_only_record_never_makes_co_authors_a_discrepancy(
    tmp_path: Path, cited: list[str], author_findings: dict[str, str]
) -> None:
    reference = Reference(
        key="becker2009",
        entry_type="article",
        title="Urine-based markers of angiogenesis in bladder cancer",
        authors=[Person(family, INITIALS[family]) for family in cited],
        year=2009,
        venue="Der Urologe. Ausg. A",
        doi="10.1007/s00120-009-1989-1",
    )

    report = await audit(scopus_serving(1), settings(tmp_path, ["scopus"]), [reference])

    (result,) = report.results
    assert result.verdict is Verdict.VERIFIED
    found = {f.code: f.severity for f in result.findings if f.field == "authors"}
    assert {code: severity for code, severity in found.items() if severity != "info"} == (
        author_findings
    )


@pytest.mark.anyio
async def test_scopus_retracted_subtype_is_an_integrity_notice_from_scopus(tmp_path: Path) -> None:
    fake = scopus_serving(0)
    lancet = SCOPUS["search-results"]["entry"][0]
    reference = Reference(
        key="mehra2020",
        entry_type="article",
        title=lancet["dc:title"],
        authors=[Person("Mehra", "Mandeep R.")],
        year=2020,
        venue="The Lancet",
        doi="10.1016/S0140-6736(20)31180-6",
    )

    report = await audit(fake, settings(tmp_path, ["scopus"]), [reference])

    (result,) = report.results
    assert [(n.kind.value, n.reported_by) for n in result.integrity] == [("retraction", "scopus")]
    retracted = [f for f in result.findings if f.code == "retracted"]
    assert retracted and "Scopus marks the work as retracted" in retracted[0].message


@pytest.mark.anyio
async def test_without_keys_nothing_is_sent_to_either_service(tmp_path: Path) -> None:
    fake = free_upstreams()
    config = settings(tmp_path, ["crossref", "scopus", "ieee"])
    config.api_keys = {}

    report = await audit(fake, config, [CVPR, IEEE_ON_CROSSREF])

    assert fake.count("ieee") == fake.count("scopus") == 0
    assert "ieee" not in report.results[0].sources


def test_a_partial_author_list_never_hides_a_complete_one_that_differs() -> None:
    """Two of three authors cited without "et al.": Crossref's whole list says so."""
    from refaudit.evidence import Evidence
    from refaudit.models import Work
    from refaudit.verify import decide

    people = [Person("Becker", "M."), Person("Tilki", "D."), Person("Stief", "C. G.")]
    title = "Urine-based markers of angiogenesis in bladder cancer"
    reference = Reference(key="b", title=title, authors=people[:2], year=2009, doi="10.1/b")
    common = {"title": title, "year": 2009, "doi": "10.1/b"}
    evidence = Evidence(reference)
    evidence.doi_records = [
        Work(source="crossref", authors=people, **common),
        Work(source="scopus", authors=people[:1], authors_partial=True, **common),
    ]

    result = decide(evidence, enabled_sources=["crossref", "scopus"])

    (authors,) = [f for f in result.findings if f.field == "authors"]
    assert (authors.code, authors.source) == ("author-mismatch", "crossref")


@pytest.mark.anyio
async def test_scopus_checks_what_a_failing_free_source_could_not(tmp_path: Path) -> None:
    fake = scopus_serving(1)
    fake.fail("crossref", "503", times=50)
    fake.serve_openalex([])  # answers, so the retraction screen is not left to Crossref alone
    reference = Reference(
        key="becker2009",
        entry_type="article",
        title="Urine-based markers of angiogenesis in bladder cancer",
        authors=[Person("Becker", "M.")],
        year=2009,
        venue="Der Urologe. Ausg. A",
        doi="10.1007/s00120-009-1989-1",
    )

    screened = ["crossref", "openalex"]
    with_scopus = await audit(fake, settings(tmp_path, [*screened, "scopus"]), [reference])
    without = await audit(fake, settings(tmp_path / "b", screened), [reference])

    assert with_scopus.results[0].verdict is Verdict.VERIFIED
    assert with_scopus.results[0].sources["scopus"].state == "answered"
    assert without.results[0].verdict is Verdict.UNVERIFIED
