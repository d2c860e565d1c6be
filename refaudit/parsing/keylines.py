"""The line each citation key was first defined on, kept for the duplicate-key problem.

A streamed bibliography is never held whole, but every key read so far must be
remembered to tell a duplicate. Up to SPILL_KEYS keys live in a dict; past that
they move to a private temporary SQLite file (deleted when it is closed), so a
million-entry .bib costs a few megabytes of page cache, not a million keys.
"""

from __future__ import annotations

import sqlite3

#: Keys held in memory before the rest go to disk: a long paper has a few hundred.
SPILL_KEYS = 50_000


class KeyLines:
    """Each key's first line; `first_seen` records a key and says whether it came before."""

    def __init__(self) -> None:
        self._lines: dict[str, int] = {}
        self._db: sqlite3.Connection | None = None

    def first_seen(self, key: str, line: int) -> int | None:
        """The line `key` was first defined on, or None (and `line` is kept) if this is it."""
        if self._db is None:
            first = self._lines.get(key)
            if first is None:
                self._lines[key] = line
                if len(self._lines) > SPILL_KEYS:
                    self._spill()
            return first
        row = self._db.execute("SELECT line FROM keys WHERE key = ?", (key,)).fetchone()
        if row is None:
            self._db.execute("INSERT INTO keys VALUES (?, ?)", (key, line))
            return None
        return int(row[0])

    def close(self) -> None:
        """Drop the keys (and the temporary file, if any)."""
        self._lines.clear()
        if self._db is not None:
            self._db.close()
            self._db = None

    def _spill(self) -> None:
        # An empty file name is SQLite's private temporary database, on disk.
        self._db = sqlite3.connect("", check_same_thread=False)
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("CREATE TABLE keys (key TEXT PRIMARY KEY, line INTEGER) WITHOUT ROWID")
        self._db.executemany("INSERT INTO keys VALUES (?, ?)", self._lines.items())
        self._lines.clear()
