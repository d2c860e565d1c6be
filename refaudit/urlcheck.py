"""`--check-urls`: does a cited web resource's URL still answer, and with the cited page?

A web resource (a blog post, a benchmark page, a model card) is skipped by the
verifier: no index holds it. What can still go wrong is the link. Each URL is
asked with HEAD, then GET where HEAD is refused; redirects are followed by hand,
at most `MAX_REDIRECTS`, each hop checked like the first; the whole check has a
time limit and reads at most `MAX_BYTES` of the page, for its `<title>`.

Server-side request forgery: the URLs come from the user's bibliography, and an
audit may run on a server (the MCP server, a CI runner inside a network). A URL
whose host resolves to a private, loopback, link-local, multicast or reserved
address is not requested (`url-not-checked`), at every hop. A name is resolved
before the request and again by the HTTP client, so a host that answers the
second lookup differently (DNS rebinding) is not caught; the MCP server never
checks URLs.
"""

from __future__ import annotations

import asyncio
import html
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import urljoin, urlsplit

import httpx

from refaudit.match import compare_titles
from refaudit.models import Finding, Result, Verdict
from refaudit.sources.connection import tls_context

MAX_REDIRECTS = 5
MAX_BYTES = 65_536
TIMEOUT_S = 10.0
#: URLs checked at once
CONCURRENCY = 8
#: Below this similarity the page's title is not the cited one (titles of web pages
#: carry site names: "Introducing ChatGPT | OpenAI").
TITLE_SCORE = 0.6
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_REDIRECTS = {301, 302, 303, 307, 308}

Resolver = Callable[[str], Awaitable[list[str]]]


async def check_results(
    results: Sequence[Result],
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    resolve: Resolver | None = None,
) -> None:
    """Add a URL finding to every skipped reference that has a URL."""
    wanted = [r for r in results if r.verdict == Verdict.SKIPPED and r.reference.url]
    if not wanted:
        return
    gate = asyncio.Semaphore(CONCURRENCY)
    async with httpx.AsyncClient(
        transport=transport, verify=tls_context(), follow_redirects=False
    ) as client:

        async def one(result: Result) -> None:
            async with gate:
                url = result.reference.url or ""
                try:
                    finding = await asyncio.wait_for(
                        check_url(url, result.reference.title, client, resolve or _resolve),
                        TIMEOUT_S,
                    )
                except TimeoutError:
                    finding = _dead(url, f"no answer within {TIMEOUT_S:.0f} s")
                if finding is not None:
                    result.findings.append(finding)

        await asyncio.gather(*(one(result) for result in wanted))


async def check_url(
    url: str, title: str | None, client: httpx.AsyncClient, resolve: Resolver
) -> Finding | None:
    """The finding about one URL: dead, another page's title, not checked, or None."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        refused = await _refused(current, resolve)
        if refused:
            return Finding.of("url-not-checked", f"URL {url} not checked: {refused}", cited=url)
        try:
            response = await client.head(current)
            if response.status_code >= 400:  # HEAD refused or unsupported: ask with GET
                response = await _get(client, current)
        except httpx.HTTPError as exc:
            return _dead(url, type(exc).__name__)
        if response.status_code in _REDIRECTS and "location" in response.headers:
            current = urljoin(current, response.headers["location"])
            continue
        if response.status_code >= 400:
            return _dead(url, f"HTTP {response.status_code}")
        return await _title_finding(url, title, client, current, response)
    return _dead(url, f"more than {MAX_REDIRECTS} redirects")


async def _title_finding(
    url: str, title: str | None, client: httpx.AsyncClient, current: str, response: httpx.Response
) -> Finding | None:
    if not title or "html" not in response.headers.get("content-type", ""):
        return None
    if response.request.method == "HEAD":
        try:
            response = await _get(client, current)
        except httpx.HTTPError:
            return None
    found = _TITLE.search(response.text)
    page = " ".join(html.unescape(found.group(1)).split()) if found else ""
    if not page or any(
        compare_titles(title, part).score >= TITLE_SCORE for part in _title_parts(page)
    ):
        return None
    return Finding.of(
        "url-title-differs",
        f"The page at {url} is titled “{page[:120]}”",
        cited=title,
        found=page[:200],
    )


def _title_parts(page: str) -> list[str]:
    """The page title and its pieces around site-name separators ("Post | Site")."""
    return [page, *(part for part in re.split(r"\s+[|·–—-]\s+", page) if part.strip())]


async def _get(client: httpx.AsyncClient, url: str) -> httpx.Response:
    """GET, reading at most MAX_BYTES of the body."""
    async with client.stream("GET", url) as response:
        body = b""
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) >= MAX_BYTES:
                break
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            content=body[:MAX_BYTES],
            request=response.request,
        )


async def _refused(url: str, resolve: Resolver) -> str | None:
    """Why `url` may not be requested: not http(s), or a host on a private network."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http(s) URL"
    try:
        addresses = [str(ipaddress.ip_address(parts.hostname))]
    except ValueError:
        try:
            addresses = await resolve(parts.hostname)
        except OSError:
            return None  # the request itself will fail and say so
    for address in addresses:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if not ip.is_global:
            return f"{parts.hostname} is a private or local address ({ip})"
    return None


async def _resolve(host: str) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _dead(url: str, why: str) -> Finding:
    return Finding.of("url-dead", f"URL {url} does not answer ({why})", cited=url)
