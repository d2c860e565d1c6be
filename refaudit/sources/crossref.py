"""Crossref REST API: the registry of record for most journal and conference DOIs.

API docs: https://api.crossref.org/swagger-ui/index.html and
https://www.crossref.org/documentation/retrieve-metadata/rest-api/

What refaudit asks:
- DOI lookups, batched as `GET /works?filter=doi:A,doi:B,…&rows=N`: as many DOIs
  as fit in MAX_FILTER_CHARS of filter as sent, which keeps the URL under ~4 KB
  (Crossref sets no count on a filter's values, only the URL's length). The filter's
  `:`, `/` and `,` go unescaped, as Crossref's own examples write them (a URL's query
  may hold them as they are), so about 100 DOIs of usual length fit, not 80. A DOI
  containing a comma cannot go into a filter (commas separate filter clauses), so it
  is fetched alone with `GET /works/{doi}`.
- Bibliographic search: `GET /works?query.bibliographic=<title authors year>&rows=N`
  with `select` so answers stay small; a topic (novelty) is searched with `query=`,
  which also reads abstracts.
- `updated-by` / `update-to`: publisher and Retraction Watch notices (retractions,
  corrections, expressions of concern).
- BibTeX by content negotiation: `GET /works/{doi}/transform/application/x-bibtex`.

Rate limits (since December 2025): anonymous callers get 5 requests/s for single
records and 1 request/s for list queries, one at a time; callers who identify
themselves with `mailto` (the "polite" pool) get 10/s single, 3/s lists, 3 in flight.
Etiquette: set `mailto` (REFAUDIT_MAILTO); it is sent as a parameter and in the
User-Agent. Crossref Metadata Plus tokens (CROSSREF_PLUS_API_TOKEN) go in the
`Crossref-Plus-API-Token` header.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable
from typing import Any
from urllib.parse import quote

from refaudit.config import Settings
from refaudit.errors import NothingToAsk, UnexpectedResponse
from refaudit.identifiers import normalize_doi
from refaudit.models import Notice, Person, Work
from refaudit.notices import WITHDRAWING_KINDS, normalize_notice_kind
from refaudit.sources.base import SearchQuery, Source, all_at_once
from refaudit.sources.client import SourceClient
from refaudit.sources.coalesce import Coalescer, client_coalescer
from refaudit.sources.mapping import (
    as_int,
    first_text,
    iso_date,
    normalize_orcid,
    registered_work,
    unique,
)
from refaudit.sources.pacing import RateLimit
from refaudit.sources.response import Fetched
from refaudit.text import strip_markup

NAME = "crossref"
#: DOIs a batch holds at most: `rows`, which a batch asks for in full, stops at 1,000;
#: the filter's length (MAX_FILTER_CHARS) is what binds in practice.
BATCH_SIZE = 1000
#: the filter's share, as sent, of a URL that must stay under ~4 KB with `select` and `mailto`
MAX_FILTER_CHARS = 3000
#: What the filter sends unescaped: its own syntax and a DOI's slash (everything else in
#: a DOI, such as `(`, `;` or `<`, is escaped).
FILTER_LITERAL = ":/,"
RATE_LIMIT = RateLimit(rps=5, burst=1, concurrency=1)

#: Fields refaudit reads; `select` keeps list answers a few KB per item.
SELECT_FIELDS = (
    "DOI",
    "type",
    "title",
    "original-title",
    "subtitle",
    "author",
    "issued",
    "published",
    "published-print",
    "published-online",
    "container-title",
    "short-container-title",
    "publisher",
    "volume",
    "issue",
    "page",
    "ISBN",
    "URL",
    "is-referenced-by-count",
    "updated-by",
    "update-to",
    "score",
)
_DATE_FIELDS = ("issued", "published-print", "published-online", "published")


def rate_limits(settings: Settings) -> dict[str, RateLimit]:
    """Crossref's published pools: "default" for /works/{doi}, "list" for /works?….

    Crossref publishes each pool's limit as requests per one-second interval (and
    announces it on every answer): up to that many, within the in-flight cap, may
    go at once, so a run's first three list requests (its DOI batches) need not
    wait two intervals for each other.
    """
    if settings.api_key(NAME):
        return {
            "default": RateLimit(rps=50, burst=10, concurrency=10),
            "list": RateLimit(rps=50, burst=10, concurrency=10),
        }
    if settings.mailto:
        return {
            "default": RateLimit(rps=10, burst=3, concurrency=3),
            "list": RateLimit(rps=3, burst=3, concurrency=3),
        }
    return {"default": RATE_LIMIT, "list": RateLimit(rps=1, burst=1, concurrency=1)}


class CrossrefSource(Source):
    """DOI lookups, bibliographic search and notices from api.crossref.org."""

    name = NAME

    def __init__(self, client: SourceClient, settings: Settings) -> None:
        super().__init__(client, settings)
        self._mailto = settings.mailto
        token = settings.api_key(NAME)
        self._headers = {"Crossref-Plus-API-Token": f"Bearer {token}"} if token else None
        self._dois: Coalescer[str, dict[str, Work]] = client_coalescer(
            client, self._lookup_together, _fits_one_filter
        )

    def id_batches(self, keys: list[str]) -> list[list[str]]:
        alone = [[d] for d in keys if not fits_filter(d)]
        return alone + filter_batches([d for d in keys if fits_filter(d)])

    async def lookup_dois(self, dois: list[str]) -> dict[str, Work]:
        wanted = unique([normalize_doi(doi) for doi in dois])
        if len(wanted) == 1 and fits_filter(wanted[0]):
            # One citation's DOI (a reference checked alone, a retraction check): on a
            # server, while the list pool is busy, it shares a filter with the DOIs other
            # calls ask about meanwhile rather than queue a request of its own.
            work = await self.lookup_doi(wanted[0], at_once=self.client.idle("list"))
            return {wanted[0]: work} if work is not None else {}
        found: dict[str, Work] = {}
        for doi in (d for d in wanted if not fits_filter(d)):
            work = await self._fetch_single(doi)
            if work is not None:
                found[doi] = work
        batches = filter_batches([d for d in wanted if fits_filter(d)])
        for answer in await all_at_once(self._fetch_batch(batch) for batch in batches):
            found.update(answer)
        return found

    async def lookup_doi(self, doi: str, *, at_once: bool = False) -> Work | None:
        """One DOI's record, asked in one filter with the DOIs asked about meanwhile."""
        canonical = normalize_doi(doi)
        if not canonical or not fits_filter(canonical):
            return await super().lookup_doi(doi)
        cached = self._cached_record(canonical)
        if cached is not None:
            return cached.get(canonical)
        return (await self._dois.ask(canonical, at_once=at_once)).get(canonical)

    def ride_doi(self, doi: str) -> Awaitable[dict[str, Work]] | None:
        canonical = normalize_doi(doi)
        if not canonical or not fits_filter(canonical):
            return None
        cached = self._cached_record(canonical)
        if cached is None:
            return self._dois.ride(canonical)
        answer: asyncio.Future[dict[str, Work]] = asyncio.get_running_loop().create_future()
        answer.set_result(cached)
        return answer

    def _cached_record(self, doi: str) -> dict[str, Work] | None:
        """The cached answer to `doi`'s own filter ({} when Crossref had no such DOI), or
        None when it is not in the cache."""
        cached = self.client.cached("/works", self._batch_params([doi]))
        if cached is None:
            return None
        items = _items(cached)
        return {doi: to_work(items[0])} if items else {}

    def release_rides(self) -> None:
        self._dois.release()

    async def _lookup_together(self, dois: list[str]) -> list[dict[str, Work]]:
        """One filter for `dois`; each DOI's part of the answer is cached as the answer to
        its own filter, so a later run asks for it alone without sending anything."""
        wanted = unique(dois)
        found = await self._batch_records(wanted)
        for doi in wanted:
            items = [found[doi][1]] if doi in found else []
            answer = {
                "status": "ok",
                "message-type": "work-list",
                "message": {"total-results": len(items), "items": items},
            }
            self.client.remember(
                "/works", self._batch_params([doi]), json.dumps(answer), ttl="integrity"
            )
        records = {doi: work for doi, (work, _item) in found.items()}
        return [records] * len(dois)

    async def search(self, query: SearchQuery) -> list[Work]:
        text = query.text()
        if not text:
            raise NothingToAsk(NAME)
        # A topic is searched in titles and abstracts (`query`), a work by its record.
        params: list[tuple[str, Any]] = [
            ("query" if query.topic_terms else "query.bibliographic", text),
            ("rows", max(1, query.limit)),
            (
                "select",
                ",".join([*SELECT_FIELDS, "abstract"] if query.topic_terms else SELECT_FIELDS),
            ),
        ]
        filters = []
        if query.year_from:
            filters.append(f"from-pub-date:{query.year_from}")
        if query.year_to:
            filters.append(f"until-pub-date:{query.year_to}")
        if filters:
            params.append(("filter", ",".join(filters)))
        fetched = await self.client.get(
            "/works", self._with_mailto(params), headers=self._headers, ttl="search", pool="list"
        )
        return [to_work(item) for item in _items(fetched)]

    async def changes_since(self, day: str, rows: int = 500) -> AsyncIterator[list[dict[str, Any]]]:
        """Every work (re)indexed since `day`, a page at a time (`mirror update`).

        `filter=from-index-date:` with deep cursor paging, as Crossref asks bulk
        harvesters to do; pages are never cached.
        """
        cursor: str | None = "*"
        while cursor:
            params: list[tuple[str, Any]] = [
                ("filter", f"from-index-date:{day}"),
                ("rows", rows),
                ("cursor", cursor),
            ]
            fetched = await self.client.get(
                "/works", self._with_mailto(params), headers=self._headers, cache=False, pool="list"
            )
            items = _items(fetched)
            if not items:
                return
            yield items
            message = fetched.json()["message"]
            cursor = message.get("next-cursor") if len(items) >= rows else None

    async def fetch_bibtex(self, doi: str) -> str | None:
        """Crossref's own BibTeX for `doi`, or None when Crossref does not know it."""
        canonical = normalize_doi(doi)
        if not canonical:
            return None
        fetched = await self.client.get(
            f"/works/{quote(canonical, safe='/')}/transform/application/x-bibtex",
            self._with_mailto([]),
            headers=self._headers,
        )
        return fetched.text if fetched.status == 200 else None

    async def _fetch_single(self, doi: str) -> Work | None:
        fetched = await self.client.get(
            f"/works/{quote(doi, safe='/')}",
            self._with_mailto([]),
            headers=self._headers,
            ttl="integrity",
        )
        if fetched.status == 404:
            return None
        missing = "work answer without a message object"
        return to_work(fetched.member("message", kind=dict, missing=missing))

    async def _fetch_batch(self, batch: list[str]) -> dict[str, Work]:
        return {doi: work for doi, (work, _item) in (await self._batch_records(batch)).items()}

    async def _batch_records(self, batch: list[str]) -> dict[str, tuple[Work, dict[str, Any]]]:
        """Each DOI of `batch` Crossref holds, with its record as answered."""
        fetched = await self.client.get(
            "/works",
            self._batch_params(batch),
            headers=self._headers,
            ttl="integrity",
            pool="list",
            literal=FILTER_LITERAL,
        )
        wanted = set(batch)
        found: dict[str, tuple[Work, dict[str, Any]]] = {}
        for item in _items(fetched):
            work = to_work(item)
            if work.doi in wanted:
                found[work.doi] = (work, item)
        return found

    def _batch_params(self, batch: list[str]) -> list[tuple[str, Any]]:
        params: list[tuple[str, Any]] = [
            ("filter", ",".join(f"doi:{doi}" for doi in batch)),
            ("rows", len(batch)),
            ("select", ",".join(SELECT_FIELDS)),
        ]
        return self._with_mailto(params)

    def _with_mailto(self, params: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        return [*params, ("mailto", self._mailto)] if self._mailto else params


def _fits_one_filter(dois: list[str]) -> bool:
    return len(filter_batches(unique(dois))) <= 1


def fits_filter(doi: str) -> bool:
    """Commas separate filter clauses: a DOI holding one is fetched alone."""
    return "," not in doi


def filter_batches(dois: list[str]) -> list[list[str]]:
    """DOIs in consecutive batches of at most BATCH_SIZE and MAX_FILTER_CHARS as sent."""
    batches: list[list[str]] = []
    size = MAX_FILTER_CHARS + 1
    for doi in dois:
        cost = len(quote(f"doi:{doi}", safe=FILTER_LITERAL)) + 1  # and the "," before the next
        if not batches or len(batches[-1]) >= BATCH_SIZE or size + cost > MAX_FILTER_CHARS:
            batches.append([])
            size = 0
        batches[-1].append(doi)
        size += cost
    return batches


def _items(fetched: Fetched) -> list[dict[str, Any]]:
    return fetched.records("message", "items", missing="work list without message.items")


def to_work(item: dict[str, Any]) -> Work:
    """A Crossref work object (the `message` of /works/{doi}, or a list item) as a Work."""
    doi = normalize_doi(first_text(item.get("DOI")))
    if not doi:
        raise UnexpectedResponse(NAME, "work without a DOI")
    raw_title = first_text(item.get("title"))
    year, month, day = _first_date(item)
    notices = [_notice(entry, target=doi) for entry in _dicts(item.get("updated-by"))]
    notices += [
        _notice(entry, target=normalize_doi(first_text(entry.get("DOI"))), notice_doi=doi)
        for entry in _dicts(item.get("update-to"))
    ]
    retracting = [n for n in notices if n.target_doi == doi and n.kind in WITHDRAWING_KINDS]
    return registered_work(
        NAME,
        doi,
        landing=first_text(item.get("URL")),
        raw_title=raw_title,
        subtitle=first_text(item.get("subtitle")),
        type=first_text(item.get("type")),
        # A translated work's title in its own language (often Japanese or Chinese).
        title_aliases=unique(
            [strip_markup(str(name)) for name in _list(item.get("original-title"))]
        ),
        authors=[_person(author) for author in _dicts(item.get("author"))],
        year=year,
        date=iso_date(year, month, day),
        venue=strip_markup(first_text(item.get("container-title"))),
        venue_short=strip_markup(first_text(item.get("short-container-title"))),
        venue_aliases=unique(
            [strip_markup(str(name)) for name in _list(item.get("container-title"))[1:]]
            + [strip_markup(str(name)) for name in _list(item.get("short-container-title"))[1:]]
        ),
        publisher=first_text(item.get("publisher")),
        volume=first_text(item.get("volume")),
        issue=first_text(item.get("issue")),
        pages=first_text(item.get("page")),
        isbn=unique([first_text(v) for v in _list(item.get("ISBN"))]),
        citation_count=as_int(item.get("is-referenced-by-count")),
        is_retracted=True if retracting else None,
        notices=notices,
        score=item.get("score") if isinstance(item.get("score"), (int, float)) else None,
        abstract=strip_markup(first_text(item.get("abstract"))),
    )


def _person(author: dict[str, Any]) -> Person:
    orcid = normalize_orcid(author.get("ORCID"))
    family = first_text(author.get("family"))
    name = first_text(author.get("name"))
    if not family and name:
        return Person(family=name, is_organisation=True, orcid=orcid)
    return Person(
        family=family or "",
        given=first_text(author.get("given")) or "",
        suffix=first_text(author.get("suffix")) or "",
        orcid=orcid,
    )


def _first_date(item: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    for name in _DATE_FIELDS:
        parts = _date_parts(item.get(name))
        if parts[0]:
            return parts
    return None, None, None


def _date_parts(value: Any) -> tuple[int | None, int | None, int | None]:
    """Crossref's `{"date-parts": [[2019, 5]]}`, any part possibly missing or null."""
    rows = value.get("date-parts") if isinstance(value, dict) else None
    first = rows[0] if isinstance(rows, list) and rows and isinstance(rows[0], list) else []
    parts = [as_int(part) for part in first[:3]] + [None, None, None]
    return parts[0], parts[1], parts[2]


def _notice(entry: dict[str, Any], *, target: str | None, notice_doi: str | None = None) -> Notice:
    label = first_text(entry.get("label"))
    year, month, day = _date_parts(entry.get("updated"))
    return Notice(
        kind=normalize_notice_kind(first_text(entry.get("type")) or label),
        notice_doi=notice_doi or normalize_doi(first_text(entry.get("DOI"))),
        date=iso_date(year, month, day),
        label=label,
        source=first_text(entry.get("source")),
        reported_by=NAME,
        record_id=first_text(entry.get("record-id")),
        target_doi=target,
    )


def _list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [entry for entry in _list(value) if isinstance(entry, dict)]
