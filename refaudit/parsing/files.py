"""Reading input files: refuse what cannot be a bibliography, decode what can.

Everything that makes a file unusable raises `InputError` naming the file;
a non-UTF-8 file is still read (as Latin-1) and reported, because old .bib
files from reference managers are often Latin-1 and otherwise fine.
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

from refaudit.errors import InputError
from refaudit.models import Bibliography, InputProblem

BIBTEX_SUFFIXES = (".bib", ".bibtex")
LATEX_SUFFIXES = (".tex", ".ltx")
BBL_SUFFIXES = (".bbl",)
SUPPORTED_SUFFIXES = BIBTEX_SUFFIXES + LATEX_SUFFIXES + BBL_SUFFIXES
# Far beyond any real bibliography or paper; stops a link to /dev/zero or a huge dump.
MAX_INPUT_BYTES = 64 * 1024 * 1024


def parse_file(path: Path, *, all_entries: bool = False) -> Bibliography:
    """Parse a .bib/.bibtex, .tex or .bbl file into references and input problems.

    Raises:
        InputError: the file is missing, a directory, binary, empty, of an unknown
            kind, or holds no entries at all.
    """
    from refaudit.parsing.bbl import parse_bbl
    from refaudit.parsing.bibtex import parse_bibtex
    from refaudit.parsing.tex import parse_latex

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise InputError(
            f"unsupported file type {suffix or '(no extension)'!r}",
            file=str(path),
            hint=f"refaudit reads {', '.join(SUPPORTED_SUFFIXES)} files",
        )
    text, problems = read_text(path)
    if suffix in LATEX_SUFFIXES:
        bibliography = parse_latex(path, text, all_entries=all_entries, read_text=read_text)
    elif suffix in BBL_SUFFIXES:
        bibliography = parse_bbl(text, file=str(path))
        if not bibliography.references:
            raise InputError(
                "no references found",
                file=str(path),
                hint="a .bbl holds \\bibitem{…} items (BibTeX) or \\entry{…} data (biber)",
            )
    else:
        bibliography = parse_bibtex(text, file=str(path))
        if not bibliography.references:
            _refuse_empty_bibtex(bibliography, path)
    bibliography.problems[:0] = problems
    return bibliography


def _refuse_empty_bibtex(bibliography: Bibliography, path: Path) -> None:
    """No entry survived: name the first broken one, since that is what to fix."""
    failures = [problem for problem in bibliography.problems if problem.code == "parse-error"]
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
    data = _read_bounded(path)
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


def _read_bounded(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_INPUT_BYTES; anything else is refused.

    The type is checked before opening (opening a pipe would block) and again on the
    open file, so a link swapped in between is refused too.
    """
    try:
        _require_regular(path, path.stat().st_mode)
        with path.open("rb") as stream:
            _require_regular(path, os.fstat(stream.fileno()).st_mode)
            data = stream.read(MAX_INPUT_BYTES + 1)
    except FileNotFoundError:
        raise InputError("file not found", file=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read file: {error.strerror or error}", file=str(path)) from None
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(
            f"larger than {MAX_INPUT_BYTES // (1024 * 1024)} MB; not read",
            file=str(path),
            hint="check that this is the bibliography you meant",
        )
    return data


def _require_regular(path: Path, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise InputError("is a directory, not a file", file=str(path))
    if not stat.S_ISREG(mode):
        raise InputError("not a regular file (a device, pipe or socket); not read", file=str(path))
