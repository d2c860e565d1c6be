"""Fake upstream APIs for offline tests: one `httpx.MockTransport` handler for every source.

    fake = FakeUpstreams()
    fake.serve_crossref([crossref_work("10.1/a", "A title")])
    fake.fail("crossref", "429", times=2, retry_after=3)
    async with open_sources(settings, stats, transport=fake.transport()) as sources: ...
    assert fake.count("crossref") == 3

Routes are registered per source with a regular expression matched against the
request path *below the source's default base URL* (so pubmed routes look like
"/esearch.fcgi", not "/entrez/eutils/esearch.fcgi"). A request nobody routed raises
AssertionError, which fails the test loudly. Builders at the bottom make
realistic Crossref, OpenAlex and DataCite bodies from a few keyword arguments.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from refaudit.cache import ResponseCache
from refaudit.config import DEFAULT_BASE_URLS, Settings
from refaudit.identifiers import normalize_doi
from refaudit.models import RunStats
from refaudit.sources.client import SourceClient
from refaudit.sources.pacing import RateLimit

FIXTURES = Path(__file__).parent / "fixtures"

#: host → (source name, path prefix of the source's base URL)
HOSTS: dict[str, tuple[str, str]] = {
    urlsplit(url).hostname or "": (name, urlsplit(url).path.rstrip("/"))
    for name, url in DEFAULT_BASE_URLS.items()
}
HOSTS["dx.doi.org"] = ("doi", "")

Reply = httpx.Response | dict[str, Any] | list[Any] | str
Handler = Callable[[httpx.Request, re.Match[str]], Reply]
FAULTS = ("429", "500", "503", "drop", "timeout", "truncate")


@dataclass
class _Route:
    source: str
    method: str
    pattern: re.Pattern[str]
    handler: Handler


@dataclass
class _Fault:
    kind: str
    remaining: int
    retry_after: float | None = None


@dataclass
class FakeUpstreams:
    """Routes requests to handlers by source and path, records them, injects faults."""

    routes: list[_Route] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)
    faults: dict[str, list[_Fault]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # doi.org knows no DOI until a test registers some, as it knows no invented one.
        self.serve_doi_org({})

    # -- registering answers -------------------------------------------------

    def route(self, source: str, path: str, handler: Handler, *, method: str = "GET") -> None:
        """Answer `method` requests whose relative path fully matches the regex `path`."""
        self.routes.insert(0, _Route(source, method, re.compile(path), handler))

    def json(
        self, source: str, path: str, body: Any, *, status: int = 200, method: str = "GET"
    ) -> None:
        """Always answer `path` (a regex) with this JSON body."""
        self.route(source, path, lambda _r, _m: json_response(body, status), method=method)

    def fixture(self, source: str, path: str, name: str, *, status: int = 200) -> None:
        """Answer `path` with tests/fixtures/<name> (JSON or text by extension)."""
        text = (FIXTURES / name).read_text(encoding="utf-8")
        content_type = "application/json" if name.endswith(".json") else "text/plain"
        self.route(
            source,
            path,
            lambda _r, _m: httpx.Response(
                status, text=text, headers={"content-type": content_type}
            ),
        )

    def fail(
        self, source: str, kind: str, *, times: int = 1, retry_after: float | None = None
    ) -> None:
        """Answer the next `times` requests to `source` with a fault instead of the route.

        kind: "429" (with Retry-After when given), "500", "503", "drop" (connection
        error), "timeout" (read timeout) or "truncate" (the routed body, cut in half).
        """
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; use one of {FAULTS}")
        self.faults.setdefault(source, []).append(_Fault(kind, times, retry_after))

    # -- serving --------------------------------------------------------------

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handler)

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        source, path = self._locate(request)
        fault = self._next_fault(source)
        if fault in ("drop", "timeout"):
            if fault == "drop":
                raise httpx.ConnectError("connection dropped by fake", request=request)
            raise httpx.ReadTimeout("read timed out (fake)", request=request)
        if fault in ("429", "500", "503"):
            return self._fault_response(source, fault, request)
        response = self._dispatch(source, path, request)
        if fault == "truncate":
            body = response.content[: max(1, len(response.content) // 2)]
            return httpx.Response(response.status_code, content=body, headers=response.headers)
        return response

    def count(self, source: str) -> int:
        """How many requests reached `source` (faulted ones included)."""
        return len(self.requests_to(source))

    def requests_to(self, source: str) -> list[httpx.Request]:
        return [r for r in self.requests if self._locate(r)[0] == source]

    # -- helpers for the three bibliographic sources --------------------------

    def serve_crossref(self, works: list[dict[str, Any]]) -> None:
        """Serve /works/{doi} and /works?filter=doi:… from Crossref work objects."""
        by_doi = {normalize_doi(w["DOI"]): w for w in works}

        def single(request: httpx.Request, match: re.Match[str]) -> Reply:
            work = by_doi.get(normalize_doi(unquote(match.group("doi"))))
            if work is None:
                return httpx.Response(404, text="Resource not found.")
            return crossref_message(work)

        def listing(request: httpx.Request, _match: re.Match[str]) -> Reply:
            filters = request.url.params.get("filter", "")
            wanted = [normalize_doi(part[4:]) for part in filters.split(",") if part[:4] == "doi:"]
            return crossref_list([by_doi[d] for d in wanted if d in by_doi])

        self.route("crossref", r"/works/(?P<doi>10\..+)", single)
        self.route("crossref", r"/works", listing)

    def serve_openalex(self, works: list[dict[str, Any]]) -> None:
        """Serve /works?filter=doi:…|…, openalex:…, ids.pmid:… from OpenAlex work objects."""

        def keys(work: dict[str, Any]) -> dict[str, str | None]:
            ids = work.get("ids") or {}
            return {
                "doi": normalize_doi(work.get("doi")),
                "openalex": str(work["id"]).rsplit("/", 1)[-1].upper(),
                "ids.pmid": str(ids.get("pmid") or "").rsplit("/", 1)[-1] or None,
            }

        def listing(request: httpx.Request, _match: re.Match[str]) -> Reply:
            field_name, _, values = request.url.params.get("filter", "").partition(":")
            wanted = {
                normalize_doi(v)
                if field_name == "doi"
                else v.upper()
                if field_name == "openalex"
                else v
                for v in values.split("|")
            }
            return openalex_list([w for w in works if keys(w).get(field_name) in wanted])

        def single(request: httpx.Request, match: re.Match[str]) -> Reply:
            doi = normalize_doi(unquote(match.group("key")))
            hits = [w for w in works if keys(w)["doi"] == doi]
            return hits[0] if hits else json_response({"error": "404 Not Found"}, 404)

        self.route("openalex", r"/works", listing)
        self.route("openalex", r"/works/(?P<key>.+)", single)

    def serve_datacite(self, records: list[dict[str, Any]]) -> None:
        """Serve /dois/{doi} from DataCite `data` objects."""
        by_doi = {normalize_doi(r["attributes"]["doi"]): r for r in records}

        def single(request: httpx.Request, match: re.Match[str]) -> Reply:
            record = by_doi.get(normalize_doi(unquote(match.group("doi"))))
            if record is None:
                return json_response({"errors": [{"status": "404", "title": "Not found"}]}, 404)
            return {"data": record}

        self.route("datacite", r"/dois/(?P<doi>10\..+)", single)

    def serve_doi_org(self, agencies: dict[str, str]) -> None:
        """Serve doi.org's handle and registration-agency APIs: DOI → agency ("JaLC")."""
        known = {normalize_doi(doi): agency for doi, agency in agencies.items()}

        def handle(request: httpx.Request, match: re.Match[str]) -> Reply:
            doi = normalize_doi(unquote(match.group("doi")))
            if doi not in known:
                return json_response({"responseCode": 100, "handle": doi}, 404)
            url = {"format": "string", "value": f"https://example.org/landing/{doi}"}
            return {
                "responseCode": 1,
                "handle": doi,
                "values": [{"index": 1, "type": "URL", "data": url, "ttl": 86400}],
            }

        def agency(request: httpx.Request, match: re.Match[str]) -> Reply:
            doi = normalize_doi(unquote(match.group("doi")))
            if doi not in known:
                return [{"DOI": doi, "status": "DOI does not exist"}]
            return [{"DOI": doi, "RA": known[doi]}]

        self.route("doi", r"/api/handles/(?P<doi>10\..+)", handle)
        self.route("doi", r"/ra/(?P<doi>10\..+)", agency)

    # -- internals --------------------------------------------------------------

    def _locate(self, request: httpx.Request) -> tuple[str, str]:
        host = request.url.host
        if host not in HOSTS:
            raise AssertionError(f"request to unknown host {host!r}: {request.url}")
        source, prefix = HOSTS[host]
        path = unquote(request.url.raw_path.decode("ascii").split("?", 1)[0])
        return source, path.removeprefix(prefix) or "/"

    def _next_fault(self, source: str) -> str | None:
        queue = self.faults.get(source) or []
        while queue and queue[0].remaining <= 0:
            queue.pop(0)
        if not queue:
            return None
        queue[0].remaining -= 1
        self._retry_after = queue[0].retry_after
        return queue[0].kind

    def _fault_response(self, source: str, kind: str, request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "text/plain"}
        if kind == "429" and self._retry_after is not None:
            headers["retry-after"] = f"{self._retry_after:g}"
        text = "Too Many Requests" if kind == "429" else "Service Unavailable"
        return httpx.Response(int(kind), text=text, headers=headers)

    def _dispatch(self, source: str, path: str, request: httpx.Request) -> httpx.Response:
        for route in self.routes:
            if route.source != source or route.method != request.method:
                continue
            match = route.pattern.fullmatch(path)
            if match:
                groups = _OR_GROUPS.findall(request.url.params.get("search", ""))
                if source == "openalex" and len(groups) > 1:
                    return _union_of_searches(route.handler, request, match, groups)
                return as_response(route.handler(request, match))
        raise AssertionError(f"no fake route for {source} {request.method} {path} ({request.url})")

    _retry_after: float | None = None


#: The groups of OpenAlex's boolean `search=(a b) OR (c d)`.
_OR_GROUPS = re.compile(r"\(([^()]*)\)(?: OR |$)")


def _union_of_searches(
    handler: Handler, request: httpx.Request, match: re.Match[str], groups: list[str]
) -> httpx.Response:
    """OpenAlex's answer to an OR of searches: every work any group's search finds, once,
    counted in `meta.count`. Each group is answered by the route as its own search."""
    found: dict[str, Any] = {}
    for group in groups:
        alone = httpx.Request(request.method, request.url.copy_set_param("search", group))
        body = json.loads(as_response(handler(alone, match)).content)
        for work in body.get("results") or []:
            found.setdefault(str(work.get("id")), work)
    results = list(found.values())
    per_page = int(request.url.params.get("per_page", "25"))
    return json_response(
        {
            "meta": {"count": len(results), "page": 1, "per_page": per_page},
            "results": results[:per_page],
            "group_by": [],
        }
    )


def empty_searches(fake: FakeUpstreams) -> None:
    """Every search source answers, with nothing (a fabricated reference's experience)."""
    fake.json("semanticscholar", r"/graph/v1/paper/search", {"total": 0, "offset": 0})
    fake.route(
        "semanticscholar",
        r"/graph/v1/paper/batch",
        lambda request, _m: json_response([None] * len(json.loads(request.content)["ids"])),
        method="POST",
    )
    fake.json(
        "dblp",
        r"/search/publ/api",
        {"result": {"hits": {"@total": "0", "@computed": "0", "@sent": "0", "@first": "0"}}},
    )
    fake.route("arxiv", r"/api/query", empty_arxiv_feed)
    fake.json(
        "pubmed",
        r"/esearch.fcgi",
        {"header": {}, "esearchresult": {"count": "0", "retmax": "0", "idlist": []}},
    )
    fake.route("datacite", r"/dois/(?P<doi>10\..+)", lambda _r, _m: json_response({}, 404))


def empty_arxiv_feed(
    _request: httpx.Request | None = None, _match: object = None
) -> httpx.Response:
    """arXiv's answer to a search with no hits (usable as a route handler)."""
    return httpx.Response(
        200,
        text='<?xml version="1.0" encoding="UTF-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom" '
        'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
        "<opensearch:totalResults>0</opensearch:totalResults></feed>",
        headers={"content-type": "application/atom+xml"},
    )


def json_response(
    body: Any, status: int = 200, headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.Response(
        status,
        text=json.dumps(body),
        headers={"content-type": "application/json", **(headers or {})},
    )


def as_response(reply: Reply) -> httpx.Response:
    if isinstance(reply, httpx.Response):
        return reply
    if isinstance(reply, str):
        return httpx.Response(200, text=reply, headers={"content-type": "text/plain"})
    return json_response(reply)


class FakeClock:
    """A monotonic clock and an async sleep that only advances it (tests never wait)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += max(0.0, seconds)


class Overlap(httpx.AsyncBaseTransport):
    """Wraps a transport; each request stays open for a few event-loop turns, as on a network.

    `most` is the largest number of requests that were open at once: requests sent one
    after the other leave it at 1, requests sent together raise it.
    """

    TURNS = 20

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.open = 0
        self.most = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.open += 1
        self.most = max(self.most, self.open)
        try:
            for _ in range(self.TURNS):
                await asyncio.sleep(0)
            return await self.inner.handle_async_request(request)
        finally:
            self.open -= 1


class YieldingClock(FakeClock):
    """A fake clock whose sleep lets other calls run, as a real sleep does (for queue order)."""

    async def sleep(self, seconds: float) -> None:
        await super().sleep(seconds)
        await asyncio.sleep(0)


def make_client(
    fake: FakeUpstreams | httpx.AsyncBaseTransport,
    source: str,
    *,
    settings: Settings | None = None,
    clock: FakeClock | None = None,
    cache: ResponseCache | None = None,
    limits: dict[str, RateLimit] | None = None,
    stats: RunStats | None = None,
    hedging: bool = False,
) -> SourceClient:
    """A SourceClient for `source` wired to `fake` (or any transport), a fake clock, a cache.

    Rate limits default to "practically none" so only tests about pacing see pacing,
    and only tests about hedging hedge.
    """
    settings = settings or Settings()
    clock = clock or FakeClock()
    return SourceClient(
        source,
        settings.base_urls[source],
        settings=settings,
        stats=stats or RunStats(),
        limits=limits or {"default": RateLimit(rps=1000, burst=1000)},
        cache=cache,
        transport=fake.transport() if isinstance(fake, FakeUpstreams) else fake,
        clock=clock,
        sleep=clock.sleep,
        hedging=hedging,
    )


# -- body builders: shaped like the real APIs (see ../shared/upstream-samples) ------


def crossref_work(
    doi: str,
    title: str | list[str] | None = "A title",
    *,
    authors: list[tuple[str, str] | str] | None = None,
    year: int | None = 2020,
    month: int | None = None,
    day: int | None = None,
    venue: str | None = "Journal of Tests",
    type: str = "journal-article",
    **extra: Any,
) -> dict[str, Any]:
    """A Crossref work object. Authors are (given, family) pairs or organisation names."""
    parts = [p for p in (year, month, day) if p is not None]
    work: dict[str, Any] = {
        "DOI": doi,
        "type": type,
        "title": [title] if isinstance(title, str) else (title or []),
        "author": [
            {"name": a, "sequence": "additional", "affiliation": []}
            if isinstance(a, str)
            else {"given": a[0], "family": a[1], "sequence": "additional", "affiliation": []}
            for a in (authors if authors is not None else [("Ada", "Lovelace")])
        ],
        "container-title": [venue] if venue else [],
        "issued": {"date-parts": [parts or [None]]},
        "publisher": "Test Publisher",
        "is-referenced-by-count": 3,
        "URL": f"https://doi.org/{doi.lower()}",
        "score": 1.0,
    }
    work.update({key.replace("_", "-"): value for key, value in extra.items()})
    return work


def crossref_update(
    kind: str,
    notice_doi: str,
    *,
    date: tuple[int, ...] = (2020, 1, 2),
    label: str | None = None,
    source: str = "publisher",
    record_id: str | None = None,
) -> dict[str, Any]:
    """One `updated-by` / `update-to` entry."""
    entry: dict[str, Any] = {
        "DOI": notice_doi,
        "type": kind,
        "label": label or kind.replace("_", " ").capitalize(),
        "source": source,
        "updated": {"date-parts": [list(date)], "timestamp": 0},
    }
    if record_id is not None:
        entry["record-id"] = record_id
    return entry


def crossref_message(work: dict[str, Any]) -> dict[str, Any]:
    return {"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": work}


def crossref_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "status": "ok",
        "message-type": "work-list",
        "message-version": "1.0.0",
        "message": {
            "facets": {},
            "total-results": len(items),
            "items": items,
            "items-per-page": max(1, len(items)),
            "query": {"start-index": 0, "search-terms": None},
        },
    }


def openalex_work(
    work_id: str,
    title: str | None = "A title",
    *,
    doi: str | None = None,
    authors: list[str] | None = None,
    year: int | None = 2020,
    venue: str | None = "Journal of Tests",
    pmid: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An OpenAlex work object (the subset refaudit selects)."""
    ids: dict[str, Any] = {"openalex": f"https://openalex.org/{work_id}"}
    if doi:
        ids["doi"] = f"https://doi.org/{doi}"
    if pmid:
        ids["pmid"] = f"https://pubmed.ncbi.nlm.nih.gov/{pmid}"
    source = {"id": "https://openalex.org/S1", "display_name": venue} if venue else None
    work: dict[str, Any] = {
        "id": f"https://openalex.org/{work_id}",
        "doi": f"https://doi.org/{doi}" if doi else None,
        "title": title,
        "display_name": title,
        "publication_year": year,
        "publication_date": f"{year}-01-01" if year else None,
        "ids": ids,
        "type": "article",
        "primary_location": {"id": f"doi:{doi}" if doi else None, "source": source},
        "locations": [],
        "authorships": [
            {
                "author_position": "first",
                "author": {"id": "https://openalex.org/A1", "display_name": name, "orcid": None},
                "raw_author_name": name,
            }
            for name in (authors if authors is not None else ["Ada Lovelace"])
        ],
        "biblio": {"volume": None, "issue": None, "first_page": None, "last_page": None},
        "cited_by_count": 3,
        "is_retracted": False,
        "abstract_inverted_index": None,
    }
    work.update(extra)
    return work


def openalex_list(results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "meta": {"count": len(results), "page": 1, "per_page": 25, "groups_count": None},
        "results": results,
        "group_by": [],
    }


def datacite_record(
    doi: str,
    title: str | None = "A dataset",
    *,
    creators: list[dict[str, Any]] | None = None,
    year: int | None = 2020,
    resource_type: str = "Dataset",
    **attributes: Any,
) -> dict[str, Any]:
    """A DataCite JSON:API `data` object."""
    attrs: dict[str, Any] = {
        "doi": doi.lower(),
        "titles": [{"title": title}] if title else [],
        "creators": creators
        if creators is not None
        else [
            {
                "name": "Lovelace, Ada",
                "nameType": "Personal",
                "givenName": "Ada",
                "familyName": "Lovelace",
                "nameIdentifiers": [],
            }
        ],
        "publisher": "Zenodo",
        "publicationYear": year,
        "types": {"resourceTypeGeneral": resource_type, "citeproc": "dataset"},
        "dates": [{"date": str(year), "dateType": "Issued"}] if year else [],
        "relatedIdentifiers": [],
        "url": f"https://example.org/{doi}",
        "container": {},
    }
    attrs.update(attributes)
    return {"id": doi.lower(), "type": "dois", "attributes": attrs, "relationships": {}}
