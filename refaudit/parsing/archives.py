"""Zip containers (a Word file) checked before anything inside them is read.

A `.docx` is a zip of XML parts. Its central directory says how large each part
unpacks to, and Python's zipfile never inflates a part past that size, so the
declared sizes are what the limits are checked on: a bomb is refused before a
byte of it is inflated. XML parts are parsed with defusedxml (no DTDs, no
entities). Nothing outside the file is ever opened: relationships marked
`TargetMode="External"` are never followed, and a document whose text would have
to be fetched from outside (a master document's sub-documents, an external
chunk or frame) is refused, since reading it without that text would be wrong.
"""

from __future__ import annotations

import io
import zipfile
from xml.etree.ElementTree import Element

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from refaudit.errors import InputError

MAX_PARTS = 2000
"""far beyond a real manuscript (tens of parts; hundreds with many figures)"""
MAX_UNPACKED_BYTES = 256 * 1024 * 1024
"""what all the parts of one file may unpack to"""
MAX_RATIO = 200
"""how much one part may inflate (XML compresses 10-50 times; a bomb, thousands)"""
_RATIO_FLOOR = 1024 * 1024  # parts smaller than this unpack harmlessly at any ratio
_RELATIONSHIP_NS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
# Relationship types whose target is part of the document's text.
_CONTENT_TYPES = ("/subDocument", "/aFChunk", "/frame")


def open_zip(data: bytes, *, file: str, kind: str) -> zipfile.ZipFile:
    """The archive, once its part count, sizes and ratios are known to be sane.

    Raises:
        InputError: not a zip, or a part count, size or ratio beyond the limits.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError):
        raise InputError(
            f"not a {kind} (not a zip archive, or a damaged one)",
            file=file,
            hint="save the document again from the word processor",
        ) from None
    members = archive.infolist()
    if len(members) > MAX_PARTS:
        raise InputError(
            f"holds {len(members)} parts (more than {MAX_PARTS}); refused as hostile", file=file
        )
    total = 0
    for member in members:
        total += member.file_size
        if total > MAX_UNPACKED_BYTES:
            raise InputError(
                f"unpacks to more than {MAX_UNPACKED_BYTES // (1024 * 1024)} MB; "
                "refused as a zip bomb",
                file=file,
            )
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > _RATIO_FLOOR and ratio > MAX_RATIO:
            raise InputError(
                f"part {member.filename!r} inflates {ratio:.0f} times "
                f"(more than {MAX_RATIO}); refused as a zip bomb",
                file=file,
            )
    return archive


def check_parts(archive: zipfile.ZipFile, *, file: str) -> None:
    """Every XML part parses safely, and no relationship pulls document text from outside.

    Raises:
        InputError: a part with a DTD or entities, malformed XML, or an external
            sub-document, chunk or frame.
    """
    for member in archive.infolist():
        name = member.filename
        if not name.endswith((".xml", ".rels")):
            continue
        root = parse_xml(read_part(archive, name, file=file), file=file, part=name)
        if name.endswith(".rels"):
            _refuse_external_content(root, file=file, part=name)


def read_part(archive: zipfile.ZipFile, name: str, *, file: str) -> bytes:
    """One part's bytes (never more than its declared size: zipfile stops there)."""
    try:
        return archive.read(name)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as error:
        raise InputError(f"part {name!r} cannot be read: {error}", file=file) from None


def parse_xml(data: bytes, *, file: str, part: str) -> Element:
    """A part's XML tree, parsed with defusedxml (a DTD or an entity is refused)."""
    try:
        return SafeET.fromstring(data, forbid_dtd=True)
    except DefusedXmlException:
        raise InputError(
            f"part {part!r} declares a DTD or entities; refused as hostile", file=file
        ) from None
    except SafeET.ParseError as error:
        raise InputError(f"part {part!r} is not well-formed XML ({error})", file=file) from None


def _refuse_external_content(root: Element, *, file: str, part: str) -> None:
    for relationship in root.iter(f"{_RELATIONSHIP_NS}Relationship"):
        external = relationship.get("TargetMode", "").lower() == "external"
        if external and relationship.get("Type", "").endswith(_CONTENT_TYPES):
            kind = relationship.get("Type", "").rsplit("/", 1)[-1]
            raise InputError(
                f"part {part!r} takes document text from outside the file "
                f"({kind} → {relationship.get('Target', '')!r}); refused, nothing outside "
                "the file is read",
                file=file,
                hint="save the document with its contents embedded (no linked sub-documents)",
            )
