"""Compiled bibliographies (.bbl): biber's biblatex data, or a BibTeX `thebibliography`.

arXiv does not run biber, so papers written with biblatex ship a .bbl holding
every entry as structured data (`\\entry`, `\\name`, `\\field`, `\\verb`). Those
entries are turned back into BibTeX fields and read exactly like a .bib entry;
a classic `thebibliography` list is read item by item as free text.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from refaudit.models import Bibliography, InputProblem, Reference
from refaudit.parsing.bibitems import parse_bibitems
from refaudit.parsing.lines import LineIndex
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


def is_biblatex_bbl(text: str) -> bool:
    """True for a .bbl biber wrote (biblatex), False for a BibTeX `thebibliography` list."""
    return bool(_ENTRY.search(text))


def parse_bbl(text: str, *, file: str) -> Bibliography:
    """The references of a .bbl file, whichever of the two kinds it is."""
    if not is_biblatex_bbl(text):
        return Bibliography(references=parse_bibitems(text, file=file), files=[file])
    references: list[Reference] = []
    problems: list[InputProblem] = []
    seen: set[str] = set()
    lines = LineIndex(text)
    ends = [found.start() for found in _END_ENTRY.finditer(text)]
    starts = list(_ENTRY.finditer(text))
    for index, match in enumerate(starts):
        key = match.group("key").strip()
        line = lines.line(match.start())
        following = starts[index + 1] if index + 1 < len(starts) else None
        next_end = bisect_left(ends, match.end())
        end = ends[next_end] if next_end < len(ends) else None
        if end is None or (following is not None and following.start() < end):
            problems.append(
                InputProblem(
                    file=file,
                    line=line,
                    key=key,
                    message=f"\\entry{{{key}}} has no \\endentry; read up to the next entry",
                    code="parse-error",
                )
            )
            stop = following.start() if following else len(text)
        else:
            stop = end
        if key in seen:
            continue
        seen.add(key)
        fields = entry_fields(text[match.end() : stop])
        references.append(
            build_reference(
                key,
                match.group("type").strip().lower(),
                fields,
                file=file,
                line=line,
                problems=problems,
            )
        )
    return Bibliography(references=references, problems=problems, files=[file])


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
