"""EndNote's XML records (in `ADDIN EN.CITE` field codes) → CSL-JSON items.

EndNote writes the whole library record into each citation: `<EndNote><Cite>…
<record>` with `ref-type`, `contributors`, `titles`, `periodical`, `dates`,
`electronic-resource-num` (the DOI) and so on; text may sit in `<style>`
wrappers. Turning a record into the CSL shape lets one mapping
(`refaudit.parsing.csljson`) serve every citation manager.
"""

from __future__ import annotations

from typing import Any
from xml.etree.ElementTree import Element

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

# EndNote reference type name → CSL item type.
_TYPES = {
    "journal article": "article-journal",
    "electronic article": "article-journal",
    "magazine article": "article-magazine",
    "newspaper article": "article-newspaper",
    "conference proceedings": "paper-conference",
    "conference paper": "paper-conference",
    "book": "book",
    "edited book": "book",
    "electronic book": "book",
    "book section": "chapter",
    "electronic book section": "chapter",
    "thesis": "thesis",
    "report": "report",
    "manuscript": "manuscript",
    "web page": "webpage",
}


def endnote_items(xml: str) -> list[tuple[str, dict[str, Any]]] | None:
    """(identity, CSL item) of each `<Cite>`'s record; None when the XML cannot be read."""
    start = xml.find("<EndNote")
    if start < 0:
        return None
    end = xml.rfind("</EndNote>")
    text = xml[start : end + len("</EndNote>")] if end >= 0 else xml[start:]
    try:
        root = SafeET.fromstring(text, forbid_dtd=True)
    except (SafeET.ParseError, DefusedXmlException):
        return None
    items = []
    for record in root.iter("record"):
        database = record.find("foreign-keys/key")
        number = _text(record.find("rec-number"))
        db_id = database.get("db-id", "") if database is not None else ""
        identity = f"endnote:{db_id}:{number}" if number else ""
        items.append((identity, _item(record)))
    return items


def _item(record: Element) -> dict[str, Any]:
    ref_type = record.find("ref-type")
    type_name = (ref_type.get("name", "") if ref_type is not None else "").lower()
    item: dict[str, Any] = {"type": _TYPES.get(type_name, "article-journal")}
    authors = [_person(_text(a)) for a in record.findall("contributors/authors/author")]
    editors = [_person(_text(a)) for a in record.findall("contributors/secondary-authors/author")]
    if authors:
        item["author"] = authors
    if editors and item["type"] in ("chapter", "paper-conference"):
        item["editor"] = editors
    title = _text(record.find("titles/title"))
    container = _text(record.find("titles/secondary-title")) or _text(
        record.find("periodical/full-title")
    )
    year = _text(record.find("dates/year"))
    fields = {
        "title": title,
        "container-title": container,
        "volume": _text(record.find("volume")),
        "issue": _text(record.find("number")),
        "page": _text(record.find("pages")),
        "publisher": _text(record.find("publisher")),
        "DOI": _text(record.find("electronic-resource-num")),
        "ISBN": _text(record.find("isbn")),
        "URL": _text(record.find("urls/related-urls/url")),
    }
    item.update({name: value for name, value in fields.items() if value})
    if year:
        item["issued"] = {"raw": year}
    return item


def _person(name: str) -> dict[str, str]:
    """EndNote stores "Family, Given"; a name without a comma is an organisation."""
    family, comma, given = name.partition(",")
    if not comma:
        return {"literal": name.strip()}
    return {"family": family.strip(), "given": given.strip()}


def _text(element: Element | None) -> str:
    """All the text inside an element (EndNote wraps it in `<style>` runs)."""
    if element is None:
        return ""
    return " ".join("".join(element.itertext()).split())
