"""Only `SourceError` leaves `refaudit/sources/`: any upstream answer is a record or a SourceError.

httpx's own discipline: a caller handles one exception family. Every source is
asked everything it can answer while its API replies with bodies real APIs send
on a bad day (an HTML error page, a JSON error object, JSON of another shape,
a truncated body, nothing) and while connections drop.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import httpx
import pytest
from fakes import FakeUpstreams, make_client

from refaudit.config import Settings
from refaudit.errors import SourceError
from refaudit.sources import load, registry
from refaudit.sources.base import SearchQuery, Source

HOSTILE_BODIES: dict[str, httpx.Response] = {
    "html-error-page": httpx.Response(
        200, text="<html><body>Service temporarily down</body></html>"
    ),
    "json-error-object": httpx.Response(200, json={"status": "error", "message": ["bad"]}),
    "json-list-of-junk": httpx.Response(200, json=[1, "two", None, {"title": 3}]),
    "json-null": httpx.Response(200, text="null", headers={"content-type": "application/json"}),
    "json-wrong-types": httpx.Response(
        200,
        json={
            "message": {"items": [{"DOI": 5, "title": {"x": 1}, "author": "nobody"}]},
            "results": [{"id": 7, "doi": ["x"], "authorships": "none"}],
            "data": [{"id": None, "attributes": []}],
            "result": {"uids": "1", "hits": {"hit": "none"}},
        },
    ),
    "truncated-json": httpx.Response(
        200,
        text=json.dumps({"message": {"items": []}})[:12],
        headers={"content-type": "application/json"},
    ),
    "empty-body": httpx.Response(200, text=""),
    "xml-entity-bomb": httpx.Response(
        200,
        text='<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><feed>&b;</feed>',
        headers={"content-type": "application/atom+xml"},
    ),
    "not-xml": httpx.Response(
        200, text="<feed><entry>", headers={"content-type": "application/xml"}
    ),
}
FAULTS = ("drop", "timeout", "500")
pytestmark = pytest.mark.anyio


def _calls(source: Source) -> list[Callable[[], Awaitable[object]]]:
    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: source.lookup_dois(["10.1234/widgets.2019"]),
        lambda: source.lookup_arxiv(["1706.03762"]),
        lambda: source.lookup_pmids(["9500320"]),
        lambda: source.lookup_ids(["W2741809807"]),
        lambda: source.search(SearchQuery(title="Deep learning for widget inspection")),
    ]
    for name in ("fetch_bibtex",):
        method = getattr(source, name, None)
        if method is not None:
            calls.append(lambda method=method: method("10.1234/widgets.2019"))
    for name in ("references", "citations"):
        method = getattr(source, name, None)
        if method is not None:
            calls.append(lambda method=method: method("W2741809807"))
    return calls


def _source(fake: FakeUpstreams, name: str) -> Source:
    cls, _module = load(name)
    settings = Settings()
    return cls(make_client(fake, name, settings=settings), settings)  # type: ignore[call-arg]


async def _ask_everything(source: Source) -> None:
    for call in _calls(source):
        try:
            await call()
        except SourceError:
            pass


@pytest.mark.parametrize("body", HOSTILE_BODIES, ids=str)
@pytest.mark.parametrize("name", registry.SOURCE_NAMES)
async def test_a_hostile_body_is_a_source_error_or_nothing(name: str, body: str) -> None:
    fake = FakeUpstreams()
    for method in ("GET", "POST"):
        fake.route(name, ".*", lambda _request, _match: HOSTILE_BODIES[body], method=method)

    await _ask_everything(_source(fake, name))

    assert fake.count(name) > 0


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("name", registry.SOURCE_NAMES)
async def test_a_failing_connection_is_a_source_error(name: str, fault: str) -> None:
    fake = FakeUpstreams()
    for method in ("GET", "POST"):
        fake.route(name, ".*", lambda _request, _match: {}, method=method)
    fake.fail(name, fault, times=1000)

    await _ask_everything(_source(fake, name))
