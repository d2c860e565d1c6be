"""Reading the public bulk files line by line, whatever their size.

- Crossref public data file: gzip'd JSON Lines, one `/works` message per line
  (`*.jsonl.gz`; plain `.jsonl` is read too).
- OpenAlex snapshot: `data/works/updated_date=YYYY-MM-DD/part_NNN.gz`, one Work per
  line. Partitions are read oldest first, so a work updated later wins.
- Semantic Scholar Datasets `papers` release: gzip'd JSON Lines, one paper per line
  (the Graph API's fields with lower-case keys, `semanticscholar.from_bulk`).

Both are streamed: memory stays flat however large the input. A line that is
not a record is reported with its file and line number and skipped.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from refaudit.errors import InputError
from refaudit.mirror.records import MalformedRecord, MirrorRecord

#: data files in a folder: gzip'd or plain JSON Lines (snapshot manifests have no suffix)
_SUFFIXES = (".gz", ".jsonl", ".json")


@dataclass(frozen=True)
class Problem:
    """A line (or a whole file) the loader skipped, and why."""

    file: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.reason}"


def bulk_files(paths: Iterable[Path]) -> list[Path]:
    """The data files named or found below `paths`, in load order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(
                p for p in path.rglob("*") if p.is_file() and p.name.endswith(_SUFFIXES)
            )
        elif path.is_file():
            found.append(path)
        else:
            raise InputError("no such file or folder", file=str(path))
    return found


def read_records(
    upstream: str,
    files: list[Path],
    *,
    on_problem: Callable[[Problem], None],
    on_progress: Callable[[int, int], None] | None = None,
) -> Iterator[MirrorRecord]:
    """Every record of `files`; `on_progress(bytes, lines)` reports how far the files were read."""
    done_before = lines = 0
    for path in files:
        with path.open("rb") as raw:
            stream: Iterable[bytes] = gzip.GzipFile(fileobj=raw) if _gzipped(raw) else raw
            line_number = 0
            try:
                for line_number, line in enumerate(stream, 1):
                    lines += 1
                    if on_progress and lines % 1000 == 0:
                        on_progress(done_before + raw.tell(), lines)
                    if not line.strip():
                        continue
                    record = _record(upstream, line, path, line_number, on_problem)
                    if record is not None:
                        yield record
            except (EOFError, OSError, zlib.error) as exc:
                on_problem(Problem(str(path), line_number + 1, f"file cut short: {exc}"))
            done_before += path.stat().st_size
        if on_progress:
            on_progress(done_before, lines)


def _gzipped(raw: IO[bytes]) -> bool:
    magic = raw.read(2)
    raw.seek(0)
    return magic == b"\x1f\x8b"


def _record(
    upstream: str,
    line: bytes,
    path: Path,
    line_number: int,
    on_problem: Callable[[Problem], None],
) -> MirrorRecord | None:
    try:
        return MirrorRecord.from_bulk(upstream, json.loads(line))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        on_problem(Problem(str(path), line_number, f"not JSON ({exc})"))
    except MalformedRecord as exc:
        on_problem(Problem(str(path), line_number, f"not a {upstream} record: {exc}"))
    return None
