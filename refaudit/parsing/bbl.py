"""Compiled bibliographies (.bbl): biber's biblatex data, or a BibTeX `thebibliography`.

arXiv does not run biber, so papers written with biblatex ship a .bbl holding
every entry as structured data (`\\entry`, `\\name`, `\\field`, `\\verb`). Those
entries are turned back into BibTeX fields and read exactly like a .bib entry;
a classic `thebibliography` list is read item by item as free text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Container, Iterator

from refaudit.models import Bibliography, InputProblem, Reference
from refaudit.parsing.bibitems import parse_bibitems
from refaudit.parsing.bibtex import Lines, text_lines
from refaudit.parsing.records import build_reference

# Bounded repeats keep every failed match short, so hostile files stay linear.
_ENTRY = re.compile(
    r"\\entry\{(?P<key>[^{}]{0,1000})\}\{(?P<type>[^{}]{0,100})\}(?:\{[^{}]{0,1000}\}){1,2}"
)
_END_ENTRY = re.compile(r"\\endentry\b")
_VERB = re.compile(r"\\verb\{(?P<name>[^{}]{1,100})\}")
_END_VERB = "\\endverb"
_VERB_LINE = re.compile(r"^\s*\\verb ?(.*)$")
_COMMAND = re.compile(r"\\(?P<command>field|name|list|range|true)\{(?P<name>[^{}]{1,100})\}")
_NAME_PART = re.compile(r"(?P<part>[a-z]+)=")
_SPACING_MACROS = re.compile(r"\\bib(?:namedelim[a-d]|namedelimi|initdelim)\b ?")
_INIT_PERIOD = re.compile(r"\\bibinitperiod\b ?")
_INIT_HYPHEN = re.compile(r"\\bibinithyphendelim\b ?")
_RANGE_DASH = re.compile(r"\\bibrangedash\b ?")
_POSITIONAL_PARTS = ("family", "familyi", "given", "giveni", "prefix", "prefixi", "suffix")
_BOOKKEEPING = ("sort", "label", "extra", "uniq", "single", "crossrefsource")


# The most text an _ENTRY match can span: where one may start is settled once this much
# of the text after it has been read.
_ENTRY_SPAN = 4096
# Characters read at a time while looking for the next \\entry.
_READ_CHARS = 1 << 16


def is_biblatex_bbl(text: str) -> bool:
    """True for a .bbl biber wrote (biblatex), False for a BibTeX `thebibliography` list."""
    return bool(_ENTRY.search(text))


def parse_bbl(text: str, *, file: str) -> Bibliography:
    """The references of a .bbl file, whichever of the two kinds it is."""
    stream = BblStream(functools.partial(text_lines, text), file=file)
    stream.prepare()
    references = list(stream.references())
    return Bibliography(references=references, problems=stream.problems(), files=[file])


class BblStream:
    """A .bbl text whose biber entries are read and handed out one at a time.

    A biber .bbl is a sequence of `\\entry … \\endentry` blocks: each one is built
    into a `Reference` as the text reaches the next `\\entry`, so a long file is never
    held whole (what stays is one key per entry, for duplicates, and the problems).
    A BibTeX `thebibliography` list is free text cut by `\\bibitem`, whose items are
    read from the whole text (`parse_bibitems`).
    """

    def __init__(self, lines: Lines, *, file: str, counted: Container[str] | None = None) -> None:
        self.file = file
        self.entries = 0  # references `references` will give, counted by `prepare`
        self.counted = 0  # those of them keyed in `counted` (all when None): a paper's cited
        self._counting = counted
        self._lines = lines
        self._problems: list[InputProblem] = []
        self._bibitems: list[Reference] | None = None

    def prepare(self) -> None:
        """Count the entries (a first pass); a text with none is read as a thebibliography."""
        keys: Collection[str] = {key for key, _, _, _ in _entries(self._lines())}
        if not keys:
            self._bibitems = parse_bibitems("".join(self._lines()), file=self.file)
            keys = [reference.key for reference in self._bibitems]
        self.entries = len(keys)
        self.counted = sum(self._counting is None or key in self._counting for key in keys)

    def references(self) -> Iterator[Reference]:
        """Every entry, in file order, each key once (the second pass)."""
        if self._bibitems is not None:
            yield from self._bibitems
            return
        seen: set[str] = set()
        for key, entry_type, line, segment in _entries(self._lines()):
            end = _END_ENTRY.search(segment)
            if end is None:
                self._problems.append(
                    InputProblem(
                        file=self.file,
                        line=line,
                        key=key,
                        message=f"\\entry{{{key}}} has no \\endentry; read up to the next entry",
                        code="parse-error",
                    )
                )
            if key in seen:
                continue
            seen.add(key)
            fields = entry_fields(segment[: end.start()] if end else segment)
            yield build_reference(
                key, entry_type, fields, file=self.file, line=line, problems=self._problems
            )

    def problems(self) -> list[InputProblem]:
        """The problems found so far (all of them once `references` has run)."""
        return list(self._problems)


def _entries(lines: Iterator[str]) -> Iterator[tuple[str, str, int, str]]:
    """(key, type, line, text up to the next \\entry or the end) of each \\entry head.

    The heads are those `_ENTRY.finditer` finds in the whole text: the text is read
    _READ_CHARS at a time, and a head is taken only once _ENTRY_SPAN characters after
    its start have been read, so a longer read could not have changed it. Text before
    that point holds no head: it is moved out of the search window into the entry's
    parts, so each character is searched a bounded number of times.
    """
    window = ""  # text not yet settled; a head may start in it
    parts: list[str] = []  # settled text after the current head
    current: tuple[str, str, int] | None = None
    line = 1  # the line of window[0]
    scan = 0  # no head starts in window[:scan]
    ended = False
    while True:
        head = _ENTRY.search(window, scan)
        if head is not None and (ended or head.start() + _ENTRY_SPAN <= len(window)):
            before = window[: head.start()]
            if current is not None:
                yield (*current, "".join(parts) + before)
            line += before.count("\n")
            current = (head.group("key").strip(), head.group("type").strip().lower(), line)
            line += window.count("\n", head.start(), head.end())
            window, parts, scan = window[head.end() :], [], 0
            continue
        if ended:
            if current is not None:
                yield (*current, "".join(parts) + window)
            return
        settled = max(0, len(window) - _ENTRY_SPAN)
        if settled:
            if current is not None:
                parts.append(window[:settled])
            line += window.count("\n", 0, settled)
            window = window[settled:]
        scan = max(0, scan - settled)
        read = list(_until(lines, _READ_CHARS))
        ended = not read
        window += "".join(read)


def _until(lines: Iterator[str], size: int) -> Iterator[str]:
    """Lines from `lines` until they hold at least `size` characters."""
    total = 0
    for text in lines:
        yield text
        total += len(text)
        if total >= size:
            return


def entry_fields(body: str) -> dict[str, str]:
    """One biber entry's data as BibTeX fields (names joined with "and", lists too)."""
    fields, body = _verbatim_fields(body)
    truncated: set[str] = set()
    for command in _COMMAND.finditer(body):
        kind, name = command.group("command"), command.group("name").lower()
        position = command.end()
        if kind == "true":
            if name.startswith("more"):
                truncated.add(name[4:])
            continue
        if kind == "range" or name.startswith(_BOOKKEEPING):
            continue
        if kind in ("name", "list"):
            # \name{role}{count}{options}{…}, \list{name}{count}{…}
            position = _skip_groups(body, position, 2 if kind == "name" else 1)
        value, _ = _group(body, position)
        if value is None:
            break  # an unclosed group runs to the end: nothing after it can be read
        if kind == "field":
            fields[name] = _plain(value)
        elif kind == "list":
            fields[name] = " and ".join(_plain(item) for item in _top_level_groups(value))
        else:
            people = [_bibtex_name(person) for person in _top_level_groups(value)]
            fields[name] = " and ".join(person for person in people if person)
    for role in truncated:
        if role in fields:
            fields[role] += " and others"
    return fields


def _verbatim_fields(body: str) -> tuple[dict[str, str], str]:
    """The `\\verb{name} … \\endverb` fields, and the body without them.

    Each \\verb looks for its \\endverb once, from where the last one ended: a
    \\verb left open ends the scan instead of being searched for again and again.
    """
    fields: dict[str, str] = {}
    rest: list[str] = []
    position = 0
    while verb := _VERB.search(body, position):
        end = body.find(_END_VERB, verb.end())
        if end < 0:
            break
        lines = [_VERB_LINE.match(line) for line in body[verb.end() : end].splitlines()]
        value = "".join(found.group(1) for found in lines if found).strip()
        if value:
            fields[verb.group("name").lower()] = value
        rest.append(body[position : verb.start()])
        position = end + len(_END_VERB)
    rest.append(body[position:])
    return fields, "".join(rest)


def _bibtex_name(person: str) -> str:
    """`{{hash=…}{family={Knuth}, given={Donald~E.}}}` → "Knuth, Donald~E."."""
    groups = _top_level_groups(person)
    if len(groups) < 2:
        return ""
    parts = _name_parts(groups[1:])
    family = _plain(parts.get("family", ""))
    given = _plain(parts.get("given", ""))
    prefix = _plain(parts.get("prefix", ""))
    suffix = _plain(parts.get("suffix", ""))
    if not family:
        return ""
    if not given and not prefix and not suffix:
        return f"{{{family}}}"
    last = f"{prefix} {family}".strip()
    return ", ".join(part for part in (last, suffix, given) if part)


def _name_parts(groups: list[str]) -> dict[str, str]:
    """biblatex ≥ 3 writes `{family={…}, given={…}}`; older .bbl files list the parts in order."""
    if len(groups) > 1:
        return dict(zip(_POSITIONAL_PARTS, groups, strict=False))
    text = groups[0]
    parts: dict[str, str] = {}
    position = 0
    while True:
        found = _NAME_PART.search(text, position)
        if found is None:
            break
        start = found.end()
        if start < len(text) and text[start] == "{":
            value, position = _group(text, start)
            parts[found.group("part")] = value or ""
        else:
            stop = text.find(",", start)
            position = len(text) if stop < 0 else stop + 1
    return parts


def _plain(value: str) -> str:
    """Replace biber's spacing and punctuation macros with the characters they print."""
    value = _SPACING_MACROS.sub(" ", value)
    value = _INIT_PERIOD.sub(".", value)
    value = _INIT_HYPHEN.sub("-", value)
    value = _RANGE_DASH.sub("--", value)
    return " ".join(value.split())


def _group(text: str, start: int) -> tuple[str | None, int]:
    """The contents of the brace group opening at `start` (after whitespace), and its end."""
    while start < len(text) and text[start] in " \t\r\n%":
        if text[start] == "%":
            newline = text.find("\n", start)
            start = len(text) if newline < 0 else newline + 1
        else:
            start += 1
    if start >= len(text) or text[start] != "{":
        return None, start
    depth = 0
    for index in range(start, len(text)):
        character = text[index]
        if character == "\\":
            continue
        if character == "{" and text[index - 1] != "\\":
            depth += 1
        elif character == "}" and text[index - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start + 1 : index], index + 1
    return None, len(text)


def _skip_groups(text: str, position: int, count: int) -> int:
    for _ in range(count):
        _, position = _group(text, position)
    return position


def _top_level_groups(text: str) -> list[str]:
    groups: list[str] = []
    position = 0
    while True:
        value, position = _group(text, position)
        if value is None:
            return groups
        groups.append(value)
