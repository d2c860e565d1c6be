"""Word manuscripts for the tests, built the way Zotero, Mendeley and EndNote write them.

python-docx makes the document; the citation fields are raw WordprocessingML, as
the plugins insert them: `w:fldChar` begin, the instruction cut over several
`w:instrText` runs, separate, the printed citation, end (or one `w:fldSimple`).
EndNote's `EN.CITE.DATA` form keeps its record base64 in `w:fldData`.
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import docx
from docx.oxml import parse_xml

_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
_CSL_SCHEMA = "https://github.com/citation-style-language/schema/raw/master/csl-citation.json"


def csl_item(
    item_id: int | str,
    *,
    title: str,
    authors: list[tuple[str, str]],
    year: int,
    container: str | None = None,
    doi: str | None = None,
    kind: str = "article-journal",
    **extra: Any,
) -> dict[str, Any]:
    """An `itemData` as Zotero writes it (ids, `issued` date-parts, string volumes)."""
    item: dict[str, Any] = {
        "id": item_id,
        "type": kind,
        "title": title,
        "author": [{"family": family, "given": given} for family, given in authors],
        "issued": {"date-parts": [[str(year)]]},
    }
    if container:
        item["container-title"] = container
    if doi:
        item["DOI"] = doi
    item.update(extra)
    return item


def _run(inner: str) -> str:
    return f"<w:r {_NS}>{inner}</w:r>"


class Manuscript:
    """A .docx being written paragraph by paragraph."""

    def __init__(self) -> None:
        self.document = docx.Document()

    def text(self, text: str, style: str | None = None) -> Any:
        return self.document.add_paragraph(text, style=style)

    def heading(self, text: str, level: int = 1) -> None:
        self.document.add_heading(text, level=level)

    def field(self, instruction: str, shown: str, *, data: str | None = None) -> None:
        """A complex field in its own paragraph, the instruction cut in 40-character runs."""
        paragraph = self.document.add_paragraph("As shown before ")
        begin = f'<w:fldChar w:fldCharType="begin">{_field_data(data)}</w:fldChar>'
        runs = [_run(begin)]
        for start in range(0, len(instruction), 40):
            piece = escape(instruction[start : start + 40])
            runs.append(_run(f'<w:instrText xml:space="preserve">{piece}</w:instrText>'))
        runs += [
            _run('<w:fldChar w:fldCharType="separate"/>'),
            _run(f"<w:t>{escape(shown)}</w:t>"),
            _run('<w:fldChar w:fldCharType="end"/>'),
        ]
        for run in runs:
            paragraph._p.append(parse_xml(run))

    def simple_field(self, instruction: str, shown: str) -> None:
        paragraph = self.document.add_paragraph()
        paragraph._p.append(
            parse_xml(
                f'<w:fldSimple {_NS} w:instr="{escape(instruction, {chr(34): "&quot;"})}">'
                f"<w:r><w:t>{escape(shown)}</w:t></w:r></w:fldSimple>"
            )
        )

    def zotero(self, items: list[dict[str, Any]], shown: str, *, user: int = 4417) -> None:
        citation = {
            "citationID": "a1b2c3d4",
            "properties": {"formattedCitation": shown, "plainCitation": shown, "noteIndex": 0},
            "citationItems": [
                {
                    "id": item["id"],
                    "uris": [f"http://zotero.org/users/{user}/items/{_zotero_key(item)}"],
                    "itemData": item,
                }
                for item in items
            ],
            "schema": _CSL_SCHEMA,
        }
        self.field(f" ADDIN ZOTERO_ITEM CSL_CITATION {json.dumps(citation)} ", shown)

    def mendeley(self, items: list[dict[str, Any]], shown: str) -> None:
        citation = {
            "citationItems": [
                {
                    "id": f"ITEM-{number}",
                    "itemData": {**item, "id": f"ITEM-{number}"},
                    "uris": [f"http://www.mendeley.com/documents/?uuid={_zotero_key(item)}"],
                }
                for number, item in enumerate(items, start=1)
            ],
            "mendeley": {"formattedCitation": shown, "plainTextFormattedCitation": shown},
            "properties": {"noteIndex": 0},
            "schema": _CSL_SCHEMA,
        }
        self.field(f" ADDIN CSL_CITATION {json.dumps(citation)} ", shown)

    def endnote(self, records: list[str], shown: str, *, as_data: bool = False) -> None:
        """`ADDIN EN.CITE` with the XML inline, or (as_data) base64 in an EN.CITE.DATA field."""
        cites = "".join(f"<Cite><RecNum>{n}</RecNum>{r}</Cite>" for n, r in enumerate(records))
        xml = f"<EndNote>{cites}</EndNote>"
        if not as_data:
            self.field(f" ADDIN EN.CITE {xml}", shown)
            return
        encoded = base64.b64encode(xml.encode("utf-8")).decode("ascii")
        paragraph = self.document.add_paragraph()
        begin = f'<w:fldChar w:fldCharType="begin">{_field_data(encoded)}</w:fldChar>'
        for run in (
            _run(begin),
            _run('<w:instrText xml:space="preserve"> ADDIN EN.CITE </w:instrText>'),
            _run(begin),
            _run('<w:instrText xml:space="preserve"> ADDIN EN.CITE.DATA </w:instrText>'),
            _run('<w:fldChar w:fldCharType="end"/>'),
            _run('<w:fldChar w:fldCharType="separate"/>'),
            _run(f"<w:t>{escape(shown)}</w:t>"),
            _run('<w:fldChar w:fldCharType="end"/>'),
        ):
            paragraph._p.append(parse_xml(run))

    def bibliography_field(self, instruction: str, entries: list[str]) -> None:
        """The manager's bibliography: one field whose result spans a paragraph per entry."""
        first = self.document.add_paragraph()
        for run in (
            _run('<w:fldChar w:fldCharType="begin"/>'),
            _run(f'<w:instrText xml:space="preserve">{escape(instruction)}</w:instrText>'),
            _run('<w:fldChar w:fldCharType="separate"/>'),
            _run(f"<w:t>{escape(entries[0])}</w:t>"),
        ):
            first._p.append(parse_xml(run))
        for entry in entries[1:-1]:
            self.document.add_paragraph(entry)
        last = self.document.add_paragraph(entries[-1]) if len(entries) > 1 else first
        last._p.append(parse_xml(_run('<w:fldChar w:fldCharType="end"/>')))

    def save(self, path: Path) -> Path:
        self.document.save(str(path))
        return path


def endnote_record(
    number: int,
    *,
    title: str,
    authors: list[str],
    year: int,
    journal: str,
    doi: str | None = None,
    volume: str | None = None,
    pages: str | None = None,
) -> str:
    """One `<record>` as EndNote X9/20 writes it (text in `<style>` runs)."""

    def styled(text: str) -> str:
        return f'<style face="normal" font="default" size="100%">{escape(text)}</style>'

    people = "".join(f"<author>{styled(a)}</author>" for a in authors)
    optional = "".join(
        f"<{tag}>{styled(value)}</{tag}>"
        for tag, value in (
            ("pages", pages),
            ("volume", volume),
            ("electronic-resource-num", doi),
        )
        if value
    )
    return (
        f"<Author>{escape(authors[0].split(',')[0])}</Author><Year>{year}</Year>"
        f"<record><rec-number>{number}</rec-number><foreign-keys>"
        f'<key app="EN" db-id="x2zd5wfw1p0sv0e2d9xvzwaqe2x2ztzad5dv">{number}</key>'
        f'</foreign-keys><ref-type name="Journal Article">17</ref-type>'
        f"<contributors><authors>{people}</authors></contributors>"
        f"<titles><title>{styled(title)}</title>"
        f"<secondary-title>{styled(journal)}</secondary-title></titles>"
        f"<periodical><full-title>{styled(journal)}</full-title></periodical>"
        f"{optional}<dates><year>{styled(str(year))}</year></dates></record>"
    )


def _field_data(data: str | None) -> str:
    return f'<w:fldData xml:space="preserve">{data}</w:fldData>' if data else ""


def _zotero_key(item: dict[str, Any]) -> str:
    return f"{zlib.crc32(json.dumps(item, sort_keys=True).encode()):08X}"


def add_footnote_field(path: Path, instruction: str, shown: str) -> Path:
    """Put a citation field in a footnote (note styles do), as Word stores footnotes:
    a `footnotes.xml` part, its relationship from the document and its content type."""
    import zipfile

    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    footnotes = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes {w}>'
        '<w:footnote w:id="1"><w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r>'
        f'<w:r><w:instrText xml:space="preserve">{escape(instruction)}</w:instrText></w:r>'
        '<w:r><w:fldChar w:fldCharType="separate"/></w:r>'
        f'<w:r><w:t>{escape(shown)}</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r>'
        "</w:p></w:footnote></w:footnotes>"
    )
    relationship = (
        '<Relationship Id="rIdFootnotes" Type="http://schemas.openxmlformats.org/'
        'officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/>'
    )
    override = (
        '<Override PartName="/word/footnotes.xml" ContentType="application/vnd.'
        'openxmlformats-officedocument.wordprocessingml.footnotes+xml"/>'
    )
    parts = {}
    with zipfile.ZipFile(path) as old:
        for name in old.namelist():
            parts[name] = old.read(name)
    parts["word/footnotes.xml"] = footnotes.encode()
    rels = "word/_rels/document.xml.rels"
    parts[rels] = parts[rels].replace(
        b"</Relationships>", relationship.encode() + b"</Relationships>"
    )
    types = "[Content_Types].xml"
    parts[types] = parts[types].replace(b"</Types>", override.encode() + b"</Types>")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as new:
        for name, data in parts.items():
            new.writestr(name, data)
    return path
