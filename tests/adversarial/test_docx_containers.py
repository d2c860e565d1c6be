"""Hostile Word files: bombs, part floods, DTDs and links out are refused, exit 2, one line."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refaudit.cli import app
from refaudit.errors import InputError
from refaudit.parsing import parse_file
from refaudit.parsing.archives import MAX_PARTS, MAX_UNPACKED_BYTES
from tests.adversarial.helpers import finishes_within
from tests.word import Manuscript, csl_item

_ITEM = csl_item(
    1, title="Deep learning", authors=[("LeCun", "Yann")], year=2015, doi="10.1038/nature14539"
)


def _manuscript(tmp_path: Path) -> Path:
    doc = Manuscript()
    doc.zotero([_ITEM], "(LeCun, 2015)")
    return doc.save(tmp_path / "base.docx")


def _rewritten(source: Path, target: Path, extra: dict[str, bytes], **replace: bytes) -> Path:
    """The document's parts (some replaced), plus extra ones, zipped again."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for member in old.infolist():
            new.writestr(member, replace.get(member.filename, old.read(member.filename)))
        for name, data in extra.items():
            new.writestr(name, data)
    return target


def _refused(path: Path) -> str:
    result = CliRunner().invoke(app, ["check", str(path), "--offline"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.output


def test_a_deflate_bomb_part_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    bomb = _rewritten(
        _manuscript(tmp_path), tmp_path / "bomb.docx", {"word/media/image1.png": bytes(40 << 20)}
    )
    assert bomb.stat().st_size < 1 << 20
    with finishes_within(20):
        assert "refused as a zip bomb" in _refused(bomb)


def test_parts_that_together_unpack_past_the_cap_are_refused(tmp_path: Path) -> None:
    # Each part is small enough to inflate at any ratio; all of them are not.
    count = MAX_UNPACKED_BYTES // (1 << 20) + 1
    parts = {f"word/media/image{n}.bin": bytes(1 << 20) for n in range(count)}
    with pytest.raises(InputError, match="unpacks to more than 256 MB"):
        parse_file(_rewritten(_manuscript(tmp_path), tmp_path / "wide.docx", parts))


def test_an_absurd_number_of_parts_is_refused(tmp_path: Path) -> None:
    parts = {f"customXml/flood{n}.xml": b"<a/>" for n in range(MAX_PARTS)}
    path = _rewritten(_manuscript(tmp_path), tmp_path / "many.docx", parts)
    assert f"more than {MAX_PARTS}" in _refused(path)


def test_a_dtd_with_entities_in_a_part_is_refused(tmp_path: Path) -> None:
    source = _manuscript(tmp_path)
    with zipfile.ZipFile(source) as archive:
        document = archive.read("word/document.xml").decode("utf-8")
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY a "lol">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    )
    hostile = laughs + document.split("?>", 1)[1].replace("As shown", "&b; As shown", 1)
    path = _rewritten(
        source, tmp_path / "laughs.docx", {}, **{"word/document.xml": hostile.encode()}
    )
    assert "declares a DTD or entities" in _refused(path)


def test_a_sub_document_outside_the_file_is_refused_and_never_fetched(tmp_path: Path) -> None:
    source = _manuscript(tmp_path)
    with zipfile.ZipFile(source) as archive:
        rels = archive.read("word/_rels/document.xml.rels").decode("utf-8")
    linked = rels.replace(
        "</Relationships>",
        '<Relationship Id="rId99" TargetMode="External" Target="http://attacker.example/'
        'chapter.docx" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/subDocument"/></Relationships>',
    )
    path = _rewritten(
        source, tmp_path / "master.docx", {}, **{"word/_rels/document.xml.rels": linked.encode()}
    )
    output = _refused(path)
    assert "subDocument" in output and "nothing outside the file is read" in output


def test_an_external_hyperlink_is_data_not_a_reason_to_refuse(tmp_path: Path) -> None:
    source = _manuscript(tmp_path)
    with zipfile.ZipFile(source) as archive:
        rels = archive.read("word/_rels/document.xml.rels").decode("utf-8")
    linked = rels.replace(
        "</Relationships>",
        '<Relationship Id="rId98" TargetMode="External" '
        'Target="https://doi.org/10.1038/nature14539" '
        'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink"/>'
        "</Relationships>",
    )
    path = _rewritten(
        source, tmp_path / "links.docx", {}, **{"word/_rels/document.xml.rels": linked.encode()}
    )
    assert [r.doi for r in parse_file(path).references] == ["10.1038/nature14539"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"%PDF-1.7 not a word file", "not a Word document (not a zip archive"),
        (b"", "not a Word document (not a zip archive"),
    ],
)
def test_a_file_that_is_not_a_zip_is_named_for_what_it_is_not(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "paper.docx"
    path.write_bytes(content)
    assert message in _refused(path)


def test_a_zip_without_a_word_document_in_it_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "paper.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        archive.writestr("content.xml", "<office:document-content/>")
    assert "not a Word document" in _refused(path)
