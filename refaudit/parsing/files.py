"""Reading input files: refuse what cannot be a bibliography, decode what can.

Everything that makes a file unusable raises `InputError` naming the file;
a non-UTF-8 file is still read (as Latin-1) and reported, because old .bib
files from reference managers are often Latin-1 and otherwise fine.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from refaudit.errors import InputError
from refaudit.models import Bibliography, InputProblem, Reference

if TYPE_CHECKING:
    from refaudit.parsing.bbl import BblStream
    from refaudit.parsing.bibtex import BibtexStream, Lines
    from refaudit.parsing.tex import LatexStream

BIBTEX_SUFFIXES = (".bib", ".bibtex")
LATEX_SUFFIXES = (".tex", ".ltx")
BBL_SUFFIXES = (".bbl",)
WORD_SUFFIXES = (".docx",)
PDF_SUFFIXES = (".pdf",)
SUPPORTED_SUFFIXES = BIBTEX_SUFFIXES + LATEX_SUFFIXES + BBL_SUFFIXES + WORD_SUFFIXES + PDF_SUFFIXES
# Far beyond any real bibliography or paper; stops a link to /dev/zero or a huge dump.
# An input read whole is held to it, and so is each line of one read line by line.
MAX_INPUT_BYTES = 64 * 1024 * 1024
# A .bib or .bbl is read line by line and never held whole, so it may be far longer:
# a million entries take about 200 MB. The bound stops an endless or absurd stream.
MAX_STREAMED_BYTES = 1024 * 1024 * 1024
# Bytes read at a time when a streamed file is checked.
_CHECK_BLOCK = 1 << 20


def parse_file(path: Path, *, all_entries: bool = False) -> Bibliography:
    """Parse a .bib/.bibtex, .tex, .bbl, .docx or .pdf file into references and input problems.

    Raises:
        InputError: the file is missing, a directory, binary, empty, of an unknown
            kind, or holds no entries at all.
    """
    from refaudit.parsing.bbl import parse_bbl
    from refaudit.parsing.bibtex import parse_bibtex
    from refaudit.parsing.tex import parse_latex

    path = Path(path)
    suffix = path.suffix.lower()
    _require_supported(path)
    if suffix in WORD_SUFFIXES + PDF_SUFFIXES:
        return _parse_document(path)
    text, problems = read_text(path)
    if suffix in LATEX_SUFFIXES:
        bibliography = parse_latex(
            path, text, all_entries=all_entries, read_text=read_text, read_lines=file_lines
        )
    elif suffix in BBL_SUFFIXES:
        bibliography = parse_bbl(text, file=str(path))
        if not bibliography.references:
            raise _no_bbl_references(path)
    else:
        bibliography = parse_bibtex(text, file=str(path))
        if not bibliography.references:
            refuse_empty_bibtex(bibliography.problems, path)
    bibliography.problems[:0] = problems
    return bibliography


def open_stream(
    path: Path, *, all_entries: bool = False
) -> tuple[BibtexStream | BblStream | LatexStream | ReadStream, list[InputProblem]]:
    """A file as a prepared stream of references (`BibtexStream`, `BblStream`,
    `LatexStream`, or a `ReadStream` for a document read whole), plus a problem when
    it was not UTF-8.

    Raises:
        InputError: as `parse_file` does for such a file, or when the file changes
            between two passes.
    """
    from refaudit.parsing.bbl import BblStream
    from refaudit.parsing.bibtex import BibtexStream, Outline
    from refaudit.parsing.tex import LatexStream

    path = Path(path)
    _require_supported(path)
    if path.suffix.lower() in WORD_SUFFIXES + PDF_SUFFIXES:
        return ReadStream(_parse_document(path)), []
    stream: BibtexStream | BblStream | LatexStream
    if path.suffix.lower() in LATEX_SUFFIXES:
        text, problems = read_text(path)
        stream = LatexStream(
            path, text, all_entries=all_entries, read_text=read_text, read_lines=file_lines
        )
        stream.prepare()
        return stream, problems
    if path.suffix.lower() in BBL_SUFFIXES:
        lines, problems = file_lines(path)
        stream = BblStream(lines, file=str(path))
        stream.prepare()
        if not stream.entries:
            raise _no_bbl_references(path)
    else:
        outline = Outline()
        lines, problems = file_lines(path, outline.feed)
        stream = BibtexStream(lines, file=str(path))
        stream.prepare(outline)
        if not stream.entries:
            refuse_empty_bibtex(stream.problems(), path)
    return stream, problems


class ReadStream:
    """A document read whole (a Word file: its parts are zipped, so it cannot be read
    a line at a time), handed out in the shape of the other streams."""

    def __init__(self, bibliography: Bibliography) -> None:
        self.file = bibliography.files[0] if bibliography.files else ""
        self.entries = len(bibliography.references)
        self._bibliography = bibliography

    def references(self) -> Iterator[Reference]:
        """Every reference, in document order."""
        yield from self._bibliography.references

    def problems(self) -> list[InputProblem]:
        """What the reader found wrong."""
        return list(self._bibliography.problems)


def _parse_document(path: Path) -> Bibliography:
    """A document read whole: a Word file, or a PDF's printed reference list."""
    if path.suffix.lower() in PDF_SUFFIXES:
        from refaudit.parsing.pdf import parse_pdf

        return parse_pdf(path)
    from refaudit.parsing.docx import parse_docx

    return parse_docx(read_bytes(path), file=str(path))


def file_lines(
    path: Path, scan: Callable[[bytes], None] | None = None
) -> tuple[Lines, list[InputProblem]]:
    """Reads the file's lines, decoded, from its start (once per pass), and its problems.

    The file is read line by line for each pass rather than held: once here to check it
    as `read_text` would (size, NUL bytes, blank, encoding), then by each pass. The check
    reads whole lines a block at a time and hands each block to `scan` (a reader's quick
    outline of the file; not called for a UTF-16 file, which is decoded whole because
    its lines cannot be cut on the byte "\\n").
    """
    from refaudit.parsing.bibtex import text_lines

    encoding, problems, state = _check_bytes(path, scan)
    if encoding is None:
        text, problems = read_text(path)
        return functools.partial(text_lines, text), problems
    return functools.partial(_decoded_lines, path, encoding, state), problems


def _check_bytes(
    path: Path, scan: Callable[[bytes], None] | None = None
) -> tuple[str | None, list[InputProblem], tuple[int, int]]:
    """The codec for the file's lines ("utf-8" or "latin-1"; None: UTF-16), its problems,
    and its (size, mtime) so a later pass can tell it changed.

    Read in blocks of whole lines (the bytes after a block's last newline wait for the
    next): a line at a time, a million-entry file took seconds before its first entry
    could be audited.
    """
    first_bad: tuple[int, int] | None = None  # (line, byte)
    blank = True
    size = lines = 0
    rest = b""  # the line the last block ended in
    with _open_regular(path) as stream:
        if stream.read(2) in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
            return None, [], (0, 0)
        stream.seek(0)
        while block := stream.read(_CHECK_BLOCK):
            size += len(block)
            cut = block.rfind(b"\n") + 1
            whole, rest = (rest + block[:cut], block[cut:]) if cut else (b"", rest + block)
            if len(rest) > MAX_INPUT_BYTES or _longest_line(whole) > MAX_INPUT_BYTES:
                raise _too_large(path, MAX_INPUT_BYTES, "has a line larger than")
            if size > MAX_STREAMED_BYTES:
                raise _too_large(path, MAX_STREAMED_BYTES, "larger than")
            bad = _checked_lines(path, whole, lines, scan)
            first_bad, blank = first_bad or bad, blank and not whole.strip()
            lines += whole.count(b"\n")
        bad = _checked_lines(path, rest, lines, scan)
        first_bad, blank = first_bad or bad, blank and not rest.strip()
        info = os.fstat(stream.fileno())
    if blank:
        raise InputError("file is empty", file=str(path))
    if first_bad is None:
        return "utf-8", [], (info.st_size, info.st_mtime_ns)
    bad_line, byte = first_bad
    detail = (
        f"not valid UTF-8 (byte 0x{byte:02x} on line {bad_line}); "
        "read as Latin-1 — check accented characters"
    )
    problem = _decoding_problem(path, bad_line, detail, "latin1-decoded")
    return "latin-1", [problem], (info.st_size, info.st_mtime_ns)


def _longest_line(whole: bytes) -> int:
    """The length of the longest line of `whole` (lines ending in "\\n"), newline included."""
    if len(whole) <= MAX_INPUT_BYTES:  # no line can be longer than the limit
        return len(whole)
    return max(map(len, whole.split(b"\n"))) + 1


def _checked_lines(
    path: Path, whole: bytes, before: int, scan: Callable[[bytes], None] | None
) -> tuple[int, int] | None:
    """Refuse binary lines; (line, byte) of the first byte that is not UTF-8, if any."""
    if b"\x00" in whole:
        raise InputError("binary file (contains NUL bytes); expected a text file", file=str(path))
    if scan is not None:
        scan(whole)
    try:
        whole.decode("utf-8")
    except UnicodeDecodeError as error:
        return before + whole.count(b"\n", 0, error.start) + 1, whole[error.start]
    return None


def _decoded_lines(path: Path, encoding: str, state: tuple[int, int]) -> Iterator[str]:
    """The file's lines, decoded; refused if the file is not the one checked."""
    with _open_regular(path) as stream:
        info = os.fstat(stream.fileno())
        if (info.st_size, info.st_mtime_ns) != state:
            raise InputError("the file changed while it was being read", file=str(path))
        first = encoding == "utf-8"
        for line in stream:
            yield line.decode("utf-8-sig" if first else encoding)
            first = False


def refuse_empty_bibtex(problems: list[InputProblem], path: Path) -> None:
    """No entry survived: name the first broken one, since that is what to fix."""
    failures = [problem for problem in problems if problem.code == "parse-error"]
    if not failures:
        raise InputError(
            "no BibTeX entries found", file=str(path), hint="entries look like @article{key, …}"
        )
    others = len(failures) - 1
    raise InputError(
        failures[0].message.replace(", so it is left out", ""),
        file=str(path),
        line=failures[0].line,
        key=failures[0].key,
        hint=f"no entry could be read ({others} more failed to parse)"
        if others
        else "no entry could be read",
    )


def read_text(path: Path) -> tuple[str, list[InputProblem]]:
    """The decoded text of an input file, plus a problem when it was not cleanly encoded."""
    data = read_bytes(path)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
        if "\ufffd" not in text:
            return text, []
        line = text.count("\n", 0, text.index("\ufffd")) + 1
        detail = f"not valid UTF-16 (first bad character on line {line}); replaced by \ufffd"
        return text, [_decoding_problem(path, line, detail, "utf16-invalid")]
    if b"\x00" in data:
        raise InputError("binary file (contains NUL bytes); expected a text file", file=str(path))
    if not data.strip():
        raise InputError("file is empty", file=str(path))
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        detail = (
            f"not valid UTF-8 (byte 0x{data[error.start]:02x} on line {line}); "
            "read as Latin-1 — check accented characters"
        )
        return data.decode("latin-1"), [_decoding_problem(path, line, detail, "latin1-decoded")]


def _decoding_problem(path: Path, line: int, message: str, code: str) -> InputProblem:
    return InputProblem(file=str(path), line=line, message=message, code=code)


def read_bytes(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_INPUT_BYTES; anything else is refused.

    The type is checked before opening (opening a pipe would block) and again on the
    open file, so a link swapped in between is refused too.
    """
    with _open_regular(path) as stream:
        data = stream.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise _too_large(path, MAX_INPUT_BYTES, "larger than")
    return data


def _require_supported(path: Path) -> None:
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise InputError(
            f"unsupported file type {suffix or '(no extension)'!r}",
            file=str(path),
            hint=f"refaudit reads {', '.join(SUPPORTED_SUFFIXES)} files",
        )


def _no_bbl_references(path: Path) -> InputError:
    return InputError(
        "no references found",
        file=str(path),
        hint="a .bbl holds \\bibitem{…} items (BibTeX) or \\entry{…} data (biber)",
    )


def _too_large(path: Path, limit: int, what: str) -> InputError:
    return InputError(
        f"{what} {limit // (1024 * 1024)} MB; not read",
        file=str(path),
        hint="check that this is the bibliography you meant",
    )


@contextlib.contextmanager
def _open_regular(path: Path) -> Iterator[IO[bytes]]:
    """The open file, if it is a regular file.

    The type is checked before opening (opening a pipe would block) and again on the
    open file, so a link swapped in between is refused too.
    """
    try:
        _require_regular(path, path.stat().st_mode)
        stream = path.open("rb")
    except FileNotFoundError:
        raise InputError("file not found", file=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read file: {error.strerror or error}", file=str(path)) from None
    with stream:
        _require_regular(path, os.fstat(stream.fileno()).st_mode)
        yield stream


def _require_regular(path: Path, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise InputError("is a directory, not a file", file=str(path))
    if not stat.S_ISREG(mode):
        raise InputError("not a regular file (a device, pipe or socket); not read", file=str(path))
