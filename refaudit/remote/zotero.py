"""A Zotero library as references: the desktop's local API or the web API v3, read-only.

Zotero 7 serves the web API's read endpoints on this machine (`/api/users/0/…`,
no key, no rate limit) once "Allow other applications on this computer to
communicate with Zotero" is on; the web API (`https://api.zotero.org/users/ID/…`)
needs `ZOTERO_API_KEY` for a private library. Both page their lists (`limit=100`,
`start`), announce the total (`Total-Results`) and the next page (`Link:
rel="next"`); the web API may ask a client to slow down (`Backoff`, or 429 /
503 with `Retry-After`). Each item is asked for with its CSL-JSON
(`include=data,csljson`): the CSL record goes through the mapping Word field codes
use, and Zotero's own JSON fills in when CSL is missing.

pyzotero is synchronous and hides the response headers this reader needs; a small
httpx client keeps the run asynchronous and is tested with `httpx.MockTransport`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from refaudit.config import Settings
from refaudit.errors import InputError
from refaudit.models import Bibliography, InputProblem, Reference
from refaudit.sources.connection import tls_context, user_agent
from refaudit.sources.types import work_type

PAGE = 100
MAX_ITEMS = 50_000
"""far beyond a personal library; a larger answer is refused rather than held"""
MAX_WAIT_S = 120.0
"""the longest `Backoff` / `Retry-After` honoured before the library is reported unreadable"""
_RETRIES = 3
_SKIPPED_TYPES = {"attachment", "note", "annotation"}
_SPEC = re.compile(
    r"^zotero:(?://?(?P<kind>users|groups)/(?P<id>\d+))?"
    r"(?:/?collections?/(?P<collection>[^/]+))?/?$",
    re.IGNORECASE,
)
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')
# Zotero's item types → CSL types, for items that come without their CSL-JSON.
_CONTAINERS = ("publicationTitle", "proceedingsTitle", "bookTitle", "websiteTitle")


@dataclass(frozen=True)
class Library:
    """Which library a `zotero:` input names: local or web, and which collection."""

    spec: str
    local: bool
    prefix: str  # "users/0", "users/123", "groups/456"
    collection: str | None = None


def is_zotero(spec: str) -> bool:
    return spec.lower().startswith("zotero:")


def parse_spec(spec: str) -> Library:
    """`zotero:`, `zotero:collection/NAME`, `zotero://users/ID[/collections/KEY]`.

    Raises:
        InputError: any other spelling.
    """
    match = _SPEC.match(spec.strip())
    if match is None:
        raise InputError(
            f"not a Zotero library: {spec!r}",
            hint="zotero: (the running Zotero), zotero:collection/NAME, "
            "zotero://users/ID[/collections/KEY] (the web API, with ZOTERO_API_KEY)",
        )
    collection = match.group("collection")
    if match.group("kind"):
        prefix = f"{match.group('kind').lower()}/{match.group('id')}"
        return Library(spec, local=False, prefix=prefix, collection=collection)
    return Library(spec, local=True, prefix="users/0", collection=collection)


async def read_library(
    library: Library, settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
) -> Bibliography:
    """Every regular item of the library (or collection), as references.

    Raises:
        InputError: Zotero is not running, its local API is off, the key is refused,
            the library or collection does not exist, or it cannot be read.
    """
    name = "zotero_local" if library.local else "zotero"
    base = settings.base_urls[name].rstrip("/")
    headers = {"Zotero-API-Version": "3", "User-Agent": user_agent(settings)}
    key = None if library.local else settings.api_key("zotero")
    if key:
        headers["Zotero-API-Key"] = key
    async with httpx.AsyncClient(
        transport=transport,
        verify=tls_context(),
        headers=headers,
        timeout=settings.timeout,
        follow_redirects=False,
    ) as client:
        reader = _Reader(client, library, base)
        path = f"/{library.prefix}/items/top"
        if library.collection:
            collection = await reader.collection_key(library.collection)
            path = f"/{library.prefix}/collections/{collection}/items/top"
        items = await reader.pages(path, {"include": "data,csljson"})
    return _bibliography(items, library)


class _Reader:
    """GETs with Zotero's paging and its requests to slow down."""

    def __init__(self, client: httpx.AsyncClient, library: Library, base: str) -> None:
        self.client = client
        self.library = library
        self.base = base

    async def collection_key(self, wanted: str) -> str:
        """A collection named `wanted` (any case) or keyed so; one, or a clear refusal."""
        collections = await self.pages(f"/{self.library.prefix}/collections", {})
        by_key = [c for c in collections if str(c.get("key", "")) == wanted]
        if by_key:
            return wanted
        named = [
            c for c in collections if str(_data(c).get("name", "")).casefold() == wanted.casefold()
        ]
        if len(named) == 1:
            return str(named[0].get("key"))
        if named:
            keys = ", ".join(str(c.get("key")) for c in named)
            raise InputError(
                f"{len(named)} Zotero collections are named {wanted!r}",
                file=self.library.spec,
                hint=f"name one by its key: {keys}",
            )
        raise InputError(
            f"no Zotero collection named or keyed {wanted!r}",
            file=self.library.spec,
            hint="collection names: "
            + (", ".join(sorted(str(_data(c).get("name")) for c in collections)) or "none"),
        )

    async def pages(self, path: str, params: Mapping[str, str]) -> list[dict[str, Any]]:
        url: str | None = f"{self.base}{path}"
        query: dict[str, str] | None = {**params, "format": "json", "limit": str(PAGE)}
        found: list[dict[str, Any]] = []
        while url is not None:
            response = await self._get(url, query)
            body = _json_list(response, self.library)
            found += body
            if len(found) > MAX_ITEMS:
                raise InputError(
                    f"holds more than {MAX_ITEMS} items; not read", file=self.library.spec
                )
            url, query = _next_page(response, len(found), len(body))
            if url is not None:
                await _back_off(response)
        return found

    async def _get(self, url: str, params: Mapping[str, str] | None) -> httpx.Response:
        for attempt in range(_RETRIES + 1):
            try:
                response = await self.client.get(url, params=params)
            except httpx.ConnectError:
                raise self._unreachable() from None
            except httpx.HTTPError as error:
                raise InputError(
                    f"Zotero did not answer ({type(error).__name__})", file=self.library.spec
                ) from None
            if response.status_code in (429, 503) and attempt < _RETRIES:
                await asyncio.sleep(_wait(response.headers.get("Retry-After"), default=5.0))
                continue
            if response.status_code >= 400:
                raise self._refused(response)
            return response
        raise self._refused(response)

    def _unreachable(self) -> InputError:
        if self.library.local:
            return InputError(
                "Zotero is not running (nothing answers at its local API)",
                file=self.library.spec,
                hint="start Zotero 7 and enable Settings → Advanced → “Allow other "
                "applications on this computer to communicate with Zotero”",
            )
        return InputError("the Zotero web API cannot be reached", file=self.library.spec)

    def _refused(self, response: httpx.Response) -> InputError:
        message, hint = _refusal(response.status_code, local=self.library.local)
        return InputError(message, file=self.library.spec, hint=hint)


def _refusal(status: int, *, local: bool) -> tuple[str, str | None]:
    """What an error status from Zotero means, and what to do about it."""
    if status == 403 and local:
        return (
            "Zotero's local API is off (403)",
            "in Zotero: Settings → Advanced → enable “Allow other applications on "
            "this computer to communicate with Zotero”",
        )
    if status == 403:
        return (
            "the Zotero web API refused access to this library (403)",
            "set ZOTERO_API_KEY to a key with read access to it (zotero.org/settings/keys)",
        )
    if status == 404:
        return "no such Zotero library or collection (404)", None
    if status in (429, 503):
        return f"Zotero kept asking to slow down ({status}); try again later", None
    return f"Zotero answered HTTP {status}", None


def _json_list(response: httpx.Response, library: Library) -> list[dict[str, Any]]:
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, list):
        raise InputError("Zotero's answer is not a list of items", file=library.spec)
    return [item for item in body if isinstance(item, dict)]


def _next_page(
    response: httpx.Response, read: int, last: int
) -> tuple[str | None, dict[str, str] | None]:
    """The `Link: rel="next"` URL (it carries the query), or nothing more to read."""
    match = _NEXT.search(response.headers.get("Link", ""))
    if match:
        return match.group(1), None
    total = response.headers.get("Total-Results", "")
    if last and total.isdigit() and read < int(total):
        url = response.request.url.copy_set_param("start", str(read))
        return str(url), None
    return None, None


async def _back_off(response: httpx.Response) -> None:
    """`Backoff: N` asks for N seconds of quiet before the next request."""
    if "Backoff" in response.headers:
        await asyncio.sleep(_wait(response.headers["Backoff"], default=0.0))


def _wait(value: str | None, *, default: float) -> float:
    try:
        seconds = float(value) if value is not None else default
    except ValueError:
        seconds = default
    return min(max(seconds, 0.0), MAX_WAIT_S)


def _data(item: Mapping[str, Any]) -> Mapping[str, Any]:
    data = item.get("data")
    return data if isinstance(data, Mapping) else {}


def _bibliography(items: list[dict[str, Any]], library: Library) -> Bibliography:
    # Here, not at the top: `check` asks every input whether it names a library (`is_zotero`).
    from refaudit.parsing.csljson import csl_citation_key, csl_reference

    problems: list[InputProblem] = []
    references: list[Reference] = []
    used: set[str] = set()
    for item in items:
        data = _data(item)
        if data.get("itemType") in _SKIPPED_TYPES or data.get("deleted"):
            continue
        csl = item.get("csljson")
        record = csl if isinstance(csl, Mapping) and csl else zotero_to_csl(data)
        base = csl_citation_key(record) or csl_citation_key(data) or str(item.get("key") or "item")
        key, copy = base, 1
        while key in used:
            copy += 1
            key = f"{base}-{copy}"
        used.add(key)
        references.append(
            csl_reference(
                record,
                key=key,
                file=library.spec,
                line=None,
                origin="zotero library",
                problems=problems,
            )
        )
    if not references:
        raise InputError(
            "the Zotero library holds no items to audit (notes and attachments are skipped)",
            file=library.spec,
        )
    return Bibliography(references=references, problems=problems, files=[library.spec])


def zotero_to_csl(data: Mapping[str, Any]) -> dict[str, Any]:
    """Zotero's item JSON in CSL-JSON's shape (for an item that came without its CSL)."""
    item: dict[str, Any] = {"type": work_type("zotero", data.get("itemType")) or "document"}
    for creator in data.get("creators") or []:
        if not isinstance(creator, Mapping):
            continue
        role = "editor" if creator.get("creatorType") == "editor" else "author"
        if creator.get("creatorType") not in (None, "author", "editor"):
            continue
        person = (
            {"literal": creator["name"]}
            if creator.get("name")
            else {"family": creator.get("lastName", ""), "given": creator.get("firstName", "")}
        )
        item.setdefault(role, []).append(person)
    container = next((data[name] for name in _CONTAINERS if data.get(name)), None)
    for name, value in (
        ("title", data.get("title")),
        ("container-title", container),
        ("volume", data.get("volume")),
        ("issue", data.get("issue")),
        ("page", data.get("pages")),
        ("publisher", data.get("publisher") or data.get("university") or data.get("institution")),
        ("DOI", data.get("DOI")),
        ("URL", data.get("url")),
        ("ISBN", data.get("ISBN")),
        ("number", data.get("archiveID") or data.get("reportNumber")),
        ("note", data.get("extra")),
    ):
        if value:
            item[name] = value
    if data.get("date"):
        item["issued"] = {"raw": str(data["date"])}
    return item
