"""Semantic Scholar Academic Graph API.

Docs: https://api.semanticscholar.org/api-docs/graph

What refaudit asks: every identifier lookup (DOI, arXiv id, PMID, S2 paperId)
goes through one batched `POST /graph/v1/paper/batch {"ids": [...]}` with
`fields=` (at most 500 ids per call; the answer is a list aligned with the
ids, `null` for unknown ones). Searches send one ranked `/paper/search`
(title and first author's family name): it ranks an exact title first as
`/paper/search/match` would, and still finds a title with a changed word, so
one request at the 1 request/s pool does the work of two.
`references`/`citations` serve the `show` command.

Rate limit: about 1 request per second for unauthenticated callers, who share
one pool with the whole world; an API key (`S2_API_KEY`, sent as
`x-api-key`) gets its own pool, also 1 rps by default.
"""

from __future__ import annotations

import asyncio
from typing import Any

from refaudit.config import Settings
from refaudit.errors import NothingToAsk, UnexpectedResponse
from refaudit.identifiers import normalize_doi
from refaudit.models import Work
from refaudit.names import display_name_to_person
from refaudit.sources.base import SearchQuery, Source
from refaudit.sources.client import SourceClient
from refaudit.sources.mapping import query_words, year_from
from refaudit.sources.pacing import RateLimit
from refaudit.sources.types import work_type
from refaudit.text import strip_markup

NAME = "semanticscholar"
BATCH_SIZE = 500
# The published limit is the rate; a second call in flight keeps one slow answer
# (over a second) from holding back the next request, which would idle the pool.
RATE_LIMIT = RateLimit(rps=1.0, burst=1, concurrency=2)
API = "/graph/v1"
FIELDS = (
    "paperId,externalIds,url,title,authors,year,publicationDate,venue,publicationVenue,"
    "journal,citationCount,publicationTypes,isOpenAccess"
)
#: the paper fields `to_work` reads (a mirror keeps only these)
SELECT_FIELDS = (*FIELDS.split(","), "abstract")


class SemanticScholarSource(Source):
    """Batched id lookups and title search against the S2 Graph API."""

    name = NAME
    id_batch_size = BATCH_SIZE

    def __init__(self, client: SourceClient, settings: Settings) -> None:
        super().__init__(client, settings)
        key = settings.api_key(NAME)
        self._headers = {"x-api-key": key} if key else None

    async def lookup_dois(self, dois: list[str]) -> dict[str, Work]:
        return await self._batch({f"DOI:{doi}": doi for doi in dois})

    async def lookup_arxiv(self, arxiv_ids: list[str]) -> dict[str, Work]:
        return await self._batch({f"ARXIV:{arxiv_id}": arxiv_id for arxiv_id in arxiv_ids})

    async def lookup_pmids(self, pmids: list[str]) -> dict[str, Work]:
        return await self._batch({f"PMID:{pmid}": pmid for pmid in pmids})

    async def lookup_ids(self, ids: list[str]) -> dict[str, Work]:
        """S2 paperIds (40 hex digits) or any prefixed id S2 accepts (`CorpusId:…`)."""
        return await self._batch({paper_id: paper_id for paper_id in ids})

    async def search(self, query: SearchQuery) -> list[Work]:
        text = self.describe_search(query)
        if not text:
            raise NothingToAsk(NAME)
        fields = f"{FIELDS},abstract" if query.topic_terms else FIELDS
        params: dict[str, Any] = {"query": text, "limit": query.limit, "fields": fields}
        if query.year_from or query.year_to:
            params["year"] = f"{query.year_from or ''}-{query.year_to or ''}"
        fetched = await self.client.get(
            f"{API}/paper/search", params, headers=self._headers, ttl="search", accept=(200,)
        )
        body = fetched.member(kind=dict, missing="search answer is not an object")
        return [to_work(item) for item in body.get("data") or [] if item]

    def describe_search(self, query: SearchQuery) -> str:
        return _query_text(query)

    async def references(self, paper_id: str, limit: int = 100) -> list[Work]:
        """Works `paper_id` cites (entries S2 could not resolve have no paperId)."""
        return await self._relations(paper_id, "references", "citedPaper", limit)

    async def citations(self, paper_id: str, limit: int = 100) -> list[Work]:
        """Works citing `paper_id`, as far as S2 knows them."""
        return await self._relations(paper_id, "citations", "citingPaper", limit)

    async def _batch(self, wanted: dict[str, str]) -> dict[str, Work]:
        """`wanted` maps the S2 id to send to the key the caller asked with."""
        ids = list(wanted)
        chunks = [ids[i : i + BATCH_SIZE] for i in range(0, len(ids), BATCH_SIZE)]
        answers = await asyncio.gather(*(self._post_batch(chunk) for chunk in chunks))
        found: dict[str, Work] = {}
        for chunk, items in zip(chunks, answers, strict=True):
            for sent, item in zip(chunk, items, strict=True):
                if item is not None:
                    found[wanted[sent]] = to_work(item)
        return found

    async def _post_batch(self, ids: list[str]) -> list[Any]:
        fetched = await self.client.post(
            f"{API}/paper/batch",
            {"ids": ids},
            {"fields": FIELDS},
            headers=self._headers,
            accept=(200,),
        )
        body = fetched.json()
        if not isinstance(body, list) or len(body) != len(ids):
            raise UnexpectedResponse(
                NAME, f"batch answer is not a list of {len(ids)} entries", url=fetched.url
            )
        return body

    async def _relations(self, paper_id: str, kind: str, key: str, limit: int) -> list[Work]:
        fetched = await self.client.get(
            f"{API}/paper/{paper_id}/{kind}",
            {"fields": FIELDS, "limit": limit},
            headers=self._headers,
        )
        if fetched.status == 404:
            return []
        body = fetched.member(kind=dict, missing=f"{kind} answer is not an object")
        return [to_work(entry[key]) for entry in body.get("data") or [] if entry.get(key)]


def _s2_words(text: str) -> str:
    """S2 never matches hyphenated query words, so split them ("pre-training" → "pre training")."""
    return " ".join(query_words(text))


def _query_text(query: SearchQuery) -> str:
    if query.free_text:
        return _s2_words(query.free_text)
    parts = [query.title or ""]
    if query.authors:
        parts.append(display_name_to_person(query.authors[0]).full_family)
    return _s2_words(" ".join(parts))


def to_work(item: Any) -> Work:
    """One S2 paper object → Work. Tolerates nulls and missing optional parts."""
    if not isinstance(item, dict) or "paperId" not in item:
        raise UnexpectedResponse(NAME, "paper object without paperId")
    paper_id = item.get("paperId")
    external = item.get("externalIds") or {}
    journal = item.get("journal") or {}
    publication_venue = item.get("publicationVenue") or {}
    raw_title = item.get("title")
    venue = publication_venue.get("name") or item.get("venue") or _journal_name(journal) or None
    alternates = publication_venue.get("alternate_names") or []
    pmc = external.get("PubMedCentral")
    # S2 lists many conference papers as ["JournalArticle", "Conference"]; types.json
    # puts the most specific type first, so they are conference papers.
    types = item.get("publicationTypes")
    return Work(
        source=NAME,
        source_id=paper_id,
        url=item.get("url")
        or (f"https://www.semanticscholar.org/paper/{paper_id}" if paper_id else None),
        type=work_type(NAME, *types) if isinstance(types, list) else None,
        title=strip_markup(raw_title),
        raw_title=raw_title,
        authors=[
            display_name_to_person(author["name"])
            for author in item.get("authors") or []
            if isinstance(author, dict) and author.get("name")
        ],
        year=year_from(item.get("year")) or year_from(item.get("publicationDate")),
        date=item.get("publicationDate"),
        venue=venue,
        venue_short=alternates[0] if alternates else None,
        venue_aliases=[
            name
            for name in [*alternates[1:], item.get("venue")]
            if isinstance(name, str) and name.strip() and name != venue
        ],
        volume=_clean(journal.get("volume"), reject_prefix="abs/"),
        pages=_clean(journal.get("pages")),
        doi=normalize_doi(external.get("DOI")),
        arxiv_id=external.get("ArXiv") or None,
        pmid=str(external["PubMed"]) if external.get("PubMed") else None,
        pmcid=f"PMC{str(pmc).upper().removeprefix('PMC')}" if pmc else None,
        s2_id=paper_id,
        dblp_key=external.get("DBLP") or None,
        citation_count=item.get("citationCount"),
        abstract=_clean(item.get("abstract")),
    )


def from_bulk(item: Any) -> Any:
    """A line of the S2 Datasets `papers` release → the Graph API paper `to_work` reads.

    The datasets spell the API's keys in lower case and leave out the paperId, which
    is the last part of the paper's `url`; a line without one is not a paper.
    """
    if not isinstance(item, dict) or "paperId" in item:
        return item
    url = item.get("url")
    paper = {
        "externalIds": item.get("externalids"),
        "url": url,
        "title": item.get("title"),
        "authors": item.get("authors"),
        "year": item.get("year"),
        "publicationDate": item.get("publicationdate"),
        "venue": item.get("venue"),
        "journal": item.get("journal"),
        "citationCount": item.get("citationcount"),
        "publicationTypes": item.get("publicationtypes"),
        "isOpenAccess": item.get("isopenaccess"),
    }
    if isinstance(url, str) and url.rstrip("/"):
        paper["paperId"] = url.rstrip("/").rsplit("/", 1)[-1]
    return paper


def _journal_name(journal: dict[str, Any]) -> str | None:
    """S2 files arXiv-only papers under a journal named "ArXiv"; that is no venue."""
    name = (journal.get("name") or "").strip()
    return name if name and name.lower() != "arxiv" else None


def _clean(value: Any, *, reject_prefix: str | None = None) -> str | None:
    text = " ".join(str(value).split()) if value is not None else ""
    if not text or (reject_prefix and text.startswith(reject_prefix)):
        return None
    return text
