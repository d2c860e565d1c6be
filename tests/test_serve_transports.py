"""`refaudit serve` as a real subprocess: stdio and streamable HTTP, with and without a token.

Fake upstreams cannot cross a process boundary, so these tests use only what needs
no network: listing, the policy resource, and `verify_bibliography` with --offline
(every entry comes back `unverified`, never `not_found`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from typer.testing import CliRunner

from refaudit.cli import app

pytestmark = pytest.mark.anyio

TOKEN = "s3cret-token-for-tests"
STARTUP_TIMEOUT_S = 30  # generous: a loaded CI machine needs ~10 s to import mcp
BIBTEX = """@article{lovelace2019,
  title = {Deep learning for widget inspection},
  author = {Lovelace, Ada},
  year = {2019},
  doi = {10.1234/widgets.2019},
}"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def server_environment(tmp_path: Path) -> dict[str, str]:
    """Only what the server needs: its own cache and data folders, and no user settings."""
    return {
        "REFAUDIT_CACHE_DIR": str(tmp_path / "cache"),
        "REFAUDIT_DATA_DIR": str(tmp_path / "data"),
        "NO_COLOR": "1",
    }


async def test_stdio_server_lists_tools_serves_policy_and_audits_offline(tmp_path: Path) -> None:
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "refaudit", "serve", "--offline"],
        env=server_environment(tmp_path),
        cwd=str(tmp_path),
    )
    with anyio.fail_after(STARTUP_TIMEOUT_S):
        async with Client(parameters) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            policy = await client.read_resource("refaudit://policy")
            result = await client.call_tool("verify_bibliography", {"bibtex": BIBTEX})

    assert {"verify_reference", "verify_bibliography", "check_retractions"} <= tools
    assert "verdicts" in json.loads(policy.contents[0].text)  # type: ignore[union-attr]
    assert result.structured_content is not None
    entry = result.structured_content["entries"][0]
    assert entry["verdict"] == "unverified"
    assert result.structured_content["summary"]["offline"] is True


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One `refaudit serve --transport http --port 0` (token from the env) for this module."""
    tmp_path = tmp_path_factory.mktemp("http-server")
    process = subprocess.Popen(
        [sys.executable, "-m", "refaudit", "serve", "--transport", "http", "--port", "0"],
        env={
            **_without_refaudit_settings(),
            **server_environment(tmp_path),
            "REFAUDIT_MCP_TOKEN": TOKEN,
        },
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield _wait_for_url(process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        assert process.stdout is not None
        assert process.stdout.read() == "", "the HTTP server must not write to stdout"


def _without_refaudit_settings() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if not name.startswith("REFAUDIT_")}


def _wait_for_url(process: subprocess.Popen[str]) -> str:
    """Read stderr until the server announces its URL (bounded; the rest is drained)."""
    found: list[str] = []
    ready = threading.Event()
    seen: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            seen.append(line)
            match = re.search(r"listening on (http://\S+)", line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(STARTUP_TIMEOUT_S) or not found:
        raise AssertionError(f"server did not start: {''.join(seen)}")
    return found[0]


async def test_http_server_answers_401_without_the_bearer_token(http_server: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        missing = await http.post(http_server, json=INITIALIZE, headers=MCP_HEADERS)
        wrong = await http.post(
            http_server,
            json=INITIALIZE,
            headers={**MCP_HEADERS, "authorization": "Bearer not-the-token"},
        )

    assert missing.status_code == 401
    assert wrong.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")


async def test_http_server_rejects_a_foreign_host_header(http_server: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(
            http_server,
            json=INITIALIZE,
            headers={**MCP_HEADERS, "authorization": f"Bearer {TOKEN}", "host": "evil.example"},
        )

    assert response.status_code == 421


async def test_http_server_serves_tools_with_the_bearer_token(http_server: str) -> None:
    http_client = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    with anyio.fail_after(STARTUP_TIMEOUT_S):
        transport = streamable_http_client(http_server, http_client=http_client)
        async with http_client, Client(transport) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            result = await client.call_tool("verify_bibliography", {"path": "refs.bib"})

    assert "search_references" in tools
    assert result.is_error
    assert "--root" in result.content[0].text  # type: ignore[union-attr]


def test_serve_refuses_to_bind_beyond_loopback_without_a_token() -> None:
    result = CliRunner().invoke(app, ["serve", "--transport", "http", "--host", "0.0.0.0"])

    assert result.exit_code == 2
    assert "without a bearer token" in result.output
