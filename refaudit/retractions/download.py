"""Fetching a Retraction Watch CSV and installing it as the snapshot.

Crossref Labs publishes the whole Retraction Watch database as one CSV
(https://api.labs.crossref.org/data/retractionwatch, also mirrored in the
`retraction-watch-data` Git repositories). `download_snapshot` streams it to a
temporary file, loads it with `load_csv` into a new SQLite file and only then
swaps it in with `os.replace`, so a failed or truncated download never destroys
the previous snapshot.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from refaudit.config import DEFAULT_BASE_URLS, Settings
from refaudit.crashpoint import crash_point, left_behind, pid_tag
from refaudit.errors import SourceUnavailable, UnexpectedResponse
from refaudit.retractions.csvload import SHOWN_RECORDS, load_csv
from refaudit.retractions.store import FILENAME, NAME, snapshot_path

if TYPE_CHECKING:
    import httpx

# A download is refused when it holds fewer rows than this share of the installed
# snapshot: Retraction Watch only grows, a cut-off file shrinks.
MIN_ROW_SHARE = 0.9
# ... and fewer bytes than this share of the CSV the installed snapshot was loaded from: rows
# that keep their Record ID but lost their fields (a broken export) pass the row count. Looser
# than the row share, so a change of quoting or line endings upstream is not refused.
MIN_BYTE_SHARE = 0.75

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
    #: an earlier update that was killed before it finished, in one sentence
    interrupted: list[str] = field(default_factory=list)


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
    interrupted = _remove_interrupted_downloads(target)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".rw-{pid_tag()}-") as work:
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
        crash_point("retractions-staged")
        os.replace(staged, target)
    return UpdateReport(
        source_url=source_url,
        rows=loaded.rows,
        repaired_rows=loaded.repaired_rows,
        newest_notice_date=loaded.newest_notice_date,
        bytes=received,
        path=str(target),
        repaired_records=loaded.repaired_records[:SHOWN_RECORDS],
        skipped=loaded.skipped,
        interrupted=interrupted,
    )


def _remove_interrupted_downloads(target: Path) -> list[str]:
    """Remove the work folders of killed earlier updates; one sentence if there were any."""
    leftovers = left_behind(target.parent, ".rw-")
    for leftover in leftovers:
        shutil.rmtree(leftover, ignore_errors=True)
    if not leftovers:
        return []
    kept = "the previous snapshot is intact" if target.exists() else "no snapshot was installed"
    return [f"an earlier snapshot update was interrupted (its download was removed); {kept}"]


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
