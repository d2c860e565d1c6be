"""ResponseCache: expiry, clearing, info, and two writers sharing one file."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pytest
from fakes import FakeUpstreams, make_client, openalex_work

from refaudit.cache import ResponseCache
from refaudit.config import Settings
from refaudit.sources.base import SearchQuery
from refaudit.sources.openalex import OpenAlexSource
from refaudit.sources.pubmed import PubMedSource


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def put(cache: ResponseCache, key: str, source: str = "crossref", ttl: float = 100.0) -> None:
    cache.put(key, source=source, status=200, text=f"body of {key} ✓", headers={}, ttl=ttl)


def test_entries_round_trip_and_expire(tmp_path: Path) -> None:
    clock = Clock()
    cache = ResponseCache(tmp_path / "c.sqlite3", clock=clock)
    put(cache, "GET a", ttl=10)

    hit = cache.get("GET a")
    assert hit is not None and hit.text == "body of GET a ✓" and hit.status == 200

    clock.now += 11
    assert cache.get("GET a") is None
    assert cache.info().expired == 1


def test_clear_by_source_and_expired_only(tmp_path: Path) -> None:
    clock = Clock()
    cache = ResponseCache(tmp_path / "c.sqlite3", clock=clock)
    put(cache, "old", ttl=1)
    put(cache, "fresh", ttl=1000)
    put(cache, "other", source="openalex", ttl=1000)
    clock.now += 5

    assert cache.clear(expired_only=True) == 1
    assert cache.info().per_source == {"crossref": 1, "openalex": 1}
    assert cache.clear(source="openalex") == 1
    assert cache.get("fresh") is not None and cache.info().entries == 1
    assert cache.clear() == 1 and cache.info().entries == 0


def test_two_connections_writing_at_once_share_one_file_intact(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    writers = [ResponseCache(path), ResponseCache(path)]

    def fill(cache: ResponseCache, prefix: str) -> None:
        for n in range(150):
            put(cache, f"{prefix}{n}")

    threads = [
        threading.Thread(target=fill, args=(cache, f"w{i}-")) for i, cache in enumerate(writers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    reader = ResponseCache(path)
    assert reader.info().entries == 300
    assert reader.get("w0-149") is not None and reader.get("w1-0") is not None
    assert reader._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.anyio
async def test_integrity_bearing_lookups_expire_after_a_day_searches_after_a_week(
    tmp_path: Path,
) -> None:
    """OpenAlex `is_retracted` and PubMed's retraction links must not be a week old."""
    clock = Clock()
    cache = ResponseCache(tmp_path / "c.sqlite3", clock=clock)
    fake = FakeUpstreams()
    fake.serve_openalex([openalex_work("W1", "Retracted paper", doi="10.1000/r")])
    fake.json("pubmed", r"/esummary.fcgi", {"result": {"uids": []}})
    settings = Settings()
    openalex = OpenAlexSource(make_client(fake, "openalex", cache=cache), settings)
    pubmed = PubMedSource(make_client(fake, "pubmed", cache=cache), settings)

    async def ask() -> None:
        await openalex.lookup_dois(["10.1000/r"])
        await openalex.search(SearchQuery(title="Retracted paper"))
        await pubmed.lookup_pmids(["9500320"])

    await ask()
    await ask()
    assert [fake.count("openalex"), fake.count("pubmed")] == [2, 1]

    clock.now += 2 * 86400
    await ask()

    lookups = [r.url.params.get("filter") for r in fake.requests_to("openalex")]
    assert lookups.count("doi:10.1000/r") == 2 and fake.count("openalex") == 3
    assert fake.count("pubmed") == 2


def _fill_from_another_process(path: str, prefix: str) -> None:
    cache = ResponseCache(Path(path))
    for n in range(50):
        put(cache, f"{prefix}{n}", ttl=3600)
        assert cache.get(f"{prefix}{n}") is not None
    cache.close()


def test_processes_starting_together_on_a_fresh_cache_share_it_intact(tmp_path: Path) -> None:
    """Several runs at once on a cache file none has created yet (repeated: it is a race)."""
    context = multiprocessing.get_context("fork")
    for round_ in range(6):
        path = tmp_path / f"shared{round_}.sqlite3"
        writers = [
            context.Process(target=_fill_from_another_process, args=(str(path), f"p{i}-"))
            for i in range(3)
        ]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(timeout=60)

        assert [writer.exitcode for writer in writers] == [0, 0, 0]
        reader = ResponseCache(path)
        assert reader.info().entries == 150
        assert reader.get("p2-49").text == "body of p2-49 ✓"  # type: ignore[union-attr]
        assert reader._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
