"""doi.org: whether a DOI is registered at all, and with which registration agency.

Crossref and DataCite register most DOIs, but not all: CNKI and ISTIC (China),
JaLC (Japan), KISTI (Korea), mEDRA (Italy), the Publications Office of the EU and
others register their own, and `api.crossref.org` answers 404 for them. Before a
DOI is called unregistered, the DOI system itself is asked:

- `GET /api/handles/{doi}`: the handle record; `responseCode` 1 means the DOI
  exists, 100 (HTTP 404) that it does not.
- `GET /ra/{doi}`: `[{"DOI": …, "RA": "JaLC"}]`, the agency's name, asked only for
  a DOI that exists (a missing name leaves the agency unnamed, not the DOI unknown).

Neither gives citation metadata, so a DOI known only here is real but unchecked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from refaudit.errors import SourceError
from refaudit.sources.client import SourceClient
from refaudit.sources.pacing import RateLimit

NAME = "doi"
#: what reports call it
TITLE = "doi.org"
#: The DOI Foundation publishes no limit and the handle servers answer in milliseconds;
#: one DOI a request, so a few go in flight (`[sources.doi] rate_limit` sets the rate).
RATE_LIMIT = RateLimit(rps=10, burst=4, concurrency=8)
_HANDLE_EXISTS = 1
_HANDLE_NOT_FOUND = 100


@dataclass(frozen=True)
class Registration:
    """doi.org's answer about one DOI."""

    registered: bool
    #: the registration agency's name as doi.org gives it ("JaLC", "mEDRA", "KISTI" …)
    agency: str | None = None


class DoiResolver:
    """The handle and registration-agency look-ups of doi.org."""

    def __init__(self, client: SourceClient) -> None:
        self._client = client

    async def registration(self, doi: str) -> Registration:
        """Whether `doi` exists in the DOI system, and its agency. Raises SourceError."""
        path = quote(doi, safe="/")
        fetched = await self._client.get(f"/api/handles/{path}")
        if fetched.status == 404:
            return Registration(False)
        code = _field(fetched.json(), "responseCode")
        if code == _HANDLE_NOT_FOUND:
            return Registration(False)
        if code != _HANDLE_EXISTS:
            raise SourceError(TITLE, f"unexpected handle response code {code!r}", url=fetched.url)
        agency = await self._client.get(f"/ra/{path}", accept=(200, 400, 404))
        return Registration(True, _agency(agency.json()) if agency.status == 200 else None)


def _field(body: Any, name: str) -> Any:
    return body.get(name) if isinstance(body, dict) else None


def _agency(body: Any) -> str | None:
    first = body[0] if isinstance(body, list) and body else None
    value = _field(first, "RA")
    return value.strip() or None if isinstance(value, str) else None
