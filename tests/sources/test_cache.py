"""ResponseCache: expiry, clearing, info, and two writers sharing one file."""

from __future__ import annotations

import threading
from pathlib import Path

from refaudit.cache import ResponseCache


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
