"""BibTeX / biblatex text → `Bibliography`, one broken entry never costing the others.

bibtexparser 2 splits the text into blocks (and keeps the ones it could not
parse, with their start line). Macro expansion, `#` concatenation, month
macros and crossref inheritance happen here rather than in its middlewares so
that every step can report what it could not resolve.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from refaudit.models import Bibliography, InputProblem, Reference
from refaudit.parsing.records import build_reference

MONTH_MACROS = {
    "jan": "January",
    "feb": "February",
    "mar": "March",
    "apr": "April",
    "may": "May",
    "jun": "June",
    "jul": "July",
    "aug": "August",
    "sep": "September",
    "oct": "October",
    "nov": "November",
    "dec": "December",
}

# biblatex's default crossref rules: a parent's own title becomes the child's booktitle.
_RENAMED_ON_INHERIT = {
    "title": "booktitle",
    "subtitle": "booksubtitle",
    "titleaddon": "booktitleaddon",
    "shorttitle": None,
    "ids": None,
    "crossref": None,
    "xref": None,
    "entryset": None,
    "label": None,
    "sortkey": None,
    "refaudit-ignore": None,
}
_IGNORE_COMMENT = re.compile(r"^\s*%+\s*refaudit:\s*ignore\b[:\s]*(.*)$", re.IGNORECASE)
_BLOCK_START = re.compile(r"^[ \t]*@", re.MULTILINE)
_ENTRY_HEAD = re.compile(r"@\s*(\w+)\s*[{(]\s*([^,\s}]*)")


@dataclass
class _RawEntry:
    """An entry after macro expansion, before it becomes a `Reference`."""

    key: str
    entry_type: str
    line: int
    fields: dict[str, str] = field(default_factory=dict)


def parse_bibtex(text: str, *, file: str | None = None) -> Bibliography:
    """Every entry of a .bib text as a `Reference`, plus the problems met on the way."""
    from bibtexparser.model import DuplicateBlockKeyBlock, Entry, ParsingFailedBlock, String

    source = file or "<bibtex>"
    problems: list[InputProblem] = []
    macros: dict[str, str] = dict(MONTH_MACROS)
    entries: list[_RawEntry] = []
    pending: list[tuple[Entry, int]] = []
    for block, offset in _split_blocks(text):
        line = (block.start_line or 0) + offset + 1
        if isinstance(block, String):
            macros[block.key.lower()] = _expand(block.value, macros, source, line, None, problems)
            continue
        if isinstance(block, DuplicateBlockKeyBlock):
            inner = block.ignore_error_block
            if isinstance(inner, String):
                macros[inner.key.lower()] = _expand(
                    inner.value, macros, source, line, None, problems
                )
            elif isinstance(inner, Entry):
                pending.append((inner, offset))
            continue
        if isinstance(block, ParsingFailedBlock):
            inner = block.ignore_error_block
            if isinstance(inner, Entry):
                pending.append((inner, offset))
                problems.append(_duplicate_field_problem(block, inner, source, line))
            else:
                problems.append(_failure_problem(block, source, line))
            continue
        if isinstance(block, Entry):
            pending.append((block, offset))
    for entry, offset in pending:
        line = (entry.start_line or 0) + offset + 1
        fields: dict[str, str] = {}
        for entry_field in entry.fields:
            name = entry_field.key.strip().lower()
            if name not in fields:
                fields[name] = _expand(
                    str(entry_field.value), macros, source, line, entry.key, problems
                )
        entries.append(_RawEntry(entry.key.strip(), entry.entry_type.strip().lower(), line, fields))

    _report_duplicates(entries, source, problems)
    _inherit_crossrefs(entries, source, problems)
    lines = text.split("\n")
    references: list[Reference] = []
    for raw in entries:
        reference = build_reference(
            raw.key, raw.entry_type, raw.fields, file=file, line=raw.line, problems=problems
        )
        if reference.ignore_reason is None:
            reference.ignore_reason = _ignore_comment(lines, raw.line)
        references.append(reference)
    problems.sort(key=lambda problem: problem.line or 0)
    return Bibliography(references=references, problems=problems, files=[file] if file else [])


@contextlib.contextmanager
def _quiet_bibtexparser() -> Iterator[None]:
    """bibtexparser logs every syntax error; we report them as InputProblems instead."""
    logger = logging.getLogger("bibtexparser")
    previous = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(previous)


def _split_blocks(text: str) -> list[tuple[object, int]]:
    """Blocks with the line offset of the chunk they were parsed from.

    If bibtexparser gives up on the whole text (it raises on states it considers
    its own bug), each `@` block is parsed on its own so the rest survives.
    """
    import bibtexparser

    with _quiet_bibtexparser():
        try:
            return [(block, 0) for block in bibtexparser.parse_string(text, parse_stack=[]).blocks]
        except Exception:  # noqa: BLE001 - fall back to parsing block by block
            pass
        blocks: list[tuple[object, int]] = []
        starts = [match.start() for match in _BLOCK_START.finditer(text)]
        for begin, end in zip(starts, [*starts[1:], len(text)], strict=True):
            offset = text.count("\n", 0, begin)
            try:
                library = bibtexparser.parse_string(text[begin:end], parse_stack=[])
            except Exception as error:  # noqa: BLE001
                from bibtexparser.model import ParsingFailedBlock

                blocks.append(
                    (ParsingFailedBlock(error, start_line=0, raw=text[begin:end]), offset)
                )
                continue
            blocks.extend((block, offset) for block in library.blocks)
        return blocks


def _expand(
    raw: str,
    macros: dict[str, str],
    file: str,
    line: int,
    key: str | None,
    problems: list[InputProblem],
) -> str:
    """Resolve one raw value: `{…}`, `"…"`, numbers, macros and `#` concatenation."""
    pieces: list[str] = []
    for part in _split_concatenation(raw):
        part = part.strip()
        if not part:
            continue
        if part[0] == "{":
            pieces.append(part[1:-1] if part.endswith("}") else part[1:])
        elif part[0] == '"':
            pieces.append(part[1:-1] if part.endswith('"') and len(part) > 1 else part[1:])
        elif part.isdigit():
            pieces.append(part)
        elif part.lower() in macros:
            pieces.append(macros[part.lower()])
        else:
            pieces.append(part)
            problems.append(
                InputProblem(
                    file=file,
                    line=line,
                    key=key,
                    message=f"undefined @string macro {part!r}; its name is used as the value",
                    code="undefined-macro",
                )
            )
    return "".join(pieces)


def _split_concatenation(raw: str) -> list[str]:
    """Split at `#` outside braces and quotes."""
    parts: list[str] = []
    depth = 0
    in_quotes = False
    start = 0
    for index, char in enumerate(raw):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == '"' and depth == 0 and (index == 0 or raw[index - 1] != "\\"):
            in_quotes = not in_quotes
        elif char == "#" and depth == 0 and not in_quotes:
            parts.append(raw[start:index])
            start = index + 1
    parts.append(raw[start:])
    return parts


def _failure_problem(block: object, file: str, line: int) -> InputProblem:
    error = getattr(block, "error", None)
    reason = getattr(error, "abort_reason", None) or str(error or "") or "syntax error"
    reason = reason.strip().splitlines()[0]
    head = _ENTRY_HEAD.search(getattr(block, "raw", None) or "")
    entry_type, key = (head.group(1).lower(), head.group(2) or None) if head else ("", None)
    if "Unexpected block start" in reason or "end of file" in reason:
        reason = f"unbalanced braces or quotes ({reason})"
    label = f"@{entry_type} entry" if entry_type else "block"
    return InputProblem(
        file=file,
        line=line,
        key=key,
        message=f"could not parse this {label}, so it is left out: {reason}",
        severity="error",
        code="parse-error",
    )


def _duplicate_field_problem(block: object, entry: object, file: str, line: int) -> InputProblem:
    names = ", ".join(sorted(getattr(block, "duplicate_keys", set())))
    return InputProblem(
        file=file,
        line=line,
        key=getattr(entry, "key", None),
        message=f"field(s) {names} given more than once; the first value is used",
        code="duplicate-field",
    )


def _report_duplicates(entries: list[_RawEntry], file: str, problems: list[InputProblem]) -> None:
    first_line: dict[str, int] = {}
    for entry in entries:
        if entry.key in first_line:
            problems.append(
                InputProblem(
                    file=file,
                    line=entry.line,
                    key=entry.key,
                    message=f"duplicate key: also defined on line {first_line[entry.key]}; "
                    "both entries are kept",
                    code="duplicate-key",
                )
            )
        else:
            first_line[entry.key] = entry.line


def _inherit_crossrefs(entries: list[_RawEntry], file: str, problems: list[InputProblem]) -> None:
    """Copy missing fields from the `crossref` parent (biblatex's default inheritance)."""
    by_key: dict[str, _RawEntry] = {}
    for entry in entries:
        by_key.setdefault(entry.key.lower(), entry)
    resolved: set[int] = set()

    def resolve(entry: _RawEntry, seen: set[str]) -> None:
        parent_key = entry.fields.get("crossref", "").strip()
        if not parent_key or id(entry) in resolved or entry.key.lower() in seen:
            return
        resolved.add(id(entry))
        parent = by_key.get(parent_key.lower())
        if parent is None:
            problems.append(
                InputProblem(
                    file=file,
                    line=entry.line,
                    key=entry.key,
                    message=f"crossref {parent_key!r} is not defined in this file",
                    code="missing-crossref",
                )
            )
            return
        resolve(parent, seen | {entry.key.lower()})
        for name, value in parent.fields.items():
            target = _RENAMED_ON_INHERIT.get(name, name)
            if target and target not in entry.fields:
                entry.fields[target] = value

    for entry in entries:
        resolve(entry, set())


def _ignore_comment(lines: list[str], entry_line: int) -> str | None:
    """A `% refaudit: ignore <reason>` on the comment lines right above the entry."""
    index = entry_line - 2
    while index >= 0 and lines[index].lstrip().startswith("%"):
        match = _IGNORE_COMMENT.match(lines[index])
        if match:
            return match.group(1).strip() or "ignored by a refaudit comment"
        index -= 1
    return None
