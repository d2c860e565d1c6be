"""Where references sit in an editor's document: entry ranges, the citation key under the
cursor, and the text edits `refaudit fix` would make, as line/column positions.

Positions follow the Language Server Protocol: lines from 0, columns in UTF-16 code
units (an accented or astral character in an author's name counts as the editor
counts it). Pure functions over text, so the language server stays a thin layer.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path

from refaudit.errors import InputError
from refaudit.fix import apply_fixes, scan_entries, verify_fix
from refaudit.models import AuditReport, Result, Verdict

#: `\cite{a,b}`, `\citep[p.~4]{a}`, `\parencite*{a}`, `\nocite{a}`: the keys' braces.
_CITATION = re.compile(r"\\[A-Za-z]*cite[A-Za-z]*\*?\s*(?:\[[^\]\n]*\]\s*){0,2}\{([^{}\n]*)\}")
_BIBITEM = re.compile(r"\\bibitem\s*(?:\[[^\]\n]*\]\s*)?\{([^{}\n]+)\}")
#: A `%` that starts a comment (`\\%` is a percent sign).
_COMMENT = re.compile(r"(?<!\\)%")
#: A biber .bbl's `\entry{key}{type}{…}`, whose block ends at `\endentry`.
_BIBER_ENTRY = re.compile(r"\\entry\{([^{}\n]+)\}\{[^{}\n]*\}")
_END_ENTRY = "\\endentry"


@dataclass(frozen=True)
class Position:
    """A place in a document: line from 0, column in UTF-16 code units."""

    line: int
    character: int


@dataclass(frozen=True)
class Span:
    """A range of a document, end exclusive."""

    start: Position
    end: Position


@dataclass(frozen=True)
class Edit:
    """Replace `span` with `text`: one entry's correction."""

    key: str
    span: Span
    text: str
    fields: tuple[str, ...]
    action: str


def position(text: str, offset: int) -> Position:
    """The position of a character offset into `text`."""
    return _Lines(text).position(offset)


class _Lines:
    """Offsets to positions in one text, its line starts found once: a bibliography of
    thousands of entries asks for two positions per entry."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(found.end() for found in re.finditer("\n", text))]

    def position(self, offset: int) -> Position:
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return Position(line, _utf16_length(self.text[start:offset]))


def offset(text: str, at: Position) -> int:
    """The character offset of a position (clamped to its line)."""
    lines = text.split("\n")
    if at.line >= len(lines):
        return len(text)
    start = sum(len(line) + 1 for line in lines[: at.line])
    line = lines[at.line]
    units = 0
    for index, char in enumerate(line):
        if units >= at.character:
            return start + index
        units += _utf16_length(char)
    return start + len(line)


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def line_span(text: str, line: int) -> Span:
    """The whole of line `line` (from 1, as references count them)."""
    lines = text.split("\n")
    index = min(max(line - 1, 0), max(len(lines) - 1, 0))
    content = lines[index] if lines else ""
    return Span(Position(index, 0), Position(index, _utf16_length(content.rstrip("\r"))))


def entry_spans(text: str, path: Path) -> dict[str, Span]:
    """Each entry's range by key: a .bib entry from `@` to its closing brace, a biber
    `\\entry` to its `\\endentry`, a `\\bibitem` to the line before the next one; the
    first of duplicate keys."""
    spans: dict[str, Span] = {}
    position = _Lines(text).position
    if path.suffix.lower() == ".bib":
        for entry in scan_entries(text):
            end = entry.end
            while end > entry.start and text[end - 1] in " \t\r\n":
                end -= 1
            spans.setdefault(entry.key, Span(position(entry.start), position(end)))
        return spans
    # Each search stops at the next entry, so a file of many entries is read once.
    heads = [*_BIBER_ENTRY.finditer(text)]
    for index, head in enumerate(heads):
        stop = heads[index + 1].start() if index + 1 < len(heads) else len(text)
        end = text.find(_END_ENTRY, head.end(), stop)
        # Without its \endentry (biber always writes one), up to the next entry.
        end = (
            end + len(_END_ENTRY)
            if end >= 0
            else head.start() + len(text[head.start() : stop].rstrip())
        )
        spans.setdefault(head.group(1).strip(), Span(position(head.start()), position(end)))
    items = [*_BIBITEM.finditer(text)]
    for index, item in enumerate(items):
        stop = items[index + 1].start() if index + 1 < len(items) else len(text)
        end = text.find("\\end{thebibliography}", item.end(), stop)
        stop = end if end >= 0 else stop
        body = text[item.start() : stop].rstrip()
        spans.setdefault(
            item.group(1).strip(),
            Span(position(item.start()), position(item.start() + len(body))),
        )
    return spans


def citations(text: str) -> dict[str, list[Span]]:
    """Where each key is cited in a .tex text: the key itself inside each `\\cite{…}`
    (citations in a comment left out)."""
    position = _Lines(text).position
    found: dict[str, list[Span]] = {}
    for citation in _CITATION.finditer(text):
        line_start = text.rfind("\n", 0, citation.start()) + 1
        if _COMMENT.search(text, line_start, citation.start()):
            continue
        start = citation.start(1)
        for key in citation.group(1).split(","):
            name = key.strip()
            if name:
                begin = start + len(key) - len(key.lstrip())
                found.setdefault(name, []).append(
                    Span(position(begin), position(begin + len(name)))
                )
            start += len(key) + 1
    return found


def key_at(text: str, path: Path, at: Position) -> str | None:
    """The citation key the cursor is on: in a `\\cite{…}` of a .tex file, or anywhere in a
    .bib entry or `\\bibitem`."""
    if path.suffix.lower() == ".tex":
        cursor = offset(text, at)
        line_start = text.rfind("\n", 0, cursor) + 1
        line_end = text.find("\n", cursor)
        line = text[line_start : len(text) if line_end < 0 else line_end]
        column = cursor - line_start
        for citation in _CITATION.finditer(line):
            if not citation.start(1) <= column <= citation.end(1):
                continue
            start = citation.start(1)
            for key in citation.group(1).split(","):
                if start <= column <= start + len(key):
                    return key.strip() or None
                start += len(key) + 1
        return None
    for key, span in entry_spans(text, path).items():
        if (
            (span.start.line, span.start.character)
            <= (at.line, at.character)
            <= (
                span.end.line,
                span.end.character,
            )
        ):
            return key
    return None


def fix_edit(text: str, result: Result) -> Edit | None:
    """The correction `refaudit fix` makes to this entry (with `--add-ids` for a verified
    one), as one edit of the entry; None when there is nothing it would change."""
    add_ids = result.verdict == Verdict.VERIFIED
    outcome = apply_fixes(text, AuditReport(results=[result]), add_ids=add_ids)
    if not outcome.changes:
        return None
    try:
        verify_fix(text, outcome)
    except InputError:
        return None
    change = outcome.changes[0]
    entry = next(span for span in scan_entries(text) if span.start == change.start)
    new_end = entry.end + len(outcome.text) - len(text)
    return Edit(
        key=change.key,
        span=Span(position(text, entry.start), position(text, entry.end)),
        text=outcome.text[entry.start : new_end],
        fields=change.fields,
        action=change.action,
    )


def fix_all_edits(text: str, results: list[Result]) -> list[Edit]:
    """What `refaudit fix` makes of the whole file: every mismatched entry corrected (edits
    against the same text, as a workspace edit applies them), refused whole when the
    corrected file would not re-parse to the same entries."""
    report = AuditReport(results=[r for r in results if r.verdict == Verdict.MISMATCH])
    outcome = apply_fixes(text, report)
    try:
        verify_fix(text, outcome)
    except InputError:
        return []
    edits = []
    for result in report.results:
        edit = fix_edit(text, result)
        if edit is not None and edit.key in {change.key for change in outcome.changes}:
            edits.append(edit)
    return edits
