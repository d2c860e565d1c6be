"""Word documents: the citation manager's records first, the printed reference list second.

Zotero, Mendeley and EndNote keep, in each citation's field code, the very record
the author's library holds: CSL-JSON (`ADDIN ZOTERO_ITEM CSL_CITATION {…}`,
Mendeley's `ADDIN CSL_CITATION {…}`) or EndNote XML (`ADDIN EN.CITE <EndNote>…`,
or base64 in the field's `w:fldData` for `EN.CITE.DATA`). Those are exact fields,
so they are audited as structured data. A paragraph of the printed reference list
(after a "References" heading) is read as free text only when no field code
carries it: not inside the manager's own bibliography field, and not naming the
title or DOI of a record a field code already gave.

A field code spans runs (`w:fldChar` begin / `w:instrText` / separate / end, and
may span paragraphs) or is one `w:fldSimple`; both are read. The container is
checked by `refaudit.parsing.archives` before python-docx opens it.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from refaudit.errors import InputError
from refaudit.match.text import normalize_text
from refaudit.models import Bibliography, InputProblem, Reference
from refaudit.parsing.archives import check_parts, open_zip
from refaudit.parsing.csljson import csl_citation_key, csl_reference
from refaudit.parsing.endnote import endnote_items
from refaudit.parsing.freetext import parse_freetext
from refaudit.parsing.listparts import LIST_END, LIST_HEADING

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_BIBLIOGRAPHY_FIELDS = ("ADDIN ZOTERO_BIBL", "ADDIN EN.REFLIST", "ADDIN MENDELEY BIBLIOGRAPHY")
# A manuscript puts its figure legends and tables after the references, too.
_BACK_MATTER = re.compile(r"^(?:figure legends?|figures?|tables?)\b", re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:\[(?P<bracket>[^\]\s]{1,12})\]|(?P<number>\d{1,4})[.)]?(?=\s))\s*")
_MIN_REFERENCE_CHARS = 15


@dataclass
class _Field:
    """One field being read: where it began, its instruction, its base64 data."""

    paragraph: int | None
    instruction: list[str] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    separated: bool = False


@dataclass
class _Record:
    """One cited item from a field code, before keys are given."""

    identity: str
    item: Mapping[str, Any]
    origin: str
    paragraph: int | None
    key: str | None


@dataclass
class _Reading:
    """What one pass over the document collected."""

    records: dict[str, _Record] = field(default_factory=dict)
    managed: set[int] = field(default_factory=set)  # paragraphs inside a manager's bibliography
    problems: list[InputProblem] = field(default_factory=list)


def parse_docx(data: bytes, *, file: str) -> Bibliography:
    """Every reference of a Word document: field-code records, then unclaimed printed ones.

    Raises:
        InputError: not a Word document, a hostile container, or no reference at all.
    """
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    archive = open_zip(data, file=file, kind="Word document")
    if "[Content_Types].xml" not in archive.namelist():
        raise InputError(
            "not a Word document (a zip archive without Office content types)",
            file=file,
            hint="refaudit reads .docx files (Word 2007 and later)",
        )
    check_parts(archive, file=file)
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, ValueError, KeyError, zipfile.BadZipFile, zlib.error) as error:
        raise InputError(
            f"not a Word document ({error})",
            file=file,
            hint="refaudit reads .docx files (Word 2007 and later)",
        ) from None
    reading = _Reading()
    paragraphs = list(document.element.body.iter(f"{_W}p"))
    numbers = {id(p): number for number, p in enumerate(paragraphs, start=1)}
    _read_fields(document.element.body, numbers, reading, file=file)
    for part in _note_parts(document):
        _read_fields(part, {}, reading, file=file)
    references = _field_references(reading, file=file)
    references += _printed_references(document, paragraphs, reading, references, file=file)
    if not references:
        raise InputError(
            "no references found",
            file=file,
            hint="refaudit reads Zotero, Mendeley and EndNote field codes, or a reference "
            'list under a "References" heading',
        )
    return Bibliography(references=references, problems=reading.problems, files=[file])


def _note_parts(document: Any) -> Iterator[Any]:
    """The footnotes and endnotes (note styles put citations there), as XML trees."""
    from refaudit.parsing.archives import parse_xml

    for relationship in document.part.rels.values():
        if relationship.is_external or not relationship.reltype.endswith(
            ("/footnotes", "/endnotes")
        ):
            continue
        part = relationship.target_part
        yield parse_xml(part.blob, file="", part=str(part.partname))


def _read_fields(root: Any, numbers: dict[int, int], reading: _Reading, *, file: str) -> None:
    """Walk the runs in document order, completing each field when its end is met."""
    stack: list[_Field] = []
    paragraph: int | None = None
    for element in root.iter():
        tag = element.tag
        if tag == f"{_W}p":
            paragraph = numbers.get(id(element))
            if paragraph is not None:
                for open_field in stack:
                    if _is_bibliography(open_field):
                        reading.managed.add(paragraph)
        elif tag == f"{_W}fldChar":
            kind = element.get(f"{_W}fldCharType")
            if kind == "begin":
                opened = _Field(paragraph)
                opened.data += [d.text or "" for d in element.iter(f"{_W}fldData")]
                stack.append(opened)
            elif kind == "separate" and stack:
                stack[-1].separated = True
            elif kind == "end" and stack:
                done = stack.pop()
                instruction = "".join(done.instruction).strip()
                if stack and instruction.upper().startswith("ADDIN EN.CITE.DATA"):
                    # The record is on one of the two fields' begin, or on both.
                    stack[-1].data = stack[-1].data or done.data
                else:
                    _complete(instruction, done, reading, file=file)
        elif tag == f"{_W}instrText" and stack and not stack[-1].separated:
            stack[-1].instruction.append(element.text or "")
        elif tag == f"{_W}fldSimple":
            simple = _Field(paragraph, [element.get(f"{_W}instr", "")])
            _complete(simple.instruction[0].strip(), simple, reading, file=file)


def _is_bibliography(open_field: _Field) -> bool:
    return "".join(open_field.instruction).strip().upper().startswith(_BIBLIOGRAPHY_FIELDS)


def _complete(instruction: str, done: _Field, reading: _Reading, *, file: str) -> None:
    upper = instruction.upper()
    if upper.startswith("ADDIN ZOTERO_ITEM"):
        _add_csl(instruction, done, "zotero field code", reading, file=file)
    elif upper.startswith("ADDIN CSL_CITATION"):
        _add_csl(instruction, done, "mendeley field code", reading, file=file)
    elif upper.startswith("ADDIN EN.CITE"):
        _add_endnote(instruction, done, reading, file=file)


def _add_csl(instruction: str, done: _Field, origin: str, reading: _Reading, *, file: str) -> None:
    start = instruction.find("{")
    try:
        citation, _ = json.JSONDecoder().raw_decode(instruction[start:]) if start >= 0 else ({}, 0)
    except json.JSONDecodeError:
        citation = None
    items = citation.get("citationItems") if isinstance(citation, dict) else None
    if not isinstance(items, list):
        reading.problems.append(_unreadable(done, origin, file=file))
        return
    for cited in items:
        if not isinstance(cited, dict) or not isinstance(cited.get("itemData"), dict):
            continue
        item = cited["itemData"]
        uris = cited.get("uris") or cited.get("uri") or []
        uri = uris[0] if isinstance(uris, list) and uris and isinstance(uris[0], str) else ""
        identity = uri or _identity(item)
        zotero_key = uri.rstrip("/").rsplit("/items/", 1)[-1] if "/items/" in uri else None
        key = csl_citation_key(item) or zotero_key
        reading.records.setdefault(identity, _Record(identity, item, origin, done.paragraph, key))


def _add_endnote(instruction: str, done: _Field, reading: _Reading, *, file: str) -> None:
    origin = "endnote field code"
    start = instruction.find("<")
    xml = instruction[start:] if start >= 0 else ""
    if not xml:
        import base64
        import binascii

        try:
            encoded = next((chunk for chunk in done.data if chunk.strip()), "")
            xml = base64.b64decode(encoded, validate=False).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            xml = ""
    items = endnote_items(xml) if xml else None
    if items is None:
        reading.problems.append(_unreadable(done, origin, file=file))
        return
    for identity, item in items:
        record = _Record(identity or _identity(item), item, origin, done.paragraph, None)
        reading.records.setdefault(record.identity, record)


def _unreadable(done: _Field, origin: str, *, file: str) -> InputProblem:
    return InputProblem(
        file=file,
        line=done.paragraph,
        message=f"a {origin} holds no readable record; the printed reference list is used",
        code="field-code-unreadable",
    )


def _identity(item: Mapping[str, Any]) -> str:
    """What makes two citations of one record the same: its DOI, else its title."""
    doi = item.get("DOI")
    if isinstance(doi, str) and doi.strip():
        return "doi:" + doi.strip().lower()
    title = item.get("title")
    return "title:" + normalize_text(title) if isinstance(title, str) else f"item:{id(item)}"


def _field_references(reading: _Reading, *, file: str) -> list[Reference]:
    used: set[str] = set()
    references = []
    for record in reading.records.values():
        key = _unique(record.key or _author_year(record.item), used)
        references.append(
            csl_reference(
                record.item,
                key=key,
                file=file,
                line=record.paragraph,
                origin=record.origin,
                problems=reading.problems,
            )
        )
    return references


def _author_year(item: Mapping[str, Any]) -> str:
    authors = item.get("author")
    family = ""
    if isinstance(authors, list) and authors and isinstance(authors[0], dict):
        family = str(authors[0].get("family") or authors[0].get("literal") or "")
    issued = item.get("issued")
    year = ""
    if isinstance(issued, dict):
        match = re.search(r"\d{4}", json.dumps(issued))
        year = match.group(0) if match else ""
    base = re.sub(r"\W+", "", normalize_text(family).split(" ")[-1] if family else "")
    return (base or "ref") + year


def _unique(key: str, used: set[str]) -> str:
    candidate, suffix = key, 0
    while candidate in used:
        suffix += 1
        candidate = f"{key}{chr(ord('a') + suffix - 1) if suffix <= 26 else suffix}"
    used.add(candidate)
    return candidate


def _printed_references(
    document: Any,
    paragraphs: list[Any],
    reading: _Reading,
    records: list[Reference],
    *,
    file: str,
) -> list[Reference]:
    """Reference-list paragraphs no field code carries, each read as free text.

    The manager's own bibliography prints the field-code records, and also the items
    the author added to it without citing them (Zotero keeps only their URIs): when it
    holds more entries than there are records, its entries that name no record's title
    or DOI are read too.
    """
    from docx.text.paragraph import Paragraph

    claimed = [normalize_text(r.title) for r in records if r.title and len(r.title) >= 12]
    dois = [r.doi.lower() for r in records if r.doi]
    texts = [Paragraph(element, document._body).text.strip() for element in paragraphs]
    printed_by_manager = sum(
        1 for n in reading.managed if len(texts[n - 1]) >= _MIN_REFERENCE_CHARS
    )
    uncited = printed_by_manager > len(records)
    references: list[Reference] = []
    used = {r.key for r in records}
    inside = False
    for number, element in enumerate(paragraphs, start=1):
        paragraph = Paragraph(element, document._body)
        text = texts[number - 1]
        heading = _is_heading(paragraph, text)
        managed = number in reading.managed
        if LIST_HEADING.match(text) and (heading or len(text) < 40):
            inside = True
            continue
        if not (inside or managed):
            continue
        if heading or (len(text) < 60 and (LIST_END.match(text) or _BACK_MATTER.match(text))):
            inside = False
            continue
        if (managed and not uncited) or len(text) < _MIN_REFERENCE_CHARS:
            continue
        folded = normalize_text(text)
        if any(title in folded for title in claimed) or any(d in text.lower() for d in dois):
            continue
        label = _LABEL.match(text)
        printed = text[label.end() :] if label else text
        name = (label.group("bracket") or label.group("number")) if label else None
        key = _unique(name or f"ref{len(references) + 1}", used)
        reference = parse_freetext(printed, key=key, file=file, line=number)
        reference.origin = "printed text"
        reference.text = text
        reference.label = label.group(0).strip() if label else None
        references.append(reference)
    return references


def _is_heading(paragraph: Any, text: str) -> bool:
    """A heading by its style (Heading 1-9, Title), or by its outline level."""
    try:
        style = (paragraph.style.name or "").lower() if paragraph.style is not None else ""
    except (KeyError, ValueError):
        style = ""
    if style.startswith(("heading", "title")):
        return bool(text)
    properties = paragraph._p.pPr
    return bool(text) and properties is not None and properties.find(f"{_W}outlineLvl") is not None
