"""A damaged or read-only cache file costs the cache, never the run: one message, then no cache."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refaudit.cache import FILE_NAME, ResponseCache, open_cache
from refaudit.cli import app
from tests.fakes import FakeUpstreams, make_client

runner = CliRunner()


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not a database\x00" * 200)


def _truncated(path: Path) -> None:
    cache = ResponseCache(path)
    for n in range(200):
        cache.put(f"k{n}", source="crossref", status=200, text="x" * 500, headers={}, ttl=60)
    cache.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _wrong_schema(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, payload BLOB)")
    db.commit()
    db.close()


DAMAGE = {"garbage": _garbage, "truncated": _truncated, "wrong-schema": _wrong_schema}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_cache_costs_the_cache_not_the_run(tmp_path: Path, damage: str) -> None:
    directory = tmp_path / "cache"  # REFAUDIT_CACHE_DIR in the test environment
    directory.mkdir()
    DAMAGE[damage](directory / FILE_NAME)
    (tmp_path / "refs.bib").write_text("@article{a, title = {Deep Learning}, year = 2015}\n")
    result = runner.invoke(
        app, ["check", "refs.bib", "--offline", "--format", "json", "--allow-unverified"]
    )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    report = json.loads(result.stdout)
    (problem,) = [p for p in report["problems"] if p["code"] == "cache-unusable"]
    assert problem["file"] == str(directory / FILE_NAME)
    assert "refaudit cache clear" in problem["message"]
    assert "this run goes on without it" in problem["message"]


@pytest.mark.anyio
async def test_a_read_only_cache_is_used_for_reading_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / FILE_NAME
    cache = ResponseCache(path)
    cache.put(
        "GET https://api.crossref.org/works? ",
        source="crossref",
        status=200,
        text="{}",
        headers={},
        ttl=600,
    )
    cache.close()
    uri = sqlite3.connect(f"file:{path}?mode=ro", uri=True)  # a read-only handle, as on a RO mount
    monkeypatch.setattr("refaudit.cache.sqlite3.connect", lambda *args, **kwargs: uri)
    cache = ResponseCache(path)
    fake = FakeUpstreams()
    fake.json("crossref", r"/works/.*", {"status": "ok"})
    client = make_client(fake, "crossref", cache=cache)
    fetched = await client.get("/works/10.1/x")
    assert fetched.status == 200
    assert cache.problem is not None and "readonly" in cache.problem.replace("-", "")
    assert (await client.get("/works/10.1/y")).status == 200
    await client.aclose()


def test_cache_clear_removes_a_damaged_file(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    directory.mkdir()
    _garbage(directory / FILE_NAME)
    result = runner.invoke(app, ["cache", "clear"])
    assert result.exit_code == 0, result.output
    assert "removed the unusable cache" in result.output
    cache, problem = open_cache(directory)
    assert cache is not None and problem is None
    cache.close()


def test_cache_info_on_a_damaged_file_names_it_and_the_fix(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    directory.mkdir()
    _garbage(directory / FILE_NAME)
    result = runner.invoke(app, ["cache", "info"])
    assert result.exit_code == 2
    assert FILE_NAME in result.output and "refaudit cache clear" in result.output


@pytest.mark.anyio
async def test_mcp_tools_answer_with_a_damaged_cache_and_say_why(tmp_path: Path) -> None:
    from tests.test_server import BIBTEX, WIDGETS, connected, settings_for, structured, upstreams

    directory = tmp_path / "cache"
    directory.mkdir()
    _garbage(directory / FILE_NAME)
    async with connected(settings_for(), upstreams(WIDGETS)) as client:
        audit = structured(await client.call_tool("verify_bibliography", {"bibtex": BIBTEX}))
        found = structured(await client.call_tool("search_references", {"query": "widgets"}))

    (problem,) = [p for p in audit["problems"] if p["code"] == "cache-unusable"]
    assert problem["file"] == str(directory / FILE_NAME)
    assert "refaudit cache clear" in problem["message"]
    assert found


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tokens", "saved_in"), [(-1e18, 0.0), (float("-inf"), 0.0), ("lots", 0.0), (-3.0, 1e9)]
)
async def test_a_tampered_pool_row_costs_at_most_the_longest_wait_a_server_may_ask(
    tmp_path: Path, tokens: float | str, saved_in: float
) -> None:
    """Rate-limit tokens a last run left (or a clock gone back a lifetime) never stall the
    next run beyond what one 429's Retry-After could (MAX_RETRY_AFTER_S)."""
    import asyncio

    from refaudit.sources.pacing import MAX_RETRY_AFTER_S, RateLimit
    from tests.fakes import YieldingClock

    path = tmp_path / FILE_NAME
    ResponseCache(path).close()
    db = sqlite3.connect(path)
    db.execute(
        "INSERT INTO pools VALUES ('crossref', 'default', ?, strftime('%s','now') + ?)",
        (tokens, saved_in),
    )
    db.commit()
    db.close()
    fake = FakeUpstreams()
    fake.json("crossref", r"/works/.*", {"status": "ok"})
    clock = YieldingClock()
    client = make_client(
        fake,
        "crossref",
        cache=ResponseCache(path),
        clock=clock,
        limits={"default": RateLimit(3, 3)},
    )
    started = clock.now
    fetched = await asyncio.wait_for(client.get("/works/10.1/x"), timeout=10)
    assert fetched.status == 200
    assert clock.now - started <= MAX_RETRY_AFTER_S
    await client.aclose()
