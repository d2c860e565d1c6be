"""Containers checked before anything inside them is read: zip (a Word file), gzip and
tar (a paper's source from arXiv).

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
import zlib
from pathlib import Path
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
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError) as error:
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


MAX_SOURCE_MEMBERS = 5000
"""far beyond a real paper's source (tens to a few hundred files)"""
MAX_SOURCE_BYTES = 512 * 1024 * 1024
"""what a paper's source may unpack to (arXiv takes 50 MB compressed)"""
MAX_TEXT_BYTES = 64 * 1024 * 1024
"""one .tex / .bib / .bbl file, as for files on disk"""
SOURCE_SUFFIXES = (".tex", ".ltx", ".bib", ".bibtex", ".bbl")
_CHUNK = 1 << 16


def gunzip(data: bytes, *, file: str, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """A gzip stream inflated, refused once it passes `limit` (a gzip bomb stops there)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    try:
        for start in range(0, len(data), _CHUNK):
            out += inflater.decompress(data[start : start + _CHUNK], limit + 1 - len(out))
            while inflater.unconsumed_tail and len(out) <= limit:
                out += inflater.decompress(inflater.unconsumed_tail, limit + 1 - len(out))
            if len(out) > limit:
                raise InputError(
                    f"unpacks to more than {limit // (1024 * 1024)} MB; refused as a gzip bomb",
                    file=file,
                )
            if inflater.eof:
                break
    except zlib.error as error:
        raise InputError(f"damaged gzip data ({error})", file=file) from None
    return bytes(out)


def extract_sources(data: bytes, destination: Path, *, file: str) -> list[Path]:
    """The TeX, BibTeX and .bbl files of a tar archive, written under `destination`.

    Only regular files with those suffixes are written; links, devices and everything
    else are never created. A member whose path is absolute or climbs out with `..`,
    more than MAX_SOURCE_MEMBERS members, or more than MAX_SOURCE_BYTES in all, refuse
    the archive (it is hostile, not a paper).

    Raises:
        InputError: not a tar archive, or a hostile one.
    """
    import tarfile

    written: list[Path] = []
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            for count, member in enumerate(archive, start=1):
                if count > MAX_SOURCE_MEMBERS:
                    raise InputError(
                        f"holds more than {MAX_SOURCE_MEMBERS} files; refused as hostile",
                        file=file,
                    )
                total += max(member.size, 0)
                if total > MAX_SOURCE_BYTES:
                    raise InputError(
                        f"unpacks to more than {MAX_SOURCE_BYTES // (1024 * 1024)} MB; "
                        "refused as a tar bomb",
                        file=file,
                    )
                target = _inside(destination, member.name, file=file)
                if not member.isfile() or target.suffix.lower() not in SOURCE_SUFFIXES:
                    continue
                if member.size > MAX_TEXT_BYTES:
                    continue
                stream = archive.extractfile(member)
                if stream is None:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with stream, open(target, "xb") as out:
                    while chunk := stream.read(_CHUNK):
                        out.write(chunk)
                written.append(target)
    except tarfile.TarError as error:
        raise InputError(f"not a readable tar archive ({error})", file=file) from None
    except FileExistsError:
        raise InputError("names one file twice; refused as hostile", file=file) from None
    except OSError as error:
        raise InputError(f"cannot be unpacked ({error.strerror or error})", file=file) from None
    return written


def _inside(destination: Path, name: str, *, file: str) -> Path:
    """Where a member goes: always inside `destination`, or the archive is refused."""
    import posixpath

    clean = posixpath.normpath(name.replace("\\", "/"))
    if clean.startswith(("/", "../")) or clean == ".." or ":" in clean.split("/")[0]:
        raise InputError(
            f"member {name!r} points outside the archive; refused as hostile", file=file
        )
    return destination / clean
