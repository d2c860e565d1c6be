"""A persistent response cache in SQLite, so a re-run of the same bibliography costs nothing.

Entries are keyed by request (method, URL without secrets, body) and expire by
TTL band. WAL mode plus a busy timeout lets several refaudit processes share
one cache file without corrupting it.

A cache file that cannot be used (corrupt, truncated, another program's
database, read-only) never stops a run: `open_cache` and every read and write
turn the failure into one `problem` naming the file and `refaudit cache clear`,
and the run goes on without the cache.

The same file keeps the request budgets of the key-gated sources (`quotas`, per
source and key fingerprint), so runs on one day share one budget; `clear` never
touches them.
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from refaudit.crashpoint import crash_point
from refaudit.errors import RefauditError

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
CREATE TABLE IF NOT EXISTS quotas (
    source TEXT NOT NULL,
    key_id TEXT NOT NULL,
    quota INTEGER NOT NULL,
    used INTEGER NOT NULL,
    remaining INTEGER,
    window_end REAL NOT NULL,
    spent_until REAL,
    updated REAL NOT NULL,
    PRIMARY KEY (source, key_id)
);
CREATE TABLE IF NOT EXISTS pools (
    source TEXT NOT NULL,
    pool TEXT NOT NULL,
    tokens REAL NOT NULL,
    saved REAL NOT NULL,
    PRIMARY KEY (source, pool)
);
"""
log = logging.getLogger(__name__)

BUSY_TIMEOUT_S = 30.0
COLUMNS = ("key", "source", "status", "headers", "body", "stored", "expires")
FILE_NAME = "responses.sqlite3"
CLEAR_HINT = "run `refaudit cache clear` to start a fresh cache"


class CacheUnusable(RefauditError):
    """The cache file cannot be opened or read as refaudit's cache."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: the response cache cannot be used ({reason})", hint=CLEAR_HINT)
        self.path = path
        self.reason = reason

    @property
    def going_on(self) -> str:
        """What a run says when it continues without the cache (the file is named apart)."""
        return (
            f"the response cache cannot be used ({self.reason}); this run goes on "
            f"without it — {CLEAR_HINT}"
        )


@dataclass
class CachedResponse:
    status: int
    text: str
    headers: dict[str, str]
    stored: float


@dataclass
class QuotaRow:
    """A key's budget in its current window; `remaining` is None when refaudit counts itself."""

    source: str
    key_id: str
    quota: int
    used: int
    remaining: int | None
    window_end: float
    spent_until: float | None


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
        """Open (or create) the cache; raises CacheUnusable when the file is not usable."""
        self.path = path
        self._clock = clock
        #: why the cache stopped being used mid-run (a failed read or write), if it did
        self.problem: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as error:
            raise CacheUnusable(path, str(error)) from None
        try:
            self._enable_wal()
            columns = tuple(row[1] for row in self._db.execute("PRAGMA table_info(responses)"))
            if columns and columns != COLUMNS:
                self._db.close()
                raise CacheUnusable(
                    path, "its table is not refaudit's (another version or program)"
                )
            self._db.executescript(SCHEMA)
        except sqlite3.Error as error:
            self._db.close()
            raise CacheUnusable(path, str(error)) from None

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
        return cls(directory / FILE_NAME)

    def get(self, key: str) -> CachedResponse | None:
        """The stored answer, or None (also once the cache has failed this run)."""
        if self.problem is not None:
            return None
        try:
            row = self._db.execute(
                "SELECT status, headers, body, stored, expires FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
            if row is None or row[4] < self._clock():
                return None
            text = zlib.decompress(row[2]).decode("utf-8")
            return CachedResponse(
                status=row[0], text=text, headers=json.loads(row[1]), stored=row[3]
            )
        except (sqlite3.Error, zlib.error, UnicodeDecodeError, ValueError, TypeError) as error:
            self._give_up(f"reading it failed: {error}")
            return None

    def put(
        self, key: str, *, source: str, status: int, text: str, headers: dict[str, str], ttl: float
    ) -> None:
        if self.problem is not None:
            return
        now = self._clock()
        try:
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
        except sqlite3.Error as error:
            self._give_up(f"writing to it failed: {error}")
        crash_point("cache-put")

    def _give_up(self, reason: str) -> None:
        """Stop using the cache for the rest of the run, keeping the one message that says why."""
        self.problem = CacheUnusable(self.path, reason).going_on
        log.warning("%s: %s", self.path, self.problem)

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
        clauses: list[str] = []
        args: list[object] = []
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

    def quota(self, source: str, key_id: str) -> QuotaRow | None:
        """A key's stored budget (None when unknown, or once the cache has failed this run)."""
        if self.problem is not None:
            return None
        try:
            row = self._db.execute(
                "SELECT quota, used, remaining, window_end, spent_until FROM quotas"
                " WHERE source = ? AND key_id = ?",
                (source, key_id),
            ).fetchone()
        except sqlite3.Error as error:
            self._give_up(f"reading it failed: {error}")
            return None
        return QuotaRow(source, key_id, *row) if row else None

    def save_quota(self, row: QuotaRow) -> None:
        if self.problem is not None:
            return
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO quotas VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.source,
                    row.key_id,
                    row.quota,
                    row.used,
                    row.remaining,
                    row.window_end,
                    row.spent_until,
                    self._clock(),
                ),
            )
        except sqlite3.Error as error:
            self._give_up(f"writing to it failed: {error}")
        crash_point("quota-save")

    def pool_tokens(self, source: str, pool: str) -> tuple[float, float] | None:
        """The tokens a rate-limit pool had when a run closed it, and the seconds since."""
        if self.problem is not None:
            return None
        try:
            row = self._db.execute(
                "SELECT tokens, saved FROM pools WHERE source = ? AND pool = ?", (source, pool)
            ).fetchone()
        except sqlite3.Error as error:
            self._give_up(f"reading it failed: {error}")
            return None
        if not row or not all(isinstance(v, float | int) and math.isfinite(v) for v in row):
            return None  # never saved, or not a number refaudit wrote
        return (row[0], self._clock() - row[1])

    def save_pool_tokens(self, source: str, pool: str, tokens: float) -> None:
        if self.problem is not None:
            return
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO pools VALUES (?, ?, ?, ?)",
                (source, pool, tokens, self._clock()),
            )
        except sqlite3.Error as error:
            self._give_up(f"writing to it failed: {error}")

    def close(self) -> None:
        self._db.close()


def open_cache(directory: Path) -> tuple[ResponseCache | None, str | None]:
    """The cache in `directory`, or None and the message saying why it cannot be used.

    The message leaves out the file's name (`directory / FILE_NAME`): callers show it.
    """
    try:
        return ResponseCache.in_dir(directory), None
    except CacheUnusable as error:
        log.warning("%s: %s", error.path, error.going_on)
        return None, error.going_on


def remove_cache_files(directory: Path) -> list[Path]:
    """Delete the cache database and its WAL/SHM companions (for an unusable cache)."""
    removed = []
    for suffix in ("", "-wal", "-shm", "-journal"):
        path = directory / (FILE_NAME + suffix)
        if path.exists():
            path.unlink()
            removed.append(path)
    return removed
