"""A shared HTTP server, through the SDK's client over real HTTP: each client's share,
and a stop that answers the calls in flight.

The server runs as a subprocess with small limits (one call at a time, three
references a minute per client); the fake Crossref answers one DOI slowly, so a
call can be held in flight while the same client makes another. Without a token
(the SDK's client speaks the sessionless protocol) every caller on this machine is
one client; `test_serve_oauth.py` shows two token subjects with shares of their own.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from typer.testing import CliRunner

from refaudit.cli import app
from refaudit.config import load_settings
from refaudit.errors import ConfigError
from tests.fakes import crossref_work
from tests.test_serve_transports import (
    STARTUP_TIMEOUT_S,
    _wait_for_url,
    _without_refaudit_settings,
    served_over_http,
    server_environment,
    spawned_http_server,
)
from tests.test_server import WIDGETS, WIDGETS_DOI, upstreams

pytestmark = pytest.mark.anyio

SLOW_DOI = "10.5555/slow.2020"
TOKEN = "shared-token-for-tests"
LIMITS = {"REFAUDIT_CLIENT_CONCURRENT_AUDITS": "1", "REFAUDIT_CLIENT_REFERENCES_PER_MINUTE": "3"}
TWO_ENTRIES = """@article{a, title = {Deep learning for widget inspection}, year = {2019}}
@article{b, title = {Deep learning for widget inspection}, year = {2019},
  doi = {10.1234/widgets.2019}}
"""


def _fake_with_a_slow_work() -> Any:
    slow = crossref_work(SLOW_DOI, "A study that takes its time", year=2020)
    fake = upstreams(WIDGETS, slow)
    answer = fake.handler

    def handler(request: httpx.Request) -> httpx.Response:
        if SLOW_DOI in unquote(str(request.url)):
            time.sleep(3)
        return answer(request)

    fake.handler = handler  # type: ignore[method-assign]
    return fake


def _server(tmp_path_factory: pytest.TempPathFactory, token: str | None) -> Iterator[str]:
    tmp_path = tmp_path_factory.mktemp("fair-use")
    with served_over_http(_fake_with_a_slow_work()) as upstream:
        environment = server_environment(tmp_path, upstream) | LIMITS
        if token:
            environment["REFAUDIT_MCP_TOKEN"] = token
        with spawned_http_server(tmp_path, environment) as url:
            yield url


@pytest.fixture
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own for each test: the limits are per minute."""
    yield from _server(tmp_path_factory, None)


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _server(tmp_path_factory, TOKEN)


@asynccontextmanager
async def session(url: str, token: str | None = None) -> AsyncIterator[Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"} if token else None)
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        yield client


def text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def test_a_client_past_its_references_per_minute_is_told_when_to_call_again(
    open_server: str,
) -> None:
    with anyio.fail_after(STARTUP_TIMEOUT_S):
        async with session(open_server) as first, session(open_server) as second:
            too_big = await first.call_tool(
                "check_retractions", {"dois": [WIDGETS_DOI, SLOW_DOI, "10.1/a", "10.1/b"]}
            )
            bibliography = await first.call_tool("verify_bibliography", {"bibtex": TWO_ENTRIES})
            one_more = await first.call_tool("verify_reference", {"doi": WIDGETS_DOI})
            refused = await first.call_tool("verify_reference", {"doi": WIDGETS_DOI})
            snapshot = await first.call_tool("recent_retractions", {"limit": 1})
            same_machine = await second.call_tool("verify_reference", {"doi": WIDGETS_DOI})

    assert not bibliography.is_error and not one_more.is_error
    assert refused.is_error
    assert "has checked 3 references in the last minute" in text(refused)
    assert "3 per minute" in text(refused) and "call again in" in text(refused)
    seconds = int(text(refused).rsplit("call again in ", 1)[1].split(" ")[0])
    assert 1 <= seconds <= 60
    assert "fair use" not in text(snapshot)  # the snapshot tools ask no upstream
    assert same_machine.is_error and "has checked 3 references" in text(same_machine)
    assert too_big.is_error and "checks 4 references" in text(too_big)


async def test_a_client_may_run_only_so_many_calls_at_once(open_server: str) -> None:
    results: dict[str, Any] = {}
    with anyio.fail_after(STARTUP_TIMEOUT_S):
        async with session(open_server) as client:

            async def slow() -> None:
                results["slow"] = await client.call_tool("verify_reference", {"doi": SLOW_DOI})

            async with anyio.create_task_group() as group:
                group.start_soon(slow)
                await anyio.sleep(1)
                results["second"] = await client.call_tool("search_references", {"query": "x"})

    assert not results["slow"].is_error, text(results["slow"])
    assert results["second"].is_error
    assert "already has 1 calls running" in text(results["second"])


async def test_sessions_with_one_static_token_share_one_budget(token_server: str) -> None:
    with anyio.fail_after(STARTUP_TIMEOUT_S):
        async with session(token_server, TOKEN) as first:
            spent = await first.call_tool(
                "verify_references", {"references": [{"doi": WIDGETS_DOI}] * 3}
            )
        async with session(token_server, TOKEN) as second:
            refused = await second.call_tool("verify_reference", {"doi": WIDGETS_DOI})

    assert not spent.is_error, text(spent)
    assert refused.is_error and "has checked 3 references" in text(refused)


def test_limits_come_from_the_config_file_the_environment_and_the_flags(tmp_path: Path) -> None:
    config = tmp_path / "refaudit.toml"
    config.write_text(
        '[serve]\nclient_concurrent_audits = 2\noauth_issuer = "https://auth.example.org"\n'
        'oauth_scopes = ["refaudit", "read"]\n'
    )
    from_file = load_settings(config_path=config, env={}).serve
    from_env = load_settings(
        config_path=config, env={"REFAUDIT_CLIENT_REFERENCES_PER_MINUTE": "90"}
    ).serve
    (tmp_path / "bad.toml").write_text("[serve]\nclient_concurrent_audits = 0\n")

    assert (from_file.client_concurrent_audits, from_file.client_references_per_minute) == (2, 600)
    assert from_file.oauth_scopes == ["refaudit", "read"]
    assert from_env.client_references_per_minute == 90
    with pytest.raises(ConfigError, match="client_concurrent_audits` in .*bad.toml must be 1"):
        load_settings(config_path=tmp_path / "bad.toml", env={})
    refused = CliRunner().invoke(app, ["serve", "--client-references-per-minute", "0"])
    assert refused.exit_code == 2 and "--client-references-per-minute must be 1 or more" in (
        refused.output
    )


async def test_sigterm_lets_the_calls_in_flight_finish_and_exits_0(tmp_path: Path) -> None:
    with served_over_http(_fake_with_a_slow_work()) as upstream:
        process = subprocess.Popen(
            [sys.executable, "-m", "refaudit", "serve", "-t", "http", "--port", "0"],
            env={**_without_refaudit_settings(), **server_environment(tmp_path, upstream)},
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            url = _wait_for_url(process)
            with anyio.fail_after(STARTUP_TIMEOUT_S):
                async with session(url) as client:
                    await client.list_tools()
                    async with anyio.create_task_group() as group:
                        answers: list[Any] = []

                        async def slow() -> None:
                            answers.append(
                                await client.call_tool("verify_reference", {"doi": SLOW_DOI})
                            )

                        group.start_soon(slow)
                        await anyio.sleep(1)
                        process.send_signal(signal.SIGTERM)
            code = await anyio.to_thread.run_sync(lambda: process.wait(timeout=30))
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    assert not answers[0].is_error, text(answers[0])
    assert answers[0].structured_content["matched"]["year"] == 2020
    assert code == 0
