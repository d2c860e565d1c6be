"""Scopus Search (Elsevier): curated venue names and retraction marks, behind a key.

API docs: https://dev.elsevier.com/documentation/ScopusSearchAPI.wadl and
https://dev.elsevier.com/sc_search_tips.html (query language),
https://dev.elsevier.com/api_key_settings.html (quotas).

What refaudit asks: `GET /content/search/scopus?query=…&count=N` with the key in
`X-ELS-APIKey` (ELSEVIER_API_KEY, or ELSEVIER_KEY as other tools name it) and
an institutional token, when configured, in `X-ELS-Insttoken`; neither ever
goes into a URL.
- DOI lookups as `DOI(a) OR DOI(b) …`, BATCH_SIZE DOIs per request (the
  STANDARD view answers at most 25 entries).
- Title searches: `TITLE("…")` plus a PUBYEAR window around the cited year.
  Scopus matches whole words, so a title with one misspelt word finds nothing:
  then the title's words are ORed and the ranking decides.
- The STANDARD view names only the first author (`dc:creator`): such records
  say their author list is partial, so a co-author Scopus does not list is never
  a discrepancy. With an institutional token the COMPLETE view adds every
  author and the abstract; a key not entitled to it falls back to STANDARD.
- Subtype `tb` ("Retracted") is Scopus' retraction mark: the record carries
  `is_retracted`, which the screen reports as Scopus' integrity notice.

Errors as the API sends them: 401 `AUTHENTICATION_ERROR` / `APIKEY_INVALID`
(wrong key: the source is off for the rest of the run), 401
`AUTHORIZATION_ERROR` / 403 `ENTITLEMENTS_ERROR` (the view needs an
entitlement: STANDARD instead), 429 `QUOTA_EXCEEDED` with `X-RateLimit-Reset`
(nothing more is sent until then; see quota.py) and the per-second throttle's
429 (retried after `Retry-After`).

Rate limit: 9 requests/s and 20,000 requests a week per key.
"""

from __future__ import annotations

import re
import time
from typing import Any

from refaudit.config import Settings
from refaudit.errors import KeyRejected, QuotaSpent, RateLimited, SourceError, UnexpectedResponse
from refaudit.identifiers import normalize_doi
from refaudit.models import Person, Reference, Work
from refaudit.names import display_name_to_person
from refaudit.sources.base import SearchQuery, Source
from refaudit.sources.client import SourceClient
from refaudit.sources.mapping import (
    as_int,
    chunked,
    cited_title_words,
    rarest_title_words,
    unique,
    year_from,
)
from refaudit.sources.pacing import RateLimit
from refaudit.sources.registry import entry
from refaudit.sources.response import Fetched, retry_after_seconds
from refaudit.sources.types import work_type
from refaudit.text import strip_markup

NAME = "scopus"
PATH = "/content/search/scopus"
#: entries per answer in the STANDARD and COMPLETE views without a cursor
BATCH_SIZE = 25
RATE_LIMIT = RateLimit(rps=9, burst=1, concurrency=5)
#: title words ORed when the phrase found nothing (the rarest decide the ranking)
MAX_OR_WORDS = 12
#: a cited year may be a preprint's or the proceedings' year: search one year either side
YEAR_SLACK = 1
_ENTITLEMENT_CODES = frozenset({"AUTHORIZATION_ERROR", "ENTITLEMENTS_ERROR"})
_KEY_CODES = frozenset({"AUTHENTICATION_ERROR", "APIKEY_INVALID", "INVALID_API_KEY"})
# "LeCun Y.", "Van Der Maaten L.J.P.", "Zhang H.-Y.": family name, then initials.
_CREATOR = re.compile(r"^(?P<family>.+?)\s+(?P<initials>(?:[A-Z][a-z]?\.-?)+)$")
_DOI_UNQUOTABLE = re.compile(r'["\\]')


class _NotEntitled(SourceError):
    """The key may not use the COMPLETE view (or the token was refused): ask in STANDARD."""


class ScopusSource(Source):
    """DOI lookups and title searches in Scopus, within the key's weekly quota."""

    name = NAME
    doi_batch_size = BATCH_SIZE

    def __init__(self, client: SourceClient, settings: Settings) -> None:
        super().__init__(client, settings)
        key = settings.api_key(NAME) or ""
        # The token goes only where the key may go (an https or loopback URL, not a project file's).
        token = settings.api_key(f"{NAME}.insttoken") if key else None
        self._headers = {"X-ELS-APIKey": key, "Accept": "application/json"}
        if token:
            self._headers["X-ELS-Insttoken"] = token
        self._view = "COMPLETE" if token else "STANDARD"

    async def lookup_dois(self, dois: list[str]) -> dict[str, Work]:
        wanted = [d for d in unique([normalize_doi(doi) for doi in dois]) if d]
        askable = [d for d in wanted if not _DOI_UNQUOTABLE.search(d)]
        found: dict[str, Work] = {}
        for batch in chunked(askable, BATCH_SIZE):
            query = " OR ".join(f"DOI({_doi_term(doi)})" for doi in batch)
            for work in await self._search(query, len(batch), ttl="lookup"):
                if work.doi in batch:
                    found.setdefault(work.doi, work)
        return found

    async def search(self, query: SearchQuery) -> list[Work]:
        words = cited_title_words(NAME, query.title)
        limit = min(BATCH_SIZE, max(1, query.limit))
        years = _year_clause(query.year)
        hits = await self._search(f'TITLE("{" ".join(words)}"){years}', limit, ttl="search")
        longest = rarest_title_words(query.title, MAX_OR_WORDS)
        if hits or not longest:
            return hits
        return await self._search(f"TITLE({' OR '.join(longest)}){years}", limit, ttl="search")

    def decides(self, reference: Reference) -> bool:
        """Scopus holds nothing the free indexes lack: asked when they fail, or alone."""
        return False

    async def _search(self, query: str, count: int, *, ttl: str) -> list[Work]:
        try:
            fetched = await self._ask(query, count, ttl)
        except _NotEntitled:
            # No entitlement to the COMPLETE view: STANDARD for the rest of the run.
            self._view = "STANDARD"
            self._headers.pop("X-ELS-Insttoken", None)
            fetched = await self._ask(query, count, ttl)
        return [to_work(item) for item in _entries(fetched.json(), fetched.url)]

    async def _ask(self, query: str, count: int, ttl: str) -> Fetched:
        params = {"query": query, "count": count, "view": self._view}
        return await self.client.get(PATH, params, headers=self._headers, ttl=ttl, accept=(200,))


def classify(fetched: Fetched) -> SourceError | None:
    """What an answer means for the key and its budget (see quota.Budget)."""
    if fetched.status not in (401, 403, 429):
        return None
    code, text = _error(fetched)
    status = fetched.headers.get("x-els-status", "")
    if fetched.status == 429:
        if code == "QUOTA_EXCEEDED" or status.startswith("QUOTA_EXCEEDED"):
            reset = _number(fetched.headers.get("x-ratelimit-reset"))
            until = reset if reset else time.time() + 7 * 86400
            return QuotaSpent(NAME, "weekly quota exceeded", until=until, url=fetched.url)
        return RateLimited(
            NAME,
            "throttled (HTTP 429)",
            url=fetched.url,
            retry_after=retry_after_seconds(fetched.headers.get("retry-after")),
        )
    if code in _ENTITLEMENT_CODES or "institution token" in text.lower():
        return _NotEntitled(NAME, f"{code}: {text}", url=fetched.url)
    if code in _KEY_CODES:
        variables = " or ".join(entry(NAME).key_env)
        return KeyRejected(
            NAME, f"Scopus refused the API key ({code}): check {variables}", url=fetched.url
        )
    return None


def to_work(item: dict[str, Any]) -> Work:
    """One Scopus Search entry → Work."""
    if not isinstance(item, dict) or not (item.get("eid") or item.get("dc:identifier")):
        raise UnexpectedResponse(NAME, "entry without eid")
    complete = [a for a in item.get("author") or [] if isinstance(a, dict)]
    if complete:
        authors = [_author(a) for a in complete]
    else:
        creator = item.get("dc:creator")
        authors = [_creator(creator)] if isinstance(creator, str) and creator.strip() else []
    total = as_int((item.get("author-count") or {}).get("@total")) if complete else None
    subtype = item.get("subtype")
    # Document subtypes (article, review, letter, editorial, note, erratum: all journal
    # articles to refaudit), else the coarser aggregation type.
    kind = work_type(NAME, subtype) or work_type(
        "scopus aggregation", item.get("prism:aggregationType")
    )
    isbn = item.get("prism:isbn")
    eid = item.get("eid") or str(item.get("dc:identifier", "")).removeprefix("SCOPUS_ID:")
    return Work(
        source=NAME,
        source_id=eid,
        url=_link(item, "scopus") or item.get("prism:url"),
        type=kind,
        title=strip_markup(item.get("dc:title")),
        raw_title=item.get("dc:title"),
        authors=authors,
        authors_partial=not complete or (total is not None and total > len(complete)),
        year=year_from(item.get("prism:coverDate")),
        date=item.get("prism:coverDate"),
        venue=item.get("prism:publicationName"),
        volume=item.get("prism:volume"),
        issue=item.get("prism:issueIdentifier"),
        pages=item.get("prism:pageRange"),
        doi=normalize_doi(item.get("prism:doi")),
        pmid=item.get("pubmed-id"),
        isbn=[str(isbn)] if isinstance(isbn, str) else [],
        abstract=strip_markup(item.get("dc:description")),
        citation_count=as_int(item.get("citedby-count")),
        is_retracted=True if subtype == "tb" else None,
    )


def _entries(body: Any, url: str) -> list[dict[str, Any]]:
    results = body.get("search-results") if isinstance(body, dict) else None
    if not isinstance(results, dict) or not isinstance(results.get("entry", []), list):
        raise UnexpectedResponse(NAME, "answer without search-results.entry", url=url)
    # No hits is one placeholder entry: {"@_fa": "true", "error": "Result set was empty"}.
    return [e for e in results.get("entry", []) if isinstance(e, dict) and "error" not in e]


def _error(fetched: Fetched) -> tuple[str, str]:
    """The error code and text of either error shape Elsevier sends."""
    try:
        body = fetched.json()
    except UnexpectedResponse:
        return "", ""
    if not isinstance(body, dict):
        return "", ""
    if isinstance(body.get("error-response"), dict):
        error = body["error-response"]
        return str(error.get("error-code", "")), str(error.get("error-message", ""))
    status = (body.get("service-error") or {}).get("status") or {}
    return str(status.get("statusCode", "")), str(status.get("statusText", ""))


def _doi_term(doi: str) -> str:
    """A DOI as the argument of DOI(…): quoted when its parentheses would unbalance the query."""
    return f'"{doi}"' if re.search(r"[()\s]", doi) else doi


def _year_clause(year: int | None) -> str:
    if not year:
        return ""
    return f" AND PUBYEAR > {year - YEAR_SLACK - 1} AND PUBYEAR < {year + YEAR_SLACK + 1}"


def _creator(name: str) -> Person:
    match = _CREATOR.match(" ".join(name.split()))
    if not match:
        return display_name_to_person(name)
    initials = re.findall(r"[A-Z][a-z]?\.", match["initials"])
    return Person(family=match["family"], given=" ".join(initials))


def _author(author: dict[str, Any]) -> Person:
    family = author.get("surname")
    if not family:
        return _creator(str(author.get("authname") or ""))
    return Person(
        family=str(family), given=str(author.get("given-name") or author.get("initials") or "")
    )


def _link(item: dict[str, Any], ref: str) -> str | None:
    for link in item.get("link") or []:
        if isinstance(link, dict) and link.get("@ref") == ref:
            return link.get("@href")
    return None


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None
