"""A persistent response cache in SQLite, so a re-run of the same bibliography costs nothing.

Entries are keyed by request (method, URL without secrets, body) and expire by
TTL band. WAL mode plus a busy timeout lets several refaudit processes share
one cache file without corrupting it.
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    status INTEGER NOT NULL,
    headers TEXT NOT NULL,
    body BLOB NOT NULL,
    stored REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS responses_source ON responses(source);
"""
BUSY_TIMEOUT_S = 30.0


@dataclass
class CachedResponse:
    status: int
    text: str
    headers: dict[str, str]
    stored: float


@dataclass
class CacheInfo:
    path: str
    entries: int
    expired: int
    size_bytes: int
    per_source: dict[str, int]


class ResponseCache:
    """SQLite-backed store of upstream answers."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        self._enable_wal()
        self._db.executescript(SCHEMA)

    def _enable_wal(self) -> None:
        """Switch to WAL, waiting out a process that is creating the same file right now.

        SQLite does not call the busy handler while changing the journal mode, so two
        refaudit runs starting together on a fresh cache would otherwise fail at once.
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    @classmethod
    def in_dir(cls, directory: Path) -> ResponseCache:
        return cls(directory / "responses.sqlite3")

    def get(self, key: str) -> CachedResponse | None:
        row = self._db.execute(
            "SELECT status, headers, body, stored, expires FROM responses WHERE key = ?", (key,)
        ).fetchone()
        if row is None or row[4] < self._clock():
            return None
        text = zlib.decompress(row[2]).decode("utf-8")
        return CachedResponse(status=row[0], text=text, headers=json.loads(row[1]), stored=row[3])

    def put(
        self, key: str, *, source: str, status: int, text: str, headers: dict[str, str], ttl: float
    ) -> None:
        now = self._clock()
        self._db.execute(
            "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                source,
                status,
                json.dumps(headers),
                zlib.compress(text.encode("utf-8")),
                now,
                now + ttl,
            ),
        )

    def info(self) -> CacheInfo:
        now = self._clock()
        entries, expired = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(expires < ?), 0) FROM responses", (now,)
        ).fetchone()
        per_source = dict(
            self._db.execute("SELECT source, COUNT(*) FROM responses GROUP BY source").fetchall()
        )
        size = sum(
            p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file()
        )
        return CacheInfo(str(self.path), entries, expired, size, per_source)

    def clear(self, *, source: str | None = None, expired_only: bool = False) -> int:
        """Delete entries; returns how many were removed."""
        clauses, args = [], []
        if source:
            clauses.append("source = ?")
            args.append(source)
        if expired_only:
            clauses.append("expires < ?")
            args.append(self._clock())
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        removed = self._db.execute(f"DELETE FROM responses{where}", args).rowcount
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed

    def close(self) -> None:
        self._db.close()
