"""OpenAlex: an open index of works that joins DOIs, PubMed ids, arXiv copies and citations.

API docs: https://docs.openalex.org/api-entities/works

What refaudit asks:
- DOI lookups as one OR filter per batch: `GET /works?filter=doi:A|B|…&per_page=N`
  (BATCH_SIZE ids; OpenAlex allows up to 100 values in one OR filter).
  OpenAlex silently drops values it cannot parse from an OR list, so every DOI is
  validated first and those with a `|` or `,` (filter syntax) are fetched alone.
- OpenAlex work ids (`filter=openalex:W1|W2`) and PMIDs (`filter=ids.pmid:1|2`).
- Title search: `GET /works?search=<title>&per_page=N`. `search` ANDs its words over
  title and abstract, so author names and years are left out of the query.
- Topic search (novelty): `filter=title_and_abstract.search:<key terms>`, which ANDs
  the terms over title and abstract.
- `is_retracted`, `cited_by_count`, the abstract (rebuilt from its inverted index).

Rate limit: 10 requests/s and a daily budget per key. Since February 2026 an API
key (OPENALEX_API_KEY) is required for real use; it is sent as `api_key`. Etiquette:
set `mailto` (REFAUDIT_MAILTO), sent as a parameter.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import quote

from refaudit.config import Settings
from refaudit.errors import UnexpectedResponse
from refaudit.identifiers import arxiv_id_from_doi, normalize_doi, parse_arxiv_id
from refaudit.models import Person, Work
from refaudit.names import person_from_name
from refaudit.sources.base import SearchQuery, Source, all_at_once
from refaudit.sources.client import SourceClient
from refaudit.sources.mapping import (
    as_dict,
    as_dicts,
    as_int,
    chunked,
    first_text,
    normalize_orcid,
    unique,
)
from refaudit.sources.pacing import RateLimit
from refaudit.sources.response import Fetched
from refaudit.text import strip_markup

NAME = "openalex"
#: OpenAlex allows 100 values in one OR filter.
BATCH_SIZE = 100
RATE_LIMIT = RateLimit(rps=10, burst=5, concurrency=5)

SELECT_FIELDS = (
    "id",
    "doi",
    "title",
    "display_name",
    "publication_year",
    "publication_date",
    "ids",
    "type",
    "primary_location",
    "locations",
    "authorships",
    "biblio",
    "cited_by_count",
    "is_retracted",
    "abstract_inverted_index",
)
_OPENALEX_PREFIX = re.compile(r"^(?:https?://)?(?:openalex\.org/)?", re.IGNORECASE)
_WORK_ID = re.compile(r"^W\d+$")
_FILTER_SYNTAX = re.compile(r"[|,]")
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^\s?#]+)", re.IGNORECASE)


class OpenAlexSource(Source):
    """DOI, PMID and OpenAlex-id lookups, title search and the citation graph (api.openalex.org)."""

    name = NAME

    def __init__(self, client: SourceClient, settings: Settings) -> None:
        super().__init__(client, settings)
        self._auth: list[tuple[str, Any]] = []
        if settings.mailto:
            self._auth.append(("mailto", settings.mailto))
        if settings.api_key(NAME):
            self._auth.append(("api_key", settings.api_key(NAME)))

    def id_batches(self, keys: list[str]) -> list[list[str]]:
        alone = [[d] for d in keys if not _fits_filter(d)]
        return alone + list(chunked([d for d in keys if _fits_filter(d)], BATCH_SIZE))

    async def lookup_dois(self, dois: list[str]) -> dict[str, Work]:
        wanted = unique([normalize_doi(doi) for doi in dois])
        found: dict[str, Work] = {}
        for doi in (d for d in wanted if not _fits_filter(d)):
            work = await self._fetch_single(f"doi:{quote(doi, safe='/')}")
            if work is not None and work.doi == doi:
                found[doi] = work
        batchable = [d for d in wanted if _fits_filter(d)]
        found.update(await self._by_filter("doi", batchable, lambda work: work.doi))
        return found

    async def lookup_ids(self, ids: list[str]) -> dict[str, Work]:
        wanted = unique([_work_id(value) for value in ids])
        return await self._by_filter("openalex", wanted, lambda work: work.openalex_id)

    async def lookup_pmids(self, pmids: list[str]) -> dict[str, Work]:
        wanted = unique([p.strip() for p in pmids if p and p.strip().isdigit()])
        return await self._by_filter("ids.pmid", wanted, lambda work: work.pmid)

    async def _by_filter(
        self, key: str, wanted: list[str], key_of: Callable[[Work], str | None]
    ) -> dict[str, Work]:
        """The works whose `key` is one of `wanted`: one OR-filter per batch, all sent at once."""
        batches = list(chunked(wanted, BATCH_SIZE))
        answers = await all_at_once(self._filter(key, batch) for batch in batches)
        found: dict[str, Work] = {}
        for batch, works in zip(batches, answers, strict=True):
            for work in works:
                value = key_of(work)
                if value is not None and value in batch:
                    found[value] = work
        return found

    async def search(self, query: SearchQuery) -> list[Work]:
        text = self.describe_search(query)
        if not text:
            return []
        filters = []
        params: list[tuple[str, Any]] = [
            ("per_page", min(200, max(1, query.limit))),
            ("select", ",".join(SELECT_FIELDS)),
        ]
        if query.topic_terms:
            filters.append(f"title_and_abstract.search:{text}")
        else:
            params.insert(0, ("search", text))
        years = _year_filter(query.year_from, query.year_to)
        if years:
            filters.append(f"publication_year:{years}")
        if filters:
            params.append(("filter", ",".join(filters)))
        fetched = await self.client.get("/works", [*params, *self._auth], ttl="search")
        return [to_work(item) for item in _results(fetched)]

    def describe_search(self, query: SearchQuery) -> str:
        """A topic's key terms (ANDed over title and abstract), else the title or free text."""
        if query.topic_terms:
            return " ".join(_FILTER_SYNTAX.sub(" ", term) for term in query.topic_terms).strip()
        return strip_markup(query.title) or query.free_text or ""

    async def changes_since(
        self, day: str, per_page: int = 200
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """Every work changed since `day`, a page at a time (`mirror update`).

        `filter=from_updated_date:` with cursor paging; pages are never cached.
        """
        cursor: str | None = "*"
        while cursor:
            params = [
                ("filter", f"from_updated_date:{day}"),
                ("per_page", per_page),
                ("cursor", cursor),
            ]
            fetched = await self.client.get("/works", [*params, *self._auth], cache=False)
            results = _results(fetched)
            if not results:
                return
            yield results
            cursor = fetched.json().get("meta", {}).get("next_cursor")

    async def references(self, paper_id: str, limit: int = 100) -> list[Work]:
        """Works `paper_id` cites that OpenAlex has resolved, most cited first."""
        return await self._related("cited_by", paper_id, limit)

    async def citations(self, paper_id: str, limit: int = 100) -> list[Work]:
        """Works citing `paper_id`, most cited first."""
        return await self._related("cites", paper_id, limit)

    async def _related(self, relation: str, paper_id: str, limit: int) -> list[Work]:
        work_id = _work_id(paper_id)
        if not work_id:
            return []
        params = [
            ("filter", f"{relation}:{work_id}"),
            ("sort", "cited_by_count:desc"),
            ("per_page", min(200, max(1, limit))),
            ("select", ",".join(SELECT_FIELDS)),
        ]
        fetched = await self.client.get("/works", [*params, *self._auth])
        return [to_work(item) for item in _results(fetched)]

    async def _filter(self, field: str, values: list[str]) -> list[Work]:
        params = [
            ("filter", f"{field}:{'|'.join(values)}"),
            ("per_page", len(values)),
            ("select", ",".join(SELECT_FIELDS)),
        ]
        # Lookups carry `is_retracted`, which must not be trusted from a week-old answer.
        fetched = await self.client.get("/works", [*params, *self._auth], ttl="integrity")
        return [to_work(item) for item in _results(fetched)]

    async def _fetch_single(self, key: str) -> Work | None:
        fetched = await self.client.get(f"/works/{key}", self._auth, ttl="integrity")
        if fetched.status == 404:
            return None
        return to_work(fetched.member(kind=dict, missing="work answer is not an object"))


def _year_filter(year_from: int | None, year_to: int | None) -> str | None:
    if year_from and year_to:
        return f"{year_from}-{year_to}"
    if year_from:
        return f">{year_from - 1}"
    if year_to:
        return f"<{year_to + 1}"
    return None


def _fits_filter(doi: str) -> bool:
    """`|` and `,` are filter syntax: a DOI holding either is fetched alone."""
    return not _FILTER_SYNTAX.search(doi)


def _work_id(value: str | None) -> str | None:
    if not value:
        return None
    candidate = _OPENALEX_PREFIX.sub("", value.strip()).upper()
    return candidate if _WORK_ID.match(candidate) else None


def _results(fetched: Fetched) -> list[dict[str, Any]]:
    results = fetched.member("results", kind=list, missing="work list without results")
    return [item for item in results if isinstance(item, dict)]


def to_work(item: dict[str, Any]) -> Work:
    """An OpenAlex work object as a Work."""
    openalex_id = _work_id(first_text(item.get("id")))
    if not openalex_id:
        raise UnexpectedResponse(NAME, "work without an OpenAlex id")
    ids = as_dict(item.get("ids"))
    doi = normalize_doi(first_text(item.get("doi")) or first_text(ids.get("doi")))
    raw_title = first_text(item.get("display_name")) or first_text(item.get("title"))
    primary = as_dict(item.get("primary_location"))
    source = as_dict(primary.get("source"))
    biblio = as_dict(item.get("biblio"))
    arxiv = _arxiv(item, doi)
    retracted = item.get("is_retracted")
    return Work(
        source=NAME,
        source_id=openalex_id,
        url=f"https://openalex.org/{openalex_id}",
        type=first_text(item.get("type")),
        title=strip_markup(raw_title),
        raw_title=raw_title,
        authors=[p for p in map(_person, as_dicts(item.get("authorships"))) if p is not None],
        year=as_int(item.get("publication_year")),
        date=first_text(item.get("publication_date")),
        venue=first_text(source.get("display_name")),
        publisher=first_text(source.get("host_organization_name")),
        volume=first_text(biblio.get("volume")),
        issue=first_text(biblio.get("issue")),
        pages=_pages(first_text(biblio.get("first_page")), first_text(biblio.get("last_page"))),
        doi=doi,
        arxiv_id=arxiv[0] if arxiv else None,
        arxiv_version=arxiv[1] if arxiv else None,
        pmid=_last_segment(first_text(ids.get("pmid"))),
        pmcid=_pmcid(first_text(ids.get("pmcid"))),
        openalex_id=openalex_id,
        abstract=abstract_from_index(item.get("abstract_inverted_index")),
        citation_count=as_int(item.get("cited_by_count")),
        is_retracted=retracted if isinstance(retracted, bool) else None,
    )


def abstract_from_index(index: Any) -> str | None:
    """Rebuild the abstract OpenAlex ships as {word: [positions]}."""
    if not isinstance(index, dict) or not index:
        return None
    placed: dict[int, str] = {}
    for word, positions in index.items():
        for position in positions if isinstance(positions, list) else []:
            if isinstance(position, int):
                placed[position] = word
    return " ".join(placed[i] for i in sorted(placed)) or None


def _person(authorship: dict[str, Any]) -> Person | None:
    author = as_dict(authorship.get("author"))
    name = first_text(authorship.get("raw_author_name")) or first_text(author.get("display_name"))
    if not name:
        return None
    person = person_from_name(name)
    person.orcid = normalize_orcid(author.get("orcid")) or normalize_orcid(
        authorship.get("raw_orcid")
    )
    return person


def _arxiv(item: dict[str, Any], doi: str | None) -> tuple[str, int | None] | None:
    from_doi = arxiv_id_from_doi(doi)
    if from_doi:
        return from_doi, None
    for location in as_dicts(item.get("locations")) + [as_dict(item.get("primary_location"))]:
        location_id = first_text(location.get("id")) or ""
        if location_id.lower().startswith("arxiv:"):
            parsed = parse_arxiv_id(location_id[len("arxiv:") :])
            if parsed:
                return parsed
        match = _ARXIV_URL.search(first_text(location.get("landing_page_url")) or "")
        if match:
            parsed = parse_arxiv_id(match.group(1).removesuffix(".pdf"))
            if parsed:
                return parsed
    return None


def _pages(first: str | None, last: str | None) -> str | None:
    if first and last and first != last:
        return f"{first}-{last}"
    return first or last


def _last_segment(url: str | None) -> str | None:
    segment = url.rstrip("/").rsplit("/", 1)[-1] if url else None
    return segment if segment and segment.isdigit() else None


def _pmcid(url: str | None) -> str | None:
    segment = url.rstrip("/").rsplit("/", 1)[-1].upper() if url else None
    if not segment:
        return None
    return segment if segment.startswith("PMC") else f"PMC{segment}"
