"""Bibliographic search over a mirror: candidates from the index, ranked by title likeness.

The backends return candidates by shared words (FTS5 / tsvector, OR-ed so one
misspelt or invented word does not sink the query), or, when no candidate's
title is close, by a typo-tolerant pass (word prefixes in SQLite, trigram
similarity in PostgreSQL). Candidates are then ordered by how closely their
title matches the cited one, which is what the verifier will judge them on.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz

from refaudit import match
from refaudit.mirror.store import Candidate
from refaudit.sources.base import SearchQuery

#: Words too common to narrow a search (the index would return most of the corpus).
STOPWORDS = frozenset(
    "a an and are as at be by for from in into is of on or the to with via its their this that"
    " we our".split()
)
MAX_WORDS = 12
CANDIDATES = 25
#: Below this title similarity (0-100) the best hit may hide a typo: try the fuzzy pass.
CLOSE_TITLE = 90
#: Hits this far (0-100) below a close best hit are other works: the verifier is not
#: shown them (it would only spend time ruling them out).
KEPT_BELOW_BEST = 15


@dataclass
class MirrorQuery:
    """What the index is asked: words, authors' family names, and the text to rank by."""

    words: list[str]
    authors: list[str]
    text: str
    free_text: bool


def mirror_query(query: SearchQuery, *, with_authors: bool) -> MirrorQuery | None:
    """The words of a title (or of a citation string) worth looking up, longest first."""
    if query.title:
        text = match.normalize_text(query.title)
    elif query.free_text:
        text = match.normalize_text(query.free_text)
    else:
        return None
    unique = dict.fromkeys(w for w in text.split() if w not in STOPWORDS and len(w) > 1)
    words = sorted(unique, key=len, reverse=True)[:MAX_WORDS]
    if not words:
        return None
    authors = [match.normalize_text(a) for a in query.authors if a][:3] if with_authors else []
    return MirrorQuery(words, [a for a in authors if a], text, free_text=not query.title)


def best_candidates(query: MirrorQuery, found: list[Candidate], limit: int) -> list[Candidate]:
    """The candidates worth verifying, best first: all close ones, or the top `limit`."""
    scored = sorted(
        ((likeness(query, c.title), c) for c in _unique(found)), key=lambda p: p[0], reverse=True
    )
    if not scored:
        return []
    best = scored[0][0]
    if best >= CLOSE_TITLE:
        scored = [(score, c) for score, c in scored if score >= best - KEPT_BELOW_BEST]
    return [c for _, c in scored[: max(1, limit)]]


def _unique(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[bytes] = set()
    kept = []
    for candidate in candidates:
        if candidate.body not in seen:
            seen.add(candidate.body)
            kept.append(candidate)
    return kept


def likeness(query: MirrorQuery, title: str) -> float:
    """0-100: how well a candidate's normalised title matches the query text."""
    if not title:
        return 0.0
    if query.free_text:
        return fuzz.partial_ratio(title, query.text) if len(title) >= 12 else 0.0
    return max(fuzz.ratio(query.text, title), fuzz.token_sort_ratio(query.text, title))
