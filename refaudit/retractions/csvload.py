"""Reading the Retraction Watch CSV into a fresh snapshot file.

The CSV is checked as it is read: the header must be the real one, rows without
its columns are skipped and counted (too many means a damaged file), and bytes
that are not UTF-8 are read as Windows-1252 and the rows noted.
"""

from __future__ import annotations

import codecs
import csv
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

from refaudit.errors import UnexpectedResponse
from refaudit.identifiers import normalize_doi
from refaudit.models import NoticeKind
from refaudit.notices import normalize_notice_kind
from refaudit.retractions.store import INDEXES, NAME, SCHEMA, split_name, title_key

if TYPE_CHECKING:
    from _csv import Reader as _CsvReader

# The real header, in order; the real file also ends every line with a comma (an unnamed column).
COLUMNS: tuple[str, ...] = (
    "Record ID",
    "Title",
    "Subject",
    "Institution",
    "Journal",
    "Publisher",
    "Country",
    "Author",
    "URLS",
    "ArticleType",
    "RetractionDate",
    "RetractionDOI",
    "RetractionPubMedID",
    "OriginalPaperDate",
    "OriginalPaperDOI",
    "OriginalPaperPubMedID",
    "RetractionNature",
    "Reason",
    "Paywalled",
    "Notes",
)

_RW_DATE = re.compile(r"^\s*(\d{1,2})/(\d{1,2})/(\d{4})")


def rw_date(value: str | None) -> str | None:
    """Retraction Watch's `3/6/2004 0:00` as ISO `2004-03-06` (None when blank or unreadable)."""
    match = _RW_DATE.match(value or "")
    if not match:
        return None
    month, day, year = (int(part) for part in match.groups())
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


def rw_pmid(value: str | None) -> str | None:
    """PubMed ids; Retraction Watch writes 0 for "none"."""
    text = (value or "").strip()
    return str(int(text)) if text.isdigit() and int(text) else None


def rw_doi(value: str | None) -> str | None:
    """DOIs; Retraction Watch writes `unavailable` (or leaves blank) when there is none."""
    return normalize_doi(value)


def rw_kind(nature: str | None, reason: str | None) -> NoticeKind:
    """RetractionNature, refined by the reasons Retraction Watch uses for removals and withdrawals.

    The database has four natures (Retraction, Correction, Expression of concern,
    Reinstatement); removed and withdrawn papers are retractions whose reasons say
    "Removed" or "Withdrawn …".
    """
    kind = normalize_notice_kind(nature)
    if kind is NoticeKind.RETRACTION and reason:
        reasons = {part.strip().lstrip("+").lower() for part in reason.split(";")}
        if "removed" in reasons:
            return NoticeKind.REMOVAL
        if any(part.startswith("withdrawn") for part in reasons):
            return NoticeKind.WITHDRAWAL
    return kind


@dataclass
class LoadReport:
    rows: int
    repaired_rows: int
    newest_notice_date: str | None
    #: record ids of the rows whose bytes were not UTF-8 (read as Windows-1252)
    repaired_records: list[str] = field(default_factory=list)
    #: rows left out because they do not have the CSV's columns, as "line N: why"
    skipped: list[str] = field(default_factory=list)


# More malformed rows than this (and more than 1 %) means a damaged file, not a few bad rows.
_MAX_SKIPPED = 10
# Record ids of repaired rows kept in the snapshot's metadata and shown in reports.
SHOWN_RECORDS = 20


def _repairing_lines(binary: IO[bytes], repaired: set[int]) -> Iterator[str]:
    """Decode line by line; bytes that are not UTF-8 are read as Windows-1252 and noted."""
    for number, raw in enumerate(binary, start=1):
        if number == 1:
            raw = raw.removeprefix(codecs.BOM_UTF8)
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            repaired.add(number)
            yield raw.decode("utf-8", errors="refaudit-cp1252")


def _cp1252_fallback(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    bad = error.object[error.start : error.end]
    return bad.decode("cp1252", errors="replace"), error.end


codecs.register_error("refaudit-cp1252", _cp1252_fallback)


def load_csv(
    csv_path: Path,
    db_path: Path,
    *,
    source_url: str,
    downloaded_at: datetime | None = None,
) -> LoadReport:
    """Validate a Retraction Watch CSV and write it as a fresh SQLite database at `db_path`.

    Raises UnexpectedResponse when the file is not the Retraction Watch CSV.
    """
    repaired_lines: set[int] = set()
    report = LoadReport(0, 0, None)
    db_path.unlink(missing_ok=True)
    db = sqlite3.connect(db_path)
    try:
        # A staging file, swapped in only when complete: no journal or fsync needed while loading.
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.executescript(SCHEMA)
        with csv_path.open("rb") as binary:
            reader = csv.reader(_repairing_lines(binary, repaired_lines))
            try:
                _check_header(next(reader, None), source_url)
                _load_rows(db, reader, repaired_lines, report)
            except csv.Error as exc:
                raise UnexpectedResponse(
                    NAME, f"malformed CSV at line {reader.line_num}: {exc}", url=source_url
                ) from exc
        if len(report.skipped) > max(_MAX_SKIPPED, report.rows // 100):
            raise UnexpectedResponse(
                NAME,
                f"{len(report.skipped)} rows do not have the CSV's columns"
                f" (first: {report.skipped[0]}); the file looks damaged",
                url=source_url,
            )
        if report.rows == 0:
            raise UnexpectedResponse(NAME, "the CSV has a header but no rows", url=source_url)
        db.executescript(INDEXES)
        meta = {
            "downloaded_at": (downloaded_at or datetime.now(UTC)).isoformat(),
            "source_url": source_url,
            "rows": str(report.rows),
            "csv_bytes": str(csv_path.stat().st_size),
            "repaired_rows": str(report.repaired_rows),
            "repaired_records": ",".join(report.repaired_records[:SHOWN_RECORDS]),
            "skipped_rows": str(len(report.skipped)),
            "newest_notice_date": report.newest_notice_date or "",
        }
        db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        db.commit()
    finally:
        db.close()
    return report


def _load_rows(
    db: sqlite3.Connection,
    reader: _CsvReader,
    repaired_lines: set[int],
    report: LoadReport,
) -> None:
    """Insert every well-formed row; note repaired and skipped ones in `report`."""
    first_line = reader.line_num + 1
    for values in reader:
        lines = range(first_line, reader.line_num + 1)
        first_line = reader.line_num + 1
        if not any(v.strip() for v in values):
            continue
        problem = _row_problem(values)
        if problem:
            report.skipped.append(f"line {lines[0]}: {problem}")
            continue
        row = dict(zip(COLUMNS, (v.strip() for v in values), strict=False))
        if any(n in repaired_lines for n in lines):
            report.repaired_rows += 1
            report.repaired_records.append(row["Record ID"])
        notice_date = _insert(db, row)
        report.rows += 1
        if notice_date and (report.newest_notice_date or "") < notice_date:
            report.newest_notice_date = notice_date


def _row_problem(values: list[str]) -> str | None:
    """Why a row cannot be a Retraction Watch row (a cut-off download, a stray quote)."""
    extra = [v for v in values[len(COLUMNS) :] if v.strip()]
    if len(values) < len(COLUMNS) or extra:
        return f"{len(values)} columns instead of {len(COLUMNS)}"
    if not values[0].strip().isdigit():
        return f"Record ID {values[0].strip()[:20]!r} is not a number"
    return None


def _check_header(header: list[str] | None, url: str) -> None:
    names = [name.strip() for name in header or []]
    while names and not names[-1]:
        names.pop()
    if names and names[0].startswith("version https://git-lfs"):
        raise UnexpectedResponse(
            NAME, "a Git LFS pointer, not the CSV: use the repository's raw file URL", url=url
        )
    if tuple(names) != COLUMNS:
        missing = [c for c in COLUMNS if c not in names]
        detail = f"missing columns: {', '.join(missing)}" if missing else "columns out of order"
        shown = ",".join(names[:4])[:80] or "empty file"
        raise UnexpectedResponse(
            NAME, f"not the Retraction Watch CSV ({detail}; header starts {shown!r})", url=url
        )


def _insert(db: sqlite3.Connection, row: dict[str, str]) -> str | None:
    nature = row.get("RetractionNature", "")
    reason = row.get("Reason") or None
    original_date = rw_date(row.get("OriginalPaperDate"))
    notice_date = rw_date(row.get("RetractionDate"))
    title = row.get("Title", "")
    authors = row.get("Author", "")
    cursor = db.execute(
        "INSERT INTO notices VALUES (" + ",".join("?" * 24) + ")",
        (
            row.get("Record ID", ""),
            title,
            row.get("Subject"),
            row.get("Institution"),
            row.get("Journal"),
            row.get("Publisher"),
            row.get("Country"),
            authors,
            row.get("URLS"),
            row.get("ArticleType"),
            notice_date,
            rw_doi(row.get("RetractionDOI")),
            rw_pmid(row.get("RetractionPubMedID")),
            original_date,
            rw_doi(row.get("OriginalPaperDOI")),
            rw_pmid(row.get("OriginalPaperPubMedID")),
            nature,
            rw_kind(nature, reason).value,
            reason,
            row.get("Paywalled"),
            row.get("Notes"),
            title_key(title),
            int(original_date[:4]) if original_date else None,
            title_key(row.get("Journal")),
        ),
    )
    author_rows = []
    for author in authors.split(";"):
        family, _ = split_name(author)
        if family:
            author_rows.append((cursor.lastrowid, family, title_key(author)))
    db.executemany("INSERT INTO authors VALUES (?, ?, ?)", author_rows)
    return notice_date
