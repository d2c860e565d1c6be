"""LaTeX documents: which keys are cited, where the bibliography lives, and \\bibitem lists.

A paper is audited for what it cites, so a .tex input yields the entries of
its .bib files that are cited (in citation order), `thebibliography` items as
free-text references, and problems for keys cited but never defined.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from refaudit.errors import InputError
from refaudit.models import Bibliography, InputProblem, Reference
from refaudit.parsing.bibitems import parse_bibitems
from refaudit.parsing.lines import LineIndex
from refaudit.text import strip_comments

MAX_INPUT_DEPTH = 10

TextReader = Callable[[Path], tuple[str, list[InputProblem]]]

_CITE = re.compile(
    r"\\(?P<command>(?:[Cc]ite(?:p|t|alp|alt|author|year|yearpar|num|title|date|url|s)?"
    r"|[Pp]arencites?|[Tt]extcites?|[Aa]utocites?|[Ff]ootcites?|[Ff]ootcitetext|[Ff]ullcite"
    r"|[Ss]martcites?|[Ss]upercites?|nocite))\*?(?![a-zA-Z])"
)
# Bounded: an unclosed `\cite[` must fail within a short distance, not at the end of the file.
_OPTIONAL_ARGUMENT = re.compile(r"\s{0,100}\[[^\]]{0,2000}\]")
_KEYS_ARGUMENT = re.compile(r"\s{0,100}\{([^{}]{0,20000})\}")
_INPUT = re.compile(r"\\(?:input|include|subfile)\s*\{([^{}]+)\}")
_BIBLIOGRAPHY = re.compile(r"\\bibliography\s*\{([^{}]*)\}")
_ADDBIBRESOURCE = re.compile(r"\\(?:addbibresource|addglobalbib)\s*(?:\[[^\]]*\])?\s*\{([^{}]+)\}")


@dataclass
class _Document:
    """What walking the .tex files collected."""

    root: Path
    resolved_root: Path
    files: list[str] = field(default_factory=list)
    citations: dict[str, tuple[str, int]] = field(default_factory=dict)
    cite_all: bool = False
    bib_files: list[Path] = field(default_factory=list)
    bibitems: list[Reference] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)


def parse_latex(path: Path, text: str, *, all_entries: bool, read_text: TextReader) -> Bibliography:
    """The references a LaTeX document cites; `read_text(path)` reads and decodes a file."""
    from refaudit.parsing.bibtex import parse_bibtex

    document = _Document(root=path.parent, resolved_root=path.parent.resolve())
    _walk(document, path, text, depth=0, read_text=read_text, seen=set())

    references: list[Reference] = list(document.bibitems)
    problems = list(document.problems)
    for bib_path in document.bib_files:
        try:
            bib_text, decode_problems = read_text(bib_path)
        except InputError as error:
            problems.append(
                InputProblem(file=str(bib_path), message=error.message, code="unreadable-bib-file")
            )
            continue
        document.files.append(str(bib_path))
        parsed = parse_bibtex(bib_text, file=str(bib_path))
        problems.extend(decode_problems)
        problems.extend(parsed.problems)
        references.extend(parsed.references)
    _read_compiled_bibliography(path, document, references, problems, read_text)

    if not references:
        missing = [p.message for p in problems if p.code == "missing-bib-file"]
        detail = "; ".join(missing) or (
            "no \\bibliography{…}, \\addbibresource{…} or thebibliography environment found"
        )
        raise InputError(f"no references found: {detail}", file=str(path))

    cited_keys = list(document.citations)
    defined = {reference.key for reference in references}
    for key, (file, line) in document.citations.items():
        if key not in defined:
            problems.append(
                InputProblem(
                    file=file,
                    line=line,
                    key=key,
                    message=f"\\cite{{{key}}} has no entry in the bibliography",
                    code="undefined-citation",
                )
            )
    cited = set(cited_keys)
    if not document.cite_all:
        for reference in references:
            if reference.key not in cited:
                problems.append(
                    InputProblem(
                        file=reference.file or str(path),
                        line=reference.line,
                        key=reference.key,
                        message="defined but never cited",
                        severity="info",
                        code="uncited-entry",
                    )
                )
    if not (all_entries or document.cite_all):
        references = [reference for reference in references if reference.key in cited]
    return Bibliography(
        references=references, problems=problems, files=document.files, cited_keys=cited_keys
    )


def _read_compiled_bibliography(
    path: Path,
    document: _Document,
    references: list[Reference],
    problems: list[InputProblem],
    read_text: TextReader,
) -> None:
    """Missing .bib files but a `<paper>.bbl` beside the paper (an arXiv source): read that."""
    from refaudit.parsing.bbl import parse_bbl

    missing = [problem for problem in problems if problem.code == "missing-bib-file"]
    compiled = path.with_suffix(".bbl")
    if not missing or not _inside(document, compiled) or not compiled.is_file():
        return
    try:
        text, decode_problems = read_text(compiled)
    except InputError:
        return
    parsed = parse_bbl(text, file=str(compiled))
    document.files.append(str(compiled))
    references.extend(parsed.references)
    problems.extend(decode_problems)
    problems.extend(parsed.problems)
    for problem in missing:
        problem.severity = "warning"
        problem.message += f"; read the compiled bibliography {compiled.name} instead"


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
    events: list[tuple[int, str, re.Match[str]]] = []
    for kind, pattern in (("input", _INPUT), ("cite", _CITE)):
        events.extend((match.start(), kind, match) for match in pattern.finditer(source))
    for start, kind, match in sorted(events, key=lambda event: event[0]):
        if kind == "cite":
            _record_citation(document, source, match, str(path), lines)
        else:
            line = lines.line(start)
            _follow_input(document, path, match.group(1).strip(), line, depth, read_text, seen)
    for match in _BIBLIOGRAPHY.finditer(source):
        line = lines.line(match.start())
        for name in match.group(1).split(","):
            if name.strip():
                _add_bib_file(document, path, name.strip(), line, add_suffix=True)
    for match in _ADDBIBRESOURCE.finditer(source):
        line = lines.line(match.start())
        _add_bib_file(document, path, match.group(1).strip(), line, add_suffix=False)
    document.bibitems.extend(parse_bibitems(source, file=str(path), lines=lines))


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
        document.problems.append(
            InputProblem(
                file=str(including),
                line=line,
                message=f"\\input file {name!r} not found"
                if inside
                else f"\\input file {name!r} is outside the document's folder; not read",
                code="missing-input" if inside else "input-outside-folder",
            )
        )
        return
    resolved = target.resolve()
    if resolved in seen:
        return
    if depth + 1 > MAX_INPUT_DEPTH:
        document.problems.append(
            InputProblem(
                file=str(including),
                line=line,
                message=f"\\input nesting deeper than {MAX_INPUT_DEPTH}; {name!r} not read",
                code="input-too-deep",
            )
        )
        return
    try:
        text, decode_problems = read_text(target)
    except InputError as error:
        document.problems.append(
            InputProblem(
                file=str(including), line=line, message=error.message, code="missing-input"
            )
        )
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
        document.problems.append(
            InputProblem(
                file=str(including),
                line=line,
                message=f"bibliography file {relative!r} is outside the document's folder "
                f"({document.root}); not read",
                severity="error",
                code="bib-outside-folder",
            )
        )
        return
    target = next((candidate for candidate in inside if candidate.is_file()), inside[0])
    if any(target.resolve() == known.resolve() for known in document.bib_files):
        return
    if not target.is_file():
        document.problems.append(
            InputProblem(
                file=str(including),
                line=line,
                message=f"bibliography file {relative!r} not found (looked in {document.root})",
                severity="error",
                code="missing-bib-file",
            )
        )
        return
    document.bib_files.append(target)


def _inside(document: _Document, path: Path) -> bool:
    """True when `path`, with every symlink followed, lies in the document's folder tree."""
    return path.resolve().is_relative_to(document.resolved_root)
