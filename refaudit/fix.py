"""Apply refaudit's corrections to the text of a .bib file, touching nothing else.

Entries are located by bibtexparser's own splitter (the parser the audit read
the file with, so both agree on where every entry starts and ends) rather than
re-serialised, so comments, `@string`s, field order, alignment and every
untouched entry keep their exact bytes. Within an entry with
a `mismatch` verdict only the fields `Result.corrected_bibtex` changes are
rewritten, so a field nobody contradicts keeps its macro (`journal = nature`),
quoting and alignment; with `add_ids` verified entries gain a `doi = {…}` line.
Entries nobody could confirm (`not_found`, `unverified`) are left alone and listed.

`verify_fix` re-parses the result: any entry, field or block other than the
corrected fields that differs from the original refuses the whole fix, and the
fields reported as corrected are the ones that really changed.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from refaudit.bibtex import addable_doi, corrected_entry
from refaudit.errors import InputError
from refaudit.models import AuditReport, Result, Verdict
from refaudit.parsing.lines import LineIndex

_ENTRY_HEAD = re.compile(r"@[ \t]*([A-Za-z]+)[ \t\r\n]*([{(])")
_NAME = re.compile(r"[A-Za-z0-9_:.+\-]+")


@dataclass(frozen=True)
class EntrySpan:
    """Where one entry sits in the text: [start, end) byte offsets, its key and first line."""

    key: str
    start: int
    end: int
    line: int


@dataclass(frozen=True)
class FieldSpan:
    """One `name = value` of an entry, as offsets into the entry's text."""

    name: str  # lower-cased
    name_start: int
    name_end: int
    equals: int
    value_start: int
    value_end: int
    comma_end: int | None  # just after the field's trailing comma, when it has one


@dataclass(frozen=True)
class EntryLayout:
    """Where an entry's type and fields sit in its text."""

    type_start: int
    type_end: int
    fields: list[FieldSpan]


@dataclass(frozen=True)
class Change:
    """One edit `apply_fixes` made."""

    key: str
    line: int
    action: str  # "corrected" or "added-ids"
    fields: tuple[str, ...]
    start: int = field(default=-1, compare=False)  # offset of the entry in the original text


@dataclass
class FixOutcome:
    """The new text, what changed, and which references were left as they were (and why)."""

    text: str
    changes: list[Change] = field(default_factory=list)
    left: list[tuple[Result, str]] = field(default_factory=list)


@dataclass(frozen=True)
class TextEncoding:
    """How a .bib file's bytes were decoded, so the fixed text is written back the same way."""

    name: str  # "utf-8", "latin-1", "utf-16-le" or "utf-16-be"
    bom: bytes = b""

    def decode(self, data: bytes) -> str:
        return data[len(self.bom) :].decode(self.name)

    def encode(self, text: str, *, file: str) -> bytes:
        """The text in this encoding; refuses rather than mixing encodings in one file."""
        try:
            return self.bom + text.encode(self.name)
        except UnicodeEncodeError as error:
            character = error.object[error.start]
            line = error.object.count("\n", 0, error.start) + 1
            raise InputError(
                f"the corrected text needs {character!r} (line {line}), which {self.name} "
                "cannot hold; nothing was written",
                file=file,
                hint="convert the file to UTF-8, then run fix again",
            ) from None


def detect_encoding(data: bytes) -> TextEncoding:
    """UTF-8 (with or without BOM), UTF-16 with a BOM, else Latin-1: as the audit read it."""
    for bom, name in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            return TextEncoding(name, bom)
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    try:
        data[len(bom) :].decode("utf-8")
    except UnicodeDecodeError:
        return TextEncoding("latin-1")
    return TextEncoding("utf-8", bom)


@dataclass(frozen=True)
class _Block:
    """One block bibtexparser split the text into, with where it starts."""

    start: int
    kind: str  # "entry", "string", "preamble", "comment" or "failed"
    raw: str
    entry: object | None = None  # bibtexparser's Entry for entries


def _blocks(text: str, *, file: str | None = None) -> list[_Block]:
    """The text's blocks as bibtexparser splits it (the audit read it the same way)."""
    import bibtexparser
    from bibtexparser.model import Entry, ExplicitComment, ImplicitComment, Preamble, String

    from refaudit.parsing.bibtex import quiet_bibtexparser

    with quiet_bibtexparser():
        try:
            library = bibtexparser.parse_string(text, parse_stack=[])
        except Exception as error:  # noqa: BLE001 - bibtexparser raises on states it cannot split
            raise InputError(
                f"fix cannot split this file into entries safely ({error}); nothing was written",
                file=file,
            ) from None
    blocks: list[_Block] = []
    cursor = 0
    for block in library.blocks:
        raw = block.raw or ""
        if not raw:
            continue  # a block aborted where it began holds no text
        start = text.find(raw, cursor)
        if start < 0:
            raise InputError(
                "fix cannot locate an entry of this file exactly; nothing was written",
                file=file,
                line=(block.start_line or 0) + 1,
            )
        # A failed block's text may run into the next block; entries never overlap.
        cursor = start + (len(raw) if isinstance(block, Entry) else 1)
        # Duplicate keys and fields wrap the entry (or @string) they concern.
        subject = getattr(block, "ignore_error_block", None) or block
        if isinstance(subject, Entry):
            kind = "entry"
        elif isinstance(subject, String):
            kind = "string"
        elif isinstance(subject, Preamble):
            kind = "preamble"
        elif isinstance(subject, ExplicitComment | ImplicitComment):
            kind = "comment"
        else:
            kind = "failed"
        blocks.append(_Block(start, kind, raw, subject if kind == "entry" else None))
    return blocks


def scan_entries(text: str) -> list[EntrySpan]:
    """Every keyed entry in `text`, in order, where bibtexparser finds it."""
    lines = LineIndex(text)
    spans: list[EntrySpan] = []
    for block in _blocks(text):
        key = str(getattr(block.entry, "key", "") or "").strip()
        if block.kind == "entry" and key:
            spans.append(
                EntrySpan(key, block.start, block.start + len(block.raw), lines.line(block.start))
            )
    return spans


def _closing(text: str, open_index: int, end: int | None = None) -> int | None:
    """Index of the delimiter closing the `{` or `"` at `open_index` (before `end`).

    bibtexparser's rules: a backslash-escaped brace or quote is not a delimiter;
    inside `{…}` braces nest and quotes are text; inside `"…"` braces are text and
    `{"}` is a literal quote.
    """
    stop = len(text) if end is None else end
    depth = 0
    quoted = text[open_index] == '"'
    for index in range(open_index + 1, stop):
        char = text[index]
        if char not in '{}"' or text[index - 1] == "\\":
            continue
        if quoted:
            if char == '"' and not (text[index - 1] == "{" and text[index + 1 : index + 2] == "}"):
                return index
        elif char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return index
            depth -= 1
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
        replacement, action = edit
        # Report what the rewrite really changes, read back the way bibtexparser reads it.
        fields = changed_fields(text[span.start : span.end], replacement)
        if not fields:
            outcome.left.append((result, "the sources' values are already in the entry"))
            continue
        edits.append(
            (span, replacement, Change(reference.key, span.line, action, fields, span.start))
        )

    pieces: list[str] = []
    cursor = 0
    for span, replacement, change in sorted(edits, key=lambda item: item[0].start):
        pieces += [text[cursor : span.start], replacement]
        cursor = span.end
        outcome.changes.append(change)
    pieces.append(text[cursor:])
    outcome.text = "".join(pieces)
    return outcome


def changed_fields(before: str, after: str) -> tuple[str, ...]:
    """Names of the fields (and "type"/"key") that differ between two texts of one entry."""
    old, new = _entry_data(before), _entry_data(after)
    if old is None or new is None:
        return ("entry",)
    names = {name for name in old.keys() | new.keys() if old.get(name) != new.get(name)}
    return tuple(sorted(names))


def _entry_data(text: str) -> dict[str, str] | None:
    """Type, key and raw field values (the first of duplicates) of one entry's text."""
    entries = [block for block in _blocks(text) if block.kind == "entry"]
    if len(entries) != 1:
        return None
    entry = entries[0].entry
    data = {"type": str(entry.entry_type).lower(), "key": str(entry.key).strip()}  # type: ignore[attr-defined]
    for item in entry.fields:  # type: ignore[attr-defined]
        data.setdefault(item.key.strip().lower(), " ".join(str(item.value).split()))
    return data


def verify_fix(original: str, outcome: FixOutcome, *, file: str | None = None) -> None:
    """Re-parse the fixed text and refuse it unless only the reported fields changed.

    Every block (entry, @string, @preamble, comment) must come back in the same
    order; untouched ones byte for byte, corrected entries differing only in the
    fields their `Change` names. Raises InputError (nothing is to be written).
    """
    old_blocks, new_blocks = _blocks(original, file=file), _blocks(outcome.text, file=file)
    lines = LineIndex(original)

    def refuse(block: _Block, why: str) -> None:
        key = str(getattr(block.entry, "key", "") or "").strip() or None
        raise InputError(
            f"refusing to write the fix: {why}; nothing was written",
            file=file,
            line=lines.line(block.start),
            key=key,
            hint="this is a bug in refaudit fix; please report it with the entry",
        )

    if len(old_blocks) != len(new_blocks):
        shorter = min(len(old_blocks), len(new_blocks))
        first = next(
            (o for o, n in zip(old_blocks, new_blocks, strict=False) if o.raw != n.raw),
            old_blocks[shorter] if shorter < len(old_blocks) else old_blocks[-1],
        )
        refuse(first, f"the result reads as {len(new_blocks)} blocks, not {len(old_blocks)}")
    by_start = {change.start: change for change in outcome.changes}
    for old, new in zip(old_blocks, new_blocks, strict=True):
        change = by_start.get(old.start)
        if change is None or old.kind != "entry":
            if (old.kind, old.raw) != (new.kind, new.raw):
                refuse(old, "an entry or block that was not corrected would change")
            continue
        differing = set(changed_fields(old.raw, new.raw))
        unexpected = differing - set(change.fields)
        if unexpected or new.kind != "entry":
            refuse(old, f"field(s) {', '.join(sorted(unexpected))} would change unreported")


def _span_for(
    spans: list[EntrySpan], key: str, line: int | None, used: set[int]
) -> EntrySpan | None:
    candidates = [s for s in spans if s.key == key and s.start not in used]
    exact = [s for s in candidates if s.line == line]
    return next(iter(exact or candidates), None)


def _edit_for(result: Result, original: str, add_ids: bool) -> tuple[str, str] | str:
    """(replacement, action), or why the entry was left ("" = nothing to do)."""
    verdict = result.verdict
    if verdict in (Verdict.NOT_FOUND, Verdict.UNVERIFIED):
        return verdict.value.replace("_", " ")
    if verdict == Verdict.MISMATCH:
        corrected = result.corrected_bibtex
        if corrected is None and result.matched is not None:
            corrected = corrected_entry(result.reference, result.matched, result.findings)
        if corrected is None:
            return "mismatch without a matched record to correct from"
        corrected = corrected.rstrip("\n")
        edited = _edit_fields(original, result.reference.fields, corrected)
        if edited is not None:
            return edited, "corrected"
        return _reindent(corrected, _field_indent(original)), "corrected"
    if verdict == Verdict.VERIFIED and add_ids:
        return _with_missing_doi(result, original) or ""
    return ""


def parse_layout(entry: str) -> EntryLayout | None:
    """The type and field offsets of one entry's text, or None when it is not plain BibTeX."""
    head = _ENTRY_HEAD.match(entry)
    if not head or entry[-1] not in "})":
        return None
    close = len(entry) - 1
    key_comma = entry.find(",", head.end(), close)
    fields: list[FieldSpan] = []
    position = close if key_comma < 0 else key_comma + 1
    while (position := _skip_space(entry, position)) < close:
        name = _NAME.match(entry, position)
        equals = _skip_space(entry, name.end()) if name else close
        if not name or equals >= close or entry[equals] != "=":
            return None
        value_start = _skip_space(entry, equals + 1)
        value_end = _value_end(entry, value_start, close)
        if value_end is None:
            return None
        after = _skip_space(entry, value_end)
        comma_end = after + 1 if after < close and entry[after] == "," else None
        if comma_end is None and after < close:
            return None
        fields.append(
            FieldSpan(
                name.group().lower(),
                name.start(),
                name.end(),
                equals,
                value_start,
                value_end,
                comma_end,
            )
        )
        position = comma_end or after
    return EntryLayout(head.start(1), head.end(1), fields)


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _value_end(entry: str, position: int, close: int) -> int | None:
    """End of a field value: `{…}`, `"…"`, a macro or number, joined by `#`."""
    while position < close:
        char = entry[position]
        if char in '{"':
            end = _closing(entry, position, close)
            if end is None:
                return None
            position = end + 1
        else:
            piece = _NAME.match(entry, position)
            if not piece:
                return None
            position = piece.end()
        following = _skip_space(entry, position)
        if following >= close or entry[following] != "#":
            return position
        position = _skip_space(entry, following + 1)
    return None


def _plain(value: str) -> str:
    """A value without its outer braces or quotes and with whitespace collapsed, to compare."""
    value = value.strip()
    if len(value) >= 2 and value[0] + value[-1] in ("{}", '""'):
        value = value[1:-1]
    return " ".join(value.split())


def _edit_fields(original: str, user_fields: dict[str, str], corrected: str) -> str | None:
    """`original` with only what `corrected` changes rewritten: values, renames, drops, additions.

    None when the entry's text cannot be read field by field (or has a field the
    parser did not see), so the caller falls back to replacing the whole entry.
    """
    old, new = parse_layout(original), parse_layout(corrected)
    if old is None or new is None:
        return None
    user = {name.lower(): _plain(value) for name, value in user_fields.items()}
    names = [f.name for f in old.fields]
    if len(set(names)) != len(names) or not set(names) <= set(user):
        return None
    wanted = {f.name: corrected[f.value_start : f.value_end] for f in new.fields}
    # A field the parser saw but the text lacks (inherited through `crossref`) stays out.
    added = [
        name for name in wanted if name not in names and _plain(wanted[name]) != user.get(name)
    ]
    edits: list[tuple[int, int, str]] = []
    new_type = corrected[new.type_start : new.type_end]
    if new_type.lower() != original[old.type_start : old.type_end].lower():
        edits.append((old.type_start, old.type_end, new_type))
    for span in old.fields:
        if span.name in wanted:
            if _plain(wanted[span.name]) != user[span.name]:
                edits.append((span.value_start, span.value_end, wanted[span.name]))
            continue
        renamed = next((n for n in added if _plain(wanted[n]) == user[span.name]), None)
        if renamed is not None:
            added.remove(renamed)
            width = span.equals - span.name_start
            edits.append((span.name_start, span.equals, _padded(renamed, width)))
        else:
            edits.append(_removal(original, span))
    if added:
        edits.append(_insertion(original, old, [(name, wanted[name]) for name in added]))
    text = original
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _padded(name: str, width: int) -> str:
    return name.ljust(width) if len(name) < width else f"{name} "


def _removal(entry: str, field: FieldSpan) -> tuple[int, int, str]:
    """The span of a dropped field: its whole line when it has one to itself."""
    line_start = entry.rfind("\n", 0, field.name_start) + 1
    start = line_start if not entry[line_start : field.name_start].strip() else field.name_start
    end = field.comma_end or field.value_end
    while end < len(entry) and entry[end] in " \t":
        end += 1
    if start == line_start and entry.startswith("\r\n", end):
        end += 2
    elif start == line_start and entry.startswith("\n", end):
        end += 1
    return start, end, ""


def _insertion(
    entry: str, layout: EntryLayout, fields: list[tuple[str, str]]
) -> tuple[int, int, str]:
    """New `name = value,` lines after the last field, in the entry's indent and alignment."""
    newline = "\r\n" if "\r\n" in entry else "\n"
    indent = _field_indent(entry)
    if not layout.fields:
        position = len(entry.rstrip()) - 1
        lines = "".join(f"{newline}{indent}{name} = {value}," for name, value in fields)
        return position, position, lines + newline
    first, last = layout.fields[0], layout.fields[-1]
    widths = {f.equals - f.name_start for f in layout.fields}
    width = widths.pop() if len(layout.fields) > 1 and len(widths) == 1 else None
    before = entry[first.name_end : first.equals]
    after = entry[first.equals + 1 : first.value_start]
    lines = "".join(
        f"{newline}{indent}{_padded(name, width) if width else name + before}={after}{value},"
        for name, value in fields
    )
    if last.comma_end is None:
        return last.value_end, last.value_end, "," + lines
    return last.comma_end, last.comma_end, lines


def _with_missing_doi(result: Result, original: str) -> tuple[str, str] | None:
    """Insert a `doi` line after the entry's last field, in the entry's own style."""
    doi = addable_doi(result.reference, result.findings)
    layout = parse_layout(original)
    if not doi or result.reference.doi or layout is None:
        return None
    if any(f.name == "doi" for f in layout.fields):
        return None
    start, end, text = _insertion(original, layout, [("doi", f"{{{doi}}}")])
    return original[:start] + text + original[end:], "added-ids"


def _field_indent(entry: str) -> str:
    match = re.search(r"\n([ \t]+)\S", entry)
    return match.group(1) if match else "  "


def _reindent(entry: str, indent: str) -> str:
    return re.sub(r"(?m)^  (?=\S)", lambda _m: indent, entry)
