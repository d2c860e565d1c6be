"""API keys go only to their service's official host or a host the user named, over https."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from refaudit.cache import ResponseCache
from refaudit.cli import app
from refaudit.config import load_settings
from tests.fakes import make_client

KEY = "sk-openalex-0123456789abcdef"
runner = CliRunner()


@pytest.fixture
def user_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENALEX_API_KEY", KEY)
    monkeypatch.setenv("REFAUDIT_USER_CONFIG", str(tmp_path / "user" / "config.toml"))


def test_the_official_host_gets_the_key(user_key: None) -> None:
    assert load_settings().api_key("openalex") == KEY


@pytest.mark.parametrize(
    ("where", "content"),
    [
        ("refaudit.toml", '[sources.openalex]\nurl = "https://collector.example/openalex"\n'),
        (
            "pyproject.toml",
            '[tool.refaudit.sources.openalex]\nurl = "https://collector.example/openalex"\n',
        ),
        (".env", "REFAUDIT_OPENALEX_URL=https://collector.example/openalex\n"),
    ],
)
def test_a_project_file_redirecting_a_keyed_source_gets_no_key(
    user_key: None, tmp_path: Path, where: str, content: str, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / where).write_text(content)
    with caplog.at_level(logging.WARNING):
        settings = load_settings()
    assert settings.base_urls["openalex"].startswith("https://collector.example")
    assert settings.api_key("openalex") is None
    assert "openalex API key withheld" in caplog.text and where in caplog.text
    assert KEY not in caplog.text


def test_a_project_file_may_still_name_the_official_host(user_key: None, tmp_path: Path) -> None:
    (tmp_path / "refaudit.toml").write_text(
        '[sources.openalex]\nurl = "https://api.openalex.org"\n'
    )
    assert load_settings().api_key("openalex") == KEY


def test_hosts_the_user_named_get_the_key(
    user_key: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "refaudit.toml").write_text('[sources.openalex]\nurl = "https://evil.example"\n')
    monkeypatch.setenv("REFAUDIT_OPENALEX_URL", "https://proxy.internal/openalex")
    assert load_settings().api_key("openalex") == KEY
    monkeypatch.delenv("REFAUDIT_OPENALEX_URL")
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text('[sources.openalex]\nurl = "https://mirror.example/openalex"\n')
    (tmp_path / "refaudit.toml").unlink()
    assert load_settings().api_key("openalex") == KEY


@pytest.mark.parametrize(
    ("url", "sent"),
    [
        ("http://api.openalex.org", False),
        ("http://proxy.example/openalex", False),
        ("http://127.0.0.1:8765/openalex", True),
        ("http://localhost:8765/openalex", True),
    ],
)
def test_never_over_plain_http_beyond_this_machine(
    user_key: None, monkeypatch: pytest.MonkeyPatch, url: str, sent: bool
) -> None:
    monkeypatch.setenv("REFAUDIT_OPENALEX_URL", url)
    assert (load_settings().api_key("openalex") == KEY) is sent


def test_config_show_masks_every_character_of_a_key(user_key: None) -> None:
    result = runner.invoke(app, ["config", "show", "--format", "json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)["settings"]["api_keys"]["openalex"]
    assert shown == "********"
    assert KEY not in result.output


@pytest.mark.anyio
async def test_keys_echoed_in_a_body_are_not_cached(tmp_path: Path, user_key: None) -> None:
    settings = load_settings()

    def echo(request: httpx.Request) -> httpx.Response:
        body = {"meta": {"url": str(request.url)}, "results": []}
        return httpx.Response(200, json=body, headers={"content-type": "application/json"})

    cache = ResponseCache(tmp_path / "cache.sqlite3")
    client = make_client(httpx.MockTransport(echo), "openalex", settings=settings, cache=cache)
    fetched = await client.get("/works", {"search": "x", "api_key": settings.api_key("openalex")})
    assert KEY in fetched.text  # the caller sees the answer as sent
    await client.aclose()
    cache.close()
    stored = (tmp_path / "cache.sqlite3").read_bytes()
    raw = ResponseCache(tmp_path / "cache.sqlite3")
    rows = raw._db.execute("SELECT body, headers FROM responses").fetchall()
    raw.close()
    import zlib

    assert rows and all(KEY not in zlib.decompress(body).decode() for body, _ in rows)
    assert KEY.encode() not in stored


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        (b"Bearer s3cret-token", True),
        (b"bearer s3cret-token", True),
        (b"BEARER  s3cret-token", True),
        (b"Basic s3cret-token", False),
        (b"bearer wrong-token", False),
        (b"s3cret-token", False),
    ],
)
async def test_the_bearer_scheme_is_case_insensitive(header: bytes, allowed: bool) -> None:
    from refaudit.server.http import BearerTokenMiddleware

    reached: list[bool] = []

    async def inner(scope: object, receive: object, send: object) -> None:
        reached.append(True)

    sent: list[dict[str, object]] = []

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "headers": [(b"authorization", header)], "method": "POST"}
    await BearerTokenMiddleware(inner, "s3cret-token")(scope, receive, send)
    assert bool(reached) is allowed
    if not allowed:
        assert sent[0]["status"] == 401


@pytest.mark.anyio
async def test_a_redirect_to_another_host_does_not_carry_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("S2_API_KEY", KEY)
    settings = load_settings()
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "api.semanticscholar.org":
            return httpx.Response(302, headers={"location": "https://elsewhere.example/paper"})
        return httpx.Response(200, json={"ok": True}, headers={"content-type": "application/json"})

    client = make_client(httpx.MockTransport(handler), "semanticscholar", settings=settings)
    key = settings.api_key("semanticscholar")
    assert key == KEY
    await client.get("/graph/v1/paper/x", headers={"x-api-key": key}, cache=False)
    await client.aclose()
    assert [request.url.host for request in seen] == [
        "api.semanticscholar.org",
        "elsewhere.example",
    ]
    assert seen[0].headers["x-api-key"] == KEY
    assert "x-api-key" not in seen[1].headers
