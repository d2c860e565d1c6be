"""arXiv API (Atom feeds from export.arxiv.org).

Docs: https://info.arxiv.org/help/api/user-manual.html

What refaudit asks: `GET /api/query?id_list=a,b,c&max_results=N` for id
lookups (up to 100 ids per call; `max_results` must always be set because it
defaults to 10), asking without a version so the latest comes back, and
`search_query=ti:"…" AND au:…` for bibliographic search. An id arXiv rejects
("incorrect id format") comes back as an error feed with HTTP 400; that id
is dropped and the rest of its batch asked again. `arxiv:doi` (the published
version's DOI) becomes `Work.published_version_doi`.

Rate limit: arXiv's terms of use ask for one request every three seconds on a
single connection (https://info.arxiv.org/help/api/tou.html).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from refaudit.errors import NothingToAsk, UnexpectedResponse
from refaudit.identifiers import normalize_doi, parse_arxiv_id
from refaudit.models import Work
from refaudit.names import display_name_to_person
from refaudit.sources.base import SearchQuery, Source
from refaudit.sources.mapping import query_words, year_from
from refaudit.sources.pacing import RateLimit
from refaudit.sources.response import Fetched

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

NAME = "arxiv"
BATCH_SIZE = 100
RATE_LIMIT = RateLimit(rps=1 / 3, burst=1, concurrency=1)
NS = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
}
_ENTRY_ID = re.compile(r"arxiv\.org/abs/(.+?)(?:v(\d+))?$")
_BAD_ID = re.compile(r"incorrect id format for (\S+)")
MAX_QUERY_WORDS = 12


class ArxivSource(Source):
    """Batched id lookups and field-prefixed search against the arXiv API."""

    name = NAME
    id_batch_size = BATCH_SIZE

    async def lookup_arxiv(self, arxiv_ids: list[str]) -> dict[str, Work]:
        """Ids without version → latest version; malformed ids are never sent."""
        wanted: list[str] = []
        for raw in arxiv_ids:
            parsed = parse_arxiv_id(raw)
            if parsed and parsed[0] not in wanted:
                wanted.append(parsed[0])
        found: dict[str, Work] = {}
        for start in range(0, len(wanted), BATCH_SIZE):
            found.update(await self._lookup_batch(wanted[start : start + BATCH_SIZE]))
        return found

    async def search(self, query: SearchQuery) -> list[Work]:
        queries = search_queries(query)
        if not queries:
            raise NothingToAsk(NAME, "nothing in the citation to search arXiv by")
        for search_query in queries:
            works = await self._query(search_query, query.limit)
            if works:
                return works
        return []

    def describe_search(self, query: SearchQuery) -> str:
        """The queries `search` tries in turn (it stops at the first with hits)."""
        return " ; ".join(search_queries(query))

    async def _lookup_batch(self, ids: list[str]) -> dict[str, Work]:
        remaining = list(ids)
        while remaining:
            fetched = await self.client.get(
                "/api/query",
                {"id_list": ",".join(remaining), "max_results": len(remaining), "start": 0},
                accept=(200, 400),
            )
            entries, rejected = parse_feed(fetched)
            if rejected is None:
                return _by_requested_id(remaining, [to_work(entry) for entry in entries])
            if rejected not in remaining:
                raise UnexpectedResponse(NAME, f"arXiv rejected {rejected!r}", url=fetched.url)
            remaining.remove(rejected)
        return {}

    async def _query(self, search_query: str, limit: int) -> list[Work]:
        fetched = await self.client.get(
            "/api/query",
            {"search_query": search_query, "start": 0, "max_results": limit, "sortBy": "relevance"},
            ttl="search",
            accept=(200, 400),
        )
        entries, rejected = parse_feed(fetched)
        if rejected is not None:
            return []
        return [to_work(entry) for entry in entries]


def search_queries(query: SearchQuery) -> list[str]:
    """Queries to try in turn: the exact title phrase (with the first author), then its words."""
    if query.free_text and not query.title:
        words = query_words(query.free_text, drop_stopwords=True)[:MAX_QUERY_WORDS]
        return [" ".join(f"all:{word}" for word in words)] if words else []
    words = query_words(query.title, drop_stopwords=False)
    if not words:
        return []
    author = ""
    if query.authors:
        family = display_name_to_person(query.authors[0]).full_family
        family_words = query_words(family)
        if family_words:
            author = " AND au:" + "_".join(family_words)
    phrase = f'ti:"{" ".join(words)}"{author}'
    tokens = [w for w in query_words(query.title, drop_stopwords=True)][:MAX_QUERY_WORDS]
    token_query = " AND ".join(f"ti:{word}" for word in tokens)
    return [phrase, token_query] if token_query else [phrase]


def parse_feed(fetched: Fetched) -> tuple[list[ET.Element], str | None]:
    """The feed's entries, or the id arXiv rejected when the feed is an error report."""
    root = fetched.xml()
    if root.tag != f"{{{NS['atom']}}}feed":
        raise UnexpectedResponse(NAME, "answer is not an Atom feed", url=fetched.url)
    entries = root.findall("atom:entry", NS)
    for entry in entries:
        entry_id = entry.findtext("atom:id", "", NS)
        if "/api/errors" in entry_id or entry.findtext("atom:title", "", NS) == "Error":
            message = entry.findtext("atom:summary", "", NS)
            bad = _BAD_ID.search(message)
            if bad:
                return [], bad.group(1)
            raise UnexpectedResponse(NAME, f"arXiv error: {message.strip()}", url=fetched.url)
    if fetched.status != 200:
        raise UnexpectedResponse(NAME, f"HTTP {fetched.status}", url=fetched.url)
    return entries, None


def _by_requested_id(requested: list[str], works: list[Work]) -> dict[str, Work]:
    """Key works by the id asked for; arXiv drops old-style subject classes (math.GT/…)."""
    found: dict[str, Work] = {}
    loose = {_loose(asked): asked for asked in requested}
    for work in works:
        if work.arxiv_id in requested:
            found[work.arxiv_id] = work
        elif work.arxiv_id and _loose(work.arxiv_id) in loose:
            found[loose[_loose(work.arxiv_id)]] = work
    return found


def _loose(arxiv_id: str) -> str:
    archive, slash, number = arxiv_id.partition("/")
    return f"{archive.split('.')[0].lower()}/{number}" if slash else arxiv_id


def to_work(entry: ET.Element) -> Work:
    """One Atom `<entry>` → Work (type preprint, venue arXiv)."""
    entry_id = entry.findtext("atom:id", None, NS)
    match = _ENTRY_ID.search(entry_id or "")
    if not match:
        raise UnexpectedResponse(NAME, f"entry id {entry_id!r} is not an arXiv abstract URL")
    arxiv_id, version = match.group(1), match.group(2)
    raw_title = entry.findtext("atom:title", None, NS)
    published = (entry.findtext("atom:published", "", NS) or "").strip()
    summary = entry.findtext("atom:summary", None, NS)
    primary = entry.find("arxiv:primary_category", NS)
    published_doi = normalize_doi(entry.findtext("arxiv:doi", None, NS))
    journal_ref = " ".join((entry.findtext("arxiv:journal_ref", "", NS) or "").split())
    return Work(
        source=NAME,
        source_id=f"{arxiv_id}v{version}" if version else arxiv_id,
        url=f"https://arxiv.org/abs/{arxiv_id}",
        type="preprint",
        title=" ".join(raw_title.split()) if raw_title else None,
        raw_title=raw_title,
        authors=[
            display_name_to_person(name)
            for name in (
                " ".join((author.findtext("atom:name", "", NS) or "").split())
                for author in entry.findall("atom:author", NS)
            )
            if name
        ],
        year=year_from(published[:4]),
        date=published[:10] or None,
        venue="arXiv",
        doi=f"10.48550/arxiv.{arxiv_id}".lower(),
        arxiv_id=arxiv_id,
        arxiv_version=int(version) if version else None,
        published_version_doi=published_doi,
        journal_ref=journal_ref or None,
        primary_category=primary.get("term") if primary is not None else None,
        abstract=" ".join(summary.split()) if summary else None,
    )
