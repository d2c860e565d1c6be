"""Unusable inputs are refused with a message naming the file; `refaudit parse` prints records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refaudit.cli import app
from refaudit.errors import InputError
from refaudit.parsing import parse_file

FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLES = Path(__file__).parents[1] / "examples"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.bib", None, "file not found"),
        ("empty.bib", b"  \n\n", "file is empty"),
        ("binary.bib", b"@article{x,\x00\x01\x02}", "binary file"),
        ("notes.bib", b"just some notes, no entries\n", "no BibTeX entries"),
        ("refs.odt", b"PK\x03\x04", "unsupported file type '.odt'"),
        ("refs.docx", b"PK\x03\x04", "not a Word document"),
        ("empty.bbl", b"\\begin{thebibliography}{0}\\end{thebibliography}", "no references found"),
    ],
)
def test_unusable_input_raises_input_error_naming_the_file(
    tmp_path: Path, name: str, content: bytes | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match=message) as raised:
        parse_file(path)
    assert raised.value.file == str(path)
    assert str(path) in raised.value.message


def test_directory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "refs.bib"
    folder.mkdir()
    with pytest.raises(InputError, match="directory"):
        parse_file(folder)


def test_unknown_extension_hint_lists_supported_ones(tmp_path: Path) -> None:
    path = tmp_path / "refs.ris"
    path.write_text("TY  - JOUR\n")
    with pytest.raises(InputError) as raised:
        parse_file(path)
    assert (
        raised.value.hint is not None
        and ".bib" in raised.value.hint
        and ".tex" in raised.value.hint
    )


def test_cli_bad_input_exits_2_with_one_clean_message(tmp_path: Path) -> None:
    path = tmp_path / "binary.bib"
    path.write_bytes(b"\x00\x00")
    result = CliRunner().invoke(app, ["parse", str(path)])
    assert result.exit_code == 2
    assert "binary.bib" in result.output and "binary file" in result.output
    assert "Traceback" not in result.output


def test_cli_missing_file_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["parse", str(tmp_path / "nope.tex")])
    assert result.exit_code == 2
    assert "nope.tex" in result.output and "not found" in result.output


def test_error_messages_show_brackets_in_paths_and_keys_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "[" / "draft]"
    folder.mkdir(parents=True)
    (folder / "refs.bib").write_text("@article{smith2020,\n  title = {Unclosed\n")
    result = CliRunner().invoke(app, ["parse", str(folder / "refs.bib")])
    assert result.exit_code == 2
    assert "[/draft]" in result.output and "[smith2020]" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_cli_json_lists_references_and_problems() -> None:
    result = CliRunner().invoke(
        app, ["parse", str(FIXTURES / "bib" / "broken.bib"), "--format", "json"]
    )
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert [r["key"] for r in payload["references"]] == ["good1", "good2", "good1", "good3"]
    assert payload["references"][0]["authors"][0]["family"] == "Alpha"
    codes = {p["code"] for p in payload["problems"]}
    assert {"parse-error", "duplicate-key", "undefined-macro"} <= codes
    assert "broken.bib:10 [unbalanced]: could not parse" in result.stderr


def test_cli_table_shows_keys_years_and_identifiers() -> None:
    result = CliRunner().invoke(
        app, ["parse", str(FIXTURES / "bib" / "physics.bib")], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0
    assert "Aad:2012tfa" in result.stdout and "arXiv:1207.7214" in result.stdout
    assert "doi:10.1016/j.physletb.2012.08.020" in result.stdout


def test_cli_all_entries_flag_keeps_uncited(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text("@misc{a, title={A}}\n@misc{b, title={B}}\n")
    (tmp_path / "doc.tex").write_text("\\cite{a}\\bibliography{refs}\n")
    runner = CliRunner()
    cited = json.loads(
        runner.invoke(app, ["parse", str(tmp_path / "doc.tex"), "-f", "json"]).stdout
    )
    every = json.loads(
        runner.invoke(
            app, ["parse", str(tmp_path / "doc.tex"), "-f", "json", "--all-entries"]
        ).stdout
    )
    assert [r["key"] for r in cited["references"]] == ["a"]
    assert [r["key"] for r in every["references"]] == ["a", "b"]
    assert cited["cited_keys"] == ["a"]


def test_example_paper_parses_cleanly() -> None:
    bibliography = parse_file(EXAMPLES / "paper.tex")
    assert 20 <= len(bibliography.references) <= 40
    assert [p.code for p in bibliography.problems] == ["uncited-entry"]
    refs = {r.key: r for r in bibliography.references}
    assert refs["wakefield1998ileal"].doi == "10.1016/s0140-6736(97)11096-0"
    assert refs["vaswani2017attention"].arxiv_id == "1706.03762"
    assert refs["ioffe2015batchnorm"].arxiv_id == "1502.03167"
    assert refs["osc2015reproducibility"].authors[0].is_organisation
    kinds = {r.entry_type for r in bibliography.references}
    assert {
        "article",
        "inproceedings",
        "misc",
        "book",
        "incollection",
        "phdthesis",
        "techreport",
    } <= kinds


def test_bib_whose_every_entry_is_broken_is_refused_naming_the_first(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(
        "% exported by hand\n@article{smith2020,\n  title = {Unclosed {brace,\n  year = 2020,\n}\n"
    )
    with pytest.raises(InputError, match="unbalanced braces") as raised:
        parse_file(path)
    assert (raised.value.file, raised.value.line, raised.value.key) == (str(path), 2, "smith2020")

    result = CliRunner().invoke(app, ["parse", str(path)])
    assert result.exit_code == 2
    assert "refs.bib:2" in result.output and "Traceback" not in result.output
