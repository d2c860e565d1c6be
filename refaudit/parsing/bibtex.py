"""BibTeX / biblatex text → `Bibliography`, one broken entry never costing the others.

bibtexparser 2 splits the text into blocks (and keeps the ones it could not
parse, with their start line). Macro expansion, `#` concatenation, month
macros and crossref inheritance happen here rather than in its middlewares so
that every step can report what it could not resolve.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import re
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from refaudit.braces import bibtex_split
from refaudit.models import Bibliography, InputProblem, Reference
from refaudit.parsing.keylines import KeyLines
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
# gigabytes. No real field comes near the per-value cap. The total counts what the @string
# definitions hold and what macros add to the entries, not the text an entry spells out
# itself (the file's size bounds that): a million plain entries are all read.
MAX_VALUE_CHARS = 100_000
MAX_EXPANDED_CHARS = 50_000_000
# biblatex follows crossref chains; real ones are one or two levels deep.
MAX_CROSSREF_DEPTH = 8
_IGNORE_COMMENT = re.compile(r"^\s*%+\s*refaudit:\s*ignore\b[:\s]*(.*)$", re.IGNORECASE)
# Where bibtexparser starts a block even inside an unclosed one: `@type{` at a line start.
_BLOCK_START = re.compile(r"^[ \t]*@\w*[ \t]*[{(]", re.MULTILINE)
# Blocks parsed at a time: bibtexparser's objects for one chunk are dropped before the next.
CHUNK_BLOCKS = 1000
# The first chunk is this small, and each one after it twice the one before (up to
# CHUNK_BLOCKS): a long file's first references are handed out, and their requests
# sent, before a thousand blocks are parsed.
FIRST_CHUNK_BLOCKS = 8
_ENTRY_HEAD = re.compile(r"@\s*(\w+)\s*[{(]\s*([^,\s}]*)")
# What `Outline` looks for in the raw bytes: where a block may start (anywhere, not only
# at a line start: the outline must never miss one), and a field that names a parent.
_ANY_BLOCK = re.compile(rb"@\s*(\w*)\s*[{(]")
_PARENT_FIELD = re.compile(rb"\b(?:crossref|xref)\s*=")
_NOT_ENTRIES = frozenset({b"string", b"comment", b"preamble"})


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


Lines = Callable[[], Iterator[str]]
"""Reads the text from its start, a line at a time (each with its "\\n"): once per pass."""


class Outline:
    """A quick look at a .bib's raw bytes, taken while the file is checked: how many
    entries it holds, and whether its references can be built in one pass.

    They can when no @string follows the first entry and no entry names a crossref
    parent: the macros are then all defined before any entry needs them, and no entry
    waits for a parent further down. The look is cautious (any `@string{` or `crossref =`
    counts, even in a comment) and may only send a file to the full first pass, which
    reads the same references; a one-pass file is audited from its first entries.
    """

    def __init__(self) -> None:
        self.entries = 0
        self._late_string = self._parents = False

    def feed(self, lines: bytes) -> None:
        """Look at the next whole lines of the file."""
        for found in _ANY_BLOCK.finditer(lines):
            kind = found.group(1).lower()
            if kind not in _NOT_ENTRIES:
                self.entries += 1
            elif kind == b"string" and self.entries:
                self._late_string = True
        if not self._parents:
            lower = lines.lower()
            self._parents = (b"crossref" in lower or b"xref" in lower) and bool(
                _PARENT_FIELD.search(lower)
            )

    @property
    def one_pass(self) -> bool:
        return bool(self.entries) and not (self._late_string or self._parents)


def parse_bibtex(text: str, *, file: str | None = None) -> Bibliography:
    """Every entry of a .bib text as a `Reference`, plus the problems met on the way."""
    stream = BibtexStream(functools.partial(text_lines, text), file=file)
    stream.prepare()
    references = list(stream.references())
    return Bibliography(
        references=references, problems=stream.problems(), files=[file] if file else []
    )


def text_lines(text: str) -> Iterator[str]:
    """`text` cut after each "\\n" (and only there, as `re.MULTILINE`'s `^` cuts)."""
    begin = 0
    while begin < len(text):
        end = text.find("\n", begin) + 1 or len(text)
        yield text[begin:end]
        begin = end


class BibtexStream:
    """A .bib text read CHUNK_BLOCKS blocks at a time, its references handed out in order.

    `prepare` reads the text once: the @string macros, the block-level problems, and the
    crossref parents (the raw entries some `crossref` names, read in a second pass only
    when there are any). `references` reads it again and builds each entry's `Reference`
    as its chunk comes, so a long file is never held whole: what stays for the whole
    file is the macros, the parents, one line per key (duplicate keys) and the problems.
    The references and problems are those of parsing the whole text at once; the one
    exception is a file whose expansions pass MAX_EXPANDED_CHARS, where a crossref
    parent after that point still lends its fields.
    """

    def __init__(
        self, lines: Lines, *, file: str | None, counted: Container[str] | None = None
    ) -> None:
        self.file = file
        self.entries = 0  # entries found by `prepare`, before expansion
        self.counted = 0  # those of them keyed in `counted` (all when None): a paper's cited
        self._counting = counted
        self._lines = lines
        self._source = file or "<bibtex>"
        # By the step that found them; `problems` sorts them by line, as one pass did.
        self._found: tuple[list[InputProblem], ...] = ([], [], [], [], [])
        self._macros: dict[str, str | None] = dict(MONTH_MACROS)
        self._budget = _Budget(MAX_EXPANDED_CHARS)
        self._targets: set[str] = set()
        self._candidates: dict[str, list[_PendingEntry]] = {}
        self._parents: dict[str, _RawEntry | None] = {}
        self._resolved: set[int] = set()
        self._first_line = KeyLines()
        self._one_pass = False

    def prepare(self, outline: Outline | None = None) -> None:
        """The first pass: macros, block problems, the entry count and crossref parents.

        With an `outline` that says one pass will do, there is none: the count is the
        outline's, and the macros and block problems are read as the references are.
        """
        if outline is not None and outline.one_pass and self._counting is None:
            self.entries = self.counted = outline.entries
            self._one_pass = True
            return
        blocks_found, _, _, _, _ = self._found
        crossrefs: list[tuple[str, str]] = []
        for pending in self._pending(blocks_found, define=True):
            self.entries += 1
            self.counted += self._counting is None or pending.key in self._counting
            value = next((raw for name, raw in pending.fields if name == "crossref"), None)
            if value is not None:
                crossrefs.append((pending.key, value))
        for key, raw in crossrefs:
            scratch: list[InputProblem] = []
            with contextlib.suppress(_ExpansionTooLarge):
                parent = self._expand_raw(raw, _Budget(MAX_EXPANDED_CHARS), 0, key, scratch)
                if parent.strip():
                    self._targets.add(parent.strip().lower())
        if self._targets:
            for pending in self._pending([], define=False):
                if pending.key.lower() in self._targets:
                    self._candidates.setdefault(pending.key.lower(), []).append(pending)

    def references(self) -> Iterator[Reference]:
        """Every entry that could be read, in file order (the second pass)."""
        blocks_found, expanding, duplicates, crossrefs, building = self._found
        # In one pass, @strings are defined and block problems found here.
        blocks = blocks_found if self._one_pass else None
        window: list[str] = []
        first = 1
        for chunk, line in self._chunks():
            # Comment lines right above an entry may end the previous chunk.
            tail = list(itertools.takewhile(_is_comment, reversed(window)))[::-1]
            window, first = tail + chunk.split("\n"), line - len(tail)
            if chunk.endswith("\n"):
                window.pop()
            for pending in self._entries_of(chunk, line, blocks, define=self._one_pass):
                raw = self._expanded(pending, self._budget, expanding)
                if raw is None:
                    continue
                parent = self._parent(raw.key.lower()) if raw.key.lower() in self._targets else None
                if parent is not None and (parent.line, parent.key) == (raw.line, raw.key):
                    raw = parent
                self._check_duplicate(raw, duplicates)
                self._inherit_crossref(raw, crossrefs)
                reference = build_reference(
                    raw.key,
                    raw.entry_type,
                    raw.fields,
                    file=self.file,
                    line=raw.line,
                    problems=building,
                )
                if reference.ignore_reason is None:
                    reference.ignore_reason = _ignore_comment(window, raw.line - first)
                yield reference
        self._first_line.close()

    def problems(self) -> list[InputProblem]:
        """Every problem found so far, by line (and in the order one pass met them)."""
        return sorted(itertools.chain(*self._found), key=lambda problem: problem.line or 0)

    def _chunks(self) -> Iterator[tuple[str, int]]:
        """(text, its first line) of up to CHUNK_BLOCKS blocks each (fewer at first), cut
        where bibtexparser would start a block anyway (`@type{` at a line start), so its
        blocks are the same."""
        lines: list[str] = []
        starts = 0
        first = number = 1
        size = min(FIRST_CHUNK_BLOCKS, CHUNK_BLOCKS)
        for text in self._lines():
            if _BLOCK_START.match(text):
                if starts == size:
                    yield "".join(lines), first
                    lines, starts, first = [], 0, number
                    size = min(2 * size, CHUNK_BLOCKS)
                starts += 1
            lines.append(text)
            number += 1
        if lines:
            yield "".join(lines), first

    def _pending(self, problems: list[InputProblem], *, define: bool) -> Iterator[_PendingEntry]:
        """The entries of the text before expansion; @strings are defined when `define`."""
        for chunk, line in self._chunks():
            yield from self._entries_of(chunk, line, problems, define=define)

    def _entries_of(
        self,
        chunk: str,
        first_line: int,
        problems: list[InputProblem] | None = None,
        *,
        define: bool = False,
    ) -> Iterator[_PendingEntry]:
        """One chunk's entries; block problems go to `problems` (None: already reported)."""
        from bibtexparser.model import DuplicateBlockKeyBlock, Entry, ParsingFailedBlock, String

        found: list[InputProblem] = [] if problems is None else problems
        for block, offset in _parse_chunk(chunk, first_line - 1):
            line = (block.start_line or 0) + offset + 1
            if isinstance(block, DuplicateBlockKeyBlock) and block.ignore_error_block is not None:
                block = block.ignore_error_block
            if isinstance(block, String):
                if define:
                    _define_macro(block, self._macros, self._budget, self._source, line, found)
            elif isinstance(block, ParsingFailedBlock):
                inner = block.ignore_error_block
                if isinstance(inner, Entry):
                    yield _pending(inner, line)
                    found.append(_duplicate_field_problem(block, inner, self._source, line))
                else:
                    found.append(_failure_problem(block, self._source, line))
            elif isinstance(block, Entry):
                yield _pending(block, line)

    def _expand_raw(
        self, raw: str, budget: _Budget, line: int, key: str, problems: list[InputProblem]
    ) -> str:
        return _expand(raw, self._macros, budget, self._source, line, key, problems)

    def _expanded(
        self, entry: _PendingEntry, budget: _Budget, problems: list[InputProblem]
    ) -> _RawEntry | None:
        """The entry with its macros expanded, or None (and a problem) when it grew too large."""
        fields: dict[str, str] = {}
        try:
            for name, value in entry.fields:
                if name not in fields:
                    fields[name] = self._expand_raw(value, budget, entry.line, entry.key, problems)
        except _ExpansionTooLarge as error:
            problems.append(_too_large_problem(entry.key, str(error), self._source, entry.line))
            return None
        return _RawEntry(entry.key, entry.entry_type, entry.line, fields)

    def _parent(self, key: str) -> _RawEntry | None:
        """The first entry keyed `key` (lower case) that expands; the same object each time."""
        if key not in self._parents:
            expanded = (
                self._expanded(pending, _Budget(MAX_EXPANDED_CHARS), [])
                for pending in self._candidates.get(key, [])
            )
            self._parents[key] = next((raw for raw in expanded if raw is not None), None)
        return self._parents[key]

    def _check_duplicate(self, entry: _RawEntry, problems: list[InputProblem]) -> None:
        first = self._first_line.first_seen(entry.key, entry.line)
        if first is not None:
            problems.append(
                InputProblem(
                    file=self._source,
                    line=entry.line,
                    key=entry.key,
                    message=f"duplicate key: also defined on line {first}; both entries are kept",
                    code="duplicate-key",
                )
            )

    def _inherit_crossref(self, entry: _RawEntry, problems: list[InputProblem]) -> None:
        """Copy missing fields from the `crossref` parent (biblatex's default inheritance).

        Chains are followed iteratively, at most MAX_CROSSREF_DEPTH levels; a cycle
        (an entry that is its own ancestor) is reported and inheritance stops there.
        Parents are resolved once, whichever entry reaches them first.
        """

        def problem(member: _RawEntry, message: str, code: str) -> None:
            problems.append(
                InputProblem(
                    file=self._source, line=member.line, key=member.key, message=message, code=code
                )
            )

        chain = [entry]
        complete = True
        while id(chain[-1]) not in self._resolved:
            child = chain[-1]
            parent_key = child.fields.get("crossref", "").strip()
            if not parent_key:
                break
            parent = self._parent(parent_key.lower())
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
            if id(child) not in self._resolved:
                _inherit(child, parent)
        # A cut-off chain's last entry still follows its own crossref later. Only parents
        # live on, so only their ids are kept.
        members = chain if complete else chain[:-1]
        self._resolved.update(id(m) for m in members if m is self._parents.get(m.key.lower()))


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


def _parse_chunk(chunk: str, offset: int) -> Iterator[tuple[Block, int]]:
    """The chunk's blocks, each with the line offset its `start_line` counts from.

    If bibtexparser gives up on a chunk (it raises on states it considers its own bug),
    each block of that chunk is parsed on its own so the rest survives.
    """
    import bibtexparser

    with quiet_bibtexparser():
        try:
            library = bibtexparser.parse_string(chunk, parse_stack=[])
        except Exception:  # noqa: BLE001 - fall back to parsing block by block
            pass
        else:
            yield from ((block, offset) for block in library.blocks)
            return
        starts = [match.start() for match in _BLOCK_START.finditer(chunk)] or [0]
        lines = LineIndex(chunk)
        for first, last in zip(starts, [*starts[1:], len(chunk)], strict=True):
            try:
                blocks = bibtexparser.parse_string(chunk[first:last], parse_stack=[]).blocks
            except Exception as error:  # noqa: BLE001
                from bibtexparser.model import ParsingFailedBlock

                blocks = [ParsingFailedBlock(error, start_line=0, raw=chunk[first:last])]
            yield from ((block, offset + lines.line(first) - 1) for block in blocks)


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
            str(getattr(block, "value", "")), macros, budget, file, line, None, problems, whole=True
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
    *,
    whole: bool = False,
) -> str:
    """Resolve one raw value: `{…}`, `"…"`, numbers, macros and `#` concatenation.

    Raises _ExpansionTooLarge before building a value over the caps (or using a
    macro that was itself too large). The file's budget is charged the whole value of
    an @string (`whole`), and only the macros' part of an entry's.
    """
    pieces: list[str] = []
    length = charged = 0
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
            charged += len(piece)
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
    charged = length if whole else charged
    if charged > budget.remaining:
        raise _ExpansionTooLarge(
            f"@string expansion passed {MAX_EXPANDED_CHARS:,} characters for the whole file"
        )
    budget.remaining -= charged
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


def _inherit(child: _RawEntry, parent: _RawEntry) -> None:
    for name, value in parent.fields.items():
        target = _RENAMED_ON_INHERIT.get(name, name)
        if target and target not in child.fields:
            child.fields[target] = value


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("%")


def _ignore_comment(lines: list[str], entry: int) -> str | None:
    """A `% refaudit: ignore <reason>` on the comment lines right above `lines[entry]`."""
    index = entry - 1
    while index >= 0 and _is_comment(lines[index]):
        match = _IGNORE_COMMENT.match(lines[index])
        if match:
            return match.group(1).strip() or "ignored by a refaudit comment"
        index -= 1
    return None
