"""Small PDFs written byte by byte for the tests: a page of text, an image-only page
(a scan), and hostile shapes (a deflate bomb, a page tree claiming 100,000 pages,
objects nested thousands deep, a broken cross-reference table)."""

from __future__ import annotations

import zlib


def pdf(objects: list[bytes], *, root: int = 1, xref: bool = True) -> bytes:
    """A PDF whose object n (1-based) has the body objects[n - 1]."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    start = len(out)
    if xref:
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
        out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    else:
        out += b"xref\n0 9999\ngarbage here\n"
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\n" % (len(objects) + 1, root)
    out += b"startxref\n%d\n%%%%EOF\n" % start
    return bytes(out)


def stream(data: bytes, *, compress: bool = False, extra: bytes = b"") -> bytes:
    if compress:
        data = zlib.compress(data, 9)
        extra += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def text_page(lines: list[str]) -> bytes:
    """One page printing `lines` top to bottom in 10 pt Helvetica."""
    content = (
        b"BT /F1 10 Tf 72 720 Td 12 TL "
        + b"".join(
            b"(" + line.encode("latin-1").replace(b"(", b"\\(").replace(b")", b"\\)") + b") Tj T* "
            for line in lines
        )
        + b"ET"
    )
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
            stream(content),
            _FONT,
        ]
    )


def image_page() -> bytes:
    """A page holding only a grey image: what a scanner produces."""
    pixels = bytes([128]) * (64 * 64)
    image = stream(
        pixels,
        compress=True,
        extra=b" /Type /XObject /Subtype /Image /Width 64 /Height 64"
        b" /ColorSpace /DeviceGray /BitsPerComponent 8",
    )
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>",
            stream(b"q 500 0 0 700 50 50 cm /Im1 Do Q"),
            image,
        ]
    )


def many_pages(count: int) -> bytes:
    """A page tree listing one page `count` times."""
    kids = b" ".join([b"3 0 R"] * count)
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % count,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            stream(b""),
        ]
    )


def deflate_bomb(megabytes: int) -> bytes:
    """A page whose content stream inflates to `megabytes` of spaces."""
    packer = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    data = b"".join(packer.compress(chunk) for _ in range(megabytes)) + packer.flush()
    body = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            body,
        ]
    )


def deeply_nested(depth: int) -> bytes:
    """A page whose resources nest arrays `depth` deep."""
    nested = b"[" * depth + b"]" * depth
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Annots " + nested + b" >>",
            stream(b"BT /F1 10 Tf 72 720 Td (text) Tj ET"),
        ]
    )


def broken_xref(lines: list[str]) -> bytes:
    """`text_page` with its cross-reference table replaced by garbage."""
    good = text_page(lines)
    head = good[: good.index(b"xref\n")]
    return head + b"xref\n0 9999\nnot a table\ntrailer\n<< /Root 1 0 R >>\nstartxref\n5\n%%EOF\n"
