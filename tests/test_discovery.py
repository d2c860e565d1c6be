"""Discovery: search merges and ranks, BibTeX comes only from database records, show explains."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

import refaudit.sources
from refaudit.config import Settings, load_settings
from refaudit.discovery import (
    BibtexEntry,
    Identifier,
    append_to_bib,
    bib_file_keys,
    bibtex_entries,
    paper_details,
    parse_identifier,
    search_works,
)
from refaudit.errors import InputError
from refaudit.identifiers import normalize_doi
from refaudit.models import Work
from refaudit.sources.pacing import RateLimit
from tests.fakes import (
    FakeUpstreams,
    crossref_list,
    crossref_message,
    crossref_update,
    crossref_work,
    datacite_record,
    json_response,
    openalex_list,
    openalex_work,
)

SOURCES = ["crossref", "openalex", "semanticscholar", "datacite"]
DEEP_DOI = "10.1000/deep.2015"
ARXIV_DOI = "10.48550/arXiv.1706.03762"
GAN_S2 = "a" * 40
CROSSREF_BIBTEX = (
    " @article{LeCun_2015, title={Deep Learning for Tests}, volume={521},"
    " DOI={10.1000/deep.2015}, journal={Journal of Tests}, publisher={Test Publisher},"
    " author={LeCun, Yann and Bengio, Yoshua}, year={2015}, pages={436–444} }"
)
DATACITE_BIBTEX = """@misc{https://doi.org/10.48550/arxiv.1706.03762,
  doi = {10.48550/ARXIV.1706.03762},
  url = {https://arxiv.org/abs/1706.03762},
  author = {Vaswani, Ashish and Shazeer, Noam},
  title = {Attention Is All You Need},
  publisher = {arXiv},
  year = {2017}
}"""


def s2_paper(
    paper_id: str,
    title: str,
    *,
    doi: str | None = None,
    arxiv: str | None = None,
    year: int = 2015,
    authors: tuple[str, ...] = ("Yann LeCun",),
    citations: int = 3,
    venue: str = "Journal of Tests",
    corpus_id: int = 1,
    types: tuple[str, ...] = ("JournalArticle",),
) -> dict[str, Any]:
    """A Semantic Scholar paper object with the fields refaudit requests."""
    external = {"DOI": doi, "ArXiv": arxiv, "CorpusId": corpus_id}
    return {
        "paperId": paper_id,
        "externalIds": {k: v for k, v in external.items() if v},
        "url": f"https://www.semanticscholar.org/paper/{paper_id}",
        "title": title,
        "venue": venue,
        "publicationVenue": None,
        "year": year,
        "publicationDate": None,
        "journal": None,
        "citationCount": citations,
        "publicationTypes": list(types),
        "isOpenAccess": False,
        "authors": [{"authorId": str(i), "name": name} for i, name in enumerate(authors)],
    }


def _words_match(query: str, title: str | None, *, every: bool = True) -> bool:
    """AND of the query words (OpenAlex, S2 fakes) or OR of them (Crossref's ranked search)."""
    words = re.findall(r"\w+", query.lower())
    found = [word in re.findall(r"\w+", (title or "").lower()) for word in words]
    return bool(title) and (all(found) if every else any(found))


@dataclass
class World:
    """Fake Crossref, OpenAlex, Semantic Scholar and DataCite over a few works.

    Search answers list the matching works in the order given here, so each test
    controls every source's ranking.
    """

    crossref: list[dict[str, Any]] = field(default_factory=list)
    openalex: list[dict[str, Any]] = field(default_factory=list)
    s2: list[dict[str, Any]] = field(default_factory=list)
    datacite: list[dict[str, Any]] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)
    openalex_citations: list[dict[str, Any]] = field(default_factory=list)
    bibtex: dict[str, str] = field(default_factory=dict)
    fake: FakeUpstreams = field(default_factory=FakeUpstreams)

    def __post_init__(self) -> None:
        self.fake.route("crossref", r"/works", self._crossref_list)
        self.fake.route("crossref", r"/works/(?P<doi>10\..+)", self._crossref_single)
        self.fake.route(
            "crossref", r"/works/(?P<doi>10\..+)/transform/application/x-bibtex", self._cn
        )
        self.fake.route("openalex", r"/works", self._openalex_list)
        self.fake.route("semanticscholar", r"/graph/v1/paper/batch", self._s2_batch, method="POST")
        self.fake.route("semanticscholar", r"/graph/v1/paper/search", self._s2_search)
        self.fake.route(
            "semanticscholar",
            r"/graph/v1/paper/(?P<id>[^/]+)/(?P<kind>references|citations)",
            self._s2_graph,
        )
        self.fake.route("datacite", r"/dois", self._datacite_search)
        self.fake.route("datacite", r"/dois/(?P<doi>10\..+)", self._datacite_single)
        self.fake.route("datacite", r"/dois/application/x-bibtex/(?P<doi>10\..+)", self._cn)

    def transport(self) -> httpx.MockTransport:
        return self.fake.transport()

    def _crossref_list(self, request: httpx.Request, _m: re.Match[str]) -> Any:
        query = request.url.params.get("query.bibliographic")
        if query:
            hits = [w for w in self.crossref if _words_match(query, w["title"][0], every=False)]
            return crossref_list(hits)
        filters = request.url.params.get("filter", "").split(",")
        wanted = {normalize_doi(part[4:]) for part in filters if part.startswith("doi:")}
        return crossref_list([w for w in self.crossref if normalize_doi(w["DOI"]) in wanted])

    def _crossref_single(self, _r: httpx.Request, match: re.Match[str]) -> Any:
        doi = normalize_doi(unquote(match.group("doi")))
        hits = [w for w in self.crossref if normalize_doi(w["DOI"]) == doi]
        return (
            crossref_message(hits[0]) if hits else httpx.Response(404, text="Resource not found.")
        )

    def _cn(self, _r: httpx.Request, match: re.Match[str]) -> Any:
        text = self.bibtex.get(normalize_doi(unquote(match.group("doi"))) or "")
        return text if text else httpx.Response(404, text="Resource not found.")

    def _openalex_list(self, request: httpx.Request, _m: re.Match[str]) -> Any:
        search = request.url.params.get("search")
        if search:
            return openalex_list([w for w in self.openalex if _words_match(search, w["title"])])
        name, _, values = request.url.params.get("filter", "").partition(":")
        if name == "cites":
            return openalex_list(self.openalex_citations)
        wanted = {v.lower() for v in values.split("|")}

        def key(work: dict[str, Any]) -> str:
            if name == "doi":
                return normalize_doi(work.get("doi")) or ""
            return str(work["id"]).rsplit("/", 1)[-1].lower()

        return openalex_list([w for w in self.openalex if key(w) in wanted])

    def _s2_find(self, paper_id: str) -> dict[str, Any] | None:
        for paper in self.s2:
            external = paper["externalIds"]
            if paper_id.startswith("DOI:"):
                if normalize_doi(external.get("DOI")) == normalize_doi(paper_id[4:]):
                    return paper
            elif paper_id.startswith("ARXIV:"):
                if external.get("ArXiv") == paper_id[6:]:
                    return paper
            elif paper_id.lower().startswith("corpusid:"):
                if str(external.get("CorpusId")) == paper_id.partition(":")[2]:
                    return paper
            elif paper["paperId"] == paper_id:
                return paper
        return None

    def _s2_batch(self, request: httpx.Request, _m: re.Match[str]) -> Any:
        return json_response([self._s2_find(i) for i in json.loads(request.content)["ids"]])

    def _s2_search(self, request: httpx.Request, _m: re.Match[str]) -> Any:
        hits = [p for p in self.s2 if _words_match(request.url.params["query"], p["title"])]
        return {"total": len(hits), "offset": 0, "data": hits}

    def _s2_graph(self, _r: httpx.Request, match: re.Match[str]) -> Any:
        kind = match.group("kind")
        papers = self.references if kind == "references" else self.citations
        key = "citedPaper" if kind == "references" else "citingPaper"
        return {"offset": 0, "data": [{key: paper} for paper in papers]}

    def _datacite_search(self, request: httpx.Request, _m: re.Match[str]) -> Any:
        query = request.url.params["query"]
        hits = [
            r for r in self.datacite if _words_match(query, r["attributes"]["titles"][0]["title"])
        ]
        return {"data": hits, "meta": {"total": len(hits)}, "links": {}}

    def _datacite_single(self, _r: httpx.Request, match: re.Match[str]) -> Any:
        doi = normalize_doi(unquote(match.group("doi")))
        hits = [r for r in self.datacite if normalize_doi(r["attributes"]["doi"]) == doi]
        if not hits:
            return json_response({"errors": [{"status": "404", "title": "Not found"}]}, 404)
        return {"data": hits[0]}


def deep_crossref(**extra: Any) -> dict[str, Any]:
    return crossref_work(
        DEEP_DOI,
        "Deep Learning for Tests",
        authors=[("Yann", "LeCun"), ("Yoshua", "Bengio")],
        year=2015,
        **extra,
    )


def world() -> World:
    """Three works: a Crossref article in every source, an arXiv preprint, a DOI-less paper."""
    return World(
        crossref=[deep_crossref()],
        openalex=[
            openalex_work(
                "W1",
                "Deep Learning for Tests",
                doi=DEEP_DOI,
                authors=["Yann LeCun"],
                year=2014,
                cited_by_count=50,
            ),
            openalex_work(
                "W2",
                "Generative Adversarial Nets",
                authors=["Ian Goodfellow"],
                year=2014,
                venue="NeurIPS",
                cited_by_count=900,
            ),
        ],
        s2=[
            s2_paper("d" * 40, "Deep Learning for Tests", doi=DEEP_DOI, citations=70),
            s2_paper(
                GAN_S2,
                "Generative Adversarial Nets",
                year=2014,
                authors=("Ian Goodfellow",),
                citations=1000,
                venue="NeurIPS",
            ),
        ],
        datacite=[
            datacite_record(
                ARXIV_DOI,
                "Attention Is All You Need",
                creators=[
                    {
                        "name": "Vaswani, Ashish",
                        "nameType": "Personal",
                        "givenName": "Ashish",
                        "familyName": "Vaswani",
                        "nameIdentifiers": [],
                    }
                ],
                year=2017,
                resource_type="Text",
                types={"resourceTypeGeneral": "Preprint", "citeproc": "article"},
                publisher="arXiv",
            ),
        ],
        bibtex={
            normalize_doi(DEEP_DOI): CROSSREF_BIBTEX,
            normalize_doi(ARXIV_DOI): DATACITE_BIBTEX,
        },
    )


@pytest.fixture(autouse=True)
def unthrottled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lift the sources' real rate limits so tests never wait on a token bucket."""
    original = refaudit.sources.rate_limits_for

    def fast(module: ModuleType, settings: Settings) -> dict[str, RateLimit]:
        return {pool: RateLimit(rps=1000, burst=1000) for pool in original(module, settings)}

    monkeypatch.setattr(refaudit.sources, "rate_limits_for", fast)


@pytest.fixture
def settings() -> Settings:
    """Four sources, no retries (an injected fault fails at once)."""
    loaded = load_settings()
    loaded.sources = list(SOURCES)
    loaded.max_retries = 0
    return loaded


# --- identifiers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://doi.org/10.1038/NATURE14539", Identifier("doi", "10.1038/nature14539")),
        ("doi:10.1016/S0140-6736(97)11096-0", Identifier("doi", "10.1016/s0140-6736(97)11096-0")),
        ("arXiv:1706.03762v5", Identifier("arxiv", "1706.03762")),
        ("https://arxiv.org/abs/hep-th/9711200", Identifier("arxiv", "hep-th/9711200")),
        ("1810.04805", Identifier("arxiv", "1810.04805")),
        ("PMID: 9500320", Identifier("pmid", "9500320")),
        ("9500320", Identifier("pmid", "9500320")),
        (
            "204E3073870FAE3D05BCBC2F6A8E263D9B72E776",
            Identifier("s2", "204e3073870fae3d05bcbc2f6a8e263d9b72e776"),
        ),
        ("CorpusId:13756489", Identifier("s2", "CorpusId:13756489")),
        ("https://openalex.org/w2963403868", Identifier("openalex", "W2963403868")),
        ("Attention is all you need", Identifier("title", "Attention is all you need")),
        ("doi: not a doi", None),
        ("arXiv:nonsense", None),
        ("   ", None),
    ],
)
def test_identifiers_are_recognised_in_every_common_spelling(
    text: str, expected: Identifier | None
) -> None:
    assert parse_identifier(text) == expected


# --- search ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_search_merges_one_work_found_by_several_sources(settings: Settings) -> None:
    w = world()
    outcome = await search_works("deep learning", settings, transport=w.transport())

    assert len(outcome.works) == 1
    hit = outcome.works[0]
    assert set(hit.found_in) == {"crossref", "openalex", "semanticscholar"}
    assert hit.year == 2015  # Crossref's year wins over OpenAlex's 2014
    assert hit.citation_count == 70  # the largest count any source reports
    assert all(status.state == "answered" for status in outcome.sources.values())


@pytest.mark.anyio
async def test_search_ranks_works_several_sources_rank_high_first(settings: Settings) -> None:
    w = world()
    w.crossref.insert(0, crossref_work("10.1000/other", "Learning to Count Tests", year=2015))
    outcome = await search_works("learning", settings, transport=w.transport())

    titles = [work.title for work in outcome.works]
    assert titles == ["Deep Learning for Tests", "Learning to Count Tests"]
    assert outcome.works[0].score > outcome.works[1].score


@pytest.mark.anyio
async def test_search_breaks_relevance_ties_by_citation_count(settings: Settings) -> None:
    w = world()
    w.openalex = [openalex_work("W7", "Nets of Tests", cited_by_count=5)]
    w.s2 = [s2_paper("b" * 40, "Nets for Tests", citations=500)]
    outcome = await search_works("nets", settings, transport=w.transport())

    assert [work.title for work in outcome.works] == ["Nets for Tests", "Nets of Tests"]


@pytest.mark.anyio
async def test_search_year_bounds_drop_works_outside_them(settings: Settings) -> None:
    outcome = await search_works(
        "generative", settings, year_from=2016, transport=world().transport()
    )
    assert outcome.works == []


@pytest.mark.anyio
async def test_search_names_a_failed_source_and_keeps_the_others(settings: Settings) -> None:
    w = world()
    w.fake.fail("crossref", "503")
    outcome = await search_works("deep learning", settings, transport=w.transport())

    assert outcome.status == "ok"
    assert outcome.sources["crossref"].state == "failed"
    assert "HTTP 503" in (outcome.sources["crossref"].reason or "")
    assert "crossref" in outcome.message
    assert set(outcome.works[0].found_in) == {"openalex", "semanticscholar"}


@pytest.mark.anyio
async def test_search_with_every_source_down_is_unverified(settings: Settings) -> None:
    w = world()
    for name in SOURCES:
        w.fake.fail(name, "drop", times=5)
    outcome = await search_works("deep learning", settings, transport=w.transport())

    assert outcome.status == "unverified"
    assert outcome.works == []
    assert "no source could answer" in outcome.message


@pytest.mark.anyio
async def test_a_title_the_fast_indexes_found_spares_semantic_scholar(settings: Settings) -> None:
    """A shared server asks the 1 request/s pool only when the others did not find the work."""
    w = world()
    outcome = await search_works(
        "Deep learning for tests.", settings, stop_when_found=True, transport=w.transport()
    )

    assert outcome.works[0].doi == DEEP_DOI
    assert set(outcome.works[0].found_in) == {"crossref", "openalex"}
    assert w.fake.count("semanticscholar") == 0
    skipped = outcome.sources["semanticscholar"]
    assert skipped.state == "not_asked" and skipped.why == "decided"
    assert skipped.reason in {
        "crossref found the work the query names",
        "openalex found the work the query names",
    }


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("query", "named", "year_to"),
    [
        ("deep learning", None, None),  # words, not a title: every source ranks
        ("Generative Adversarial Nets", None, 2013),  # the title, but outside the years
        ("Deep Learning for Tests", ["openalex", "semanticscholar"], None),  # asked by name
    ],
)
async def test_semantic_scholar_is_still_asked_when_no_fast_hit_is_the_work_asked_for(
    settings: Settings, query: str, named: list[str] | None, year_to: int | None
) -> None:
    w = world()
    outcome = await search_works(
        query,
        settings,
        sources=named,
        year_to=year_to,
        stop_when_found=True,
        transport=w.transport(),
    )

    assert outcome.sources["semanticscholar"].state == "answered"
    assert w.fake.count("semanticscholar") == 1


@pytest.mark.anyio
async def test_search_rejects_unknown_source_names(settings: Settings) -> None:
    with pytest.raises(InputError, match="unknown source 'webofscience'"):
        await search_works("x", settings, sources=["webofscience"], transport=world().transport())


# --- BibTeX ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_crossref_doi_gets_crossrefs_own_bibtex_under_refaudits_key(
    settings: Settings,
) -> None:
    w = world()
    [entry] = await bibtex_entries(
        [f"https://doi.org/{DEEP_DOI}"], settings, transport=w.transport()
    )

    assert (entry.status, entry.source, entry.key) == ("ok", "crossref", "lecun2015deep")
    assert entry.bibtex is not None
    assert entry.bibtex.startswith("@article{lecun2015deep,\n")
    assert "  pages = {436--444}," in entry.bibtex.splitlines()
    transforms = [r for r in w.fake.requests_to("crossref") if "/transform/" in r.url.path]
    assert len(transforms) == 1


@pytest.mark.anyio
async def test_arxiv_id_gets_datacites_bibtex_for_its_arxiv_doi(settings: Settings) -> None:
    w = world()
    [entry] = await bibtex_entries(["arXiv:1706.03762v2"], settings, transport=w.transport())

    assert (entry.status, entry.source, entry.key) == ("ok", "datacite", "vaswani2017attention")
    assert entry.bibtex is not None and entry.bibtex.startswith("@misc{vaswani2017attention,")
    assert not any("10.48550" in str(r.url) for r in w.fake.requests_to("crossref"))


NEURIPS_2017 = "Advances in Neural Information Processing Systems 30"


def attention_published(w: World) -> World:
    """Add the NeurIPS 2017 records of "Attention Is All You Need", whose preprint is on arXiv.

    Shaped as the real answers are: both aggregators' records of the conference paper
    carry the preprint's DataCite DOI (S2 beside the arXiv id and CorpusId), while their
    venue is the proceedings.
    """
    authors = ["Ashish Vaswani", "Noam Shazeer"]
    w.openalex.append(
        openalex_work(
            "W2963403868",
            "Attention Is All You Need",
            doi=ARXIV_DOI,
            authors=authors,
            year=2017,
            venue=NEURIPS_2017,
            biblio={"volume": "30", "issue": None, "first_page": "5998", "last_page": "6008"},
        )
    )
    w.s2.append(
        s2_paper(
            "204e3073870fae3d05bcbc2f6a8e263d9b72e776",
            "Attention is All you Need",
            doi=ARXIV_DOI,
            arxiv="1706.03762",
            year=2017,
            authors=tuple(authors),
            venue=NEURIPS_2017,
            corpus_id=13756489,
            types=("JournalArticle", "Conference"),
        )
    )
    return w


@pytest.mark.anyio
@pytest.mark.parametrize("identifier", ["W2963403868", "CorpusId:13756489"])
async def test_ids_of_a_published_paper_give_the_published_entry_not_the_preprint(
    settings: Settings, identifier: str
) -> None:
    w = attention_published(world())
    [entry] = await bibtex_entries([identifier], settings, transport=w.transport())

    assert (entry.status, entry.source) == ("ok", "record")
    assert entry.bibtex is not None
    assert entry.bibtex.startswith("@inproceedings{vaswani2017attention,")
    assert f"booktitle = {{{NEURIPS_2017}}}" in entry.bibtex
    assert "eprint = {1706.03762}" in entry.bibtex
    assert "10.48550" not in entry.bibtex.lower()  # the preprint's DOI is not the paper's


@pytest.mark.anyio
async def test_an_arxiv_id_still_gets_the_preprint_it_names(settings: Settings) -> None:
    w = attention_published(world())
    [entry] = await bibtex_entries(["arXiv:1706.03762"], settings, transport=w.transport())

    assert entry.source == "datacite"
    assert entry.bibtex is not None and entry.bibtex.startswith("@misc{vaswani2017attention,")


@pytest.mark.anyio
async def test_work_without_doi_is_written_from_its_records(settings: Settings) -> None:
    [entry] = await bibtex_entries([GAN_S2], settings, transport=world().transport())

    assert (entry.status, entry.source) == ("ok", "record")
    assert entry.key == "goodfellow2014generative"
    assert entry.bibtex is not None
    assert "Generative Adversarial Nets" in entry.bibtex
    assert "doi" not in entry.bibtex  # nothing the records lack is invented
    assert "built from the merged record" in entry.message


@pytest.mark.anyio
async def test_title_is_verified_by_search_before_any_bibtex(settings: Settings) -> None:
    w = world()
    entries = await bibtex_entries(
        ["Deep learning for tests", "Deep learning for toasts and jam"],
        settings,
        transport=w.transport(),
    )

    assert [e.status for e in entries] == ["ok", "not_found"]
    assert entries[0].source == "crossref"
    assert entries[1].bibtex is None


@pytest.mark.anyio
async def test_unconfident_title_names_the_closest_candidates(settings: Settings) -> None:
    w = world()
    [entry] = await bibtex_entries(
        ["Deep learning for tests and more"], settings, transport=w.transport()
    )

    assert entry.status == "not_found"
    assert "closest: “Deep Learning for Tests” 2015 10.1000/deep.2015" in entry.message


@pytest.mark.anyio
async def test_keys_are_unique_across_one_output(settings: Settings) -> None:
    entries = await bibtex_entries([DEEP_DOI, DEEP_DOI], settings, transport=world().transport())
    assert [e.key for e in entries] == ["lecun2015deep", "lecun2015deepa"]


@pytest.mark.anyio
async def test_source_outage_gives_unverified_never_not_found(settings: Settings) -> None:
    w = world()
    for name in SOURCES:
        w.fake.fail(name, "503", times=10)
    entries = await bibtex_entries(
        [DEEP_DOI, "Some title of a paper"], settings, transport=w.transport()
    )

    assert [e.status for e in entries] == ["unverified", "unverified"]
    assert all("no source could answer" in e.message for e in entries)


@pytest.mark.anyio
async def test_unknown_doi_is_not_found_when_every_source_answered(settings: Settings) -> None:
    [entry] = await bibtex_entries(["10.9999/nothing"], settings, transport=world().transport())
    assert (entry.status, entry.bibtex) == ("not_found", None)


@pytest.mark.anyio
async def test_malformed_identifier_is_invalid(settings: Settings) -> None:
    [entry] = await bibtex_entries(["doi:"], settings, transport=world().transport())
    assert entry.status == "invalid"


@pytest.mark.anyio
async def test_bibtex_of_a_retracted_work_carries_a_warning(settings: Settings) -> None:
    w = world()
    w.crossref = [deep_crossref(updated_by=[crossref_update("retraction", "10.1000/ret")])]
    [entry] = await bibtex_entries([DEEP_DOI], settings, transport=w.transport())
    assert "retraction" in entry.message
    assert entry.status == "retracted", "an error, not a warning beside an ok"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("agency_bibtex", "expected_lines"),
    [
        (  # Crossref writes plain text: a bare % would comment out the rest of the title
            " @article{LeCun_2015, title={BERT on Q&A forums: 5% of answers},"
            " url={http://dx.doi.org/10.1000/q_a.2019}, DOI={10.1000/q_a.2019},"
            " journal={Research & Practice}, year={2015}, month=May, pages={1–9} }",
            [
                "  title = {{BERT} on {Q\\&A} forums: 5\\% of answers},",
                "  url = {http://dx.doi.org/10.1000/q_a.2019},",
                "  DOI = {10.1000/q_a.2019},",
                "  journal = {Research \\& Practice},",
                "  month = May,",
                "  pages = {1--9},",
            ],
        ),
        (  # values already written in LaTeX keep their markup
            "@article{LeCun_2015, title={Deep Learning for {T}ests in $\\mathbb{R}^n$},"
            " journal={Journal of Tests {\\&} Toasts}, year={2015} }",
            [
                "  title = {Deep Learning for {T}ests in $\\mathbb{R}^n$},",
                "  journal = {Journal of Tests {\\&} Toasts},",
            ],
        ),
    ],
)
async def test_agency_bibtex_is_made_latex_safe_and_its_acronyms_braced(
    settings: Settings, agency_bibtex: str, expected_lines: list[str]
) -> None:
    w = world()
    w.bibtex[normalize_doi(DEEP_DOI) or ""] = agency_bibtex
    [entry] = await bibtex_entries([DEEP_DOI], settings, transport=w.transport())

    assert entry.bibtex is not None
    assert set(expected_lines) <= set(entry.bibtex.splitlines())


@pytest.mark.anyio
async def test_a_notice_record_is_named_as_the_notice_not_as_a_retracted_work(
    settings: Settings,
) -> None:
    notice_doi = "10.1000/deep.2015.retraction"
    w = world()
    w.crossref.append(
        crossref_work(
            notice_doi,
            "Retraction Note: Deep Learning for Tests",
            authors=[],
            year=2020,
            update_to=[crossref_update("retraction", DEEP_DOI)],
        )
    )
    [entry] = await bibtex_entries([notice_doi], settings, transport=w.transport())
    details = await paper_details(notice_doi, settings, transport=w.transport())

    assert entry.message.endswith(f"note: this is the retraction notice for {DEEP_DOI}")
    assert "warning" not in entry.message and entry.status == "ok"
    assert details.notices == []
    assert details.message == f"note: this is the retraction notice for {DEEP_DOI}"


@pytest.mark.parametrize(
    ("title", "key"),
    [
        ("RETRACTED: Ileal-lymphoid-nodular hyperplasia in children", "wakefield1998ileal"),
        ("RETRACTED ARTICLE: The MMR vaccine", "wakefield1998mmr"),
        ("Space–time attention", "wakefield1998space"),
    ],
)
def test_keys_use_the_titles_own_first_word(title: str, key: str) -> None:
    from refaudit.bibtex import make_key
    from refaudit.models import Person

    work = Work(source="crossref", title=title, year=1998, authors=[Person("Wakefield", "A J")])
    assert make_key(work, set()) == key


# --- appending to a .bib file ------------------------------------------------------------------


def _entry(key: str, title: str, doi: str | None = None) -> BibtexEntry:
    work = Work(source="crossref", title=title, year=2015, doi=doi)
    bibtex = f"@article{{{key},\n  title = {{{title}}},\n}}\n"
    return BibtexEntry(key, "ok", bibtex, key=key, source="crossref", work=work)


def test_append_separates_entries_by_one_blank_line(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text("@book{old, title = {Old}}\n", encoding="utf-8")
    append_to_bib(path, [_entry("2015deep", "Deep"), _entry("2015wide", "Wide")], rename=False)

    text = path.read_text(encoding="utf-8")
    assert text.startswith("@book{old, title = {Old}}\n\n@article{2015deep,")
    assert "}\n\n@article{2015wide," in text
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert bib_file_keys(text) == {"old", "2015deep", "2015wide"}


def test_append_refuses_a_key_already_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    original = "@article{2015Deep,\n  title = {Deep},\n}\n"
    path.write_text(original, encoding="utf-8")

    with pytest.raises(InputError, match="keys already in the file: 2015deep") as raised:
        append_to_bib(path, [_entry("2015deep", "Deep")], rename=False)
    assert "--rename" in (raised.value.hint or "")
    assert path.read_text(encoding="utf-8") == original


def test_append_with_rename_gives_clashing_entries_new_keys(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text("@string{jt = {J. Tests}}\n@article{2015deep, title = {Deep}}\n")

    written, skipped = append_to_bib(path, [_entry("2015deep", "Deep")], rename=True)

    assert [e.key for e in written] == ["2015deepa"] and skipped == []
    assert "@article{2015deepa," in path.read_text()


def test_append_never_writes_a_second_copy_of_a_cited_doi(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    original = (
        "@article{lecun2015deep,\n  title = {Deep learning},\n"
        "  doi = {https://doi.org/10.1038/NATURE14539},\n}\n"
    )
    path.write_text(original, encoding="utf-8")
    again = _entry("lecun2015deepa", "Deep learning", doi="10.1038/nature14539")
    same_key = _entry("lecun2015deep", "Deep learning", doi="10.1038/nature14539")
    new = _entry("he2016deep", "Deep residual learning", doi="10.1109/cvpr.2016.90")

    for rename in (False, True):
        written, skipped = append_to_bib(path, [again, same_key], rename=rename)
        assert written == []
        assert [why for _, why in skipped] == [f"already in {path} as lecun2015deep"] * 2
        assert path.read_text(encoding="utf-8") == original
    written, _ = append_to_bib(path, [new, again], rename=False)
    assert [e.key for e in written] == ["he2016deep"]
    assert path.read_text(encoding="utf-8").count("10.1038") == 1


# --- show ----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_details_say_which_source_gave_each_field_and_who_disagrees(
    settings: Settings,
) -> None:
    details = await paper_details(DEEP_DOI, settings, transport=world().transport())

    assert details.status == "ok"
    assert set(details.records) == {"crossref", "openalex", "semanticscholar"}
    year = next(origin for origin in details.fields if origin.field == "year")
    assert (year.value, year.source, year.others) == ("2015", "crossref", {"openalex": "2014"})
    title = next(origin for origin in details.fields if origin.field == "title")
    assert title.others == {}


@pytest.mark.anyio
async def test_details_of_a_published_paper_show_the_published_venue(
    settings: Settings,
) -> None:
    w = attention_published(world())
    details = await paper_details("W2963403868", settings, transport=w.transport())

    assert details.work is not None and details.work.venue == NEURIPS_2017
    assert details.work.doi is None  # the preprint's DataCite DOI is not the paper's
    venue = next(origin for origin in details.fields if origin.field == "venue")
    assert (venue.value, venue.source) == (NEURIPS_2017, "openalex")
    preprint = await paper_details("arXiv:1706.03762", settings, transport=w.transport())
    assert preprint.work is not None and preprint.work.doi is not None


@pytest.mark.anyio
async def test_details_list_citations_most_cited_first(settings: Settings) -> None:
    w = world()
    w.citations = [
        s2_paper("1" * 40, "A Rarely Cited Follow-up", citations=2),
        s2_paper("2" * 40, "A Famous Follow-up", citations=900),
        s2_paper("3" * 40, "An Unknown Follow-up", citations=None),  # type: ignore[arg-type]
    ]
    details = await paper_details(
        DEEP_DOI, settings, citations=True, limit=2, transport=w.transport()
    )

    assert [work.title for work in details.citations] == [
        "A Famous Follow-up",
        "A Rarely Cited Follow-up",
    ]
    graph = [r for r in w.fake.requests_to("semanticscholar") if "/citations" in r.url.path]
    assert graph[0].url.path.endswith(f"/paper/{'d' * 40}/citations")


@pytest.mark.anyio
async def test_citations_come_from_openalex_when_s2_knows_none(settings: Settings) -> None:
    w = world()
    w.openalex_citations = [
        openalex_work("W7", "A Follow-up OpenAlex Indexed", cited_by_count=12),
        openalex_work("W8", "A Widely Read Follow-up", cited_by_count=400),
    ]
    details = await paper_details(
        DEEP_DOI, settings, citations=True, limit=5, transport=w.transport()
    )

    assert [work.title for work in details.citations] == [
        "A Widely Read Follow-up",
        "A Follow-up OpenAlex Indexed",
    ]
    filters = [r.url.params.get("filter") for r in w.fake.requests_to("openalex")]
    assert "cites:W1" in filters


@pytest.mark.anyio
async def test_details_carry_integrity_notices(settings: Settings) -> None:
    w = world()
    w.crossref = [deep_crossref(updated_by=[crossref_update("retraction", "10.1000/ret")])]
    details = await paper_details(DEEP_DOI, settings, transport=w.transport())

    assert [notice.kind.value for notice in details.notices] == ["retraction"]
    assert "retraction" in details.message


@pytest.mark.anyio
async def test_details_with_every_source_down_are_unverified(settings: Settings) -> None:
    w = world()
    for name in SOURCES:
        w.fake.fail(name, "timeout", times=10)
    details = await paper_details(DEEP_DOI, settings, transport=w.transport())

    assert details.status == "unverified"
    assert details.work is None
    assert {status.state for status in details.sources.values()} == {"failed"}
