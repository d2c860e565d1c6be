"""The local Retraction Watch snapshot: a SQLite file and the look-ups over it.

`Snapshot` answers the questions screening and the CLI ask: by DOI, PMID, title,
author, date. `refaudit.retractions.csvload` writes the file and
`refaudit.retractions.download` fetches and installs it.

The data are CC BY 4.0; every output that shows them carries `CREDIT`.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from refaudit.config import Settings
from refaudit.identifiers import normalize_doi
from refaudit.models import RETRACTION_WATCH, NoticeKind, RetractionRecord
from refaudit.names import display_name_to_person
from refaudit.notices import normalize_notice_kind
from refaudit.text import MARKUP_TAG

NAME = RETRACTION_WATCH
FILENAME = "retractionwatch.sqlite3"
CREDIT = "Retraction Watch (The Center for Scientific Integrity) data via Crossref, CC BY 4.0"

SCHEMA = """
CREATE TABLE notices (
    record_id TEXT, title TEXT, subject TEXT, institution TEXT, journal TEXT, publisher TEXT,
    country TEXT, authors TEXT, urls TEXT, article_type TEXT, notice_date TEXT, notice_doi TEXT,
    notice_pmid TEXT, original_date TEXT, original_doi TEXT, original_pmid TEXT, nature TEXT,
    kind TEXT, reason TEXT, paywalled TEXT, notes TEXT, title_key TEXT, original_year INTEGER,
    journal_key TEXT
);
CREATE TABLE authors (notice INTEGER, family_key TEXT, name_key TEXT);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
"""
INDEXES = """
CREATE INDEX notices_original_doi ON notices (original_doi);
CREATE INDEX notices_original_pmid ON notices (original_pmid);
CREATE INDEX notices_notice_doi ON notices (notice_doi);
CREATE INDEX notices_title_key ON notices (title_key);
CREATE INDEX notices_journal_key ON notices (journal_key);
CREATE INDEX notices_notice_date ON notices (notice_date);
CREATE INDEX authors_family_key ON authors (family_key);
"""
_NON_WORD = re.compile(r"[\W_]+")


@dataclass
class SnapshotStatus:
    """What `refaudit retractions status` shows."""

    path: str
    downloaded_at: str
    source_url: str
    rows: int
    repaired_rows: int
    newest_notice_date: str | None
    age_days: float
    repaired_records: list[str] = field(default_factory=list)
    skipped_rows: int = 0


def snapshot_path(settings: Settings) -> Path:
    return settings.resolved_data_dir() / FILENAME


class Snapshot:
    """Read-only queries over a loaded snapshot. Open it with `Snapshot.open(settings)`."""

    def __init__(self, path: Path, *, now: Callable[[], datetime] | None = None) -> None:
        self.path = path
        self._now = now or (lambda: datetime.now(UTC))
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._meta = {row["key"]: row["value"] for row in self._db.execute("SELECT * FROM meta")}

    @classmethod
    def open(cls, settings: Settings) -> Snapshot | None:
        """The snapshot in the data directory, or None when none was downloaded yet."""
        path = snapshot_path(settings)
        if not path.is_file():
            return None
        try:
            return cls(path)
        except sqlite3.DatabaseError:
            return None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def age_days(self) -> float:
        """Days since the download, so offline results can say how stale they may be."""
        downloaded = datetime.fromisoformat(self._meta["downloaded_at"])
        return max(0.0, (self._now() - downloaded).total_seconds() / 86400)

    def status(self) -> SnapshotStatus:
        return SnapshotStatus(
            path=str(self.path),
            downloaded_at=self._meta["downloaded_at"],
            source_url=self._meta["source_url"],
            rows=int(self._meta["rows"]),
            repaired_rows=int(self._meta["repaired_rows"]),
            newest_notice_date=self._meta.get("newest_notice_date") or None,
            age_days=round(self.age_days, 2),
            repaired_records=[r for r in self._meta.get("repaired_records", "").split(",") if r],
            skipped_rows=int(self._meta.get("skipped_rows") or 0),
        )

    def lookup_doi(self, doi: str) -> list[RetractionRecord]:
        """Notices about the paper with this DOI (any spelling normalize_doi accepts)."""
        canonical = normalize_doi(doi)
        if not canonical:
            return []
        return self._select("original_doi = ?", (canonical,))

    def lookup_pmid(self, pmid: str) -> list[RetractionRecord]:
        value = str(pmid).strip()
        if not value.isdigit() or int(value) == 0:
            return []
        return self._select("original_pmid = ?", (str(int(value)),))

    def lookup_title(self, title: str, year: int | None = None) -> list[RetractionRecord]:
        """Exact match on the normalised title; the year, when given, must agree within one."""
        key = title_key(title)
        if len(key) < 12:
            return []
        if year is None:
            return self._select("title_key = ?", (key,))
        return self._select(
            "title_key = ? AND (original_year IS NULL OR ABS(original_year - ?) <= 1)",
            (key, year),
        )

    def by_author(
        self,
        name: str,
        limit: int = 50,
        *,
        journal: str | None = None,
        years: tuple[int | None, int | None] = (None, None),
    ) -> list[RetractionRecord]:
        """Notices on papers with an author of this name ("Wakefield", "Wakefield AJ", …)."""
        family, initial = split_name(name)
        if not family:
            return []
        rows = self._db.execute(
            "SELECT DISTINCT notice, name_key FROM authors WHERE family_key = ?", (family,)
        ).fetchall()
        wanted = [
            row["notice"] for row in rows if not initial or row["name_key"].startswith(initial)
        ]
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        clauses, args = _narrowing(journal, years)
        where = " AND ".join([f"rowid IN ({marks})", *clauses])
        return self._select(where, (*wanted, *args), limit=limit)

    def search(
        self,
        query: str | None = None,
        *,
        journal: str | None = None,
        since: str | None = None,
        nature: str | None = None,
        years: tuple[int | None, int | None] = (None, None),
        limit: int = 50,
    ) -> list[RetractionRecord]:
        """Every word of `query` in the title; journal words; notices on or after `since`
        and within the `years` (first, last) of notice."""
        clauses, args = _narrowing(journal, years)
        for word in title_key(query or "").split():
            clauses.append("(' ' || title_key || ' ') LIKE ?")
            args.append(f"% {word} %")
        if since:
            clauses.append("notice_date >= ?")
            args.append(since)
        if nature:
            clauses.append("kind = ?")
            args.append(normalize_notice_kind(nature).value)
        return self._select(" AND ".join(clauses) or "1", tuple(args), limit=limit)

    def recent(
        self,
        *,
        days: int | None = None,
        limit: int | None = None,
        journal: str | None = None,
    ) -> list[RetractionRecord]:
        """The newest notices: those of the last `days` days (by the snapshot's clock), or
        the `limit` latest."""
        clauses, args = _narrowing(journal, (None, None))
        if days is not None:
            start = self._now().date() - timedelta(days=days)
            where = " AND ".join(["notice_date >= ?", *clauses])
            return self._select(where, (start.isoformat(), *args), limit=limit)
        where = " AND ".join(["notice_date IS NOT NULL", *clauses])
        return self._select(where, tuple(args), limit=limit or 20)

    def record(self, notice_doi: str) -> list[RetractionRecord]:
        """The rows of one notice (a notice may concern several papers)."""
        canonical = normalize_doi(notice_doi)
        if not canonical:
            return []
        return self._select("notice_doi = ?", (canonical,))

    def _select(
        self, where: str, args: tuple[object, ...], *, limit: int | None = None
    ) -> list[RetractionRecord]:
        sql = f"SELECT * FROM notices WHERE {where} ORDER BY notice_date DESC, record_id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [record_from_row(row) for row in self._db.execute(sql, args)]


def _narrowing(
    journal: str | None, years: tuple[int | None, int | None]
) -> tuple[list[str], list[object]]:
    """SQL clauses for a journal (its words, in order) and a range of notice years."""
    clauses: list[str] = []
    args: list[object] = []
    if journal:
        clauses.append("journal_key LIKE ?")
        args.append(f"%{title_key(journal)}%")
    first, last = years
    if first is not None:
        clauses.append("notice_date >= ?")
        args.append(f"{first:04d}")
    if last is not None:
        clauses.append("notice_date < ?")
        args.append(f"{last + 1:04d}")
    return clauses, args


def record_from_row(row: sqlite3.Row | Mapping[str, Any]) -> RetractionRecord:
    """A notice from a row of the `notices` table (SQLite here, PostgreSQL in the mirror)."""
    return RetractionRecord(
        record_id=row["record_id"],
        kind=NoticeKind(row["kind"]),
        nature=row["nature"],
        title=row["title"],
        journal=row["journal"] or None,
        publisher=row["publisher"] or None,
        authors=[a for a in (row["authors"] or "").split(";") if a.strip()],
        notice_date=row["notice_date"],
        notice_doi=row["notice_doi"],
        notice_pmid=row["notice_pmid"],
        original_date=row["original_date"],
        original_doi=row["original_doi"],
        original_pmid=row["original_pmid"],
        reason=row["reason"] or None,
        subject=row["subject"] or None,
        institution=row["institution"] or None,
        country=row["country"] or None,
        urls=[u for u in (row["urls"] or "").split(";") if u.strip()] or None,
        article_type=row["article_type"] or None,
        paywalled=row["paywalled"] or None,
        notes=row["notes"] or None,
    )


def title_key(text: str | None) -> str:
    """Lower-case, accent-folded, markup-free words: the key titles are compared on."""
    if not text:
        return ""
    plain = MARKUP_TAG.sub(" ", text)
    folded = unicodedata.normalize("NFKD", plain)
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return " ".join(_NON_WORD.sub(" ", folded.lower()).split())


def split_name(name: str) -> tuple[str, str]:
    """(family key, first initial) of "Wakefield", "Wakefield, A.", "Wakefield AJ"."""
    person = display_name_to_person(name, medline_order=True)
    return title_key(person.family).replace(" ", ""), title_key(person.given)[:1]
