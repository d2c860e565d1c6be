"""IEEE Xplore Metadata Search: the record of IEEE and IET papers, 200 calls a day.

API docs: https://developer.ieee.org/docs/read/Metadata_API_details and
https://developer.ieee.org/docs/read/metadata_api_details/Leveraging_Boolean_Logic

What refaudit asks: `GET /api/v1/search/articles?apikey=…&format=json` with
- `doi=` for a DOI (one per call: the API has no batch form);
- `article_title=` (an AND of whole words) with `start_year`/`end_year` one year
  either side of the cited year; when a misspelt word finds nothing, the
  title's words ORed in `querytext` as `"Document Title":word`.
The key (IEEE_API_KEY) is a query parameter, so it is stripped from every URL
refaudit logs, reports or uses as a cache key.

With 200 calls a day, IEEE Xplore is asked only where it can decide something
(`decides`): references to IEEE or IET venues, or with an IEEE (10.1109,
10.23919) or IET (10.1049) DOI, that the free sources left unmatched or in doubt.

Errors come from the Mashery gateway as 403s told apart by
`X-Error-Detail-Header`: `Account Inactive` (bad key: off for the run),
`Account Over Queries Per Second Limit` (back off and retry), `Account Over Rate
Limit` (the daily quota is spent: nothing more is sent until 00:00 UTC).
"""

from __future__ import annotations

import re
import time
from typing import Any

from refaudit.config import Settings
from refaudit.errors import KeyRejected, QuotaSpent, RateLimited, SourceError, UnexpectedResponse
from refaudit.identifiers import normalize_doi
from refaudit.models import Reference, Work
from refaudit.names import person_from_name
from refaudit.sources.base import SearchQuery, Source
from refaudit.sources.client import SourceClient
from refaudit.sources.mapping import as_int, cited_title_words, rarest_title_words, unique
from refaudit.sources.pacing import RateLimit
from refaudit.sources.quota import window_end
from refaudit.sources.registry import entry, having
from refaudit.sources.response import Fetched, retry_after_seconds
from refaudit.sources.types import work_type
from refaudit.text import strip_markup

NAME = "ieee"
PATH = "/api/v1/search/articles"
RATE_LIMIT = RateLimit(rps=10, burst=1, concurrency=5)
DOI_PREFIXES = entry(NAME).doi_prefixes
#: a cited year may be a preprint's or the proceedings' year: search one year either side
YEAR_SLACK = 1
MAX_OR_WORDS = 10
_IEEE_VENUE = re.compile(r"\b(?:IEEE|IET|IEE)\b")


class IeeeXploreSource(Source):
    """DOI lookups and title searches in IEEE Xplore, within the key's daily quota."""

    name = NAME
    doi_batch_size = 1

    def __init__(self, client: SourceClient, settings: Settings) -> None:
        super().__init__(client, settings)
        self._key = settings.api_key(NAME) or ""
        # The free indexes' ranked searches already find misspelt titles; IEEE's OR of
        # title words is worth one of its 200 daily calls only when no free index searches.
        self._loose_fallback = not any(
            name in having("search") and entry(name).quota is None
            for name in settings.sources
            if name != NAME
        )

    async def lookup_dois(self, dois: list[str]) -> dict[str, Work]:
        found: dict[str, Work] = {}
        for doi in unique([normalize_doi(doi) for doi in dois]):
            for work in await self._ask({"doi": doi, "max_records": 1}, ttl="lookup"):
                if work.doi == doi:
                    found[doi] = work
        return found

    async def search(self, query: SearchQuery) -> list[Work]:
        words = cited_title_words(NAME, query.title)
        params: dict[str, Any] = {"max_records": max(1, min(query.limit, 200))}
        if query.year:
            params |= {"start_year": query.year - YEAR_SLACK, "end_year": query.year + YEAR_SLACK}
        hits = await self._ask({**params, "article_title": " ".join(words)}, ttl="search")
        longest = rarest_title_words(query.title, MAX_OR_WORDS)
        if hits or not longest or not self._loose_fallback:
            return hits
        text = " OR ".join(f'"Document Title":{word}' for word in longest)
        return await self._ask({**params, "querytext": f"({text})"}, ttl="search")

    def decides(self, reference: Reference) -> bool:
        """IEEE Xplore is the record of IEEE and IET venues and DOIs, and of nothing else."""
        doi = (reference.doi or "").lower()
        if doi.startswith(DOI_PREFIXES):
            return True
        named = " ".join(filter(None, (reference.venue, reference.publisher, reference.free_text)))
        return bool(_IEEE_VENUE.search(named))

    async def _ask(self, params: dict[str, Any], *, ttl: str) -> list[Work]:
        fetched = await self.client.get(
            PATH, {**params, "format": "json", "apikey": self._key}, ttl=ttl, accept=(200,)
        )
        body = fetched.json()
        if not isinstance(body, dict) or not isinstance(body.get("articles", []), list):
            raise UnexpectedResponse(NAME, "answer without an articles list", url=fetched.url)
        return [to_work(article) for article in body.get("articles", [])]


def classify(fetched: Fetched) -> SourceError | None:
    """What a Mashery 403 means: bad key, too fast, or the day's calls spent."""
    if fetched.status != 403:
        return None
    detail = fetched.headers.get("x-error-detail-header", "")
    if detail == "Account Inactive":
        variable = entry(NAME).key_env[0]
        return KeyRejected(
            NAME, f"IEEE Xplore refused the API key (Account Inactive): check {variable}"
        )
    if detail == "Account Over Queries Per Second Limit":
        wait = retry_after_seconds(fetched.headers.get("retry-after"))
        return RateLimited(NAME, "throttled (over queries per second)", retry_after=wait or 1.0)
    if detail == "Account Over Rate Limit":
        quota = entry(NAME).quota
        assert quota is not None
        return QuotaSpent(NAME, "daily quota exceeded", until=window_end(quota, time.time()))
    return None


def to_work(article: dict[str, Any]) -> Work:
    """One `articles[]` item → Work."""
    if not isinstance(article, dict) or not article.get("title"):
        raise UnexpectedResponse(NAME, "article without a title")
    listed = (article.get("authors") or {}).get("authors") or []
    people = sorted(
        (a for a in listed if isinstance(a, dict) and a.get("full_name")),
        key=lambda a: as_int(a.get("author_order")) or 0,
    )
    first, last = article.get("start_page"), article.get("end_page")
    pages = f"{first}-{last}" if first and last and first != last else first or None
    number = article.get("article_number")
    return Work(
        source=NAME,
        source_id=str(number) if number else None,
        url=article.get("html_url"),
        type=work_type(NAME, article.get("content_type")),
        title=strip_markup(article["title"]),
        raw_title=article["title"],
        authors=[person_from_name(str(a["full_name"])) for a in people],
        year=as_int(article.get("publication_year")),
        venue=article.get("publication_title"),
        publisher=article.get("publisher"),
        volume=_text(article.get("volume")),
        issue=_text(article.get("issue")),
        pages=pages,
        doi=normalize_doi(article.get("doi")),
        isbn=[str(article["isbn"])] if article.get("isbn") else [],
        abstract=strip_markup(article.get("abstract")),
        citation_count=as_int(article.get("citing_paper_count")),
    )


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
