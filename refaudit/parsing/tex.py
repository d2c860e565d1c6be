"""LaTeX documents: which keys are cited, where the bibliography lives, and \\bibitem lists.

A paper is audited for what it cites, so a .tex input yields the entries of
its .bib files that are cited (in citation order), `thebibliography` items as
free-text references, and problems for keys cited but never defined.
"""

from __future__ import annotations

import heapq
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from refaudit.errors import InputError
from refaudit.findings import Severity
from refaudit.models import Bibliography, InputProblem, Reference
from refaudit.parsing.bibitems import bibitem_keys, iter_bibitems
from refaudit.parsing.lines import LineIndex
from refaudit.text import strip_comments

if TYPE_CHECKING:
    from refaudit.parsing.bbl import BblStream
    from refaudit.parsing.bibtex import BibtexStream, Lines

MAX_INPUT_DEPTH = 10

TextReader = Callable[[Path], tuple[str, list[InputProblem]]]
LinesReader = Callable[[Path], tuple["Lines", list[InputProblem]]]

_CITE = re.compile(
    r"\\(?P<command>(?:[Cc]ite(?:p|t|alp|alt|author|year|yearpar|num|title|date|url|s)?"
    r"|[Pp]arencites?|[Tt]extcites?|[Aa]utocites?|[Ff]ootcites?|[Ff]ootcitetext|[Ff]ullcite"
    r"|[Ss]martcites?|[Ss]upercites?|nocite))\*?(?![a-zA-Z])"
)
# Bounded: an unclosed `\cite[` must fail within a short distance, not at the end of the file.
_OPTIONAL_ARGUMENT = re.compile(r"\s{0,100}\[[^\]]{0,2000}\]")
_KEYS_ARGUMENT = re.compile(r"\s{0,100}\{([^{}]{0,20000})\}")
# The commands that name another file: a TeX file read in place (`\input`, `\include`,
# `\subfile`), BibTeX's comma list of .bib names, or one biblatex resource named in full.
_FILE_COMMAND = re.compile(
    r"\\(?:(?P<tex>input|include|subfile)|(?P<bibtex>bibliography)|addbibresource|addglobalbib)"
    r"\s*(?:\[[^\]]{0,2000}\])?\s*\{(?P<names>[^{}]*)\}"
)


@dataclass
class _Document:
    """What walking the .tex files collected."""

    root: Path
    resolved_root: Path
    files: list[str] = field(default_factory=list)
    citations: dict[str, tuple[str, int]] = field(default_factory=dict)
    cite_all: bool = False
    bib_files: list[Path] = field(default_factory=list)
    #: each walked file's text (comments stripped) and lines, for its \\bibitems
    bibitem_texts: list[tuple[str, str, LineIndex]] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)

    def not_read(
        self, including: Path, line: int, code: str, message: str, severity: Severity = "warning"
    ) -> None:
        """A file that `line` of `including` asks for (\\input, \\bibliography) is not read."""
        self.problems.append(
            InputProblem(str(including), message, line, severity=severity, code=code)
        )


def parse_latex(
    path: Path, text: str, *, all_entries: bool, read_text: TextReader, read_lines: LinesReader
) -> Bibliography:
    """The references a LaTeX document cites; `read_text(path)` reads and decodes a file,
    `read_lines(path)` does the same a line at a time (for its .bib and .bbl files)."""
    stream = LatexStream(
        path, text, all_entries=all_entries, read_text=read_text, read_lines=read_lines
    )
    stream.prepare()
    references = list(stream.references())
    return Bibliography(
        references=references,
        problems=stream.problems(),
        files=stream.files,
        cited_keys=list(stream.citations),
    )


class LatexStream:
    """A LaTeX document's cited references, handed out one at a time.

    `prepare` walks the document's .tex files (held whole: what a paper cites is known
    only once every file is read) and prepares its .bib files (and a compiled .bbl) as
    streams. `references` then gives the `\\bibitem` items, parsed one at a time from
    the texts, and the cited entries of each .bib and .bbl as its stream reads them.
    What stays is the texts that hold a thebibliography, the citations, and a problem
    per uncited entry; the problems are complete once `references` has run.
    """

    def __init__(
        self,
        path: Path,
        text: str,
        *,
        all_entries: bool,
        read_text: TextReader,
        read_lines: LinesReader,
    ) -> None:
        self.path = path
        self.files: list[str] = []
        self.citations: dict[str, tuple[str, int]] = {}
        self.total = 0  # references `references` will give (about: before expansion)
        self._text = text
        self._all_entries = all_entries
        self._read_text = read_text
        self._read_lines = read_lines
        self._document = _Document(root=path.parent, resolved_root=path.parent.resolve())
        # each bibliography file's stream (None: unreadable) after the problems before it
        self._parts: list[tuple[BibtexStream | BblStream | None, list[InputProblem]]] = []
        self._found: list[InputProblem] = []  # undefined and uncited, once read
        self._keep_all = all_entries

    def prepare(self) -> None:
        """Walk the .tex files and prepare the bibliography files.

        Raises:
            InputError: the document has no bibliography at all.
        """
        from refaudit.parsing.bibtex import BibtexStream

        document = self._document
        _walk(document, self.path, self._text, depth=0, read_text=self._read_text, seen=set())
        self._text = ""
        self.citations = document.citations
        self._keep_all = self._all_entries or document.cite_all
        cited = None if self._keep_all else set(document.citations)
        keys = [key for text, _, _ in document.bibitem_texts for key in bibitem_keys(text)]
        found = len(keys)
        self.total = sum(cited is None or key in cited for key in keys)
        for bib_path in document.bib_files:
            try:
                lines, decode_problems = self._read_lines(bib_path)
                stream = BibtexStream(lines, file=str(bib_path), counted=cited)
                stream.prepare()
            except InputError as error:
                problem = InputProblem(
                    file=str(bib_path), message=error.message, code="unreadable-bib-file"
                )
                self._parts.append((None, [problem]))
                continue
            document.files.append(str(bib_path))
            self._parts.append((stream, decode_problems))
            found += stream.entries
            self.total += stream.counted
        if compiled := self._compiled_bibliography(cited):
            found += compiled.entries
            self.total += compiled.counted
        self.files = document.files
        if not found:
            raise self._nothing_found()

    def references(self) -> Iterator[Reference]:
        """The cited references (every one with `all_entries` or `\\nocite{*}`), in order:
        \\bibitems, then each .bib file's entries, then the compiled .bbl's."""
        cited = self._document.citations
        defined: set[str] = set()  # the cited keys that have an entry
        uncited: list[InputProblem] = []
        streams = [stream.references() for stream, _ in self._parts if stream is not None]
        given = 0
        for reference in itertools.chain(self._bibitems(), *streams):
            given += 1
            if reference.key in cited:
                defined.add(reference.key)
            elif not self._document.cite_all:
                uncited.append(_uncited(reference, self.path))
            if self._keep_all or reference.key in cited:
                yield reference
        if not given:
            raise self._nothing_found()
        undefined = "\\cite{{{}}} has no entry in the bibliography"
        self._found = [
            InputProblem(file, undefined.format(key), line, key, code="undefined-citation")
            for key, (file, line) in cited.items()
            if key not in defined
        ] + uncited

    def problems(self) -> list[InputProblem]:
        """The walk's problems, each bibliography file's, then undefined and uncited keys."""
        problems = list(self._document.problems)
        for stream, before in self._parts:
            problems += before + (stream.problems() if stream is not None else [])
        return problems + self._found

    def _bibitems(self) -> Iterator[Reference]:
        for text, file, lines in self._document.bibitem_texts:
            yield from iter_bibitems(text, file=file, lines=lines)

    def _compiled_bibliography(self, cited: set[str] | None) -> BblStream | None:
        """Missing .bib files but a `<paper>.bbl` beside the paper (an arXiv source): that."""
        from refaudit.parsing.bbl import BblStream

        document = self._document
        missing = "missing-bib-file"
        compiled = self.path.with_suffix(".bbl")
        unread = any(problem.code == missing for problem in document.problems)
        if not unread or not _inside(document, compiled) or not compiled.is_file():
            return None
        try:
            lines, decode_problems = self._read_lines(compiled)
            stream = BblStream(lines, file=str(compiled), counted=cited)
            stream.prepare()
        except InputError:
            return None
        document.files.append(str(compiled))
        read_instead = f"; read the compiled bibliography {compiled.name} instead"
        document.problems = [
            replace(problem, severity="warning", message=problem.message + read_instead)
            if problem.code == missing
            else problem
            for problem in document.problems
        ]
        self._parts.append((stream, decode_problems))
        return stream

    def _nothing_found(self) -> InputError:
        problems = self._document.problems
        # A bibliography that was named but not read (missing, or refused as outside the
        # document's folder) is the reason, not the absence of one.
        unread = ("missing-bib-file", "bib-outside-folder")
        missing = [p.message for p in problems if p.code in unread]
        detail = "; ".join(missing) or (
            "no \\bibliography{…}, \\addbibresource{…} or thebibliography environment found"
        )
        return InputError(f"no references found: {detail}", file=str(self.path))


def _uncited(reference: Reference, path: Path) -> InputProblem:
    return InputProblem(
        file=reference.file or str(path),
        line=reference.line,
        key=reference.key,
        message="defined but never cited",
        severity="info",
        code="uncited-entry",
    )


def _walk(
    document: _Document,
    path: Path,
    text: str,
    *,
    depth: int,
    read_text: TextReader,
    seen: set[Path],
) -> None:
    """Collect citations, bibliography files and \\bibitems from one file and its \\inputs."""
    seen.add(path.resolve())
    document.files.append(str(path))
    source = strip_comments(text)
    lines = LineIndex(source)
    # In document order, as LaTeX meets them: a bibliography named in the preamble comes
    # before one an \input file names, so its entries come first.
    commands = heapq.merge(
        _CITE.finditer(source), _FILE_COMMAND.finditer(source), key=lambda match: match.start()
    )
    for match in commands:
        if match.re is _CITE:
            _record_citation(document, source, match, str(path), lines)
            continue
        line = lines.line(match.start())
        tex, bibtex = match.group("tex"), match.group("bibtex") is not None
        names = match.group("names").split(",") if bibtex else [match.group("names")]
        for name in filter(None, map(str.strip, names)):
            if tex:
                _follow_input(document, path, tex, name, line, depth, read_text, seen)
            else:
                _add_bib_file(document, path, name, line, add_suffix=bibtex)
    if "thebibliography" in source:
        document.bibitem_texts.append((source, str(path), lines))


def _record_citation(
    document: _Document, source: str, match: re.Match[str], file: str, lines: LineIndex
) -> None:
    position = match.end()
    # biblatex's \cites{a}{b} family takes several key groups in a row.
    repeat = match.group("command").lower().endswith("cites")
    while True:
        while optional := _OPTIONAL_ARGUMENT.match(source, position):
            position = optional.end()
        keys = _KEYS_ARGUMENT.match(source, position)
        if keys is None:
            return
        position = keys.end()
        for key in keys.group(1).split(","):
            key = key.strip()
            if key == "*":
                document.cite_all = True
            elif key and key not in document.citations:
                document.citations[key] = (file, lines.line(keys.start(1)))
        if not repeat:
            return


def _follow_input(
    document: _Document,
    including: Path,
    command: str,
    name: str,
    line: int,
    depth: int,
    read_text: TextReader,
    seen: set[Path],
) -> None:
    candidates = [document.root / name, including.parent / name]
    candidates += [candidate.with_name(candidate.name + ".tex") for candidate in candidates]
    inside = [candidate for candidate in candidates if _inside(document, candidate)]
    target = next((candidate for candidate in inside if candidate.is_file()), None)
    if target is None:
        document.not_read(
            including,
            line,
            "missing-input" if inside else "input-outside-folder",
            f"\\{command} file {name!r} not found"
            if inside
            else f"\\{command} file {name!r} is outside the document's folder; not read",
        )
        return
    resolved = target.resolve()
    if resolved in seen:
        return
    if depth + 1 > MAX_INPUT_DEPTH:
        document.not_read(
            including,
            line,
            "input-too-deep",
            f"\\input nesting deeper than {MAX_INPUT_DEPTH}; {name!r} not read",
        )
        return
    try:
        text, decode_problems = read_text(target)
    except InputError as error:
        document.not_read(including, line, "missing-input", error.message)
        return
    document.problems.extend(decode_problems)
    _walk(document, target, text, depth=depth + 1, read_text=read_text, seen=seen)


def _add_bib_file(
    document: _Document, including: Path, name: str, line: int, *, add_suffix: bool
) -> None:
    """Queue a bibliography file, confined to the document's folder like \\input."""
    relative = name if not add_suffix or name.lower().endswith(".bib") else f"{name}.bib"
    candidates = [document.root / relative, including.parent / relative]
    inside = [candidate for candidate in candidates if _inside(document, candidate)]
    if not inside:
        document.not_read(
            including,
            line,
            "bib-outside-folder",
            f"bibliography file {relative!r} is outside the document's folder "
            f"({document.root}); not read",
            severity="error",
        )
        return
    target = next((candidate for candidate in inside if candidate.is_file()), inside[0])
    if any(target.resolve() == known.resolve() for known in document.bib_files):
        return
    if not target.is_file():
        document.not_read(
            including,
            line,
            "missing-bib-file",
            f"bibliography file {relative!r} not found (looked in {document.root})",
            severity="error",
        )
        return
    document.bib_files.append(target)


def _inside(document: _Document, path: Path) -> bool:
    """True when `path`, with every symlink followed, lies in the document's folder tree."""
    return path.resolve().is_relative_to(document.resolved_root)
