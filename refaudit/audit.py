"""The one pipeline: parse → batched lookups → search → verify → screen → AuditReport.

The CLI and the MCP server both call these functions; neither decides anything
about references itself. Here the inputs are read and the audit is run in this
process (`pipeline`) or, for a long mirror-only one, in worker processes
(`mirror.parallel`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from refaudit.config import Settings
from refaudit.models import (
    AuditReport,
    Bibliography,
    InputProblem,
    Reference,
    Result,
)
from refaudit.pipeline import BatchDone, Progress, Stores, audit_with

if TYPE_CHECKING:
    import httpx

    from refaudit.parsing.bbl import BblStream
    from refaudit.parsing.bibtex import BibtexStream
    from refaudit.parsing.files import ReadStream
    from refaudit.parsing.tex import LatexStream
    from refaudit.policy import Tally


async def audit_references(
    references: Iterable[Reference],
    settings: Settings,
    *,
    total: int | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    on_batch: BatchDone | None = None,
    tally: Tally | None = None,
) -> AuditReport:
    """Verify and screen `references`; one Result per reference, in input order.

    References go through the pipeline `pipeline.BATCH_REFERENCES` at a time, sharing one
    set of source clients, the cache and the retraction snapshot. They may come
    from an iterator (a streamed .bib), which is read one batch ahead of the audit
    only; `total` then says how many to expect, for `progress`. With `tally`, every
    result is counted into it before `on_batch` sees it, and the report carries it
    (`AuditReport.tally`): its counts no longer depend on what `on_batch` keeps.
    """
    from refaudit.mirror.parallel import audit_in_processes, plan

    started = time.monotonic()
    if tally is not None:
        on_batch = _counted(tally, on_batch)
    workers, references, total = plan(references, settings, total)
    if workers > 1:
        report = await audit_in_processes(
            references, settings, workers, progress, on_batch, total=total
        )
    else:
        stores = Stores.open(settings)
        try:
            report = await audit_with(
                references, settings, stores, total=total, transport=transport,
                progress=progress, on_batch=on_batch,
            )  # fmt: skip
        finally:
            stores.close()
    report.tally = tally
    report.stats.elapsed_s = round(time.monotonic() - started, 3)
    if report.stats.floor_s >= 1:
        report.stats.floor_ratio = round(report.stats.elapsed_s / report.stats.floor_s, 2)
    return report


def _counted(tally: Tally, on_batch: BatchDone | None) -> BatchDone:
    """`on_batch` after counting the batch into `tally` (keeping every result without it)."""

    def done(results: list[Result]) -> Sequence[Result]:
        for result in results:
            tally.add(result)
        return on_batch(results) if on_batch else results

    return done


async def audit_bibliography(
    bibliography: Bibliography,
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    on_batch: BatchDone | None = None,
    tally: Tally | None = None,
) -> AuditReport:
    """Audit parsed references and carry the parser's problems into the report."""
    report = await audit_references(
        bibliography.references,
        settings,
        transport=transport,
        progress=progress,
        on_batch=on_batch,
        tally=tally,
    )
    report.problems = list(bibliography.problems) + report.problems
    report.files = list(bibliography.files)
    return report


async def audit_paths(
    paths: Sequence[Path],
    settings: Settings,
    *,
    all_entries: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Progress | None = None,
    on_batch: BatchDone | None = None,
    tally: Tally | None = None,
) -> AuditReport:
    """Parse every file (.bib/.tex/.bbl/.docx) and every library or paper named instead of
    a file (`zotero:`, `arXiv:…`), and audit all their references together.

    A .bib or .bbl file is streamed: its references are parsed a batch ahead of the
    audit, so a long file is never held whole (`refaudit.parsing.bibtex.BibtexStream`,
    `refaudit.parsing.bbl.BblStream`).
    """
    if not settings.offline:
        from refaudit.sources.connection import read_ca_bundle_early

        read_ca_bundle_early()
    inputs = InputStream(await _fetched(paths, settings, transport), all_entries=all_entries)
    report = await audit_references(
        inputs.references(),
        settings,
        total=inputs.total,
        transport=transport,
        progress=progress,
        on_batch=on_batch,
        tally=tally,
    )
    report.problems = inputs.problems() + report.problems
    report.files = list(inputs.files)
    return report


async def _fetched(
    paths: Sequence[Path], settings: Settings, transport: httpx.AsyncBaseTransport | None
) -> list[Path | ReadStream]:
    """The inputs, with each library or paper read into its references."""
    from refaudit.parsing.files import ReadStream
    from refaudit.remote import is_remote, read_remote

    return [
        ReadStream(await read_remote(str(path), settings, transport=transport))
        if is_remote(str(path))
        else Path(path)
        for path in paths
    ]


def read_bibliography(paths: Sequence[Path], *, all_entries: bool = False) -> Bibliography:
    """Every reference of every file, each entry once (blocking: files are read here)."""
    inputs = InputStream(paths, all_entries=all_entries)
    references = list(inputs.references())
    return Bibliography(references=references, problems=inputs.problems(), files=inputs.files)


@dataclass
class _Input:
    """One input path and its prepared stream (None: the same file was given before)."""

    path: Path
    stream: BibtexStream | BblStream | LatexStream | ReadStream | None = None
    problems: list[InputProblem] = field(default_factory=list)


class InputStream:
    """The inputs of one run, each entry once, every file read a reference at a time.

    Every file is checked and prepared when this is made (so an unusable file is
    refused before anything is audited); `references` then reads the files a
    reference at a time. `check paper.tex refs.bib` reaches refs.bib twice: an entry
    the .tex already gave is not given again, and a .bib or .bbl given twice is read once.

    Raises:
        InputError: a file cannot be used (as `refaudit.parsing.parse_file` says).
    """

    def __init__(self, paths: Sequence[Path | ReadStream], *, all_entries: bool = False) -> None:
        from refaudit.parsing.files import LATEX_SUFFIXES, ReadStream, open_stream
        from refaudit.parsing.tex import LatexStream

        self.files: list[str] = []
        self.total = 0
        self._inputs: list[_Input] = []
        self._seen: set[tuple[object, ...]] = set()
        self._streamed: set[str] = set()  # files whose every entry was given
        prepared: set[str] = set()
        for given in paths:
            if isinstance(given, ReadStream):  # a library or paper, already read
                self._inputs.append(_Input(Path(given.file), given))
                self.total += given.entries
                self.files.append(given.file)
                continue
            path = Path(given)
            item = _Input(path)
            names = [str(path)]
            if path.suffix.lower() in LATEX_SUFFIXES or _real(str(path)) not in prepared:
                prepared.add(_real(str(path)))
                item.stream, item.problems = open_stream(path, all_entries=all_entries)
                self.total += (
                    item.stream.total
                    if isinstance(item.stream, LatexStream)
                    else item.stream.entries
                )
                if isinstance(item.stream, LatexStream):
                    names = item.stream.files or names
            self._inputs.append(item)
            self.files += [name for name in names if self._first_time(_real(name))]

    def references(self) -> Iterator[Reference]:
        """Every reference, in input order."""
        from refaudit.parsing.bibtex import BibtexStream
        from refaudit.parsing.files import refuse_empty_bibtex
        from refaudit.parsing.tex import LatexStream

        for item in self._inputs:
            if isinstance(item.stream, LatexStream):
                yield from (r for r in item.stream.references() if self._new(r))
            elif item.stream is not None:
                given = 0
                line: tuple[int | None, set[str]] = (None, set())  # keys on the last line
                for reference in item.stream.references():
                    given += 1
                    if reference.line != line[0]:
                        line = (reference.line, set())
                    # Entries come in line order: only the last line's keys can repeat, and
                    # only the entries a .tex gave before are in `_seen`; not adding the
                    # others keeps memory flat.
                    where = (_real(reference.file), reference.line, reference.key)
                    if reference.key not in line[1] and where not in self._seen:
                        line[1].add(reference.key)
                        yield reference
                self._streamed.add(_real(item.stream.file))
                if not given and isinstance(item.stream, BibtexStream):
                    refuse_empty_bibtex(item.stream.problems(), item.path)

    def problems(self) -> list[InputProblem]:
        """Every input problem, each once, file by file (complete once `references` ran)."""
        found: list[InputProblem] = []
        for item in self._inputs:
            if item.stream is None:
                continue
            found += [
                p
                for p in item.problems + item.stream.problems()
                if self._first_time(_real(p.file), p.line, p.key, p.message)
            ]
        return found

    def _new(self, reference: Reference) -> bool:
        """Not given before (a .bib streamed whole gives each of its entries once)."""
        if _real(reference.file) in self._streamed:
            return False
        return self._first_time(_real(reference.file), reference.line, reference.key)

    def _first_time(self, *where: object) -> bool:
        if where in self._seen:
            return False
        self._seen.add(where)
        return True


@functools.lru_cache(maxsize=256)
def _real(name: str | None) -> str:
    """One spelling per file, so `refs.bib` and `./refs.bib` are the same file."""
    return str(Path(name).resolve()) if name else ""
