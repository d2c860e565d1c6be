"""A local copy of the Retraction Watch database, kept in SQLite.

Crossref Labs publishes the whole Retraction Watch database as one CSV
(https://api.labs.crossref.org/data/retractionwatch, also mirrored in the
`retraction-watch-data` Git repositories). `download_snapshot` streams it to a
temporary file, repairs undecodable bytes, checks the header, loads it into a
new SQLite file and only then swaps it in with `os.replace`, so a failed or
truncated download never destroys the previous snapshot. `Snapshot` answers the
questions screening and the CLI ask: by DOI, PMID, title, author, date.

The data are CC BY 4.0; every output that shows them carries `CREDIT`.
"""

from __future__ import annotations

import codecs
import csv
import os
import re
import shutil
import sqlite3
import tempfile
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING

from refaudit.config import DEFAULT_BASE_URLS, Settings
from refaudit.errors import SourceUnavailable, UnexpectedResponse
from refaudit.identifiers import normalize_doi
from refaudit.models import RETRACTION_WATCH, NoticeKind, RetractionRecord
from refaudit.names import display_name_to_person
from refaudit.notices import normalize_notice_kind
from refaudit.text import MARKUP_TAG

if TYPE_CHECKING:
    from _csv import _reader as _csv_reader

    import httpx

NAME = RETRACTION_WATCH
FILENAME = "retractionwatch.sqlite3"
CREDIT = "Retraction Watch (The Center for Scientific Integrity) data via Crossref, CC BY 4.0"

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

_SCHEMA = """
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
_INDEXES = """
CREATE INDEX notices_original_doi ON notices (original_doi);
CREATE INDEX notices_original_pmid ON notices (original_pmid);
CREATE INDEX notices_notice_doi ON notices (notice_doi);
CREATE INDEX notices_title_key ON notices (title_key);
CREATE INDEX notices_journal_key ON notices (journal_key);
CREATE INDEX notices_notice_date ON notices (notice_date);
CREATE INDEX authors_family_key ON authors (family_key);
"""
_RW_DATE = re.compile(r"^\s*(\d{1,2})/(\d{1,2})/(\d{4})")
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
        family, initial = _split_name(name)
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
        today: date | None = None,
    ) -> list[RetractionRecord]:
        """The newest notices: those of the last `days` days, or the `limit` latest."""
        clauses, args = _narrowing(journal, (None, None))
        if days is not None:
            start = (today or self._now().date()) - timedelta(days=days)
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
        return [_record_from_row(row) for row in self._db.execute(sql, args)]


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


def _record_from_row(row: sqlite3.Row) -> RetractionRecord:
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


# ---------------------------------------------------------------------------------------------
# Normalisation of CSV values


def title_key(text: str | None) -> str:
    """Lower-case, accent-folded, markup-free words: the key titles are compared on."""
    if not text:
        return ""
    plain = MARKUP_TAG.sub(" ", text)
    folded = unicodedata.normalize("NFKD", plain)
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return " ".join(_NON_WORD.sub(" ", folded.lower()).split())


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


def _split_name(name: str) -> tuple[str, str]:
    """(family key, first initial) of "Wakefield", "Wakefield, A.", "Wakefield AJ"."""
    person = display_name_to_person(name, medline_order=True)
    return title_key(person.family).replace(" ", ""), title_key(person.given)[:1]


# ---------------------------------------------------------------------------------------------
# Loading


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
# A download is refused when it holds fewer rows than this share of the installed
# snapshot: Retraction Watch only grows, a cut-off file shrinks.
MIN_ROW_SHARE = 0.9
# ... and fewer bytes than this share of the CSV the installed snapshot was loaded from: rows
# that keep their Record ID but lost their fields (a broken export) pass the row count. Looser
# than the row share, so a change of quoting or line endings upstream is not refused.
MIN_BYTE_SHARE = 0.75
_SHOWN = 20


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
        db.executescript(_SCHEMA)
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
        db.executescript(_INDEXES)
        meta = {
            "downloaded_at": (downloaded_at or datetime.now(UTC)).isoformat(),
            "source_url": source_url,
            "rows": str(report.rows),
            "csv_bytes": str(csv_path.stat().st_size),
            "repaired_rows": str(report.repaired_rows),
            "repaired_records": ",".join(report.repaired_records[:_SHOWN]),
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
    reader: _csv_reader,
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
        family, _ = _split_name(author)
        if family:
            author_rows.append((cursor.lastrowid, family, title_key(author)))
    db.executemany("INSERT INTO authors VALUES (?, ?, ?)", author_rows)
    return notice_date


# ---------------------------------------------------------------------------------------------
# Download


Progress = Callable[[int, int | None], None]
"""Called as progress(bytes_received, total_bytes_or_None) while downloading."""


@dataclass
class UpdateReport:
    source_url: str
    rows: int
    repaired_rows: int
    newest_notice_date: str | None
    bytes: int
    path: str
    #: record ids of (at most 20 of) the rows read as Windows-1252
    repaired_records: list[str] = field(default_factory=list)
    #: malformed rows left out, as "line N: why"
    skipped: list[str] = field(default_factory=list)


LABS_URL = DEFAULT_BASE_URLS[NAME]
REPOSITORY_URL = "https://gitlab.com/crossref/retraction-watch-data"
REPOSITORY_FILE = "retraction_watch.csv"
# `--url labs` / `--url gitlab`: the two places Crossref publishes the CSV.
SHORTHANDS = {"labs": LABS_URL, "gitlab": REPOSITORY_URL, "repository": REPOSITORY_URL}
_VIEW = r"(?:\.git)?(?:/(?:-/)?(?:blob|tree|raw)/(?P<rest>[^?#]*))?/*(?:[?#].*)?$"
_GITLAB = re.compile(r"^(?P<repo>https?://gitlab\.com/[^?#]+?)" + _VIEW)
_GITHUB = re.compile(r"^https?://github\.com/(?P<repo>[^/?#]+/[^/?#]+?)" + _VIEW)


def raw_csv_url(url: str) -> str:
    """The raw file behind a repository address: the project page, a blob or tree view.

    `https://gitlab.com/crossref/retraction-watch-data` serves an HTML page; the CSV
    itself is `…/-/raw/main/retraction_watch.csv`. GitHub mirrors map to
    raw.githubusercontent.com the same way. Other addresses are returned as given.
    """
    url = SHORTHANDS.get(url.strip().lower(), url.strip())
    if "/-/raw/" in url or "raw.githubusercontent.com" in url:
        return url
    for pattern, raw, default_ref in (
        (_GITLAB, "{repo}/-/raw/{ref}/{file}", "main"),
        (_GITHUB, "https://raw.githubusercontent.com/{repo}/{ref}/{file}", "HEAD"),
    ):
        match = pattern.match(url)
        if match is None or (match["rest"] is None and url.endswith(".csv")):
            continue
        ref, _, file = (match["rest"] or "").strip("/").partition("/")
        if not file.endswith(".csv"):
            file = f"{file}/{REPOSITORY_FILE}".lstrip("/")
        return raw.format(repo=match["repo"], ref=ref or default_ref, file=file)
    return url


def download_url(settings: Settings, url: str | None = None) -> tuple[str, dict[str, str]]:
    """The CSV address and its query parameters (Crossref Labs asks callers for a mailto)."""
    chosen = raw_csv_url(url or settings.base_urls.get(NAME) or "").rstrip("/")
    params = {}
    if settings.mailto and chosen.endswith("/data/retractionwatch"):
        params["mailto"] = settings.mailto
    return chosen, params


async def download_snapshot(
    settings: Settings,
    *,
    url: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    allow_fewer_rows: bool = False,
) -> UpdateReport:
    """Download, validate and install a new snapshot; the old one stays on any failure.

    Besides the CSV's own checks (header, columns, at least one row), a download is
    refused when it is shorter than its Content-Length, or, unless `allow_fewer_rows`,
    holds fewer than MIN_ROW_SHARE of the installed snapshot's rows or fewer than
    MIN_BYTE_SHARE of the bytes of the CSV it was loaded from.

    Raises SourceUnavailable (network, HTTP error) or UnexpectedResponse (not the CSV).
    """
    source_url, params = download_url(settings, url)
    target = snapshot_path(settings)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".rw-") as work:
        csv_path = Path(work) / "retractionwatch.csv"
        local = _local_file(source_url)
        if local is not None:
            shutil.copyfile(local, csv_path)
            received = csv_path.stat().st_size
        else:
            received = await _download(settings, source_url, params, csv_path, transport, progress)
        staged = Path(work) / FILENAME
        loaded = load_csv(csv_path, staged, source_url=source_url)
        if not allow_fewer_rows:
            _refuse_shrinking(target, loaded.rows, csv_path.stat().st_size, source_url)
        with staged.open("rb") as written:
            os.fsync(written.fileno())
        os.replace(staged, target)
    return UpdateReport(
        source_url=source_url,
        rows=loaded.rows,
        repaired_rows=loaded.repaired_rows,
        newest_notice_date=loaded.newest_notice_date,
        bytes=received,
        path=str(target),
        repaired_records=loaded.repaired_records[:_SHOWN],
        skipped=loaded.skipped,
    )


def _refuse_shrinking(installed: Path, rows: int, size: int, source_url: str) -> None:
    """Raise when the download is far smaller than the installed snapshot (it only grows)."""
    meta = _installed_meta(installed)
    had_rows, had_bytes = _count(meta.get("rows")), _count(meta.get("csv_bytes"))
    if had_rows and rows < had_rows * MIN_ROW_SHARE:
        raise UnexpectedResponse(
            NAME,
            f"the download holds {rows:,} notices, far fewer than the "
            f"{had_rows:,} of the installed snapshot; it looks cut short",
            url=source_url,
        )
    if had_bytes and size < had_bytes * MIN_BYTE_SHARE:
        raise UnexpectedResponse(
            NAME,
            f"the download is {size:,} bytes, far smaller than the {had_bytes:,} bytes "
            "the installed snapshot was loaded from; it looks damaged",
            url=source_url,
        )


def _installed_meta(path: Path) -> dict[str, str]:
    """The installed snapshot's meta table (empty without a readable one)."""
    if not path.is_file():
        return {}
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return {str(key): str(value) for key, value in db.execute("SELECT * FROM meta")}
        finally:
            db.close()
    except sqlite3.Error:
        return {}


def _count(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def _local_file(source: str) -> Path | None:
    """A CSV the user already has (`file://…` or a plain path) is installed without HTTP."""
    if source.startswith("file://"):
        return Path(source.removeprefix("file://"))
    if "://" not in source:
        path = Path(source).expanduser()
        if not path.is_file():
            raise UnexpectedResponse(NAME, f"{source}: no such file", url=source)
        return path
    return None


async def _download(
    settings: Settings,
    source_url: str,
    params: dict[str, str],
    csv_path: Path,
    transport: httpx.AsyncBaseTransport | None,
    progress: Progress | None,
) -> int:
    """Stream the CSV to `csv_path`; returns the bytes received."""
    import httpx

    from refaudit.sources.client import user_agent

    try:
        async with httpx.AsyncClient(
            transport=transport,
            timeout=httpx.Timeout(max(settings.timeout, 60.0), connect=10.0),
            headers={"User-Agent": user_agent(settings)},
            follow_redirects=True,
        ) as client:
            async with client.stream("GET", source_url, params=params) as response:
                if response.status_code != 200:
                    raise SourceUnavailable(
                        NAME, f"HTTP {response.status_code} for the CSV", url=source_url
                    )
                length = response.headers.get("content-length")
                total = int(length) if length and length.isdigit() else None
                written = 0
                with csv_path.open("wb") as out:
                    async for chunk in response.aiter_bytes():
                        out.write(chunk)
                        written += len(chunk)
                        if progress:
                            progress(response.num_bytes_downloaded, total)
                # Content-Length counts the bytes on the wire (compressed, when encoded).
                encoded = response.headers.get("content-encoding", "identity") != "identity"
                received = response.num_bytes_downloaded if encoded else written
                if total is not None and received != total:
                    raise UnexpectedResponse(
                        NAME,
                        f"the download was cut short: {received:,} of {total:,} bytes",
                        url=source_url,
                    )
                return received
    except httpx.HTTPError as exc:
        raise SourceUnavailable(
            NAME, f"download failed: {exc or type(exc).__name__}", url=source_url
        ) from exc
