"""BibTeX name lists → `Person`s, following BibTeX's own rules.

"van der Waals, J. D.", "Johannes van der Waals", "King, Jr., Martin Luther"
and "{World Health Organization}" all occur in real files; the verifier
compares family names, so the particle and suffix must not end up in them.
"""

from __future__ import annotations

import re

from refaudit.models import Person
from refaudit.parsing.latex import latex_to_text

_TRUNCATION = re.compile(r"^(?:others|et\.?\s*al\.?|and\s+others)$", re.IGNORECASE)
_SPACES_AROUND_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_TRAILING_ET_AL = re.compile(r",?\s+et\.?\s*al\.?$", re.IGNORECASE)
_SUFFIX = re.compile(r"^(?:jr|sr|jnr|snr|ii|iii|iv|v)\.?$", re.IGNORECASE)


def parse_names(value: str) -> tuple[list[Person], bool]:
    """Split a BibTeX `author`/`editor` value; the flag says "and others" cut the list short."""
    from bibtexparser.middlewares.names import split_multiple_persons_names

    people: list[Person] = []
    truncated = False
    text = _SPACES_AROUND_AND.sub(" and ", value.strip())
    if not text:
        return [], False
    for raw_name in split_multiple_persons_names(text):
        name = raw_name.strip().rstrip(",").strip()
        if not name:
            continue
        tail = _TRAILING_ET_AL.search(name)
        if tail:
            truncated = True
            name = name[: tail.start()].strip().rstrip(",")
            if not name:
                continue
        if _TRUNCATION.match(name):
            truncated = True
            continue
        person = parse_person(name)
        if person.family:
            people.append(person)
    return people, truncated


def parse_person(name: str) -> Person:
    """One BibTeX name ("First von Last", "von Last, First" or "von Last, Jr, First")."""
    from bibtexparser.middlewares.names import InvalidNameError, parse_single_name_into_parts

    if _is_single_group(name):
        return Person(family=latex_to_text(name[1:-1]), is_organisation=True)
    suffix = ""
    parts = _split_top_level_commas(name)
    if len(parts) == 2 and _SUFFIX.match(parts[1].strip()):
        # "Martin Luther King, Jr." — BibTeX would read "Jr." as the given name.
        name, suffix = parts[0], parts[1].strip()
    try:
        split = parse_single_name_into_parts(name, strict=False)
    except InvalidNameError:
        return Person(family=latex_to_text(name))
    family = latex_to_text(" ".join(split.last))
    given = latex_to_text(" ".join(split.first))
    if not family and given:
        family, given = given, ""
    return Person(
        family=family,
        given=given,
        particle=latex_to_text(" ".join(split.von)),
        suffix=suffix or latex_to_text(" ".join(split.jr)),
    )


def _is_single_group(name: str) -> bool:
    """True for `{Name In Braces}`: BibTeX treats it as one unsplittable family name."""
    if not (name.startswith("{") and name.endswith("}")):
        return False
    depth = 0
    for index, char in enumerate(name):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0 and index < len(name) - 1:
            return False
    return True


def _split_top_level_commas(name: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(name):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(name[start:index])
            start = index + 1
    parts.append(name[start:])
    return parts
