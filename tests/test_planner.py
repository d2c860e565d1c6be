"""The evidence planner: which sources may hold a cited work, in what order to ask them."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import re
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from refaudit import evidence, planner
from refaudit.config import Settings
from refaudit.evidence import SEARCH_PRIORITY, Evidence, gather_evidence
from refaudit.lookups import IdentifierLookups
from refaudit.models import Person, Reference, Result, RunStats, Work
from refaudit.parsing.freetext import parse_freetext
from refaudit.sources import crossref, open_sources, registry
from refaudit.sources.pacing import request_priority
from refaudit.verify import decide
from tests.fakes import (
    FakeUpstreams,
    Overlap,
    YieldingClock,
    crossref_list,
    crossref_work,
    openalex_list,
    openalex_work,
)

ALL = registry.SOURCE_NAMES


def ref(entry_type: str, venue: str | None = None, year: int | None = 2019, **extra) -> Reference:  # type: ignore[no-untyped-def]
    return Reference(
        key="k", entry_type=entry_type, title="A Title", venue=venue, year=year, **extra
    )


@pytest.mark.parametrize(
    ("reference", "source", "reason_has"),
    [
        (ref("book", year=1890), "arxiv", "1991"),
        (ref("book", year=2001), "arxiv", "book"),
        (ref("article", "Journal of Political Economy"), "pubmed", "biomedicine"),
        (ref("article", "Journal of Political Economy"), "dblp", "computer science"),
        (ref("inproceedings", "NeurIPS"), "pubmed", "conference paper"),
        (ref("article", "The Lancet"), "dblp", "computer science"),
        (ref("patent"), "openalex", "entry type"),
    ],
)
def test_a_source_is_never_sent_what_it_cannot_hold(
    reference: Reference, source: str, reason_has: str
) -> None:
    reason = planner.cannot_index(source, planner.kind_of(reference))
    assert reason is not None and reason_has in reason


@pytest.mark.parametrize(
    ("reference", "source"),
    [
        (ref("article", "The Lancet"), "pubmed"),
        (ref("article", "Journal of Biological Chemistry"), "pubmed"),
        (ref("inproceedings", "Advances in Neural Information Processing Systems"), "dblp"),
        (ref("article", "IEEE Transactions on Software Engineering"), "dblp"),
        (ref("misc"), "pubmed"),  # no venue: the field is unknown
        (ref("misc", "arXiv preprint"), "arxiv"),
    ],
)
def test_field_and_preprint_signals_open_the_specialist_indexes(
    reference: Reference, source: str
) -> None:
    assert planner.cannot_index(source, planner.kind_of(reference)) is None


def test_journal_articles_go_to_the_reference_matcher_first_and_the_slow_pools_last() -> None:
    order = planner.search_order(ref("article", "The Lancet"), ALL)
    assert order[:2] == ["crossref", "openalex"]
    assert order[-2:] == ["semanticscholar", "arxiv"]
    assert "dblp" not in order and "datacite" not in order


def test_conference_papers_go_to_the_indexes_that_cover_them_first() -> None:
    order = planner.search_order(ref("inproceedings", "NeurIPS"), ALL)
    assert order[0] == "openalex"
    # DBLP's pool is as slow as Semantic Scholar's: it comes after it.
    assert order.index("semanticscholar") < order.index("dblp")


def test_citation_strings_without_a_title_go_to_crossref_first() -> None:
    reference = Reference(key="k", free_text="Smith J. (2001) Something. J. Things 4, 1-9.")
    assert planner.search_order(reference, ALL)[0] == "crossref"


def test_what_could_not_change_the_verdict_is_not_asked() -> None:
    journal = planner.kind_of(ref("article", "Journal of Political Economy"))
    # Identified: a second record from a ranked search is all the comparison needs.
    assert planner.still_needed(
        "semanticscholar", journal, ["crossref", "openalex"], identified=True
    )
    # Not identified: a journal outside computing is registered with a DOI, yet the
    # matcher's registry and a general index settle it only with one more index ...
    assert (
        planner.still_needed("semanticscholar", journal, ["crossref", "openalex"], identified=False)
        is None
    )
    settled = ["crossref", "openalex", "semanticscholar"]
    assert planner.still_needed("arxiv", journal, settled, identified=False)
    # ... or when the cited DOI is known not to exist.
    assert planner.still_needed(
        "semanticscholar", journal, ["crossref", "openalex"], identified=False, disproved=True
    )
    # A biomedical article: the further index is Semantic Scholar's ranked search when
    # the run may search it, else PubMed; after either, the other is spared.
    medical = planner.kind_of(ref("article", "Journal of Clinical Oncology"))
    both = ["crossref", "openalex", "semanticscholar", "pubmed"]
    assert planner.still_needed(
        "pubmed", medical, ["crossref", "openalex"], identified=False, searchable=both
    )
    assert (
        planner.still_needed("pubmed", medical, ["crossref", "openalex"], identified=False) is None
    )
    assert planner.still_needed(
        "semanticscholar", medical, ["crossref", "openalex", "pubmed"], identified=False
    )
    # ... but a "journal" in computing may be a conference paper without a DOI.
    ml_journal = planner.kind_of(ref("article", "Journal of Reward Learning"))
    assert (
        planner.still_needed(
            "semanticscholar", ml_journal, ["crossref", "openalex"], identified=False
        )
        is None
    )
    neurips = planner.kind_of(ref("inproceedings", "NeurIPS"))
    assert planner.still_needed("dblp", neurips, ["openalex", "semanticscholar"], identified=True)
    assert (
        planner.still_needed("dblp", neurips, ["openalex", "semanticscholar"], identified=False)
        is None
    )
    # Crossref may hold a NeurIPS paper, but two indexes that cover them answered.
    assert planner.still_needed("crossref", neurips, ["openalex", "dblp"], identified=False)
    # IEEE proceedings carry DOIs: Crossref covers CVPR as it covers journals.
    cvpr = planner.kind_of(ref("inproceedings", "CVPR"))
    assert planner.still_needed("crossref", cvpr, ["openalex", "dblp"], identified=False) is None
    # Semantic Scholar holds arXiv's papers: arXiv's 3-second pool adds nothing after it.
    preprint = planner.kind_of(ref("misc", "arXiv preprint"))
    assert planner.still_needed(
        "arxiv", preprint, ["openalex", "semanticscholar"], identified=False
    )


@pytest.mark.parametrize(
    "reference",
    [
        ref("phdthesis"),
        ref("mastersthesis", year=2016),
        ref("techreport", "Forest Research Institute"),
    ],
)
def test_theses_and_reports_absent_from_the_doi_registry_are_searched_further(
    reference: Reference,
) -> None:
    # Most theses and reports have no DOI: Crossref's silence about one, with
    # OpenAlex's, does not settle it; Semantic Scholar, which holds them, is asked.
    kind = planner.kind_of(reference)
    assert not planner.covers("crossref", kind)
    assert (
        planner.still_needed("semanticscholar", kind, ["crossref", "openalex"], identified=False)
        is None
    )


def test_a_citation_string_without_locators_is_not_settled_as_a_journal_article() -> None:
    searched = ["crossref", "openalex"]
    thesis = parse_freetext(
        "Dam, J. (1997). The small mammals from the upper Miocene of the Teruel-Alfambra "
        "region (Spain): paleobiology and paleoclimatic reconstructions. Utrecht University.",
        key="k",
    )
    kind = planner.kind_of(thesis)
    assert kind.guessed
    assert planner.still_needed("semanticscholar", kind, searched, identified=False) is None
    # With a volume and pages it reads as the journal article it is.
    article = parse_freetext(
        "Ortega, D. (2009). Paying for the middle class. Journal of Political Economy, "
        "117(3), 412-441.",
        key="k",
    )
    article_kind = planner.kind_of(article)
    assert not article_kind.guessed
    assert planner.still_needed(
        "arxiv", article_kind, [*searched, "semanticscholar"], identified=False
    )


def test_a_citation_string_whose_venue_could_not_be_read_goes_to_the_matcher() -> None:
    # "…LEVEL., Heat Transf Res. 2018;…": the journal ran into the title, so nothing
    # says what kind of work this is; the matcher reads the whole string.
    reference = parse_freetext(
        "Mu Y, Chen L, Kang Q, Tao W. Evaluation of the performance of cavities in nucleate "
        "boiling at microscale level., Heat Transf Res. 2018;49:1003–1022",
        key="k",
    )
    kind = planner.kind_of(reference)
    assert kind.guessed
    searched = ["openalex", "semanticscholar"]
    assert planner.still_needed("crossref", kind, searched, identified=False) is None
    assert planner.still_needed("arxiv", kind, searched, identified=False)


def test_silence_counts_only_from_sources_that_index_the_kind() -> None:
    neurips = planner.kind_of(ref("inproceedings", "NeurIPS"))
    assert not planner.covers("crossref", neurips) and not planner.covers("arxiv", neurips)
    assert planner.covers("openalex", neurips) and planner.covers("dblp", neurips)
    assert planner.describe(neurips) == "conference papers in computer science"


def test_entries_without_anything_to_check_ask_no_source() -> None:
    assert planner.nothing_to_check(ref("online")) is not None
    assert planner.nothing_to_check(ref("online", doi="10.1/x")) is None


@pytest.mark.anyio
async def test_identifier_look_ups_go_before_the_searches_queued_ahead_of_them(
    tmp_path: Path,
) -> None:
    """One batched DOI look-up unlocks many references: it takes the pool's next turn."""
    fake = FakeUpstreams()
    fake.serve_crossref([crossref_work("10.1000/known", "Wind erosion of sandy soils")])
    clock = YieldingClock()
    without_doi = [
        Reference(key=f"s{n}", entry_type="article", title=f"Soil survey {n}", venue="Geoderma")
        for n in range(6)
    ]
    cited_doi = Reference(key="d", entry_type="article", doi="10.1000/known")
    config = Settings(sources=["crossref"], cache_dir=tmp_path, data_dir=tmp_path)

    async with open_sources(
        config, RunStats(), transport=fake.transport(), clock=clock, sleep=clock.sleep
    ) as sources:
        await gather_evidence([*without_doi, cited_doi], sources)

    sent = [r.url.params.get("filter", "") for r in fake.requests_to("crossref")]
    assert len(sent) == 7
    # It may reach the idle pool first; else it takes the turn after the one search sent.
    assert any(s.startswith("doi:") for s in sent[:2])


@pytest.mark.anyio
async def test_a_batch_s_look_ups_are_freed_when_it_ends_not_at_the_next_collection(
    tmp_path: Path,
) -> None:
    """A streamed audit lets go of each batch's evidence as its results are written: the
    batch's identifier look-ups (which hold every reference and record of it) must not
    outlive it in a reference cycle waiting for the garbage collector."""
    fake = FakeUpstreams()
    fake.serve_crossref([crossref_work("10.1000/known", "Wind erosion of sandy soils")])
    references = [
        Reference(key="d", entry_type="article", doi="10.1000/known"),
        Reference(key="s", entry_type="article", title="Soil survey", venue="Geoderma"),
    ]
    config = Settings(sources=["crossref"], cache_dir=tmp_path, data_dir=tmp_path)
    gc.collect()
    gc.disable()
    try:
        async with open_sources(config, RunStats(), transport=fake.transport()) as sources:
            found = await gather_evidence(references, sources)
        left = [o for o in gc.get_objects() if isinstance(o, IdentifierLookups)]
    finally:
        gc.enable()
    assert [item.reference.key for item in found] == ["d", "s"]
    assert found[0].doi_records
    assert left == []


async def _openalex_order(tmp_path: Path, sources_enabled: list[str], papers: int = 1) -> list[str]:
    """The order OpenAlex is asked in: 1,000 cited DOIs (ten batched look-ups, twice its
    burst) and `papers` conference papers without a DOI, whose plans go on to Semantic
    Scholar."""
    fake = FakeUpstreams()
    fake.json("openalex", r"/works", openalex_list([]))
    fake.json("semanticscholar", r"/graph/v1/paper/search", {"total": 0, "offset": 0})
    fake.json("semanticscholar", r"/graph/v1/paper/batch", [], method="POST")
    clock = YieldingClock()
    cited_dois = [
        Reference(key=f"d{n}", entry_type="article", doi=f"10.1000/held{n}") for n in range(1000)
    ]
    conference_papers = [
        Reference(
            key=f"p{n}",
            entry_type="inproceedings",
            title=f"Hypernetworks for continual reinforcement learning, part {n}",
            venue="Advances in Neural Information Processing Systems",
            year=2021,
        )
        for n in range(papers)
    ]
    config = Settings(sources=sources_enabled, cache_dir=tmp_path, data_dir=tmp_path)
    async with open_sources(
        config, RunStats(), transport=fake.transport(), clock=clock, sleep=clock.sleep
    ) as sources:
        await gather_evidence([*cited_dois, *conference_papers], sources)
    return ["search" if r.url.params.get("search") else "doi" for r in fake.requests_to("openalex")]


@pytest.mark.anyio
async def test_a_search_leading_to_an_idle_slow_pool_goes_before_identifier_look_ups(
    tmp_path: Path,
) -> None:
    """Semantic Scholar serves one request a second: the search that would give it work
    does not wait behind look-ups that give it none."""
    order = await _openalex_order(tmp_path, ["openalex", "semanticscholar"])
    # The first burst left before the search was planned; it takes the next turn.
    assert order.index("search") <= 6
    assert order.count("doi") == 10


@pytest.mark.anyio
async def test_only_enough_searches_to_keep_the_slow_pool_busy_go_ahead(tmp_path: Path) -> None:
    """The look-ups still go soon: only a few searches take turns ahead of them."""
    order = await _openalex_order(tmp_path, ["openalex", "semanticscholar"], papers=20)
    last_look_up = len(order) - 1 - order[::-1].index("doi")
    ahead = order[:last_look_up].count("search")
    assert 1 <= ahead <= evidence.FEED_AHEAD + 1, order


@pytest.mark.anyio
async def test_without_a_slow_pool_ahead_identifier_look_ups_keep_their_turn(
    tmp_path: Path,
) -> None:
    order = await _openalex_order(tmp_path, ["openalex"])
    assert order == ["doi"] * 10 + ["search"]


def _noting_crossref_turns(fake: FakeUpstreams) -> list[tuple[str, float]]:
    """Crossref answers nothing and notes each request's first query word (or "doi") and
    the priority it was sent at."""
    turns: list[tuple[str, float]] = []

    def noting_turn(request: httpx.Request, _match: re.Match[str]) -> httpx.Response:
        words = request.url.params.get("query.bibliographic", "doi").split()
        turns.append((words[0], request_priority.get()))
        return crossref_list([])

    fake.route("crossref", r"/works", noting_turn)
    return turns


@pytest.mark.anyio
async def test_a_reference_whose_doi_no_source_knows_is_searched_before_the_others(
    tmp_path: Path,
) -> None:
    """Its plan is likely to run to the end: its searches take their turns a step ahead."""
    fake = FakeUpstreams()
    fake.serve_crossref([])
    turns = _noting_crossref_turns(fake)
    without_doi = Reference(key="s", entry_type="article", title="Soil survey", venue="Geoderma")
    invented = Reference(
        key="d", entry_type="article", doi="10.1000/invented", title="Grazing and wind erosion"
    )
    config = Settings(sources=["crossref"], cache_dir=tmp_path, data_dir=tmp_path)

    async with open_sources(config, RunStats(), transport=fake.transport()) as sources:
        await gather_evidence([without_doi, invented], sources)

    first_turns = dict(reversed(turns))
    assert first_turns == {"doi": 0, "Soil": SEARCH_PRIORITY, "Grazing": SEARCH_PRIORITY - 1}


@pytest.mark.anyio
async def test_a_search_goes_sooner_the_more_searches_its_reference_would_still_need(
    tmp_path: Path,
) -> None:
    """In a busy pool, the searches served last should be those whose references end there.

    A journal article outside computing is settled by Crossref, OpenAlex and Semantic
    Scholar; one in a computing journal goes on to DBLP if all three find nothing.
    """
    fake = FakeUpstreams()
    turns = _noting_crossref_turns(fake)
    fake.json("openalex", r"/works", openalex_list([]))
    fake.json("semanticscholar", r"/graph/v1/paper/search", {"total": 0, "offset": 0})
    fake.json(
        "dblp",
        r"/search/publ/api",
        {"result": {"hits": {"@total": "0", "@computed": "0", "@sent": "0", "@first": "0"}}},
    )
    soil = Reference(key="s", entry_type="article", title="Soil survey", venue="Geoderma")
    kernels = Reference(
        key="k",
        entry_type="article",
        title="Graph kernels for molecules",
        venue="IEEE Transactions on Pattern Analysis and Machine Intelligence",
    )
    config = Settings(
        sources=["crossref", "openalex", "semanticscholar", "dblp"],
        cache_dir=tmp_path,
        data_dir=tmp_path,
    )

    async with open_sources(config, RunStats(), transport=fake.transport()) as sources:
        await gather_evidence([soil, kernels], sources)

    first_turns = dict(reversed(turns))
    # Both stay behind any reference's second search (one step, SEARCH_PRIORITY - 1).
    assert SEARCH_PRIORITY - 1 < first_turns["Graph"] < first_turns["Soil"] < SEARCH_PRIORITY


COCHRANE = "Cochrane Database of Systematic Reviews"


async def _searched_with_overlap(
    tmp_path: Path, reference: Reference, found: list[dict[str, object]]
) -> tuple[Overlap, FakeUpstreams, Evidence]:
    """Search one reference in Crossref (which returns `found`) and OpenAlex (nothing)."""
    fake = FakeUpstreams()
    fake.json("crossref", r"/works", crossref_list(found))
    fake.json("openalex", r"/works", openalex_list([]))
    wire = Overlap(fake.transport())
    config = Settings(sources=["crossref", "openalex"], cache_dir=tmp_path, data_dir=tmp_path)
    async with open_sources(config, RunStats(), transport=wire) as sources:
        (item,) = await gather_evidence([reference], sources)
    return wire, fake, item


@pytest.mark.anyio
async def test_searches_no_answer_could_spare_go_out_together(tmp_path: Path) -> None:
    """No record convinces of an undated, anonymous citation with a short title (other
    works share it): its plan asks Crossref and OpenAlex whatever they find, so both
    searches are sent at once instead of one round trip after the other."""
    review = crossref_work(
        "10.1002/14651858.cd004142.pub2", "Exercise for dysmenorrhoea", venue=COCHRANE
    )
    cited = Reference(key="anonexercise", entry_type="article", title="Exercise for dysmenorrhoea")

    wire, fake, item = await _searched_with_overlap(tmp_path, cited, [review])

    assert wire.most == 2
    assert (fake.count("crossref"), fake.count("openalex")) == (1, 1)
    assert item.searched_by == {"crossref", "openalex"}
    assert [w.doi for w in item.candidates] == ["10.1002/14651858.cd004142.pub2"]


@pytest.mark.anyio
async def test_a_search_whose_answer_may_end_the_plan_goes_alone(tmp_path: Path) -> None:
    """With its year the same citation is settled by Crossref's record: the searches go
    one after the other, OpenAlex's first (it answers many titles in one request), and
    Crossref's matcher only once OpenAlex has named no DOI."""
    review = crossref_work(
        "10.1002/14651858.cd004142.pub2",
        "Exercise for dysmenorrhoea",
        year=2010,
        venue=COCHRANE,
    )
    cited = Reference(
        key="dated", entry_type="article", title="Exercise for dysmenorrhoea", year=2010
    )

    wire, fake, item = await _searched_with_overlap(tmp_path, cited, [review])

    assert wire.most == 1
    assert [fake.count("openalex"), fake.count("crossref")] == [1, 1]
    assert fake.requests[0].url.host == "api.openalex.org"
    assert "query.bibliographic" in fake.requests[1].url.params
    assert item.searched_by == {"openalex", "crossref"}


@pytest.mark.anyio
async def test_a_doi_the_general_index_names_brings_the_registrars_record_without_a_search(
    tmp_path: Path,
) -> None:
    """Journal articles without a DOI: OpenAlex's search names each one's DOI, and
    Crossref's records come through DOI filters (shared by the DOIs asked about together)
    instead of one matcher search each."""
    fake = FakeUpstreams()
    reviews = [
        ("10.1002/14651858.cd004142.pub2", "Exercise for dysmenorrhoea", "Brown"),
        ("10.1002/14651858.cd002764.pub2", "Nonsteroidal anti-inflammatory drugs", "Marjoribanks"),
    ]
    fake.serve_crossref(
        [
            crossref_work(doi, title, year=2010, venue=COCHRANE, authors=[("J", author)])
            for doi, title, author in reviews
        ]
    )
    fake.route(
        "openalex",
        r"/works",
        lambda request, _m: openalex_list(
            [
                openalex_work(f"W{n}", title, doi=doi, year=2010, venue=COCHRANE, authors=[author])
                for n, (doi, title, author) in enumerate(reviews)
                if title == request.url.params["search"]
            ]
        ),
    )
    cited = [
        Reference(
            key=f"r{n}",
            entry_type="article",
            title=title,
            year=2010,
            venue=COCHRANE,
            authors=[Person(family=author, given="J")],
        )
        for n, (_doi, title, author) in enumerate(reviews)
    ]
    config = Settings(sources=["crossref", "openalex"], cache_dir=tmp_path, data_dir=tmp_path)

    async with open_sources(config, RunStats(), transport=fake.transport()) as sources:
        items = await gather_evidence(cited, sources)

    sent = fake.requests_to("crossref")
    assert all(r.url.params["filter"].startswith("doi:") for r in sent)
    assert not any("query.bibliographic" in r.url.params for r in sent)
    for item, (doi, _title, _author) in zip(items, reviews, strict=True):
        assert [w.source for w in item.candidates] == ["crossref", "openalex"]
        assert item.candidates[0].doi == doi
        assert item.statuses["crossref"].state == "answered"


@pytest.mark.parametrize(
    ("reference", "answers_matter"),
    [
        (Reference(key="a", entry_type="article", title="Hardware and Software"), False),
        # A distinctive title is identified by its record, whoever the cited authors are
        # ("F. Lastname" agrees with no one): a found record ends the plan early.
        (
            Reference(
                key="z",
                entry_type="inproceedings",
                title="LightGCL: Simple Yet Effective Graph Contrastive Learning for "
                "Recommendation",
                authors=[Person(family="Zhang", given="M."), Person(family="Lastname", given="F.")],
                year=2023,
            ),
            True,
        ),
        (Reference(key="y", entry_type="article", title="Hardware and Software", year=2015), True),
        # A citation string may be re-read around a record's title, with a year it shows.
        (
            parse_freetext("Hardware and Software. Digital Pathology, Springer, 2015.", key="f"),
            True,
        ),
    ],
)
def test_searches_go_out_together_only_where_no_answer_can_change_the_plan(
    reference: Reference, answers_matter: bool
) -> None:
    assert evidence._answers_matter(reference) is answers_matter


@pytest.mark.anyio
async def test_whether_a_reference_needs_a_search_is_decided_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thousand identified references at once must not hold the loop while pools wait."""
    fake = FakeUpstreams()
    fake.serve_crossref([crossref_work("10.1000/known", "Wind erosion of sandy soils")])
    threads: list[threading.Thread] = []

    def noting_thread(item: Evidence) -> bool:
        threads.append(threading.current_thread())
        return needs_search(item)

    needs_search = evidence.needs_search
    monkeypatch.setattr(evidence, "needs_search", noting_thread)
    cited = Reference(key="d", entry_type="article", doi="10.1000/known", title="Wind erosion")
    config = Settings(sources=["crossref"], cache_dir=tmp_path, data_dir=tmp_path)

    async with open_sources(config, RunStats(), transport=fake.transport()) as sources:
        await gather_evidence([cited], sources)

    assert threads and threading.main_thread() not in threads


def test_a_verdict_reached_when_the_search_ends_is_kept_while_nothing_is_added() -> None:
    """Verdicts are reached while the slow pools still work; a later answer reopens one."""
    title = "Wind erosion of sandy soils under grazing"
    reference = Reference(key="w", entry_type="article", title=title, year=2019, venue="Geoderma")
    record = Work(source="crossref", title=title, year=2019, venue="Geoderma", doi="10.1/w")
    decided: list[str] = []

    def counting(item: Evidence) -> Result:
        decided.append(item.reference.key)
        return decide(item, enabled_sources=["crossref", "ieee"])

    item = Evidence(reference, candidates=[record])
    item.answered("crossref")
    item.decide_early(counting)
    assert item.early is not None
    early = item.early[1]

    assert item.verdict(counting) is early
    item.answered("ieee")
    assert item.verdict(counting) is not early
    assert decided == ["w", "w"]


def _crossref_search(request: httpx.Request) -> bool:
    return "query.bibliographic" in request.url.params


def _first_batch(request: httpx.Request) -> bool:
    return "10.1000/held" in request.url.params.get("filter", "")


class HoldingFirstBatch(httpx.AsyncBaseTransport):
    """Keeps a look-up open until a search arrives (or, on failure, a few seconds): by
    default the first DOI batch, until Crossref is searched."""

    def __init__(
        self,
        inner: httpx.AsyncBaseTransport,
        *,
        search: Callable[[httpx.Request], bool] = _crossref_search,
        held: Callable[[httpx.Request], bool] = _first_batch,
    ) -> None:
        self.inner = inner
        self.events: list[str] = []
        self.searched = asyncio.Event()
        self._search, self._held = search, held

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._search(request):
            self.events.append("search")
            self.searched.set()
        elif self._held(request):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.searched.wait(), 5)
            self.events.append("held batch answered")
        return await self.inner.handle_async_request(request)


@pytest.mark.anyio
async def test_a_reference_searches_as_soon_as_its_own_look_up_batch_answers(
    tmp_path: Path,
) -> None:
    """A slow batch of DOIs holds back only its own references, not the whole bibliography."""
    held = crossref.filter_batches([f"10.1000/held{n:05}" for n in range(1000)])[0]
    fake = FakeUpstreams()
    fake.serve_crossref(
        [crossref_work(doi, f"Dune migration survey {n}") for n, doi in enumerate(held)]
        + [crossref_work("10.1000/other", "Wind erosion of sandy soils")]
    )
    references = [
        Reference(key=f"h{n}", entry_type="article", doi=doi, title=f"Dune migration survey {n}")
        for n, doi in enumerate(held)
    ]
    # Its DOI leads to another work: the citation is searched by its title.
    mismatched = Reference(
        key="m", entry_type="article", doi="10.1000/other", title="Grazing and soil crusts"
    )
    transport = HoldingFirstBatch(fake.transport())
    clock = YieldingClock()
    # Polite callers may have three list queries in flight: both batches are sent at once.
    config = Settings(
        sources=["crossref"], mailto="lab@example.org", cache_dir=tmp_path, data_dir=tmp_path
    )

    async with open_sources(
        config, RunStats(), transport=transport, clock=clock, sleep=clock.sleep
    ) as sources:
        found = await gather_evidence([*references, mismatched], sources)

    assert transport.events[:2] == ["search", "held batch answered"]
    assert [len(item.doi_records) for item in found] == [1] * len(found)


def _semantic_scholar_search(request: httpx.Request) -> bool:
    return request.url.host == "api.semanticscholar.org" and request.url.path.endswith("/search")


def _crossref_look_up(request: httpx.Request) -> bool:
    return request.url.host == "api.crossref.org" and "doi:" in request.url.params.get("filter", "")


@pytest.mark.anyio
async def test_a_search_no_look_up_can_change_starts_with_the_first_look_up_answered(
    tmp_path: Path,
) -> None:
    """A short title cited with its DOI but no year or authors is searched whatever the
    look-ups find (no record could identify it): once one index knows the DOI, Semantic
    Scholar is asked at once, not after the slowest look-up, and the verdict still rests
    on every look-up's answer."""
    doi = "10.1002/14651858.cd004142.pub2"
    fake = FakeUpstreams()
    fake.serve_crossref([crossref_work(doi, "Exercise for dysmenorrhoea")])
    fake.serve_openalex([openalex_work("W1", "Exercise for dysmenorrhoea", doi=doi)])
    fake.json("semanticscholar", r"/graph/v1/paper/search", {"total": 0, "offset": 0})
    fake.json("semanticscholar", r"/graph/v1/paper/batch", [None], method="POST")
    held = HoldingFirstBatch(
        fake.transport(), search=_semantic_scholar_search, held=_crossref_look_up
    )
    reference = Reference(
        key="anonexercise", entry_type="article", title="Exercise for dysmenorrhoea", doi=doi
    )
    config = Settings(
        sources=["crossref", "openalex", "semanticscholar"], cache_dir=tmp_path, data_dir=tmp_path
    )
    clock = YieldingClock()
    async with open_sources(
        config, RunStats(), transport=held, clock=clock, sleep=clock.sleep
    ) as sources:
        verdict = functools.partial(decide, enabled_sources=sources.enabled)
        (item,) = await gather_evidence([reference], sources, decide=verdict)
        result = item.verdict(verdict)

    assert held.events[:2] == ["search", "held batch answered"]
    assert [w.source for w in item.doi_records] == ["crossref", "openalex"]
    assert result.verdict.value == "verified" and result.matched is not None
    assert fake.count("semanticscholar") == 1
