"""Novelty: an idea is scored on how much of it one paper's title and abstract already hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from refaudit.cli import app
from refaudit.config import Settings, load_settings
from refaudit.errors import InputError
from refaudit.models import RunStats
from refaudit.novelty import (
    MAX_IDEA_CHARS,
    NOVELTY_SOURCES,
    NoveltyReport,
    assess_novelty,
    extract_concepts,
)
from refaudit.sources import open_sources, sharing
from tests.fakes import (
    FakeClock,
    FakeUpstreams,
    crossref_list,
    crossref_work,
    empty_arxiv_feed,
    openalex_list,
)

pytestmark = pytest.mark.anyio

PRIOR_IDEA = (
    "We train graph neural networks on protein contact maps to predict enzyme function "
    "from structure."
)
PRIOR_ABSTRACT = (
    "<jats:p>Predicting what an enzyme does from its structure is hard. We train graph neural "
    "networks on protein contact maps to predict enzyme function, and beat sequence models."
    "</jats:p>"
)
COMBINED_IDEA = "Applying transformer language models to coral reef bleaching surveys"


@pytest.fixture
def settings() -> Settings:
    loaded = load_settings()
    loaded.sources = [*NOVELTY_SOURCES, "dblp"]
    loaded.max_retries = 0
    return loaded


def s2_paper(paper_id: str, title: str, abstract: str, citations: int = 5) -> dict[str, Any]:
    return {
        "paperId": paper_id * 40,
        "externalIds": {"DOI": f"10.9999/{paper_id}"},
        "title": title,
        "abstract": abstract,
        "authors": [{"authorId": "1", "name": "Grace Hopper"}],
        "year": 2021,
        "venue": "Journal of Tests",
        "citationCount": citations,
    }


async def assess(
    idea: str,
    settings: Settings,
    fake: FakeUpstreams,
    stats: RunStats | None = None,
    **options: Any,
) -> NoveltyReport:
    """Assess `idea` on the fake upstreams; rate limits pace a fake clock, so nothing waits."""
    clock = FakeClock()
    async with open_sources(
        settings, RunStats(), transport=fake.transport(), clock=clock, sleep=clock.sleep
    ) as sources:
        with sharing(sources):
            return await assess_novelty(idea, settings, stats=stats, **options)


def literature(crossref: list[dict[str, Any]], s2: list[dict[str, Any]]) -> FakeUpstreams:
    """Upstreams whose topic searches return these hits (OpenAlex and arXiv find nothing)."""
    fake = FakeUpstreams()
    fake.route("crossref", r"/works", lambda _r, _m: crossref_list(crossref))
    fake.json("semanticscholar", r"/graph/v1/paper/search", {"total": len(s2), "data": s2})
    fake.route("openalex", r"/works", lambda _r, _m: openalex_list([]))
    fake.route("arxiv", r"/api/query", empty_arxiv_feed)
    return fake


def prior_art_world() -> FakeUpstreams:
    return literature(
        [
            crossref_work(
                "10.9999/enzyme",
                "Graph neural networks read enzyme function from contact maps",
                abstract=PRIOR_ABSTRACT,
                **{"is-referenced-by-count": 800},
            )
        ],
        [s2_paper("b", "Protein language models", "We model protein sequences with transformers.")],
    )


async def test_a_paper_holding_the_whole_idea_is_prior_art_and_listed_first(
    settings: Settings,
) -> None:
    fake = prior_art_world()

    report = await assess(PRIOR_IDEA, settings, fake)

    assert report.status == "ok"
    first = report.similar_papers[0]
    assert first.doi == "10.9999/enzyme"
    assert first.similarity >= 0.9
    assert report.assessment == "critical" and report.recommendation == "pivot"
    assert report.novelty_score is not None and report.novelty_score < 0.25
    assert report.gaps == []
    assert {q.source for q in report.queries} == set(NOVELTY_SOURCES)
    states = {s.source: s.state for s in report.sources}
    assert states["dblp"] == "not_asked" and states["crossref"] == "answered"


async def test_an_idea_costs_at_most_six_requests_cold_and_none_warm(settings: Settings) -> None:
    fake = prior_art_world()

    first = await assess(PRIOR_IDEA, settings, fake)
    cold = len(fake.requests)
    stats = RunStats()
    again = await assess(PRIOR_IDEA, settings, fake, stats)

    assert cold <= 6
    assert len(fake.requests) == cold
    assert sum(stats.cache_hits.values()) == cold
    assert again.model_dump() == first.model_dump()


async def test_papers_covering_one_half_each_of_a_combined_idea_are_related_work(
    settings: Settings,
) -> None:
    fake = literature(
        [
            crossref_work(
                "10.9999/reef",
                "Coral reef bleaching surveys across the Pacific",
                abstract="Divers recorded coral bleaching on reef surveys.",
            )
        ],
        [
            s2_paper(
                "t",
                "Transformer language models",
                "Transformer language models learn from text.",
                citations=100000,
            )
        ],
    )

    report = await assess(COMBINED_IDEA, settings, fake)

    assert {p.doi for p in report.similar_papers} == {"10.9999/reef", "10.9999/t"}
    assert all(p.similarity < 0.75 for p in report.similar_papers)
    assert report.assessment in ("high", "moderate")
    assert report.novelty_score is not None and report.novelty_score >= 0.45


async def test_failed_searches_are_could_not_assess_never_novel(settings: Settings) -> None:
    fake = FakeUpstreams()
    for source in NOVELTY_SOURCES:
        fake.fail(source, "503", times=10)

    report = await assess(COMBINED_IDEA, settings, fake)

    assert report.status == "unverified"
    assert report.novelty_score is None and report.assessment is None
    assert report.message.startswith("could not assess")
    assert {s.state for s in report.sources if s.source != "dblp"} == {"failed"}


async def test_one_failed_source_never_leaves_the_idea_called_highly_novel(
    settings: Settings,
) -> None:
    fake = literature([], [])
    fake.fail("semanticscholar", "503", times=10)

    report = await assess(COMBINED_IDEA, settings, fake)

    assert report.status == "partial"
    assert report.novelty_score == 1.0
    assert report.assessment == "moderate"
    assert "semanticscholar" in report.message


@pytest.mark.parametrize(
    ("idea", "message"),
    [("   ", "empty"), ("x" * (MAX_IDEA_CHARS + 1), "at most"), ("the of and", "no words")],
)
async def test_unusable_ideas_are_refused_before_any_request(
    settings: Settings, idea: str, message: str
) -> None:
    fake = literature([], [])

    with pytest.raises(InputError, match=message):
        await assess(idea, settings, fake)
    assert fake.requests == []


def test_concepts_are_keyphrases_without_repeating_each_other() -> None:
    concepts, weights = extract_concepts(PRIOR_IDEA)

    phrases = [concept.phrase.lower() for concept in concepts]
    assert any("graph neural networks" in phrase for phrase in phrases)
    seen: set[str] = set()
    for concept in concepts:
        assert set(concept.stems) - seen, f"{concept.phrase} repeats earlier concepts"
        seen |= set(concept.stems)
    assert "the" not in weights and "on" not in weights


runner = CliRunner()


@pytest.fixture
def cli_world(monkeypatch: pytest.MonkeyPatch) -> FakeUpstreams:
    """Route every source the CLI opens to the prior-art world."""
    import refaudit.sources

    fake = prior_art_world()
    monkeypatch.setenv("REFAUDIT_SOURCES", ",".join(NOVELTY_SOURCES))
    original = refaudit.sources.open_sources

    clock = FakeClock()

    def routed(settings: Settings, stats: RunStats, **kwargs: Any) -> Any:
        settings.max_retries = 0
        timing = {"transport": fake.transport(), "clock": clock, "sleep": clock.sleep}
        return original(settings, stats, **{**kwargs, **timing})

    monkeypatch.setattr(refaudit.sources, "open_sources", routed)
    return fake


def test_cli_json_names_the_prior_art(cli_world: FakeUpstreams) -> None:
    result = runner.invoke(app, ["novelty", PRIOR_IDEA, "--format", "json"])

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["assessment"] == "critical"
    assert data["similar_papers"][0]["doi"] == "10.9999/enzyme"
    assert data["similar_papers"][0]["citation_count"] == 800


def test_cli_table_says_what_to_do(cli_world: FakeUpstreams) -> None:
    result = runner.invoke(app, ["novelty", PRIOR_IDEA], env={"COLUMNS": "120"})

    assert result.exit_code == 0, result.output
    assert "recommendation: pivot" in result.stdout
    assert "Graph neural networks read enzyme function" in result.stdout


def test_cli_table_lists_prior_art_that_names_no_author(cli_world: FakeUpstreams) -> None:
    # An editorial or a dataset record may carry no author: its card is left blank there.
    anonymous = crossref_work(
        "10.9999/enzyme",
        "Graph neural networks read enzyme function from contact maps",
        authors=[],
        abstract=PRIOR_ABSTRACT,
    )
    cli_world.route("crossref", r"/works", lambda _r, _m: crossref_list([anonymous]))

    result = runner.invoke(app, ["novelty", PRIOR_IDEA], env={"COLUMNS": "120"})

    assert result.exit_code == 0, result.output
    assert "Graph neural networks read enzyme function" in result.stdout


def test_cli_ideas_file_gives_one_line_per_idea_in_order(
    cli_world: FakeUpstreams, tmp_path: Path
) -> None:
    ideas = tmp_path / "ideas.jsonl"
    ideas.write_text(
        json.dumps({"id": "a", "idea": PRIOR_IDEA})
        + "\nnot json\n"
        + json.dumps({"id": "c", "idea": "   "})
        + "\n"
        + json.dumps({"id": "d", "idea": COMBINED_IDEA})
        + "\n"
    )

    result = runner.invoke(app, ["novelty", "--ideas", str(ideas), "--format", "jsonl"])

    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["a", "line 2", "c", "d"]
    assert [line["status"] for line in lines] == ["ok", "invalid", "invalid", "ok"]
    assert "ideas.jsonl:2" in lines[1]["message"]
    assert result.exit_code == 2


def test_cli_refuses_an_idea_and_a_file_together(tmp_path: Path) -> None:
    result = runner.invoke(app, ["novelty", "idea", "--ideas", str(tmp_path / "x.jsonl")])

    assert result.exit_code == 2
    assert "one idea, or --ideas" in result.output


async def test_context_steers_the_broad_searches_but_adds_no_concept(settings: Settings) -> None:
    fake = prior_art_world()

    report = await assess(
        PRIOR_IDEA, settings, fake, context="Structural bioinformatics of metalloproteases"
    )

    (s2,) = fake.requests_to("semanticscholar")
    assert "metalloproteases" in s2.url.params["query"].lower()
    (openalex,) = fake.requests_to("openalex")
    assert "metalloproteases" not in openalex.url.params["filter"].lower()
    assert not any("metalloprotease" in concept.lower() for concept in report.concepts)
    assert report.similar_papers[0].doi == "10.9999/enzyme"


async def test_topic_searches_read_titles_and_abstracts(settings: Settings) -> None:
    fake = prior_art_world()

    await assess(PRIOR_IDEA, settings, fake)

    (openalex,) = fake.requests_to("openalex")
    assert openalex.url.params["filter"].startswith("title_and_abstract.search:")
    (s2,) = fake.requests_to("semanticscholar")
    assert "abstract" in s2.url.params["fields"].split(",")
    (crossref,) = fake.requests_to("crossref")
    assert "query" in crossref.url.params and "abstract" in crossref.url.params["select"]
