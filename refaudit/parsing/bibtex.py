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
from typing import TYPE_CHECKING

from refaudit.braces import bibtex_split
from refaudit.models import Bibliography, InputProblem, Reference
from refaudit.parsing.lines import LineIndex
from refaudit.parsing.records import build_reference

if TYPE_CHECKING:
    from bibtexparser.model import Block

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
# Bounds on @string expansion: a few hundred bytes of nested macros can otherwise grow into
# gigabytes. No real field comes near the per-value cap; the total allows every field of a
# very large bibliography to be a long abstract.
MAX_VALUE_CHARS = 100_000
MAX_EXPANDED_CHARS = 50_000_000
# biblatex follows crossref chains; real ones are one or two levels deep.
MAX_CROSSREF_DEPTH = 8
_IGNORE_COMMENT = re.compile(r"^\s*%+\s*refaudit:\s*ignore\b[:\s]*(.*)$", re.IGNORECASE)
# Where bibtexparser starts a block even inside an unclosed one: `@type{` at a line start.
_BLOCK_START = re.compile(r"^[ \t]*@\w*[ \t]*[{(]", re.MULTILINE)
# Blocks parsed at a time: bibtexparser's objects for one chunk are dropped before the next.
CHUNK_BLOCKS = 1000
_ENTRY_HEAD = re.compile(r"@\s*(\w+)\s*[{(]\s*([^,\s}]*)")


class _ExpansionTooLarge(Exception):
    """A value grew past MAX_VALUE_CHARS, or the file past MAX_EXPANDED_CHARS."""


@dataclass
class _Budget:
    """Characters of expanded values left for the rest of the file."""

    remaining: int


@dataclass
class _PendingEntry:
    """An entry as split, before macro expansion (bibtexparser's objects are not kept)."""

    key: str
    entry_type: str
    line: int
    fields: list[tuple[str, str]]


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
    macros: dict[str, str | None] = dict(MONTH_MACROS)
    budget = _Budget(MAX_EXPANDED_CHARS)
    entries: list[_RawEntry] = []
    pending: list[_PendingEntry] = []
    for block, offset in _split_blocks(text):
        line = (block.start_line or 0) + offset + 1
        if isinstance(block, DuplicateBlockKeyBlock) and block.ignore_error_block is not None:
            block = block.ignore_error_block
        if isinstance(block, String):
            _define_macro(block, macros, budget, source, line, problems)
        elif isinstance(block, ParsingFailedBlock):
            inner = block.ignore_error_block
            if isinstance(inner, Entry):
                pending.append(_pending(inner, line))
                problems.append(_duplicate_field_problem(block, inner, source, line))
            else:
                problems.append(_failure_problem(block, source, line))
        elif isinstance(block, Entry):
            pending.append(_pending(block, line))
    for entry in pending:
        fields: dict[str, str] = {}
        try:
            for name, value in entry.fields:
                if name not in fields:
                    fields[name] = _expand(
                        value, macros, budget, source, entry.line, entry.key, problems
                    )
        except _ExpansionTooLarge as error:
            problems.append(_too_large_problem(entry.key, str(error), source, entry.line))
            continue
        entries.append(_RawEntry(entry.key, entry.entry_type, entry.line, fields))

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
def quiet_bibtexparser() -> Iterator[None]:
    """bibtexparser logs every syntax error; we report them as InputProblems instead."""
    logger = logging.getLogger("bibtexparser")
    previous = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(previous)


def _pending(entry: object, line: int) -> _PendingEntry:
    return _PendingEntry(
        str(getattr(entry, "key", "")).strip(),
        str(getattr(entry, "entry_type", "")).strip().lower(),
        line,
        [(item.key.strip().lower(), str(item.value)) for item in getattr(entry, "fields", [])],
    )


def _split_blocks(text: str) -> Iterator[tuple[Block, int]]:
    """Blocks, each with the line offset of the chunk it was parsed from.

    The text is parsed CHUNK_BLOCKS blocks at a time, cut where bibtexparser itself
    would start a new block (`@type{` at a line start), so a 100,000-entry file never
    holds all of bibtexparser's objects at once and the blocks are the same. If
    bibtexparser gives up on a chunk (it raises on states it considers its own bug),
    each block of that chunk is parsed on its own so the rest survives.
    """
    starts = [match.start() for match in _BLOCK_START.finditer(text)] or [0]
    groups = [starts[index : index + CHUNK_BLOCKS] for index in range(0, len(starts), CHUNK_BLOCKS)]
    lines = LineIndex(text)
    with quiet_bibtexparser():
        for number, group in enumerate(groups):
            begin = 0 if number == 0 else group[0]
            end = groups[number + 1][0] if number + 1 < len(groups) else len(text)
            yield from _parse_chunk(text, begin, end, group, lines)


def _parse_chunk(
    text: str, begin: int, end: int, starts: list[int], lines: LineIndex
) -> Iterator[tuple[Block, int]]:
    import bibtexparser

    try:
        library = bibtexparser.parse_string(text[begin:end], parse_stack=[])
    except Exception:  # noqa: BLE001 - fall back to parsing block by block
        pass
    else:
        offset = lines.line(begin) - 1
        yield from ((block, offset) for block in library.blocks)
        return
    for first, last in zip(starts, [*starts[1:], end], strict=True):
        offset = lines.line(first) - 1
        try:
            blocks = bibtexparser.parse_string(text[first:last], parse_stack=[]).blocks
        except Exception as error:  # noqa: BLE001
            from bibtexparser.model import ParsingFailedBlock

            blocks = [ParsingFailedBlock(error, start_line=0, raw=text[first:last])]
        yield from ((block, offset) for block in blocks)


def _define_macro(
    block: object,
    macros: dict[str, str | None],
    budget: _Budget,
    file: str,
    line: int,
    problems: list[InputProblem],
) -> None:
    """Expand one @string; a value too large to keep poisons the macro for its users."""
    name = str(getattr(block, "key", "")).lower()
    try:
        macros[name] = _expand(
            str(getattr(block, "value", "")), macros, budget, file, line, None, problems
        )
    except _ExpansionTooLarge as error:
        macros[name] = None
        problems.append(
            _too_large_problem(None, f"@string {name} is not expanded: {error}", file, line)
        )


def _too_large_problem(key: str | None, reason: str, file: str, line: int) -> InputProblem:
    message = f"could not parse this entry, so it is left out: {reason}" if key else reason
    return InputProblem(
        file=file,
        line=line,
        key=key,
        message=message,
        severity="error",
        code="parse-error",
    )


def _expand(
    raw: str,
    macros: dict[str, str | None],
    budget: _Budget,
    file: str,
    line: int,
    key: str | None,
    problems: list[InputProblem],
) -> str:
    """Resolve one raw value: `{…}`, `"…"`, numbers, macros and `#` concatenation.

    Raises _ExpansionTooLarge before building a value over the caps (or using a
    macro that was itself too large).
    """
    pieces: list[str] = []
    length = 0
    for part in bibtex_split(raw, "#", quotes=True):
        part = part.strip()
        if not part:
            continue
        if part[0] == "{":
            piece = part[1:-1] if part.endswith("}") else part[1:]
        elif part[0] == '"':
            piece = part[1:-1] if part.endswith('"') and len(part) > 1 else part[1:]
        elif part.isdigit():
            piece = part
        elif part.lower() in macros:
            expanded = macros[part.lower()]
            if expanded is None:
                raise _ExpansionTooLarge(f"it uses @string {part!r}, which was too long to expand")
            piece = expanded
        else:
            piece = part
            problems.append(
                InputProblem(
                    file=file,
                    line=line,
                    key=key,
                    message=f"undefined @string macro {part!r}; its name is used as the value",
                    code="undefined-macro",
                )
            )
        length += len(piece)
        if length > MAX_VALUE_CHARS:
            raise _ExpansionTooLarge(f"a value expands to more than {MAX_VALUE_CHARS:,} characters")
        pieces.append(piece)
    if length > budget.remaining:
        raise _ExpansionTooLarge(
            f"@string expansion passed {MAX_EXPANDED_CHARS:,} characters for the whole file"
        )
    budget.remaining -= length
    return "".join(pieces)


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
    """Copy missing fields from the `crossref` parent (biblatex's default inheritance).

    Chains are followed iteratively, at most MAX_CROSSREF_DEPTH levels; a cycle
    (an entry that is its own ancestor) is reported and inheritance stops there.
    """
    by_key: dict[str, _RawEntry] = {}
    for entry in entries:
        by_key.setdefault(entry.key.lower(), entry)
    resolved: set[int] = set()

    def problem(entry: _RawEntry, message: str, code: str) -> None:
        problems.append(
            InputProblem(file=file, line=entry.line, key=entry.key, message=message, code=code)
        )

    for entry in entries:
        chain = [entry]
        complete = True
        while id(chain[-1]) not in resolved:
            child = chain[-1]
            parent_key = child.fields.get("crossref", "").strip()
            if not parent_key:
                break
            parent = by_key.get(parent_key.lower())
            if parent is None:
                problem(
                    child,
                    f"crossref {parent_key!r} is not defined in this file",
                    "missing-crossref",
                )
                break
            if any(parent is member for member in chain):
                problem(
                    child,
                    f"crossref {parent_key!r} leads back to this entry; inheritance stops here",
                    "crossref-cycle",
                )
                break
            if len(chain) > MAX_CROSSREF_DEPTH:
                problem(
                    entry,
                    f"crossref chain deeper than {MAX_CROSSREF_DEPTH} levels; the rest is not read",
                    "crossref-too-deep",
                )
                complete = False
                break
            chain.append(parent)
        for child, parent in reversed(list(zip(chain, chain[1:], strict=False))):
            if id(child) not in resolved:
                _inherit(child, parent)
        # A cut-off chain's last entry still follows its own crossref later.
        resolved.update(id(member) for member in (chain if complete else chain[:-1]))


def _inherit(child: _RawEntry, parent: _RawEntry) -> None:
    for name, value in parent.fields.items():
        target = _RENAMED_ON_INHERIT.get(name, name)
        if target and target not in child.fields:
            child.fields[target] = value


def _ignore_comment(lines: list[str], entry_line: int) -> str | None:
    """A `% refaudit: ignore <reason>` on the comment lines right above the entry."""
    index = entry_line - 2
    while index >= 0 and lines[index].lstrip().startswith("%"):
        match = _IGNORE_COMMENT.match(lines[index])
        if match:
            return match.group(1).strip() or "ignored by a refaudit comment"
        index -= 1
    return None
