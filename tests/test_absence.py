"""No error claims absence, or rests on one record, when the deciding source did not answer.

Each claim below is made by a fault-free run of the real pipeline (evidence
gathering over `FakeUpstreams` shaped like the real APIs, then `decide`): a
reference no index holds is `not-found`, a DOI no resolver knows is
`doi-not-registered`, an arXiv id arXiv does not know is `arxiv-not-found`, a
venue only a preprint contradicts and a year one record contradicts are
`venue-mismatch` and `year-mismatch`. Then the source that decides the claim
fails in each way a source fails (timeout, 5xx, 429 with a long Retry-After,
a spent quota, a refused key, an open circuit breaker, a malformed body): the
claim must go, and an `unverified` or `unconfirmed` note must name that source.
Last, `not_found` waits for one more index than Crossref and OpenAlex, unless the
cited DOI is shown not to exist.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from refaudit.config import Settings
from refaudit.errors import SourceError
from refaudit.evidence import gather_evidence
from refaudit.models import Result, RunStats, Verdict
from refaudit.parsing import parse_bibtex
from refaudit.sources import open_sources
from refaudit.sources.base import SearchQuery
from refaudit.verify import decide
from tests.fakes import (
    FIXTURES,
    FakeClock,
    FakeUpstreams,
    crossref_list,
    empty_arxiv_feed,
    json_response,
    openalex_list,
    openalex_work,
)

pytestmark = pytest.mark.anyio

#: Findings that assert that something does not exist, or that a record contradicts a field.
ABSENCE_CODES = frozenset(
    {"not-found", "doi-not-registered", "arxiv-not-found", "venue-mismatch", "year-mismatch"}
)
IEEE_EMPTY = json.loads((FIXTURES / "ieee" / "empty.json").read_text())
LSTM = openalex_work(
    "W2064675550",
    "Long Short-Term Memory",
    doi="10.1162/neco.1997.9.8.1735",
    authors=["Sepp Hochreiter", "Jürgen Schmidhuber"],
    year=1997,
    venue="Neural Computation",
)
#: Semantic Scholar's record of a paper only ever posted to arXiv
PREPRINT = {
    "paperId": "3a0c3bb1d4f0e2a5c6b7d8e9f0a1b2c3d4e5f607",
    "externalIds": {"ArXiv": "2001.06782", "CorpusId": 210839011},
    "url": "https://www.semanticscholar.org/paper/3a0c3bb1d4f0e2a5c6b7d8e9f0a1b2c3d4e5f607",
    "title": "Gradient Surgery for Multi-Task Learning",
    "venue": "arXiv.org",
    "publicationVenue": None,
    "year": 2020,
    "publicationDate": "2020-01-19",
    "journal": {"name": "ArXiv", "volume": "abs/2001.06782"},
    "citationCount": 900,
    "publicationTypes": None,
    "isOpenAccess": True,
    "authors": [
        {"authorId": "1", "name": "Tianhe Yu"},
        {"authorId": "2", "name": "Saurabh Kumar"},
        {"authorId": "3", "name": "Abhishek Gupta"},
    ],
}


def free_world(
    found: list[dict[str, Any]], s2_found: list[dict[str, Any]] | None = None
) -> FakeUpstreams:
    """Every free source answers; OpenAlex's search finds `found`, Semantic Scholar's
    `s2_found`, nothing else finds anything."""
    fake = FakeUpstreams()
    fake.route("crossref", r"/works/(?P<doi>10\..+)", lambda _r, _m: httpx.Response(404))
    fake.route("crossref", r"/works", lambda _r, _m: crossref_list([]))

    def openalex(request: httpx.Request, _m: re.Match[str]) -> Any:
        text = request.url.params.get("search", "").lower()
        return openalex_list([w for w in found if str(w["title"]).lower()[:20] in text])

    fake.route("openalex", r"/works", openalex)
    s2_hits = s2_found or []
    fake.json(
        "semanticscholar",
        r"/graph/v1/paper/search",
        {"total": len(s2_hits), "offset": 0, "data": s2_hits} if s2_hits else {"total": 0},
    )
    fake.route(
        "semanticscholar",
        r"/graph/v1/paper/batch",
        lambda request, _m: json_response([None] * len(json.loads(request.content)["ids"])),
        method="POST",
    )
    fake.json(
        "dblp",
        r"/search/publ/api",
        {"result": {"hits": {"@total": "0", "@computed": "0", "@sent": "0", "@first": "0"}}},
    )
    fake.route("arxiv", r"/api/query", empty_arxiv_feed)
    fake.json(
        "pubmed",
        r"/esearch.fcgi",
        {"header": {}, "esearchresult": {"count": "0", "retmax": "0", "idlist": []}},
    )
    fake.route(
        "datacite",
        r"/dois/(?P<doi>10\..+)",
        lambda _r, _m: json_response({"errors": [{"status": "404", "title": "Not found"}]}, 404),
    )
    return fake


def ieee_world() -> FakeUpstreams:
    """IEEE Xplore alone, holding nothing asked about."""
    fake = FakeUpstreams()
    fake.json("ieee", r"/api/v1/search/articles", IEEE_EMPTY)
    return fake


@dataclass(frozen=True)
class Claim:
    """A reference a fault-free run makes `code` about, and the source that decides it."""

    code: str
    bib: str
    deciding: str
    world: Callable[[], FakeUpstreams]
    sources: tuple[str, ...] | None = None  # None: every free source


FABRICATED = """@article{made_up2021, author = {Quibble, Ambrose and Fenwick, Lorna},
  title = {Recursive Hypergraph Distillation for Zero-Shot Protein Choreography},
  journal = {Journal of Imaginary Results}, year = {2021}}"""
UNREGISTERED = """@article{ghost, author = {Quibble, Ambrose},
  title = {Recursive Hypergraph Distillation for Zero-Shot Protein Choreography},
  journal = {Journal of Imaginary Results}, year = {2021}, doi = {10.9999/does.not.exist}}"""
UNKNOWN_ARXIV = """@article{lstm, author = {Hochreiter, Sepp and Schmidhuber, J{\\"u}rgen},
  title = {Long Short-Term Memory}, journal = {Neural Computation}, year = {1997},
  eprint = {2101.99999}, archiveprefix = {arXiv}}"""
ONLY_A_PREPRINT = """@inproceedings{yu2020, author = {Yu, Tianhe and Kumar, Saurabh and
  Gupta, Abhishek}, title = {Gradient Surgery for Multi-Task Learning},
  booktitle = {Advances in Neural Information Processing Systems}, year = {2020}}"""
WRONG_YEAR = """@article{lstm1999, author = {Hochreiter, Sepp and Schmidhuber, J{\\"u}rgen},
  title = {Long Short-Term Memory}, journal = {Neural Computation}, year = {1999}}"""
IEEE_DOI = """@article{ieee_ghost, author = {Lovelace, Ada},
  title = {Adaptive Beamforming for Underwater Acoustic Arrays with Sparse Priors},
  journal = {IEEE Journal of Oceanic Engineering}, year = {2018},
  doi = {10.1109/joe.2018.9999999}}"""
IEEE_TITLE = """@inproceedings{ieee_title, author = {Lovelace, Ada},
  title = {Sparse Radar Clutter Suppression with Coastal Priors},
  booktitle = {IEEE International Conference on Acoustics, Speech and Signal Processing},
  year = {2019}}"""

CLAIMS = [
    Claim("not-found", FABRICATED, "openalex", lambda: free_world([])),
    Claim("not-found", FABRICATED, "crossref", lambda: free_world([])),
    Claim("doi-not-registered", UNREGISTERED, "crossref", lambda: free_world([])),
    Claim("doi-not-registered", UNREGISTERED, "semanticscholar", lambda: free_world([])),
    Claim("doi-not-registered", UNREGISTERED, "datacite", lambda: free_world([])),
    Claim("arxiv-not-found", UNKNOWN_ARXIV, "arxiv", lambda: free_world([LSTM])),
    Claim("venue-mismatch", ONLY_A_PREPRINT, "openalex", lambda: free_world([], [PREPRINT])),
    Claim("year-mismatch", WRONG_YEAR, "crossref", lambda: free_world([LSTM])),
    Claim("doi-not-registered", IEEE_DOI, "ieee", ieee_world, ("ieee",)),
    Claim("not-found", IEEE_TITLE, "ieee", ieee_world, ("ieee",)),
]


Inject = Callable[[FakeUpstreams, str], None]


def _refuse(status: int, body: str, headers: dict[str, str]) -> Inject:
    """Every request to the source gets this answer instead of its routed one."""

    def inject(fake: FakeUpstreams, source: str) -> None:
        def answer(_r: httpx.Request, _m: re.Match[str]) -> httpx.Response:
            return httpx.Response(status, text=body, headers=headers)

        for method in ("GET", "POST"):
            fake.route(source, r".*", answer, method=method)

    return inject


def _fault(kind: str, retry_after: float | None = None) -> Inject:
    def inject(fake: FakeUpstreams, source: str) -> None:
        fake.fail(source, kind, times=10_000, retry_after=retry_after)

    return inject


@dataclass(frozen=True)
class Failure:
    name: str
    #: what the upstream does, for free sources and for IEEE Xplore (its gateway's answers)
    free: Inject | None
    ieee: Inject
    #: the circuit breaker is opened before the audit (the upstream answers again by then)
    breaker: bool = False


UNAUTHORIZED = _refuse(401, '{"message": "Unauthorized"}', {"content-type": "application/json"})
FAILURES = [
    Failure("timeout", _fault("timeout"), _fault("timeout")),
    Failure("5xx", _fault("503"), _fault("500")),
    Failure("429, Retry-After 1 h", _fault("429", 3600), _fault("429", 3600)),
    Failure(
        "quota spent",
        None,  # the free sources have no quota refaudit keeps
        _refuse(
            403,
            "<h1>Developer Over Rate</h1>",
            {"X-Error-Detail-Header": "Account Over Rate Limit", "Retry-After": "7200"},
        ),
    ),
    Failure(
        "key refused",
        UNAUTHORIZED,
        _refuse(
            403,
            "<h1>Developer Inactive</h1>",
            {"X-Error-Detail-Header": "Account Inactive"},
        ),
    ),
    Failure("breaker open", _fault("503"), _fault("500"), breaker=True),
    Failure("malformed body", _fault("truncate"), _fault("truncate")),
]


def _settings(tmp_path: Path, claim: Claim) -> Settings:
    settings = Settings(
        cache_dir=tmp_path / "cache", data_dir=tmp_path / "data", max_retries=1, api_keys={}
    )
    if claim.sources is not None:
        settings.sources = list(claim.sources)
        settings.api_keys = {"ieee": "ieee-key"}
    settings.rate_limits = {name: 1000.0 for name in settings.sources}
    return settings


async def _open_breaker(sources: Any, name: str, fake: FakeUpstreams) -> None:
    """Fail calls to `name` until its circuit opens, then let the upstream answer again."""
    client = sources.clients[name]
    for _ in range(10):
        if client.health.startswith("circuit open"):
            break
        try:
            await sources.get(name).search(SearchQuery(title="warm up the breaker", limit=1))
        except SourceError:
            pass
    assert client.health.startswith("circuit open")
    fake.faults.clear()


async def _verdict(
    claim: Claim,
    tmp_path: Path,
    failure: Failure | None = None,
    today: datetime.date | None = None,
) -> Result:
    fake = claim.world()
    if failure is not None:
        inject = failure.ieee if claim.deciding == "ieee" else failure.free
        assert inject is not None
        inject(fake, claim.deciding)
    settings = _settings(tmp_path, claim)
    clock = FakeClock()
    (reference,) = parse_bibtex(claim.bib, file="refs.bib").references
    async with open_sources(
        settings, RunStats(), transport=fake.transport(), clock=clock, sleep=clock.sleep
    ) as sources:
        if failure is not None and failure.breaker:
            await _open_breaker(sources, claim.deciding, fake)
        (evidence,) = await gather_evidence([reference], sources)
        return decide(evidence, enabled_sources=sources.enabled, today=today)


def _claim_id(claim: Claim) -> str:
    alone = "-alone" if claim.sources else ""
    return f"{claim.code}-{claim.deciding}{alone}"


@pytest.mark.parametrize("claim", CLAIMS, ids=_claim_id)
async def test_the_fault_free_run_makes_the_claim(claim: Claim, tmp_path: Path) -> None:
    result = await _verdict(claim, tmp_path)
    assert any(f.code == claim.code and f.severity == "error" for f in result.findings), [
        (f.code, f.message) for f in result.findings
    ]
    assert result.flagged


#: every claim with every way its deciding source can fail
CASES = [
    pytest.param(claim, failure, id=f"{_claim_id(claim)}-{failure.name}")
    for claim in CLAIMS
    for failure in FAILURES
    if claim.deciding == "ieee" or failure.free is not None
]


@pytest.mark.parametrize(("claim", "failure"), CASES)
async def test_no_absence_claim_survives_the_deciding_source_failing(
    claim: Claim, failure: Failure, tmp_path: Path
) -> None:
    result = await _verdict(claim, tmp_path, failure)

    claims = [f for f in result.findings if f.code in ABSENCE_CODES and f.severity == "error"]
    assert not claims, [(f.code, f.message) for f in claims]
    assert result.verdict is Verdict.UNVERIFIED
    assert not result.flagged
    assert result.sources[claim.deciding].state == "failed"
    notes = [f for f in result.findings if f.code in ("unverified", "unconfirmed")]
    assert any(claim.deciding in f.message for f in notes), [f.message for f in notes]


REGIONAL = {
    **PREPRINT,
    "paperId": "7c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d",
    "externalIds": {"CorpusId": 250000001},
    "title": "Dinâmica da cobertura vegetal no semiárido potiguar entre 1985 e 2015",
    "venue": "Revista Brasileira de Geografia Física",
    "journal": {"name": "Revista Brasileira de Geografia Física", "volume": "12"},
    "year": 2019,
    "authors": [{"authorId": "9", "name": "Maria Souza"}],
}
CITED_REGIONAL = """@article{souza2019, author = {Souza, Maria},
  title = {Dinâmica da cobertura vegetal no semiárido potiguar entre 1985 e 2015},
  journal = {Revista Brasileira de Geografia Física}, year = {2019}, volume = {12}}"""


async def test_a_journal_article_only_semantic_scholar_holds_is_found_not_missing(
    tmp_path: Path,
) -> None:
    claim = Claim("", CITED_REGIONAL, "semanticscholar", lambda: free_world([], [REGIONAL]))
    result = await _verdict(claim, tmp_path)

    assert result.verdict is Verdict.VERIFIED
    assert {"crossref", "openalex", "semanticscholar"} <= {
        name for name, status in result.sources.items() if status.state == "answered"
    }


async def test_a_cited_doi_shown_not_to_exist_spares_the_further_search(tmp_path: Path) -> None:
    claim = Claim("", UNREGISTERED, "crossref", lambda: free_world([]))
    fake = claim.world()
    settings = _settings(tmp_path, claim)
    (reference,) = parse_bibtex(claim.bib, file="refs.bib").references
    async with open_sources(settings, RunStats(), transport=fake.transport()) as sources:
        (evidence,) = await gather_evidence([reference], sources)
    result = decide(evidence, enabled_sources=sources.enabled)

    assert result.verdict is Verdict.NOT_FOUND
    # Semantic Scholar was asked about the DOI, never searched: the DOI settles it.
    s2 = fake.requests_to("semanticscholar")
    assert s2 and all(request.url.path.endswith("/paper/batch") for request in s2)


TODAY = datetime.date(2026, 11, 27)
RECENT = {
    "book": """@book{b, author = {Quibble, Ambrose}, title = {Protein Choreography: A Primer},
      publisher = {Tern Press}, year = {2026}, month = {sep}}""",
    "chapter": """@incollection{c, author = {Quibble, Ambrose}, title = {Protein Choreography},
      booktitle = {Handbook of Molecular Motion}, publisher = {Tern Press}, year = {2026}}""",
    "thesis": """@phdthesis{t, author = {Quibble, Ambrose}, title = {Protein Choreography},
      school = {University of Tern}, year = {2026}}""",
    "preprint": """@misc{p, author = {Quibble, Ambrose}, title = {Protein Choreography},
      year = {2026}}""",
}


@pytest.mark.parametrize("kind", list(RECENT))
async def test_a_work_of_the_last_months_no_index_holds_is_too_recent(
    kind: str, tmp_path: Path
) -> None:
    claim = Claim("", RECENT[kind], "openalex", lambda: free_world([]))
    result = await _verdict(claim, tmp_path, today=TODAY)
    assert result.verdict is Verdict.UNVERIFIED and not result.flagged
    assert "too recent to be indexed everywhere" in (result.reason or "")
    # A year later the same silence is an absence.
    later = await _verdict(claim, tmp_path, today=TODAY.replace(year=2028))
    assert later.verdict is Verdict.NOT_FOUND


RECENT_BUT_DISPROVED = {
    # Journals deposit an article's DOI as it appears; proceedings are listed as published.
    "journal-article": FABRICATED.replace("2021", "2026"),
    "conference-paper": IEEE_TITLE.replace("2019", "2026"),
    # An institution's report is issued with its number, ISBN or DOI.
    "report": """@techreport{r, author = {{Tern Institute}}, title = {Protein Choreography},
      institution = {Tern Institute}, year = {2026}}""",
    # A lookup proved the cited identifier false.
    "invented-doi": """@misc{d, author = {Quibble, Ambrose}, title = {Protein Choreography},
      year = {2026}, doi = {10.9999/does.not.exist}}""",
    # A record with a near title exists: the citation contradicts it.
    "near-title": """@misc{n, author = {Quibble, Ambrose}, title = {Long Short-Term Memories},
      year = {2026}}""",
}


@pytest.mark.parametrize("case", list(RECENT_BUT_DISPROVED))
async def test_a_recent_work_the_evidence_disproves_stays_not_found(
    case: str, tmp_path: Path
) -> None:
    claim = Claim("", RECENT_BUT_DISPROVED[case], "openalex", lambda: free_world([LSTM]))
    result = await _verdict(claim, tmp_path, today=TODAY)
    assert result.verdict is Verdict.NOT_FOUND and result.flagged
