"""Apply refaudit's corrections to the text of a .bib file, touching nothing else.

Entries are located by a small scanner (balanced braces, `@type{key,` heads)
rather than re-serialised by a parser, so comments, `@string`s, field order,
alignment and every untouched entry keep their exact bytes. Only entries with a
`mismatch` verdict are replaced (by `Result.corrected_bibtex`), and with
`add_ids` verified entries gain a `doi = {…}` line. Entries nobody could
confirm (`not_found`, `unverified`) are left alone and listed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from refaudit.bibtex import corrected_entry
from refaudit.models import AuditReport, Result, Verdict

_ENTRY_HEAD = re.compile(r"@[ \t]*([A-Za-z]+)[ \t\r\n]*([{(])")
_NON_ENTRIES = frozenset({"comment", "string", "preamble"})


@dataclass(frozen=True)
class EntrySpan:
    """Where one entry sits in the text: [start, end) byte offsets, its key and first line."""

    key: str
    start: int
    end: int
    line: int


@dataclass(frozen=True)
class Change:
    """One edit `apply_fixes` made."""

    key: str
    line: int
    action: str  # "corrected" or "added-ids"
    fields: tuple[str, ...]


@dataclass
class FixOutcome:
    """The new text, what changed, and which references were left as they were (and why)."""

    text: str
    changes: list[Change] = field(default_factory=list)
    left: list[tuple[Result, str]] = field(default_factory=list)


def scan_entries(text: str) -> list[EntrySpan]:
    """Every keyed entry in `text`, in order (comments, @string and @preamble skipped)."""
    spans: list[EntrySpan] = []
    position = 0
    while True:
        match = _ENTRY_HEAD.search(text, position)
        if not match:
            return spans
        if _in_percent_comment(text, match.start()):
            position = match.end()
            continue
        end = _closing(text, match.end() - 1)
        if end is None:
            return spans
        kind = match.group(1).lower()
        if kind not in _NON_ENTRIES:
            key = text[match.end() : end].split(",", 1)[0].strip()
            if key:
                line = text.count("\n", 0, match.start()) + 1
                spans.append(EntrySpan(key, match.start(), end + 1, line))
        position = end + 1


def _in_percent_comment(text: str, index: int) -> bool:
    line_start = text.rfind("\n", 0, index) + 1
    return text[line_start:index].lstrip().startswith("%")


def _closing(text: str, open_index: int) -> int | None:
    """Index of the delimiter closing the entry opened at `open_index`.

    BibTeX counts every brace, escaped or not, so plain depth counting matches it.
    """
    closer = "}" if text[open_index] == "{" else ")"
    depth = 0
    for index in range(open_index + 1, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0 and closer == "}":
                return index
            depth -= 1
        elif char == closer and depth == 0:
            return index
    return None


def apply_fixes(
    text: str, report: AuditReport, *, add_ids: bool = False, file: str | None = None
) -> FixOutcome:
    """Rewrite the entries the report corrects; everything else is kept byte for byte.

    `file` limits the edit to results whose reference came from that file (a
    report may cover several inputs).
    """
    spans = scan_entries(text)
    outcome = FixOutcome(text=text)
    edits: list[tuple[EntrySpan, str, Change]] = []
    used: set[int] = set()
    for result in report.results:
        reference = result.reference
        if file is not None and reference.file not in (None, file):
            continue
        span = _span_for(spans, reference.key, reference.line, used)
        if span is None:
            if result.verdict == Verdict.MISMATCH:
                outcome.left.append((result, "entry not found in the file"))
            continue
        used.add(span.start)
        edit = _edit_for(result, text[span.start : span.end], add_ids)
        if isinstance(edit, str):
            if edit:
                outcome.left.append((result, edit))
            continue
        replacement, fields, action = edit
        edits.append((span, replacement, Change(reference.key, span.line, action, fields)))

    pieces: list[str] = []
    cursor = 0
    for span, replacement, change in sorted(edits, key=lambda item: item[0].start):
        pieces += [text[cursor : span.start], replacement]
        cursor = span.end
        outcome.changes.append(change)
    pieces.append(text[cursor:])
    outcome.text = "".join(pieces)
    return outcome


def _span_for(
    spans: list[EntrySpan], key: str, line: int | None, used: set[int]
) -> EntrySpan | None:
    candidates = [s for s in spans if s.key == key and s.start not in used]
    exact = [s for s in candidates if s.line == line]
    return (exact or candidates or [None])[0]


def _edit_for(
    result: Result, original: str, add_ids: bool
) -> tuple[str, tuple[str, ...], str] | str:
    """(replacement, changed fields, action), or why the entry was left ("" = nothing to do)."""
    verdict = result.verdict
    if verdict in (Verdict.NOT_FOUND, Verdict.UNVERIFIED):
        return verdict.value.replace("_", " ")
    if verdict == Verdict.MISMATCH:
        corrected = result.corrected_bibtex
        if corrected is None and result.matched is not None:
            corrected = corrected_entry(result.reference, result.matched, result.findings)
        if corrected is None:
            return "mismatch without a matched record to correct from"
        fields = tuple(sorted({f.field for f in result.findings if f.field and not f.suppressed}))
        return _reindent(corrected.rstrip("\n"), _field_indent(original)), fields, "corrected"
    if verdict == Verdict.VERIFIED and add_ids:
        return _with_missing_doi(result, original) or ""
    return ""


def _with_missing_doi(result: Result, original: str) -> tuple[str, tuple[str, ...], str] | None:
    """Insert a `doi` line before the entry's closing delimiter, in the entry's own style."""
    doi = result.matched.doi if result.matched else None
    has_doi = result.reference.doi or re.search(r"(?im)^\s*doi\s*=", original)
    if not doi or has_doi:
        return None
    body = original[:-1].rstrip()
    indent = _field_indent(original)
    separator = "" if body.endswith(",") else ","
    closing_newline = "\n" if "\n" in original else " "
    new = f"{body}{separator}\n{indent}doi = {{{doi}}},{closing_newline}{original[-1]}"
    return new, ("doi",), "added-ids"


def _field_indent(entry: str) -> str:
    match = re.search(r"\n([ \t]+)\S", entry)
    return match.group(1) if match else "  "


def _reindent(entry: str, indent: str) -> str:
    return re.sub(r"(?m)^  (?=\S)", lambda _m: indent, entry)
