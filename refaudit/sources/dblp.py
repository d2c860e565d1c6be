"""dblp computer science bibliography search.

Docs: https://dblp.org/faq/How+to+use+the+dblp+search+API.html

What refaudit asks: `GET /search/publ/api?q=…&format=json&h=N` only; dblp has
no DOI lookup. Its engine ANDs prefix matches of every query word, so a query
is the title's words without punctuation; when that finds nothing (a
misspelled word sinks the whole AND), the first author's family name with any
of the longest title words (`a|b|c`) is tried.

Rate limit: none published; dblp asks for restraint and answers floods with
429 and `Retry-After`, so refaudit keeps to one request per second on one
connection.
"""

from __future__ import annotations

import re
from typing import Any

from refaudit.errors import NothingToAsk, UnexpectedResponse
from refaudit.identifiers import arxiv_id_from_doi, normalize_doi, parse_arxiv_id
from refaudit.models import Work
from refaudit.names import display_name_to_person
from refaudit.sources.base import SearchQuery, Source
from refaudit.sources.mapping import query_words, year_from
from refaudit.sources.pacing import RateLimit
from refaudit.sources.types import work_type
from refaudit.text import strip_markup

NAME = "dblp"
# No published limit: one request a second, and (as for Semantic Scholar) a second call
# in flight so that a slow answer does not hold back the next request. dblp blocks floods
# (its FAQ: a second or two between requests is always fine), it does not refuse a request
# that arrives a few milliseconds inside a second: the pace is refaudit's own.
RATE_LIMIT = RateLimit(rps=1.0, burst=1, concurrency=2, enforced=False)
MAX_QUERY_WORDS = 10
FALLBACK_WORDS = 6
_HOMONYM_NUMBER = re.compile(r"\s+\d{4}$")


class DblpSource(Source):
    """Bibliographic search only."""

    name = NAME

    async def search(self, query: SearchQuery) -> list[Work]:
        texts = search_texts(query)
        if not texts:
            raise NothingToAsk(NAME, "nothing in the citation to search dblp by")
        for text in texts:
            fetched = await self.client.get(
                "/search/publ/api",
                {"q": text, "format": "json", "h": query.limit},
                ttl="search",
                accept=(200,),
            )
            hits = fetched.member("result", "hits", kind=dict, missing="answer without result.hits")
            found = [to_work(hit) for hit in _as_list(hits.get("hit"))]
            if found:
                return found
        return []


def search_texts(query: SearchQuery) -> list[str]:
    """dblp queries to try in turn: all title words, then the author with any of the longest.

    dblp ANDs its words, so one misspelled word sinks the first query; the second
    ORs (`a|b`) the title's longest words and ANDs them with the first author.
    """
    words = query_words(query.title or query.free_text, drop_stopwords=True)
    if not words:
        return []
    texts = [" ".join(words[:MAX_QUERY_WORDS])]
    longest = sorted(dict.fromkeys(words), key=len, reverse=True)[:FALLBACK_WORDS]
    author = query_words(display_name_to_person(query.authors[0]).family) if query.authors else []
    if len(longest) > 1:
        texts.append(" ".join([*author[-1:], "|".join(longest)]))
    return texts


def to_work(hit: Any) -> Work:
    """One dblp search hit (with its `info`) → Work."""
    info = hit.get("info") if isinstance(hit, dict) else None
    if not isinstance(info, dict) or not info.get("key"):
        raise UnexpectedResponse(NAME, "hit without info.key")
    key = str(info["key"])
    raw_title = info.get("title")
    title = strip_markup(raw_title)
    if title and title.endswith(".") and not title.endswith(".."):
        title = title[:-1]
    authors_block = info.get("authors") or {}
    names = [
        _HOMONYM_NUMBER.sub("", str(a.get("text") if isinstance(a, dict) else a))
        for a in _as_list(authors_block.get("author"))
        if a
    ]
    venue = _first(info.get("venue"))
    volume = _first(info.get("volume"))
    doi = normalize_doi(_first(info.get("doi")))
    arxiv = arxiv_id_from_doi(doi)
    if not arxiv and venue == "CoRR" and volume and volume.startswith("abs/"):
        parsed = parse_arxiv_id(volume.removeprefix("abs/"))
        arxiv = parsed[0] if parsed else None
    kind = info.get("type")
    score = hit.get("@score")
    return Work(
        source=NAME,
        source_id=key,
        url=info.get("url") or f"https://dblp.org/rec/{key}",
        type=("preprint" if venue == "CoRR" else "other")
        if kind == "Informal and Other Publications"
        else work_type(NAME, kind),
        title=title,
        raw_title=raw_title,
        authors=[display_name_to_person(name) for name in names if name.strip()],
        year=year_from(info.get("year")),
        venue=venue,
        publisher=_first(info.get("publisher")),
        volume=None if arxiv and volume and volume.startswith("abs/") else volume,
        issue=_first(info.get("number")),
        pages=_first(info.get("pages")),
        doi=doi,
        arxiv_id=arxiv,
        dblp_key=key,
        score=float(score) if isinstance(score, str) and score.isdigit() else None,
    )


def _as_list(value: Any) -> list[Any]:
    """dblp serialises a one-element list as the element itself."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _first(value: Any) -> str | None:
    items = _as_list(value)
    return str(items[0]) if items and items[0] not in (None, "") else None
