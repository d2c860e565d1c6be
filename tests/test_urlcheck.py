"""`--check-urls`: dead links are warnings, private addresses are never requested."""

from __future__ import annotations

import httpx
import pytest

from refaudit.findings import FINDING_CODES
from refaudit.models import Reference, Result, Verdict
from refaudit.urlcheck import MAX_REDIRECTS, check_results

pytestmark = pytest.mark.anyio

BLOG = "https://openai.com/blog/chatgpt"
PAGE = (
    "<!DOCTYPE html><html><head><meta charset='utf-8'>"
    "<title>Introducing ChatGPT | OpenAI</title></head><body>…</body></html>"
)


async def public(host: str) -> list[str]:
    return {"intranet.example": ["10.0.0.7"], "localhost": ["127.0.0.1", "::1"]}.get(
        host, ["93.184.215.14"]
    )


def skipped(url: str, title: str = "Introducing ChatGPT") -> Result:
    reference = Reference(key="web", entry_type="misc", title=title, url=url)
    return Result(reference=reference, verdict=Verdict.SKIPPED)


async def run(result: Result, handler) -> list[httpx.Request]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    await check_results([result], transport=httpx.MockTransport(record), resolve=public)
    return seen


def codes(result: Result) -> list[str]:
    return [f.code for f in result.findings]


async def test_a_live_page_with_the_cited_title_adds_nothing() -> None:
    result = skipped(BLOG)
    headers = {"content-type": "text/html; charset=utf-8"}
    await run(result, lambda request: httpx.Response(200, headers=headers, text=PAGE))
    assert codes(result) == []


async def test_a_page_under_another_title_is_a_note() -> None:
    result = skipped(BLOG, title="GPT-5 system card")
    headers = {"content-type": "text/html"}
    await run(result, lambda request: httpx.Response(200, headers=headers, text=PAGE))
    (finding,) = result.findings
    assert finding.code == "url-title-differs" and finding.severity == "info"
    assert "Introducing ChatGPT" in finding.message


async def test_a_dead_link_is_a_warning_after_head_and_get() -> None:
    result = skipped("https://example.org/gone")
    seen = await run(result, lambda request: httpx.Response(404))
    assert [r.method for r in seen] == ["HEAD", "GET"]
    (finding,) = result.findings
    assert finding.code == "url-dead" and FINDING_CODES["url-dead"].severity == "warning"
    assert "HTTP 404" in finding.message


async def test_head_refused_falls_back_to_get() -> None:
    result = skipped(BLOG)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "HEAD":
            return httpx.Response(405)
        return httpx.Response(200, headers={"content-type": "text/html"}, text=PAGE)

    seen = await run(result, answer)
    assert [r.method for r in seen] == ["HEAD", "GET"]
    assert codes(result) == []


async def test_redirects_are_followed_within_the_limit() -> None:
    result = skipped("https://example.org/loop")

    def loop(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": f"{request.url}/again"})

    seen = await run(result, loop)
    assert len(seen) == MAX_REDIRECTS + 1
    assert "redirects" in result.findings[0].message


async def test_a_redirect_to_a_private_address_is_not_followed() -> None:
    result = skipped("https://example.org/short")

    def to_intranet(request: httpx.Request) -> httpx.Response:
        return httpx.Response(301, headers={"location": "http://intranet.example/admin"})

    seen = await run(result, to_intranet)
    assert [str(r.url) for r in seen] == ["https://example.org/short"]
    assert codes(result) == ["url-not-checked"]


@pytest.mark.parametrize(
    "url", ["http://localhost:8080/", "http://10.0.0.7/", "http://[::1]/", "file:///etc/passwd"]
)
async def test_local_and_non_http_urls_are_never_requested(url: str) -> None:
    result = skipped(url)
    seen = await run(result, lambda request: httpx.Response(200))
    assert seen == []
    assert codes(result) == ["url-not-checked"]


async def test_a_page_body_is_read_only_up_to_the_limit() -> None:
    result = skipped(BLOG)
    huge = PAGE.replace("…", "x" * 5_000_000)
    await run(
        result,
        lambda request: httpx.Response(200, headers={"content-type": "text/html"}, text=huge),
    )
    assert codes(result) == []


async def test_only_skipped_references_with_a_url_are_checked() -> None:
    verified = Result(reference=Reference(key="p", url=BLOG), verdict=Verdict.VERIFIED)
    seen = await run(verified, lambda request: httpx.Response(404))
    assert seen == [] and verified.findings == []
