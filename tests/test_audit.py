"""The whole pipeline against fake upstreams: parse → look up → search → verdict → screen."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from refaudit.audit import audit_references
from refaudit.config import Settings, load_settings
from refaudit.models import Reference, Result, SnapshotState, Verdict
from refaudit.parsing import parse_bibtex
from refaudit.render import RenderContext, render
from tests.fakes import (
    FakeUpstreams,
    crossref_list,
    crossref_update,
    crossref_work,
    empty_searches,
    openalex_list,
    openalex_work,
)

pytestmark = pytest.mark.anyio

RESNET = crossref_work(
    "10.1109/CVPR.2016.90",
    "Deep Residual Learning for Image Recognition",
    authors=[("Kaiming", "He"), ("Xiangyu", "Zhang"), ("Shaoqing", "Ren"), ("Jian", "Sun")],
    year=2016,
    venue="2016 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)",
    type="proceedings-article",
)
WAKEFIELD = crossref_work(
    "10.1016/S0140-6736(97)11096-0",
    "RETRACTED: Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive "
    "developmental disorder in children",
    authors=[("A.J", "Wakefield"), ("S.H", "Murch"), ("A", "Anthony")],
    year=1998,
    venue="The Lancet",
    updated_by=[
        crossref_update("retraction", "10.1016/S0140-6736(10)60175-4", date=(2010, 2, 6)),
        crossref_update("correction", "10.1016/S0140-6736(04)15715-2", date=(2004, 3, 6)),
    ],
)
LSTM = openalex_work(
    "W2064675550",
    "Long Short-Term Memory",
    doi="10.1162/neco.1997.9.8.1735",
    authors=["Sepp Hochreiter", "Jürgen Schmidhuber"],
    year=1997,
    venue="Neural Computation",
)

BIB = r"""
@inproceedings{he2016deep,
  author = {He, Kaiming and Zhang, Xiangyu and Ren, Shaoqing and Sun, Jian},
  title = {Deep Residual Learning for Image Recognition},
  booktitle = {CVPR},
  year = {2016},
  doi = {10.1109/cvpr.2016.90}
}
@article{wakefield1998,
  author = {Wakefield, A. J. and Murch, S. H. and Anthony, A.},
  title = {Ileal-lymphoid-nodular hyperplasia, non-specific colitis,
           and pervasive developmental disorder in children},
  journal = {Lancet},
  year = {1998},
  doi = {10.1016/S0140-6736(97)11096-0}
}
@article{hochreiter1997,
  author = {Hochreiter, Sepp and Schmidhuber, J{\"u}rgen},
  title = {Long Short-Term Memory},
  journal = {Neural Computation},
  year = {1999}
}
@article{made_up2021,
  author = {Quibble, Ambrose and Fenwick, Lorna},
  title = {Recursive Hypergraph Distillation for Zero-Shot Protein Choreography},
  journal = {Journal of Imaginary Results},
  year = {2021}
}
"""


def _upstreams() -> FakeUpstreams:
    fake = FakeUpstreams()
    empty_searches(fake)
    fake.serve_crossref([RESNET, WAKEFIELD])

    def openalex(request: httpx.Request, _m: re.Match[str]) -> Any:
        if request.url.params.get("search", "").lower().startswith("long short-term"):
            return openalex_list([LSTM])
        return openalex_list([])

    fake.route("openalex", r"/works", openalex)
    return fake


def _searchable(
    crossref: list[dict[str, Any]], openalex: list[dict[str, Any]] | None = None
) -> FakeUpstreams:
    """Upstreams whose Crossref bibliographic search (and OpenAlex search, if given) hit these."""
    fake = _upstreams()
    if openalex is not None:
        fake.route("openalex", r"/works", lambda _r, _m: openalex_list(openalex))
    fake.route(
        "crossref",
        r"/works",
        lambda request, _m: crossref_list(
            crossref if "query.bibliographic" in request.url.params else []
        ),
    )
    return fake


@pytest.fixture
def settings():
    settings = load_settings(env={"REFAUDIT_CACHE_DIR": "cache", "REFAUDIT_DATA_DIR": "data"})
    settings.rate_limits = {name: 1000.0 for name in settings.sources}
    settings.max_retries = 1
    return settings


async def _audit(bib: str, settings, fake: FakeUpstreams):
    references = parse_bibtex(bib, file="refs.bib").references
    return await audit_references(references, settings, transport=fake.transport())


async def test_every_reference_gets_the_verdict_its_evidence_supports(settings) -> None:
    fake = _upstreams()
    report = await _audit(BIB, settings, fake)
    verdicts = {r.reference.key: r for r in report.results}

    assert verdicts["he2016deep"].verdict == Verdict.VERIFIED
    assert verdicts["he2016deep"].matched.doi == "10.1109/cvpr.2016.90"

    wrong_year = verdicts["hochreiter1997"]
    assert wrong_year.verdict == Verdict.MISMATCH
    year = next(f for f in wrong_year.findings if f.code == "year-mismatch")
    assert (year.field, year.cited, year.found, year.severity) == ("year", "1999", "1997", "error")
    assert year.source == "openalex" and year.record == "doi:10.1162/neco.1997.9.8.1735"
    assert "year = {1997}" in wrong_year.corrected_bibtex

    fabricated = verdicts["made_up2021"]
    assert fabricated.verdict == Verdict.NOT_FOUND and fabricated.flagged
    assert {"openalex", "crossref"} <= {
        name for name, status in fabricated.sources.items() if status.state == "answered"
    }
    # A journal outside computing and biomedicine cannot be in DBLP or PubMed ...
    for name in ("dblp", "pubmed"):
        assert fabricated.sources[name].state == "not_asked"
        assert fabricated.sources[name].why == "cannot_index"
    # ... and Crossref's matcher (its registry), OpenAlex and one more index that
    # holds journal articles have searched for it before it is called not found.
    assert fabricated.sources["semanticscholar"].state == "answered"
    arxiv = fabricated.sources["arxiv"]
    assert (arxiv.state, arxiv.why) == ("not_asked", "decided")


async def test_retracted_work_carries_its_notices_in_date_order(settings) -> None:
    report = await _audit(BIB, settings, _upstreams())
    wakefield = next(r for r in report.results if r.reference.key == "wakefield1998")
    assert wakefield.verdict == Verdict.VERIFIED
    assert [(n.kind.value, n.date[:4]) for n in wakefield.integrity] == [
        ("correction", "2004"),
        ("retraction", "2010"),
    ]
    retracted = next(f for f in wakefield.findings if f.code == "retracted")
    assert retracted.severity == "error" and retracted.record
    assert report.counts()["retracted"] == 1


async def test_dois_are_looked_up_in_batches_not_one_by_one(settings) -> None:
    works = [
        crossref_work(f"10.5555/batch.{i}", f"Batched lookup study number {i} of many", year=2020)
        for i in range(40)
    ]
    fake = FakeUpstreams()
    empty_searches(fake)
    fake.serve_crossref(works)
    fake.json("openalex", r"/works", openalex_list([]))
    bib = "\n".join(
        f"@article{{k{i}, author={{Lovelace, Ada}}, "
        f"title={{Batched lookup study number {i} of many}}, journal={{Journal of Tests}}, "
        f"year={{2020}}, doi={{10.5555/batch.{i}}}}}"
        for i in range(40)
    )
    report = await _audit(bib, settings, fake)
    assert all(r.verdict == Verdict.VERIFIED for r in report.results)
    assert fake.count("crossref") <= 2
    assert fake.count("openalex") <= 2


async def test_the_first_look_up_leaves_while_the_bibliography_is_still_read(settings) -> None:
    """A batch of identifiers is sent as soon as it is full, while the rest of the file is
    parsed; the requests are those of looking up the whole list at once."""
    from refaudit.sources.crossref import filter_batches

    count = 300
    dois = [f"10.5555/stream.{i}" for i in range(count)]
    fake = FakeUpstreams()
    empty_searches(fake)
    fake.serve_crossref(
        [
            crossref_work(doi, f"Streamed lookup study number {i}", year=2020)
            for i, doi in enumerate(dois)
        ]
    )
    fake.json("openalex", r"/works", openalex_list([]))
    # The last ten cite the first ten again: their DOIs were answered long before.
    cited = [*enumerate(dois), *enumerate(dois[:10])]
    bib = "\n".join(
        f"@article{{k{n}, author={{Lovelace, Ada}}, title={{Streamed lookup study number {i}}}, "
        f"journal={{Journal of Tests}}, year={{2020}}, doi={{{doi}}}}}"
        for n, (i, doi) in enumerate(cited)
    )
    references = parse_bibtex(bib, file="refs.bib").references
    sent = threading.Event()

    def noting(request: httpx.Request) -> httpx.Response:
        sent.set()
        return fake.handler(request)

    def reading() -> Iterator[Reference]:
        """The references as a parser hands them out: the last third only once a request
        has left (or not at all, the test failing, if none leaves before the end)."""
        for n, reference in enumerate(references):
            if n == 200 and not sent.wait(timeout=30):
                return
            yield reference

    report = await audit_references(
        reading(), settings, total=len(cited), transport=httpx.MockTransport(noting)
    )
    assert len(report.results) == len(cited)
    assert all(r.verdict == Verdict.VERIFIED for r in report.results)
    assert [r.matched.doi for r in report.results[-10:]] == dois[:10]
    assert fake.count("crossref") == len(filter_batches(dois))


async def test_long_bibliographies_are_audited_in_batches_with_the_same_verdicts(
    settings, monkeypatch
) -> None:
    from refaudit import evidence, pipeline

    references = parse_bibtex(BIB, file="refs.bib").references
    whole = await audit_references(references, settings, transport=_upstreams().transport())
    gathered: list[int] = []
    gather = evidence.gather_evidence

    async def counting_gather(batch, sources, **kwargs):
        found = await gather(batch, sources, **kwargs)
        gathered.append(len(found))
        return found

    monkeypatch.setattr(evidence, "gather_evidence", counting_gather)
    monkeypatch.setattr(pipeline, "BATCH_REFERENCES", 2)
    settings.use_cache = False
    handed: list[list[str]] = []

    def keep(results: list[Result]) -> list[Result]:
        handed.append([result.reference.key for result in results])
        return results

    batched = await audit_references(
        references, settings, transport=_upstreams().transport(), on_batch=keep
    )
    keys = [reference.key for reference in references]
    assert gathered == [len(keys[i : i + 2]) for i in range(0, len(keys), 2)]
    assert handed == [keys[i : i + 2] for i in range(0, len(keys), 2)]
    assert [(r.reference.key, r.verdict, r.findings) for r in batched.results] == [
        (r.reference.key, r.verdict, r.findings) for r in whole.results
    ]
    assert batched.counts() == whole.counts()


async def test_a_streamed_audit_keeps_no_result_and_counts_every_one(settings, monkeypatch) -> None:
    from refaudit import pipeline
    from refaudit.policy import Tally, report_tally

    references = parse_bibtex(BIB, file="refs.bib").references
    whole = await audit_references(references, settings, transport=_upstreams().transport())
    monkeypatch.setattr(pipeline, "BATCH_REFERENCES", 2)
    settings.use_cache = False
    seen: list[str] = []

    def written(results: list[Result]) -> list[Result]:
        seen.extend(result.reference.key for result in results)
        return []

    streamed = await audit_references(
        iter(references),
        settings,
        transport=_upstreams().transport(),
        on_batch=written,
        tally=Tally(["error"]),
    )
    assert streamed.results == [] and seen == [r.key for r in references]
    assert streamed.counts() == whole.counts()
    counted, expected = report_tally(streamed, ["error"]), report_tally(whole, ["error"])
    assert (counted.total, counted.failing, counted.failing_keys) == (
        expected.total,
        expected.failing,
        expected.failing_keys,
    )
    assert (counted.consulted, counted.failures) == (expected.consulted, expected.failures)


async def test_warm_rerun_sends_no_requests(settings) -> None:
    fake = _upstreams()
    first = await _audit(BIB, settings, fake)
    sent = len(fake.requests)
    second = await _audit(BIB, settings, fake)
    assert len(fake.requests) == sent
    assert [r.verdict for r in second.results] == [r.verdict for r in first.results]
    assert sum(second.stats.cache_hits.values()) > 0 and not second.stats.requests


async def test_source_outage_gives_unverified_never_not_found(settings) -> None:
    fake = _upstreams()
    fake.fail("openalex", "503", times=100)
    fake.fail("dblp", "drop", times=100)
    report = await _audit(BIB, settings, fake)
    fabricated = next(r for r in report.results if r.reference.key == "made_up2021")
    assert fabricated.verdict == Verdict.UNVERIFIED
    assert not fabricated.flagged
    assert fabricated.sources["openalex"].state == "failed"
    assert "openalex" in fabricated.reason
    # With the general index down, the last resort is asked after all.
    assert fabricated.sources["semanticscholar"].state == "answered"
    # DBLP is down too, but it cannot hold a journal outside computing: never asked.
    assert fabricated.sources["dblp"].state == "not_asked"
    # References whose identity was settled by other sources keep their verdicts.
    verified = next(r for r in report.results if r.reference.key == "he2016deep")
    assert verified.verdict == Verdict.VERIFIED


async def test_doi_of_another_paper_is_an_error_on_the_doi(settings) -> None:
    fake = _upstreams()
    bib = r"""@article{lstm, author={Hochreiter, Sepp and Schmidhuber, J{\"u}rgen},
      title={Long Short-Term Memory}, journal={Neural Computation}, year={1997},
      doi={10.1109/CVPR.2016.90}}"""
    report = await _audit(bib, settings, fake)
    (result,) = report.results
    assert result.verdict == Verdict.MISMATCH and result.flagged
    finding = next(f for f in result.findings if f.code == "doi-points-elsewhere")
    assert finding.cited == "10.1109/cvpr.2016.90"
    assert finding.found == "10.1162/neco.1997.9.8.1735"
    assert "Deep Residual Learning" in finding.message


async def test_unregistered_doi_is_reported_when_every_registry_answered(settings) -> None:
    fake = _upstreams()
    bib = """@article{ghost, author={Quibble, Ambrose}, title={Recursive Hypergraph Distillation
      for Zero-Shot Protein Choreography}, journal={J. Imag. Res.}, year={2021},
      doi={10.9999/does.not.exist}}"""
    report = await _audit(bib, settings, fake)
    (result,) = report.results
    assert result.verdict == Verdict.NOT_FOUND
    assert any(f.code == "doi-not-registered" and f.field == "doi" for f in result.findings)


async def _audit_resnet_cited_as(title: str, settings: Settings) -> Result:
    """Audit ResNet cited under `title`, with Crossref's search the only way to find it."""
    fake = _searchable([RESNET])
    bib = f"""@inproceedings{{he2016, author={{He, Kaiming and Zhang, Xiangyu and Ren, Shaoqing
      and Sun, Jian}}, title={{{title}}}, booktitle={{CVPR}}, year={{2016}}}}"""
    (result,) = (await _audit(bib, settings, fake)).results
    return result


async def test_title_with_a_typo_is_found_and_reported_as_a_warning(settings) -> None:
    result = await _audit_resnet_cited_as("Deep Residual Lerning for Image Recognition", settings)

    assert result.verdict == Verdict.MISMATCH and not result.flagged
    typo = next(f for f in result.findings if f.code == "title-typo")
    assert typo.severity == "warning" and "lerning" in typo.message.lower()


async def test_title_with_a_word_made_plural_is_found_and_flagged(settings) -> None:
    result = await _audit_resnet_cited_as(
        "Deep Residual Learnings for the Image Recognition", settings
    )

    assert result.verdict == Verdict.MISMATCH and result.flagged
    assert result.matched is not None and result.matched.doi == "10.1109/cvpr.2016.90"
    title = next(f for f in result.findings if f.code == "title-mismatch")
    assert title.severity == "error"
    assert "“learnings” → “learning”" in title.message and "“the” added" in title.message


async def test_ignored_entry_keeps_its_findings_visible_but_suppressed(settings) -> None:
    bib = BIB.replace(
        "@article{made_up2021,", "@article{made_up2021,\n  refaudit-ignore = {cited as an example},"
    )
    report = await _audit(bib, settings, _upstreams())
    fabricated = next(r for r in report.results if r.reference.key == "made_up2021")
    assert fabricated.findings and all(
        f.suppressed == "cited as an example" for f in fabricated.findings
    )


async def test_retraction_is_found_for_a_reference_cited_without_its_doi(settings) -> None:
    fake = _upstreams()
    wakefield_openalex = openalex_work(
        "W2011939193",
        "Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive "
        "developmental disorder in children",
        doi="10.1016/S0140-6736(97)11096-0",
        authors=["A. J. Wakefield", "S. H. Murch", "A. Anthony"],
        year=1998,
        venue="The Lancet",
    )
    fake.route(
        "openalex",
        r"/works",
        lambda request, _m: openalex_list(
            [wakefield_openalex] if "ileal" in request.url.params.get("search", "").lower() else []
        ),
    )
    bib = r"""@article{wakefield, author={Wakefield, A. J. and Murch, S. H. and Anthony, A.},
      title={Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive
      developmental disorder in children}, journal={Lancet}, year={1998}}"""
    report = await _audit(bib, settings, fake)
    (result,) = report.results
    assert result.verdict == Verdict.VERIFIED
    assert [n.kind.value for n in result.integrity] == ["correction", "retraction"]
    assert any(f.code == "retracted" and f.severity == "error" for f in result.findings)


async def test_a_work_crossref_found_by_search_is_screened_without_asking_for_it_again(
    settings,
) -> None:
    fake = _searchable([WAKEFIELD])
    bib = r"""@article{wakefield, author={Wakefield, A. J. and Murch, S. H. and Anthony, A.},
      title={Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive
      developmental disorder in children}, journal={Lancet}, year={1998}}"""
    report = await _audit(bib, settings, fake)

    (result,) = report.results
    assert result.verdict == Verdict.VERIFIED
    assert [n.kind.value for n in result.integrity] == ["correction", "retraction"]
    asked = [r.url.params for r in fake.requests_to("crossref")]
    assert ["query.bibliographic" in params for params in asked] == [True]


async def test_a_short_title_from_another_year_does_not_stop_the_search(settings) -> None:
    """One reviewer's "Book review" of 1999 is not the one of 1997 that Crossref holds."""
    cited_review = crossref_work(
        "10.1016/S0176-1617(97)80304-5",
        "Book review",
        authors=[("H.", "Lichtenthaler")],
        year=1997,
        venue="Journal of Plant Physiology",
    )
    later_review = openalex_work(
        "W1999000001",
        "Book review",
        doi="10.1016/S0176-1617(99)80001-1",
        authors=["H. Lichtenthaler"],
        year=1999,
        venue="Journal of Plant Physiology",
    )
    fake = _searchable([cited_review], openalex=[later_review])
    bib = """@article{lichtenthaler1997, author = {Lichtenthaler, H.}, title = {Book review},
      journal = {Journal of Plant Physiology}, year = {1997}}"""

    (result,) = (await _audit(bib, settings, fake)).results

    assert result.verdict == Verdict.VERIFIED
    assert result.matched is not None and result.matched.doi == "10.1016/s0176-1617(97)80304-5"


async def test_a_bib_given_beside_the_tex_that_uses_it_is_audited_once(settings, tmp_path) -> None:
    from refaudit.audit import audit_paths

    (tmp_path / "refs.bib").write_text(BIB)
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\\begin{document}\\cite{he2016deep}"
        "\\bibliography{refs}\\end{document}\n"
    )
    paths = [tmp_path / "paper.tex", tmp_path / "refs.bib"]

    report = await audit_paths(paths, settings, transport=_upstreams().transport())

    keys = [result.reference.key for result in report.results]
    assert len(keys) == len(set(keys)) == BIB.count("\n@")


async def test_online_run_without_a_snapshot_still_screens_and_does_not_nag(settings) -> None:
    report = await _audit(BIB, settings, _upstreams())
    assert report.retraction_snapshot == SnapshotState(available=False)
    assert report.counts()["retracted"] == 1
    assert "retraction screening" not in render(report, "table", RenderContext())


async def test_offline_rerun_without_a_snapshot_screens_what_the_cache_holds(settings) -> None:
    fake = _upstreams()
    await _audit(BIB, settings, fake)
    settings.offline = True
    report = await _audit(BIB, settings, fake)
    wakefield = next(r for r in report.results if r.reference.key == "wakefield1998")
    assert any(f.code == "retracted" and f.source == "crossref" for f in wakefield.findings)
    assert not report.retraction_snapshot.available
    text = " ".join(render(report, "table", RenderContext()).split())
    assert "no Retraction Watch snapshot — run `refaudit retractions update`" in text
    assert "only notices in cached source records were screened" in text


async def test_a_short_title_on_a_record_without_authors_does_not_stop_the_search(
    settings,
) -> None:
    """OpenAlex's author-less "Pandora's box" of 2018 is not Hutchinson's 2018 book."""
    book = crossref_work(
        "10.1057/978-1-84457-968-6",
        "Pandora's Box",
        authors=[("Pamela", "Hutchinson")],
        year=2018,
        type="book",
    )
    editorial = openalex_work(
        "W2018000001",
        "Pandora's box",
        doi="10.1192/bji.2018.1",
        authors=[],
        year=2018,
        venue="BJPsych International",
    )
    fake = _searchable([book], openalex=[editorial])
    bib = """@book{hutchinson2018, author = {Hutchinson, Pamela}, title = {Pandora's Box},
      publisher = {British Film Institute}, year = {2018}}"""

    (result,) = (await _audit(bib, settings, fake)).results

    assert result.verdict == Verdict.VERIFIED
    assert result.matched is not None and result.matched.doi == "10.1057/978-1-84457-968-6"


GAN_BIB = r"""
@inproceedings{goodfellow2014,
  author = {Goodfellow, Ian and Pouget-Abadie, Jean and Mirza, Mehdi},
  title = {Generative Adversarial Nets},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2014}
}
"""
GEOPORTAL = crossref_work(
    "10.1234/geo.2014.7",
    "Geoportal as Interface for Generative Data Services",
    authors=[("Anna", "Kowalska")],
    year=2014,
    venue="Journal of Spatial Information",
)


async def test_restricted_sources_never_match_an_unrelated_work(settings) -> None:
    """--sources crossref,arxiv: neither indexes NeurIPS papers, so silence proves nothing."""
    settings.sources = ["crossref", "arxiv"]
    fake = _searchable([GEOPORTAL])
    report = await _audit(GAN_BIB, settings, fake)
    (result,) = report.results
    assert result.verdict == Verdict.UNVERIFIED and result.matched is None
    assert "not in the sources asked" in result.reason
    assert "Geoportal" not in result.reason
    # With no general index enabled, arXiv is the only place its preprint could be.
    assert result.sources["arxiv"].state == "answered", result.sources


OLD_BOOK_BIB = r"""
@book{homer1890,
  author = {Homer},
  title = {Ilias},
  publisher = {Teubner},
  year = {1890}
}
"""


async def test_sources_that_cannot_hold_the_work_are_never_asked(settings) -> None:
    fake = _upstreams()
    report = await _audit(OLD_BOOK_BIB, settings, fake)
    (result,) = report.results
    assert result.verdict == Verdict.NOT_FOUND
    assert fake.count("arxiv") == fake.count("pubmed") == fake.count("dblp") == 0
    arxiv = result.sources["arxiv"]
    assert (arxiv.state, arxiv.why) == ("not_asked", "cannot_index")
    assert "1991" in arxiv.reason
    assert {result.sources[n].state for n in ("openalex", "crossref")} == {"answered"}


async def test_a_resolved_doi_settles_the_reference_without_a_search(settings) -> None:
    fake = _upstreams()
    report = await _audit(BIB, settings, fake)
    resnet = next(r for r in report.results if r.reference.key == "he2016deep")
    assert resnet.verdict == Verdict.VERIFIED
    s2 = resnet.sources["dblp"]
    assert (s2.state, s2.why) == ("not_asked", "decided")
    document = json.loads(render(report, "json", RenderContext()))
    entry = next(r for r in document["results"] if r["key"] == "he2016deep")
    assert entry["sources"]["dblp"]["why"] == "decided"


async def test_details_say_which_sources_were_asked_and_why_not_the_others(settings) -> None:
    report = await _audit(OLD_BOOK_BIB, settings, _upstreams())
    text = render(report, "table", RenderContext(details=True))
    assert "asked: crossref, openalex" in text or "asked: openalex, crossref" in text
    assert "not asked: arxiv (cannot_index: arXiv holds nothing from before 1991)" in text


async def test_references_from_an_iterator_are_read_one_batch_ahead(settings, monkeypatch) -> None:
    from refaudit import pipeline

    monkeypatch.setattr(pipeline, "BATCH_REFERENCES", 2)
    settings.offline = True
    references = parse_bibtex(BIB, file="refs.bib").references
    pulled: list[str] = []

    def one_by_one():
        for reference in references:
            pulled.append(reference.key)
            yield reference

    pulled_at_batch: list[int] = []

    def keep(results: list[Result]) -> list[Result]:
        pulled_at_batch.append(len(pulled))
        return results

    report = await audit_references(one_by_one(), settings, total=len(references), on_batch=keep)

    assert [r.reference.key for r in report.results] == [r.key for r in references]
    assert pulled_at_batch[0] == 2 < len(references)


# A KISTI DOI: Crossref and DataCite answer 404, OpenAlex holds the work, doi.org resolves it.
KISTI_DOI = "10.5626/JOK.2016.43.11.453"
KISTI_BIB = """@article{park2016, author={{박준호} and {한서연}},
  title={합성곱 신경망 기반 스마트 팩토리 이상 탐지 기법}, journal={정보과학회논문지},
  year={2016}, doi={DOI}}"""


def _kisti_upstreams(*, in_openalex: bool) -> FakeUpstreams:
    fake = _upstreams()
    work = openalex_work(
        "W4200000001",
        "합성곱 신경망 기반 스마트 팩토리 이상 탐지 기법",
        doi=KISTI_DOI.lower(),
        authors=["박준호", "한서연"],
        year=2016,
        venue="정보과학회논문지",
    )
    fake.serve_openalex([work] if in_openalex else [])
    fake.serve_doi_org({KISTI_DOI: "KISTI"})
    return fake


async def test_a_doi_of_another_agency_is_named_never_an_error(settings) -> None:
    fake = _kisti_upstreams(in_openalex=True)
    (result,) = (await _audit(KISTI_BIB.replace("DOI", KISTI_DOI), settings, fake)).results
    assert result.verdict == Verdict.VERIFIED and not result.flagged
    note = next(f for f in result.findings if f.code == "doi-other-agency")
    assert note.severity == "info" and "KISTI" in note.message


async def test_a_real_doi_of_another_agency_no_index_holds_is_unverified(settings) -> None:
    fake = _kisti_upstreams(in_openalex=False)
    (result,) = (await _audit(KISTI_BIB.replace("DOI", KISTI_DOI), settings, fake)).results
    assert result.verdict == Verdict.UNVERIFIED
    assert "doi.org resolves it" in (result.reason or "")


async def test_an_invented_doi_in_another_agency_prefix_is_not_registered(settings) -> None:
    fake = _kisti_upstreams(in_openalex=True)
    invented = "10.5626/JOK.2016.43.11.999"
    (result,) = (await _audit(KISTI_BIB.replace("DOI", invented), settings, fake)).results
    assert result.flagged
    finding = next(f for f in result.findings if f.code == "doi-not-registered")
    assert "doi.org" in finding.message
    assert [r.url.path for r in fake.requests_to("doi")] == [f"/api/handles/{invented.lower()}"]


async def test_doi_org_down_leaves_an_unknown_doi_unconfirmed_not_unregistered(settings) -> None:
    fake = _kisti_upstreams(in_openalex=True)
    fake.fail("doi", "503", times=5)
    invented = "10.5626/JOK.2016.43.11.999"
    (result,) = (await _audit(KISTI_BIB.replace("DOI", invented), settings, fake)).results
    codes = [f.code for f in result.findings]
    assert "doi-not-registered" not in codes
    assert result.verdict == Verdict.UNVERIFIED
