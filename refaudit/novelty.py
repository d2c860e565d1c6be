"""Novelty: has a research idea been done already? Answered from the literature, not a guess.

The method, deterministic and without a language model:

1. The idea's key concepts are its keyphrases (YAKE, a statistical keyphrase
   extractor), and each content word of them carries YAKE's importance as a weight.
2. A few targeted searches, one request per source: OpenAlex ANDs the most important
   terms over titles and abstracts (precise); Semantic Scholar, Crossref and arXiv
   rank every concept word over titles and abstracts (broad). The hits are merged by
   discovery's fusion, so one work found by several sources is one candidate.
3. Each candidate's similarity is the weighted share of the idea's concept words its
   title and abstract contain (stemmed, so "networks" covers "network"). A paper that
   covers one half of a combined idea ("method X applied to subject Y") scores about
   one half: related work, not prior art.
4. The risk of a candidate is its similarity squared (half coverage is a small risk,
   full coverage a large one), weighted up for well-cited papers; the novelty score is
   one minus the largest risk. `docs/novelty.md` explains the thresholds.

When every search fails the result is `unverified` ("could not assess"), never novel;
when some fail, the assessment is never `high`.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from refaudit.config import Settings
from refaudit.errors import InputError
from refaudit.models import RunStats, SourceStatus, Work
from refaudit.sources import registry

if TYPE_CHECKING:
    import httpx

Assessment = Literal["high", "moderate", "low", "critical"]
Recommendation = Literal["proceed", "proceed_with_caution", "differentiate", "pivot"]
Status = Literal["ok", "partial", "unverified"]

#: The sources searched, one request each: those that can search titles and abstracts.
NOVELTY_SOURCES = registry.having("topic")
#: Hits asked of each source; their abstracts are what the concepts are scored on.
HITS_PER_SOURCE = 25
#: Longest idea and context accepted: a research idea is a sentence or a paragraph.
MAX_IDEA_CHARS = 4000
MAX_CONTEXT_CHARS = 4000
#: Keyphrases kept as the idea's concepts, and words of them ANDed at OpenAlex.
MAX_CONCEPTS = 8
AND_TERMS = 4
#: Words of the context's keyphrases added to the ranked searches.
CONTEXT_TERMS = 6
#: A keyphrase counts as covered when this share of its words is in the paper.
PHRASE_COVERAGE = 2 / 3
#: Citation weighting of the risk: an uncited paper counts this much of a paper
#: cited CITED_FULLY times or more (log scale in between).
UNCITED_WEIGHT = 0.85
CITED_FULLY = 1000
#: novelty_score bands, highest first: (lowest score, assessment, recommendation).
BANDS: tuple[tuple[float, Assessment, Recommendation], ...] = (
    (0.65, "high", "proceed"),
    (0.45, "moderate", "proceed_with_caution"),
    (0.25, "low", "differentiate"),
    (0.0, "critical", "pivot"),
)

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


@dataclass
class Concept:
    """One key concept of the idea: a keyphrase and the stems of its content words."""

    phrase: str
    stems: list[str]


class SimilarPaper(BaseModel):
    """A paper found for the idea, how much of the idea it covers, and which concepts."""

    title: str | None
    authors: list[str]
    year: int | None
    venue: str | None
    doi: str | None
    arxiv_id: str | None
    url: str | None
    citation_count: int | None
    similarity: float = Field(description="weighted share of the idea's concept words it holds")
    covers: list[str] = Field(description="the idea's key concepts its title and abstract hold")
    found_in: list[str]


class SearchSent(BaseModel):
    """What one source was asked."""

    source: str
    query: str


class SourceState(BaseModel):
    """How one source took part: answered, failed (with why) or not asked."""

    source: str
    state: str
    reason: str | None = None


class NoveltyReport(BaseModel):
    """The assessment of one idea with all the evidence behind it."""

    idea: str
    context: str | None = None
    status: Status = Field(
        description="ok; partial: some searches failed; unverified: could not assess at all"
    )
    novelty_score: float | None = Field(
        description="0-1, higher is more novel; null when the idea could not be assessed"
    )
    assessment: Assessment | None
    recommendation: Recommendation | None
    message: str = ""
    threshold: float
    concepts: list[str] = Field(description="the idea's key concepts, most important first")
    similar_papers: list[SimilarPaper] = Field(description="best first")
    gaps: list[str] = Field(description="key concepts none of the similar papers covers")
    queries: list[SearchSent]
    sources: list[SourceState]


# --- concepts -------------------------------------------------------------------------


@functools.cache
def _stemmer() -> object:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def stem(word: str) -> str:
    return _stemmer().stemWord(word.lower())  # type: ignore[attr-defined]


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _extractor(n: int, top: int) -> object:
    import yake

    return yake.KeywordExtractor(lan="en", n=n, top=top, dedup_lim=0.7)


def _content_words(text: str) -> list[str]:
    """Words that can carry a concept: no stop words, no single letters."""
    stop = _extractor(1, 1).stopword_set  # type: ignore[attr-defined]
    return [w for w in _words(text) if len(w) > 1 and w.lower() not in stop]


def extract_concepts(idea: str) -> tuple[list[Concept], dict[str, float]]:
    """The idea's keyphrases and a weight per content-word stem (YAKE importance)."""
    phrases = [p for p, _ in _extractor(3, 4 * MAX_CONCEPTS).extract_keywords(idea)]  # type: ignore[attr-defined]
    singles = _extractor(1, 100).extract_keywords(idea)  # type: ignore[attr-defined]
    # YAKE scores are lower for more important words; weights are their inverse.
    weights: dict[str, float] = {}
    for word, score in singles:
        for token in _content_words(word):
            key = stem(token)
            weights[key] = max(weights.get(key, 0.0), 1 / (0.05 + float(score)))
    for token in _content_words(idea):
        weights.setdefault(stem(token), min(weights.values(), default=1.0))
    # YAKE ranks overlapping phrases ("statistical inference", "inference framework"):
    # a phrase is a concept of its own only when it adds a word the better ones lack.
    concepts: list[Concept] = []
    seen: set[str] = set()
    for phrase in phrases:
        stems = list(dict.fromkeys(stem(t) for t in _content_words(phrase)))
        if set(stems) - seen and len(concepts) < MAX_CONCEPTS:
            seen.update(stems)
            concepts.append(Concept(phrase, stems))
    return concepts, weights


def _and_terms(concepts: Sequence[Concept], idea: str, weights: dict[str, float]) -> list[str]:
    """The most important words, as written in the idea, for an engine that ANDs them."""
    by_stem: dict[str, str] = {}
    for token in _content_words(idea):
        by_stem.setdefault(stem(token), token.lower())
    ranked = sorted(by_stem, key=lambda key: -weights.get(key, 0.0))
    return [by_stem[key] for key in ranked[:AND_TERMS]]


def _ranked_text(idea: str, weights: dict[str, float], context: str | None) -> str:
    """Every content word of the idea, most important first, plus the context's key words."""
    words: dict[str, str] = {}
    for token in _content_words(idea):
        words.setdefault(stem(token), token)
    ordered = sorted(words, key=lambda key: -weights.get(key, 0.0))
    text = [words[key] for key in ordered]
    if context:
        extra = [p for p, _ in _extractor(2, 3).extract_keywords(context)]  # type: ignore[attr-defined]
        context_words = [w for p in extra for w in _content_words(p) if stem(w) not in words]
        text += list(dict.fromkeys(context_words))[:CONTEXT_TERMS]
    return " ".join(text)


# --- scoring ---------------------------------------------------------------------------


def similarity(
    work: Work, concepts: Sequence[Concept], weights: dict[str, float]
) -> tuple[float, list[str]]:
    """Weighted share of the idea's words in the paper's title and abstract; covered phrases."""
    text = " ".join(part for part in (work.title, work.subtitle, work.abstract) if part)
    present = {stem(word) for word in _words(text)}
    total = sum(weights.values())
    covered = sum(weight for key, weight in weights.items() if key in present)
    phrases = [
        concept.phrase
        for concept in concepts
        if sum(key in present for key in concept.stems) >= PHRASE_COVERAGE * len(concept.stems)
    ]
    return (round(covered / total, 3) if total else 0.0), phrases


def citation_weight(citations: int | None) -> float:
    """How much a close paper's risk counts: well-cited prior art is the real danger."""
    scale = min(1.0, math.log10(1 + (citations or 0)) / math.log10(1 + CITED_FULLY))
    return UNCITED_WEIGHT + (1 - UNCITED_WEIGHT) * scale


def novelty_score(papers: Sequence[tuple[Work, float]]) -> float:
    """One minus the largest risk (similarity squared, weighted by citations)."""
    risks = [value**2 * citation_weight(work.citation_count) for work, value in papers]
    return round(1 - max(risks, default=0.0), 3)


def _paper(work: Work, value: float, covers: list[str]) -> SimilarPaper:
    """The work's fields SimilarPaper names, its authors as names, and how close it is."""
    authors = [person.display() for person in work.authors]
    return SimilarPaper.model_validate(
        {**vars(work), "authors": authors, "similarity": value, "covers": covers}
    )


def band(score: float) -> tuple[Assessment, Recommendation]:
    for lowest, assessment, recommendation in BANDS:
        if score >= lowest:
            return assessment, recommendation
    return BANDS[-1][1], BANDS[-1][2]


# --- the assessment ----------------------------------------------------------------------


def check_idea(idea: str, context: str | None = None) -> str:
    """The idea as one line of text.

    Raises:
        InputError: empty, too long, or without a word a search could use.
    """
    text = " ".join(idea.split())
    if not text:
        raise InputError("the idea is empty")
    if len(text) > MAX_IDEA_CHARS:
        raise InputError(
            f"the idea is {len(text):,} characters; at most {MAX_IDEA_CHARS:,} are accepted",
            hint="state the idea in a sentence or a short paragraph; put background in --context",
        )
    if context and len(context) > MAX_CONTEXT_CHARS:
        raise InputError(
            f"the context is {len(context):,} characters; at most {MAX_CONTEXT_CHARS:,}"
        )
    if not _content_words(text):
        raise InputError(f"the idea {text!r} has no words to search for")
    return text


async def assess_novelty(
    idea: str,
    settings: Settings,
    *,
    context: str | None = None,
    threshold: float = 0.25,
    limit: int = 20,
    transport: httpx.AsyncBaseTransport | None = None,
    stats: RunStats | None = None,
) -> NoveltyReport:
    """Search the literature for the idea and score how much of it is already covered.

    Many ideas share one set of source clients (one rate limit and breaker for all)
    when assessed inside `refaudit.sources.sharing(...)`.

    Raises:
        InputError: an unusable idea, threshold or limit, or no enabled source can search.
    """
    from refaudit.discovery import search_works

    text = check_idea(idea, context)
    if not 0 <= threshold <= 1:
        raise InputError("the threshold is a similarity between 0 and 1")
    if limit < 1:
        raise InputError("the limit must be at least 1")
    asked = [name for name in NOVELTY_SOURCES if name in settings.sources]
    if not asked:
        raise InputError(
            "none of the sources novelty searches is enabled",
            hint=f"enable one of {', '.join(NOVELTY_SOURCES)}",
        )
    concepts, weights = extract_concepts(text)
    outcome = await search_works(
        _ranked_text(text, weights, context),
        settings,
        sources=asked,
        limit=HITS_PER_SOURCE,
        topic_terms=_and_terms(concepts, text, weights),
        transport=transport,
        stats=stats,
    )
    not_asked = SourceStatus("not_asked", "not one of the sources novelty searches")
    report = NoveltyReport(
        idea=text,
        context=context,
        status="ok",
        novelty_score=None,
        assessment=None,
        recommendation=None,
        threshold=threshold,
        concepts=[concept.phrase for concept in concepts],
        similar_papers=[],
        gaps=[],
        queries=[SearchSent(source=name, query=sent) for name, sent in outcome.queries.items()],
        sources=[
            SourceState(source=name, state=status.state, reason=status.reason)
            for name in settings.sources
            for status in [outcome.sources.get(name) or not_asked]
        ],
    )
    if outcome.status == "unverified":
        report.status = "unverified"
        report.message = f"could not assess: {outcome.message}"
        return report
    scored = []
    for work in outcome.works:
        value, covers = similarity(work, concepts, weights)
        scored.append((work, value, covers))
    scored.sort(key=lambda item: (-item[1], -(item[0].score or 0), -(item[0].citation_count or 0)))
    close = [item for item in scored if item[1] >= threshold][:limit]
    report.similar_papers = [_paper(*item) for item in close]
    covered = {phrase for _, _, covers in close for phrase in covers}
    report.gaps = [concept.phrase for concept in concepts if concept.phrase not in covered]
    report.novelty_score = novelty_score([(work, value) for work, value, _ in close])
    report.assessment, report.recommendation = band(report.novelty_score)
    if outcome.message:
        report.status = "partial"
        report.message = outcome.message
        if report.assessment == "high":
            # A source that could not be searched may hold the prior art.
            report.assessment, report.recommendation = "moderate", "proceed_with_caution"
    return report
