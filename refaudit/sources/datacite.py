"""DataCite REST API: DOIs for datasets, software, reports, theses and arXiv preprints.

API docs: https://support.datacite.org/docs/api and
https://support.datacite.org/reference/get_dois-id

What refaudit asks:
- One DOI per request, `GET /dois/{doi}` (JSON:API; there is no batch lookup by DOI).
  arXiv's own DOIs (10.48550/arXiv.*) live here, not at Crossref.
- Search: `GET /dois?query=<words>&page[size]=N`. The query is Elasticsearch
  query-string syntax, so punctuation that has a meaning there is removed first.
- `relatedIdentifiers` IsVersionOf / IsIdenticalTo: the published version of a preprint.
- BibTeX: `GET /dois/application/x-bibtex/{doi}`.

Rate limits (per IP, over a rolling 5-minute window, as of 2026): 500 requests for
anonymous callers, 1,000 for callers who name a contact e-mail (refaudit puts
REFAUDIT_MAILTO in its User-Agent), 3,000 with DataCite credentials (refaudit has
none).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import quote

from refaudit.config import Settings
from refaudit.errors import NothingToAsk, UnexpectedResponse
from refaudit.identifiers import arxiv_id_from_doi, normalize_doi, parse_arxiv_id
from refaudit.models import Person, Work
from refaudit.names import person_from_name
from refaudit.sources.base import SearchQuery, Source
from refaudit.sources.mapping import (
    as_dict,
    as_dicts,
    as_int,
    first_text,
    normalize_orcid,
    registered_work,
    unique,
)
from refaudit.sources.pacing import RateLimit
from refaudit.sources.types import work_type
from refaudit.text import strip_markup

NAME = "datacite"
BATCH_SIZE = 1
WINDOW_S = 300
# A burst of five (no flood the moment a run starts), then a steady rate that keeps
# every 5-minute window within the tier's 500 / 1,000 requests.
RATE_LIMIT = RateLimit(rps=480 / WINDOW_S, burst=5, concurrency=4)
IDENTIFIED_RATE_LIMIT = RateLimit(rps=990 / WINDOW_S, burst=5, concurrency=4)

_VERSION_RELATIONS = frozenset({"isversionof", "isidenticalto", "ispreviousversionof"})
_QUERY_SYNTAX = re.compile(r"[^\w\s'-]+")


def rate_limits(settings: Settings) -> dict[str, RateLimit]:
    """DataCite doubles the allowance of callers whose User-Agent carries an e-mail address."""
    return {"default": IDENTIFIED_RATE_LIMIT if settings.mailto else RATE_LIMIT}


class DataCiteSource(Source):
    """DOI lookups (one request each) and search against api.datacite.org."""

    name = NAME
    id_batch_size = BATCH_SIZE

    async def lookup_dois(self, dois: list[str]) -> dict[str, Work]:
        wanted = unique([normalize_doi(doi) for doi in dois])
        works = await asyncio.gather(*(self._fetch(doi) for doi in wanted))
        return {doi: work for doi, work in zip(wanted, works, strict=True) if work is not None}

    async def search(self, query: SearchQuery) -> list[Work]:
        words = " ".join(_QUERY_SYNTAX.sub(" ", query.text()).split())
        if not words:
            raise NothingToAsk(NAME)
        fetched = await self.client.get(
            "/dois", [("query", words), ("page[size]", max(1, query.limit))], ttl="search"
        )
        records = fetched.records("data", missing="search answer without a data list")
        return [to_work(record) for record in records]

    async def fetch_bibtex(self, doi: str) -> str | None:
        """DataCite's BibTeX for `doi`, or None when DataCite does not know it."""
        canonical = normalize_doi(doi)
        if not canonical:
            return None
        fetched = await self.client.get(f"/dois/application/x-bibtex/{quote(canonical, safe='/')}")
        return fetched.text if fetched.status == 200 else None

    async def _fetch(self, doi: str) -> Work | None:
        fetched = await self.client.get(f"/dois/{quote(doi, safe='/')}")
        if fetched.status == 404:
            return None
        record = fetched.member("data", kind=dict, missing="DOI answer without a data object")
        work = to_work(record)
        return work if work.doi == doi else None


def to_work(record: dict[str, Any]) -> Work:
    """A DataCite JSON:API `data` object (or its bare `attributes`) as a Work."""
    nested = record.get("attributes")
    attributes: dict[str, Any] = nested if isinstance(nested, dict) else record
    doi = normalize_doi(first_text(attributes.get("doi")) or first_text(record.get("id")))
    if not doi:
        raise UnexpectedResponse(NAME, "record without a DOI")
    titles = as_dicts(attributes.get("titles"))
    main = [t for t in titles if not t.get("titleType")] or titles
    raw_title = first_text(main[0].get("title")) if main else None
    subtitle = next(
        (first_text(t.get("title")) for t in titles if t.get("titleType") == "Subtitle"), None
    )
    year = as_int(attributes.get("publicationYear"))
    date = _issued(attributes) or (str(year) if year else None)
    arxiv = _arxiv(attributes, doi)
    container = as_dict(attributes.get("container"))
    version = first_text(attributes.get("version"))
    return registered_work(
        NAME,
        doi,
        landing=first_text(attributes.get("url")),
        raw_title=raw_title,
        subtitle=subtitle,
        type=_type(attributes.get("types")),
        authors=[p for p in map(_person, as_dicts(attributes.get("creators"))) if p is not None],
        year=year or as_int((date or "")[:4]),
        date=date,
        venue=first_text(container.get("title")),
        publisher=_publisher(attributes.get("publisher")),
        volume=first_text(container.get("volume")),
        issue=first_text(container.get("issue")),
        pages=_pages(container),
        arxiv_id=arxiv,
        arxiv_version=as_int(version) if arxiv else None,
        abstract=next(
            (
                strip_markup(first_text(d.get("description")))
                for d in as_dicts(attributes.get("descriptions"))
                if d.get("descriptionType") == "Abstract"
            ),
            None,
        ),
        citation_count=as_int(attributes.get("citationCount")),
        published_version_doi=_published_version(attributes, doi) if arxiv else None,
    )


def _person(creator: dict[str, Any]) -> Person | None:
    name = first_text(creator.get("name"))
    family = first_text(creator.get("familyName"))
    given = first_text(creator.get("givenName"))
    orcid = next(
        (
            normalize_orcid(identifier.get("nameIdentifier"))
            for identifier in as_dicts(creator.get("nameIdentifiers"))
            if str(identifier.get("nameIdentifierScheme", "")).upper() == "ORCID"
        ),
        None,
    ) or normalize_orcid(creator.get("id"))
    if creator.get("nameType") == "Organizational":
        return Person(family=name or family or "", is_organisation=True) if name or family else None
    if family:
        return Person(family=family, given=given or "", orcid=orcid)
    if not name:
        return None
    person = person_from_name(name)
    person.orcid = orcid
    return person


def _issued(attributes: dict[str, Any]) -> str | None:
    dates = as_dicts(attributes.get("dates"))
    for wanted in ("Issued", "Available", "Submitted"):
        for entry in dates:
            value = first_text(entry.get("date"))
            if entry.get("dateType") == wanted and value and value[:4].isdigit():
                return value[:10]
    return None


def _type(types: Any) -> str | None:
    if not isinstance(types, dict):
        return None
    general = first_text(types.get("resourceTypeGeneral"))
    known = work_type(NAME, general.lower()) if general else None
    return known or first_text(types.get("citeproc")) or (general.lower() if general else None)


def _publisher(value: Any) -> str | None:
    if isinstance(value, dict):
        return first_text(value.get("name"))
    return first_text(value)


def _pages(container: dict[str, Any]) -> str | None:
    first, last = first_text(container.get("firstPage")), first_text(container.get("lastPage"))
    if first and last and first != last:
        return f"{first}-{last}"
    return first or last


def _arxiv(attributes: dict[str, Any], doi: str) -> str | None:
    from_doi = arxiv_id_from_doi(doi)
    if from_doi:
        return from_doi
    for identifier in as_dicts(attributes.get("identifiers")):
        if str(identifier.get("identifierType", "")).lower() == "arxiv":
            parsed = parse_arxiv_id(first_text(identifier.get("identifier")))
            if parsed:
                return parsed[0]
    return None


def _published_version(attributes: dict[str, Any], doi: str) -> str | None:
    for related in as_dicts(attributes.get("relatedIdentifiers")):
        relation = str(related.get("relationType", "")).lower()
        kind = str(related.get("relatedIdentifierType", "")).upper()
        if relation in _VERSION_RELATIONS and kind == "DOI":
            target = normalize_doi(first_text(related.get("relatedIdentifier")))
            if target and target != doi:
                return target
    return None
