"""The embedded backend: one SQLite file, FTS5 for titles and abstracts.

Each upstream has a table (`crossref`, `openalex`) with the trimmed record and
indexed DOI / arXiv id / PMID, and an external-content FTS5 table over its
normalised title, authors and abstract. The Retraction Watch rows live in the
tables `refaudit.retractions.csvload` writes (`notices`, `authors`, `meta`),
so the same file also opens as a snapshot. A build writes a new file next to
the current one and renames it over it when complete; readers open read-only.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from refaudit.crashpoint import crash_point, left_behind, pid_tag
from refaudit.errors import MirrorError
from refaudit.mirror import store
from refaudit.mirror.records import COLUMNS, UPSTREAMS, MirrorRecord

if TYPE_CHECKING:
    from refaudit.models import RetractionRecord
    from refaudit.retractions.csvload import LoadReport
    from refaudit.retractions.store import SnapshotStatus

_COLUMNS = ", ".join(COLUMNS)
_MARKS = ",".join("?" * len(COLUMNS))
_TABLE = """
CREATE TABLE IF NOT EXISTS {u} (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL, doi TEXT, arxiv_id TEXT, pmid TEXT,
    year INTEGER, title TEXT, authors TEXT, abstract TEXT, body BLOB, updated TEXT
);
"""
_INDEXES = """
CREATE UNIQUE INDEX IF NOT EXISTS {u}_key ON {u} (key);
CREATE INDEX IF NOT EXISTS {u}_doi ON {u} (doi) WHERE doi IS NOT NULL;
CREATE INDEX IF NOT EXISTS {u}_arxiv ON {u} (arxiv_id) WHERE arxiv_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS {u}_pmid ON {u} (pmid) WHERE pmid IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS {u}_fts USING fts5(
    title, authors, abstract, content='{u}', content_rowid='id', prefix='4',
    tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO {u}_fts({u}_fts, rank) VALUES ('rank', 'bm25(10.0, 2.0, 1.0)');
"""
# Keep the FTS index in step with in-place changes (`mirror update`); a build fills it at once.
_TRIGGERS = """
CREATE TRIGGER IF NOT EXISTS {u}_ai AFTER INSERT ON {u} BEGIN
  INSERT INTO {u}_fts(rowid, title, authors, abstract)
  VALUES (new.id, new.title, new.authors, new.abstract);
END;
CREATE TRIGGER IF NOT EXISTS {u}_ad AFTER DELETE ON {u} BEGIN
  INSERT INTO {u}_fts({u}_fts, rowid, title, authors, abstract)
  VALUES ('delete', old.id, old.title, old.authors, old.abstract);
END;
"""
_META = "CREATE TABLE IF NOT EXISTS mirror_meta (key TEXT PRIMARY KEY, value TEXT);"
_BATCH = 5000
#: Words an "any" search ORs together: the rarest of the title's, which decide the ranking.
ANY_WORDS = 6


class SqliteStore(store.MirrorStore):
    """A built SQLite mirror, opened read-only unless `writable`."""

    def __init__(self, path: Path, *, writable: bool = False) -> None:
        self.path = path
        self.location = str(path)
        if not path.is_file():
            raise MirrorError(
                f"no mirror at {path}", hint="build one with `refaudit mirror build --crossref …`"
            )
        mode = "rw" if writable else "ro"
        self._vocabularies: set[str] = set()
        try:
            self._db = sqlite3.connect(
                f"file:{path}?mode={mode}", uri=True, check_same_thread=False
            )
            self._meta = dict(self._db.execute("SELECT key, value FROM mirror_meta"))
            tables = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        except sqlite3.DatabaseError as exc:
            raise MirrorError(f"{path} is not a refaudit mirror ({exc})") from exc
        self._held = {name for (name,) in tables} & set(UPSTREAMS)

    def info(self) -> store.MirrorInfo:
        return store.MirrorInfo.from_meta(
            self.location, "sqlite", self._meta, self.path.stat().st_size
        )

    def _lookup(self, upstream: str, field: str, values: Sequence[str]) -> list[bytes]:
        found: list[bytes] = []
        for start in range(0, len(values), 500):
            chunk = list(values[start : start + 500])
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT body FROM {upstream} WHERE {field} IN ({marks})"
            found += [row[0] for row in self._db.execute(sql, chunk)]
        return found

    def _candidates(self, upstream: str, search: store.CandidateSearch) -> list[store.Candidate]:
        if search.mode == "similar":
            # Word prefixes survive a slip late in a word ("Atention", "recognitoin").
            terms = [f'"{w[:4]}"*' for w in search.words if len(w) >= 5]
        elif search.mode == "any":
            terms = [f'"{w}"' for w in self._rarest(upstream, search.words)]
        else:
            terms = [f'"{w}"' for w in search.words]
        if not terms:
            return []
        if search.mode == "all":
            expression = "title : (" + " AND ".join(terms) + ")"
        elif search.mode == "similar":
            expression = "title : (" + " OR ".join(terms) + ")"
        else:
            expression = "{title abstract} : (" + " OR ".join(terms) + ")"
        if search.authors and search.mode == "any":
            expression += " OR authors : (" + " OR ".join(f'"{a}"' for a in search.authors) + ")"
        bounds, years = search.year_bounds("t.year", "?")
        where = " AND ".join([f"{upstream}_fts MATCH ?", *bounds])
        sql = (
            f"SELECT t.title, t.body FROM {upstream}_fts JOIN {upstream} t ON t.id = "
            f"{upstream}_fts.rowid WHERE {where} ORDER BY rank LIMIT ?"
        )
        return [
            store.Candidate(title or "", body)
            for title, body in self._db.execute(sql, (expression, *years, search.limit))
        ]

    def _rarest(self, upstream: str, words: Sequence[str]) -> list[str]:
        """The ANY_WORDS of `words` that the fewest titles and abstracts hold (words none
        holds left out): BM25 ranks by them, while a word in thousands of records only
        adds records to score (a query of twelve words took ten times as long)."""
        if len(words) <= ANY_WORDS:
            return list(words)
        vocabulary = self._vocabulary(upstream)
        marks = ",".join("?" * len(words))
        held = dict(
            self._db.execute(
                f"SELECT term, sum(doc) FROM {vocabulary} WHERE col IN ('title', 'abstract')"
                f" AND term IN ({marks}) GROUP BY term",
                list(words),
            ).fetchall()
        )
        return sorted(held, key=held.__getitem__)[:ANY_WORDS]

    def _unknown_title_words(self, upstream: str, words: Sequence[str]) -> list[str]:
        vocabulary = self._vocabulary(upstream)
        marks = ",".join("?" * len(words))
        known = {
            row[0]
            for row in self._db.execute(
                f"SELECT term FROM {vocabulary} WHERE col = 'title' AND term IN ({marks})",
                list(words),
            )
        }
        return [word for word in words if word not in known]

    def _vocabulary(self, upstream: str) -> str:
        """The FTS index's own vocabulary, per column: a temporary table (no write to
        the file), created on this connection's first use."""
        vocabulary = f"temp.{upstream}_vocabulary"
        if upstream not in self._vocabularies:
            self._db.execute(
                f"CREATE VIRTUAL TABLE {vocabulary} USING fts5vocab(main, '{upstream}_fts', 'col')"
            )
            self._vocabularies.add(upstream)
        return vocabulary

    def _retraction_rows(self) -> store.RetractionRows:
        return _SnapshotRows(self.path)

    def upsert(self, records: Iterable[MirrorRecord]) -> int:
        written = 0
        with self._db:
            for record in records:
                upstream = record.upstream
                self._db.execute(f"DELETE FROM {upstream} WHERE key = ?", (record.key,))
                self._db.execute(
                    f"INSERT INTO {upstream} ({_COLUMNS}) VALUES ({_MARKS})", record.row()
                )
                written += 1
            self._refresh_counts()
        return written

    def replace_retractions(self, snapshot: Path) -> int:
        self._db.execute("ATTACH DATABASE ? AS staged", (f"file:{snapshot}?mode=ro",))
        try:
            with self._db:
                _copy_retraction_tables(self._db)
                _record_retraction_meta(self._db)
        finally:
            self._db.execute("DETACH DATABASE staged")
        self._meta = dict(self._db.execute("SELECT key, value FROM mirror_meta"))
        return int(self._meta.get("records_retraction_watch") or 0)

    def _write_meta(self, values: dict[str, str]) -> None:
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO mirror_meta VALUES (?, ?)", values.items())

    def close(self) -> None:
        self._db.close()

    def _refresh_counts(self) -> None:
        for upstream in sorted(self._held):
            count, newest = self._db.execute(
                f"SELECT COUNT(*), MAX(updated) FROM {upstream}"
            ).fetchone()
            self._db.executemany(
                "INSERT OR REPLACE INTO mirror_meta VALUES (?, ?)",
                [(f"records_{upstream}", str(count)), (f"newest_{upstream}", newest or "")],
            )
        self._meta = dict(self._db.execute("SELECT key, value FROM mirror_meta"))


class SqliteBuilder(store.MirrorBuilder):
    """Loads into `<mirror>.building-pid<N>`, renamed over the mirror by `publish`.

    A staging file whose process is gone is what a killed build left: it is removed,
    and `interrupted` says so (the mirror it was to replace was never touched).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.interrupted = []
        kept = "the previous mirror is intact" if path.exists() else "there was no mirror before"
        for leftover in left_behind(path.parent, f"{path.name}.building-"):
            leftover.unlink(missing_ok=True)
            self.interrupted.append(
                f"an earlier mirror build was interrupted (its unfinished copy {leftover.name}"
                f" was removed); {kept}"
            )
        self.staging = path.with_name(f"{path.name}.building-{pid_tag()}")
        self.staging.unlink(missing_ok=True)
        self._db: sqlite3.Connection | None = None
        self._retractions: LoadReport | None = None

    def add_retractions(self, csv_path: Path, *, source_url: str) -> LoadReport:
        from refaudit.retractions.csvload import load_csv

        if self._db is not None:
            raise MirrorError("retractions must be loaded before the first record")
        self._retractions = load_csv(csv_path, self.staging, source_url=source_url)
        return self._retractions

    def add(self, records: Iterable[MirrorRecord]) -> int:
        db = self._connection()
        written = 0
        batches: dict[str, list[tuple]] = {u: [] for u in UPSTREAMS}
        for record in records:
            upstream = record.upstream
            batch = batches[upstream]
            batch.append(record.row())
            written += 1
            if len(batch) >= _BATCH:
                _insert(db, upstream, batch)
        for upstream, batch in batches.items():
            _insert(db, upstream, batch)
        db.commit()
        crash_point("mirror-build-loaded")
        return written

    def finish(self, meta: dict[str, str], on_step: Any = None) -> dict[str, int]:
        db = self._connection()
        counts: dict[str, int] = {}
        for upstream in UPSTREAMS:
            if on_step:
                on_step(f"indexing {upstream}")
            # A record met twice (an OpenAlex work in two partitions): the last one read wins.
            latest = f"SELECT MAX(id) FROM {upstream} GROUP BY key"
            db.execute(f"DELETE FROM {upstream} WHERE id NOT IN ({latest})")
            db.executescript(_INDEXES.format(u=upstream))
            db.execute(f"INSERT INTO {upstream}_fts({upstream}_fts) VALUES ('rebuild')")
            db.executescript(_TRIGGERS.format(u=upstream))
        if self._retractions is not None:
            _record_retraction_meta(db)
        db.executemany("INSERT OR REPLACE INTO mirror_meta VALUES (?, ?)", meta.items())
        for upstream in UPSTREAMS:
            count, newest = db.execute(f"SELECT COUNT(*), MAX(updated) FROM {upstream}").fetchone()
            counts[upstream] = count
            db.executemany(
                "INSERT OR REPLACE INTO mirror_meta VALUES (?, ?)",
                [(f"records_{upstream}", str(count)), (f"newest_{upstream}", newest or "")],
            )
        db.commit()
        if on_step:
            on_step("compacting")
        db.execute("VACUUM")
        db.close()
        self._db = None
        return counts

    def publish(self) -> None:
        crash_point("mirror-build-publish")
        os.replace(self.staging, self.path)

    def discard(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        for leftover in (self.staging, self.staging.with_name(self.staging.name + "-journal")):
            leftover.unlink(missing_ok=True)

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = sqlite3.connect(self.staging)
            # A staging file, renamed into place only when complete: no journal needed.
            self._db.execute("PRAGMA journal_mode = OFF")
            self._db.execute("PRAGMA synchronous = OFF")
            self._db.execute("PRAGMA cache_size = -65536")
            for upstream in UPSTREAMS:
                self._db.execute(_TABLE.format(u=upstream))
            self._db.execute(_META)
        return self._db


def _insert(db: sqlite3.Connection, upstream: str, batch: list[tuple]) -> None:
    if batch:
        db.executemany(f"INSERT INTO {upstream} ({_COLUMNS}) VALUES ({_MARKS})", batch)
        batch.clear()


def _copy_retraction_tables(db: sqlite3.Connection) -> None:
    """Replace the Retraction Watch tables by those of the attached `staged` snapshot."""
    schema = db.execute(
        "SELECT type, name, sql FROM staged.sqlite_master WHERE sql IS NOT NULL ORDER BY type DESC"
    ).fetchall()
    tables = [name for kind, name, _ in schema if kind == "table"]
    for name in tables:
        db.execute(f"DROP TABLE IF EXISTS main.{name}")
    for kind, name, sql in schema:
        db.execute(sql)
        if kind == "table":
            db.execute(f"INSERT INTO main.{name} SELECT * FROM staged.{name}")


def _record_retraction_meta(db: sqlite3.Connection) -> None:
    """Count the Retraction Watch rows, as the snapshot's own `meta` recorded them."""
    meta = dict(db.execute("SELECT key, value FROM main.meta"))
    db.executemany(
        "INSERT OR REPLACE INTO mirror_meta VALUES (?, ?)",
        [
            ("records_retraction_watch", meta.get("rows") or "0"),
            ("newest_retraction_watch", meta.get("newest_notice_date") or ""),
        ],
    )


class _SnapshotRows(store.RetractionRows):
    """The mirror file's Retraction Watch tables, read through the snapshot's own queries."""

    def __init__(self, path: Path) -> None:
        from refaudit.retractions.store import Snapshot

        self._snapshot = Snapshot(path)

    def lookup_doi(self, doi: str) -> list[RetractionRecord]:
        return self._snapshot.lookup_doi(doi)

    def lookup_pmid(self, pmid: str) -> list[RetractionRecord]:
        return self._snapshot.lookup_pmid(pmid)

    def lookup_title(self, title: str, year: int | None = None) -> list[RetractionRecord]:
        return self._snapshot.lookup_title(title, year)

    def status(self) -> SnapshotStatus:
        return self._snapshot.status()

    @property
    def age_days(self) -> float:
        return self._snapshot.age_days

    def close(self) -> None:
        self._snapshot.close()
