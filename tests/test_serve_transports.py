"""`refaudit serve` as a real subprocess: stdio and streamable HTTP, with and without a token.

The fake upstreams of `tests.fakes` cannot cross a process boundary by themselves, so a
small HTTP server in the test process answers for them under scholarsim's path prefixes
and the server is pointed at it with `REFAUDIT_<SOURCE>_URL`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from typer.testing import CliRunner

from refaudit.cli import app
from refaudit.config import DEFAULT_BASE_URLS, load_settings
from tests.fakes import FakeUpstreams
from tests.test_server import (
    EVERY_TOOL,
    RETRACTED,
    RETRACTED_DOI,
    RETRACTION_NOTICE_DOI,
    WIDGETS,
    WIDGETS_DOI,
    install_snapshot,
    upstreams,
)

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


def server_environment(tmp_path: Path, upstream: str | None = None) -> dict[str, str]:
    """Only what the server needs: its own cache and data folders, and no user settings.

    With `upstream`, Crossref and OpenAlex are the fakes behind that URL (Crossref's paid
    pool, so no request waits on the public rate limit).
    """
    environment = {
        "REFAUDIT_CACHE_DIR": str(tmp_path / "cache"),
        "REFAUDIT_DATA_DIR": str(tmp_path / "data"),
        "NO_COLOR": "1",
    }
    if upstream is not None:
        environment |= {
            **{f"REFAUDIT_{name.upper()}_URL": f"{upstream}/{name}" for name in DEFAULT_BASE_URLS},
            "REFAUDIT_SOURCES": "crossref,openalex",
            "CROSSREF_PLUS_API_TOKEN": "plus-token-for-tests",
        }
    return environment


async def install_snapshot_for(environment: dict[str, str]) -> None:
    """The Retraction Watch snapshot of `tests.test_server`, where that server reads it."""
    settings = load_settings()
    settings.data_dir = Path(environment["REFAUDIT_DATA_DIR"])
    await install_snapshot(settings)


@contextmanager
def served_over_http(fake: FakeUpstreams) -> Iterator[str]:
    """Answer for `fake` over real HTTP, each source under `/<name>`."""
    prefixes = [(name, f"/{name}") for name in DEFAULT_BASE_URLS]

    class Bridge(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._forward()

        def do_POST(self) -> None:
            self._forward()

        def log_message(self, *_args: Any) -> None:
            """Quiet: a test's output is its assertions."""

        def _forward(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            name, rest = next(
                (name, self.path[len(prefix) :])
                for name, prefix in prefixes
                if self.path.startswith(prefix)
            )
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            request = httpx.Request(
                self.command, DEFAULT_BASE_URLS[name] + rest, headers=headers, content=body
            )
            try:
                response = fake.handler(request)
                response.read()
            except AssertionError as exc:
                response = httpx.Response(500, text=str(exc))
            self.send_response(response.status_code)
            for header, value in response.headers.items():
                if header.lower() not in ("content-length", "content-encoding", "connection"):
                    self.send_header(header, value)
            self.send_header("content-length", str(len(response.content)))
            self.end_headers()
            self.wfile.write(response.content)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Bridge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    """Crossref knows the Wakefield paper (retracted) and the widgets paper; OpenAlex nothing."""
    with served_over_http(upstreams(WIDGETS, RETRACTED)) as url:
        yield url


EVERY_CALL: dict[str, dict[str, Any]] = {
    "verify_reference": {"title": "Deep learning for widget inspection", "year": 2017},
    "verify_bibliography": {"path": "refs.bib"},
    "search_references": {"query": "widget inspection", "limit": 3},
    "get_bibtex": {"identifiers": [WIDGETS_DOI]},
    "paper_details": {"identifier": RETRACTED_DOI},
    "check_retractions": {"dois": [RETRACTED_DOI, WIDGETS_DOI]},
    "retractions_by_author": {"name": "Wakefield AJ"},
    "recent_retractions": {"limit": 1},
    "search_retractions": {"journal": "The Lancet"},
    "get_notice": {"notice_doi": RETRACTION_NOTICE_DOI},
    "assess_novelty": {"idea": "deep learning for widget inspection on assembly lines"},
    "verify_references": {"references": [{"doi": WIDGETS_DOI}, {"doi": RETRACTED_DOI}]},
    "correct_bibliography": {"bibtex": BIBTEX.replace("year = {2019}", "year = {2017}")},
}


def papers_root(tmp_path: Path) -> Path:
    """The --root folder, holding refs.bib with the widgets paper cited correctly."""
    root = tmp_path / "papers"
    root.mkdir()
    entry = BIBTEX.replace("Lovelace, Ada", "Lovelace, Ada and Turing, Alan")
    (root / "refs.bib").write_text(entry, encoding="utf-8")
    return root


async def call_every_tool(client: Client) -> dict[str, dict[str, Any]]:
    """List everything, call each tool once and return its structured result by name."""
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    resources = {str(resource.uri) for resource in (await client.list_resources()).resources}
    prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
    assert set(listed) == set(EVERY_CALL) == EVERY_TOOL
    assert all(tool.output_schema for tool in listed.values())
    assert resources == {"refaudit://sources", "refaudit://policy", "refaudit://guide"}
    assert prompts == {"verify-before-citing"}
    results = {}
    for name, arguments in EVERY_CALL.items():
        result = await client.call_tool(name, arguments)
        assert not result.is_error, (name, result.content)
        assert result.structured_content is not None
        results[name] = result.structured_content
    return results


def assert_database_answers(results: dict[str, dict[str, Any]]) -> None:
    """What the fake Crossref and the installed snapshot say, tool by tool."""
    verified = results["verify_reference"]
    assert verified["verdict"] == "mismatch"
    year = next(d for d in verified["findings"] if d["field"] == "year")
    assert (year["cited"], year["found"], year["source"]) == ("2017", "2019", "crossref")
    audit = results["verify_bibliography"]
    assert [entry["verdict"] for entry in audit["results"]] == ["verified"]
    assert audit["files"][0].endswith("refs.bib")
    assert results["search_references"]["works"][0]["doi"] == WIDGETS_DOI
    assert results["get_bibtex"]["entries"][0]["source"] == "crossref"
    assert "@article{lovelace2019deep," in results["get_bibtex"]["bibtex"]
    details = results["paper_details"]
    assert (details["status"], details["work"]["year"]) == ("ok", 1998)
    assert [notice["kind"] for notice in details["notices"]] == ["retraction"]
    screening = results["check_retractions"]["results"]
    assert [(r["status"], r["withdrawn"]) for r in screening] == [
        ("retraction", True),
        ("clean", False),
    ]
    assert [r["original_doi"] for r in results["retractions_by_author"]["records"]] == [
        RETRACTED_DOI
    ]
    assert [r["record_id"] for r in results["recent_retractions"]["records"]] == ["50001"]
    assert [r["record_id"] for r in results["search_retractions"]["records"]] == ["4036"]
    assert results["get_notice"]["found"] is True
    batch = results["verify_references"]["results"]
    assert [(r["key"], r["retracted"]) for r in batch] == [("ref1", False), ("ref2", True)]
    assert "+  year = {2019}," in results["correct_bibliography"]["diff"]
    novelty = results["assess_novelty"]
    assert novelty["similar_papers"][0]["doi"] == WIDGETS_DOI
    assert "assembly lines" in novelty["gaps"]


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
    entry = result.structured_content["results"][0]
    assert entry["verdict"] == "unverified"
    assert result.structured_content["offline"] is True


async def test_stdio_server_answers_every_tool_from_the_upstreams(
    tmp_path: Path, upstream: str
) -> None:
    environment = server_environment(tmp_path, upstream)
    await install_snapshot_for(environment)
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "refaudit", "serve", "--root", str(papers_root(tmp_path))],
        env=environment,
        cwd=str(tmp_path),
    )
    concurrent: dict[str, Any] = {}
    with anyio.fail_after(STARTUP_TIMEOUT_S):
        async with Client(parameters) as client:
            results = await call_every_tool(client)

            async def verify(doi: str) -> None:
                result = await client.call_tool("verify_reference", {"doi": doi})
                concurrent[doi] = result.structured_content

            async with anyio.create_task_group() as group:
                for doi in (RETRACTED_DOI, WIDGETS_DOI, RETRACTED_DOI):
                    group.start_soon(verify, doi)

    assert_database_answers(results)
    assert {doi: answer["matched"]["year"] for doi, answer in concurrent.items()} == {
        RETRACTED_DOI: 1998,
        WIDGETS_DOI: 2019,
    }
    assert concurrent[RETRACTED_DOI]["retracted"] is True


@contextmanager
def spawned_http_server(tmp_path: Path, environment: dict[str, str]) -> Iterator[str]:
    """`refaudit serve --transport http --port 0 --root …`; yields its URL, checks its stdout."""
    process = subprocess.Popen(
        [sys.executable, "-m", "refaudit", "serve", "--transport", "http", "--port", "0"]
        + ["--root", str(papers_root(tmp_path))],
        env={**_without_refaudit_settings(), **environment},
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


def _http_server(
    tmp_path_factory: pytest.TempPathFactory, upstream: str, token: str | None
) -> Iterator[str]:
    tmp_path = tmp_path_factory.mktemp("http-server")
    environment = server_environment(tmp_path, upstream)
    if token:
        environment["REFAUDIT_MCP_TOKEN"] = token
    anyio.run(install_snapshot_for, environment)
    with spawned_http_server(tmp_path, environment) as url:
        yield url


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory, upstream: str) -> Iterator[str]:
    """One loopback HTTP server whose token comes from REFAUDIT_MCP_TOKEN."""
    yield from _http_server(tmp_path_factory, upstream, TOKEN)


@pytest.fixture(scope="module")
def open_http_server(tmp_path_factory: pytest.TempPathFactory, upstream: str) -> Iterator[str]:
    """One loopback HTTP server without a token (allowed on loopback only)."""
    yield from _http_server(tmp_path_factory, upstream, None)


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


@pytest.mark.parametrize("token", [TOKEN, None], ids=["with-token", "without-token"])
async def test_http_server_answers_every_tool_from_the_upstreams(
    http_server: str, open_http_server: str, token: str | None
) -> None:
    url = http_server if token else open_http_server
    headers = {"Authorization": f"Bearer {token}"} if token else None
    http_client = create_mcp_http_client(headers=headers)
    with anyio.fail_after(STARTUP_TIMEOUT_S):
        transport = streamable_http_client(url, http_client=http_client)
        async with http_client, Client(transport) as client:
            results = await call_every_tool(client)
            escape = await client.call_tool("verify_bibliography", {"path": "../refs.bib"})

    assert_database_answers(results)
    assert escape.is_error
    assert "outside the allowed root" in escape.content[0].text  # type: ignore[union-attr]


async def test_http_server_rejects_a_foreign_origin(open_http_server: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(
            open_http_server,
            json=INITIALIZE,
            headers={**MCP_HEADERS, "origin": "http://evil.example"},
        )
        local = await http.post(open_http_server, json=INITIALIZE, headers=MCP_HEADERS)

    assert response.status_code == 403
    assert local.status_code == 200


def test_serve_refuses_to_bind_beyond_loopback_without_a_token() -> None:
    result = CliRunner().invoke(app, ["serve", "--transport", "http", "--host", "0.0.0.0"])

    assert result.exit_code == 2
    assert "without a bearer token" in result.output


def test_only_serve_imports_the_mcp_sdk(tmp_path: Path) -> None:
    """A broken or missing `mcp` must not take the other commands down with it."""
    probe = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from refaudit.cli import app\n"
        "for args in (['--help'], ['check', '--help'], ['search', '--help'],\n"
        "             ['bibtex', 'doi:'], ['retractions', '--help']):\n"
        "    CliRunner().invoke(app, args)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'uvicorn'}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env={**_without_refaudit_settings(), **server_environment(tmp_path)},
        capture_output=True,
        text=True,
        timeout=STARTUP_TIMEOUT_S,
        check=True,
    )

    assert result.stdout.strip() == "[]"


async def test_http_sessions_share_one_circuit_breaker(tmp_path: Path) -> None:
    """Two clients of one server: the second never reaches a source the first found dead."""
    fake = upstreams(WIDGETS)
    fake.fail("crossref", "503", times=1_000)
    (tmp_path / "refaudit.toml").write_text("max_retries = 0\n")
    with served_over_http(fake) as upstream:
        environment = server_environment(tmp_path, upstream) | {"REFAUDIT_SOURCES": "crossref"}
        with spawned_http_server(tmp_path, environment) as url:
            with anyio.fail_after(STARTUP_TIMEOUT_S):
                async with Client(streamable_http_client(url)) as first:
                    for _ in range(6):
                        await first.call_tool("verify_reference", {"doi": WIDGETS_DOI})
                asked = len(fake.requests_to("crossref"))
                async with Client(streamable_http_client(url)) as second:
                    result = await second.call_tool("verify_reference", {"doi": WIDGETS_DOI})

    verdict = result.structured_content
    assert verdict is not None and verdict["verdict"] == "unverified"
    assert "circuit open" in verdict["reason"]
    assert len(fake.requests_to("crossref")) == asked
