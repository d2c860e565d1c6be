"""CSL-JSON items (what Zotero, Mendeley and citeproc exchange) → `Reference`s.

Word field codes and a Zotero library both hand over the author's own record as
CSL-JSON: exact fields, not text to guess from. Each item becomes the BibTeX
fields it stands for (escaped for LaTeX) and then goes through `build_reference`,
so a CSL item is decoded, verified and corrected exactly as a `.bib` entry is,
and `fix` can write it out as BibTeX.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from refaudit.bibtex import escape_latex
from refaudit.identifiers import parse_arxiv_id
from refaudit.models import InputProblem, Reference
from refaudit.parsing.records import build_reference

# CSL item type → BibTeX entry type (what the verifier and `fix` expect).
_ENTRY_TYPES = {
    "article-journal": "article",
    "article-magazine": "article",
    "article-newspaper": "article",
    "review": "article",
    "paper-conference": "inproceedings",
    "book": "book",
    "chapter": "incollection",
    "entry-encyclopedia": "incollection",
    "entry-dictionary": "incollection",
    "thesis": "phdthesis",
    "report": "techreport",
    "manuscript": "unpublished",
}
_CONTAINER_FIELD = {"article": "journal", "inproceedings": "booktitle", "incollection": "booktitle"}
_CITATION_KEY_LINE = re.compile(r"^\s*Citation Key:\s*(\S+)\s*$", re.MULTILINE | re.IGNORECASE)
_MATH = re.compile(r"(\$[^$\n]+\$)")
_EXTRA_ID_LINE = re.compile(r"^\s*(PMID|PMCID|arXiv):\s*(\S+)\s*$", re.MULTILINE | re.IGNORECASE)
# Plain fields: CSL variable → BibTeX field.
_PLAIN = {
    "volume": "volume",
    "page": "pages",
    "publisher": "publisher",
    "DOI": "doi",
    "URL": "url",
    "ISBN": "isbn",
    "PMID": "pmid",
    "PMCID": "pmcid",
}


def csl_reference(
    item: Mapping[str, Any],
    *,
    key: str,
    file: str | None,
    line: int | None,
    origin: str,
    problems: list[InputProblem],
) -> Reference:
    """One CSL-JSON item as a `Reference` whose `origin` says where the record was read."""
    entry_type = _ENTRY_TYPES.get(_text(item.get("type")), "misc")
    fields = csl_fields(item, entry_type)
    reference = build_reference(key, entry_type, fields, file=file, line=line, problems=problems)
    reference.origin = origin
    return reference


def csl_fields(item: Mapping[str, Any], entry_type: str) -> dict[str, str]:
    """The BibTeX fields (LaTeX-escaped) a CSL item holds, in the usual BibTeX order."""
    fields: dict[str, str] = {}
    for role, name in (("author", "author"), ("editor", "editor")):
        names = _names(item.get(role))
        if names:
            fields[name] = names
    title = _text(item.get("title"))
    if title:
        fields["title"] = _escaped_keeping_math(title)
    container = _text(item.get("container-title"))
    if container:
        fields[_CONTAINER_FIELD.get(entry_type, "howpublished")] = escape_latex(container)
    year, month = _issued(item.get("issued"))
    if year:
        fields["year"] = year
    if month:
        fields["month"] = month
    for variable, name in _PLAIN.items():
        value = _text(item.get(variable))
        if value:
            fields[name] = value if name in ("doi", "url") else escape_latex(value)
    # Zotero keeps identifiers it has no field for as "PMID: …" lines in Extra (CSL `note`).
    for name, value in _EXTRA_ID_LINE.findall(_text(item.get("note"))):
        fields.setdefault(name.lower() if name.lower() != "arxiv" else "eprint", value)
        if name.lower() == "arxiv":
            fields.setdefault("archiveprefix", "arXiv")
    _number(item, entry_type, fields)
    return fields


def csl_citation_key(item: Mapping[str, Any]) -> str | None:
    """The Better BibTeX citation key, if the item carries one (`citation-key`, or the
    `Citation Key: …` line it writes into Zotero's Extra, which CSL calls `note`)."""
    for name in ("citation-key", "citationKey"):
        value = _text(item.get(name))
        if value:
            return value
    for name in ("note", "extra"):
        match = _CITATION_KEY_LINE.search(_text(item.get(name)))
        if match:
            return match.group(1)
    return None


def _escaped_keeping_math(text: str) -> str:
    """Text escaped for LaTeX, except `$…$` spans: records (Crossref's, and the libraries
    filled from them) write formulas in titles as TeX math, and they are compared as such."""
    parts = _MATH.split(text)
    return "".join(part if _MATH.fullmatch(part) else escape_latex(part) for part in parts)


def _number(item: Mapping[str, Any], entry_type: str, fields: dict[str, str]) -> None:
    """An issue is `number`; a preprint's number is usually its arXiv id, kept as eprint."""
    issue = _text(item.get("issue"))
    number = _text(item.get("number"))
    for value in (number, _text(item.get("archive_location"))):
        eprint = value.removeprefix("arXiv:").strip()
        if eprint and parse_arxiv_id(eprint):
            fields["eprint"], fields["archiveprefix"] = eprint, "arXiv"
            return
    if issue:
        fields["number"] = escape_latex(issue)
    elif number and entry_type in ("article", "techreport"):
        fields["number"] = escape_latex(number)


def _names(value: object) -> str:
    """CSL name objects as a BibTeX name list ("von Last, Jr, First and …")."""
    if not isinstance(value, list):
        return ""
    names: list[str] = []
    for person in value:
        if not isinstance(person, Mapping):
            continue
        literal = _text(person.get("literal"))
        family = _text(person.get("family"))
        if literal or not family:
            if literal or _text(person.get("given")):
                names.append("{" + escape_latex(literal or _text(person.get("given"))) + "}")
            continue
        particle = " ".join(
            part
            for part in (
                _text(person.get("dropping-particle")),
                _text(person.get("non-dropping-particle")),
            )
            if part
        )
        last = "{" + escape_latex(family) + "}" if "," in family else escape_latex(family)
        if particle:
            last = f"{escape_latex(particle)} {last}"
        parts = [last]
        suffix = _text(person.get("suffix"))
        if suffix:
            parts.append(escape_latex(suffix))
        given = _text(person.get("given"))
        if given:
            parts.append(escape_latex(given))
        elif suffix:
            parts.append("")
        names.append(", ".join(parts))
    return " and ".join(names)


def _issued(value: object) -> tuple[str | None, str | None]:
    """(year, month) of a CSL date: `date-parts`, or the `raw` / `literal` text."""
    if not isinstance(value, Mapping):
        return None, None
    parts = value.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        first = parts[0]
        year = _text(first[0])
        month = _text(first[1]) if len(first) > 1 else ""
        if year.lstrip("-").isdigit():
            valid_month = month.isdigit() and 1 <= int(month) <= 12
            return year, month if valid_month else None
    for name in ("raw", "literal"):
        match = re.search(r"(?<!\d)(\d{4})(?!\d)", _text(value.get(name)))
        if match:
            return match.group(1), None
    return None, None


def _text(value: object) -> str:
    """A CSL value as text: strings as given, numbers as digits, anything else empty."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(int(value)) if float(value).is_integer() else str(value)
    return ""
