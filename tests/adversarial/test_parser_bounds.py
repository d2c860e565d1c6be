"""Hostile .bib/.tex/.bbl inputs: bounded work, a parse problem per bad entry, never a crash."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest

from refaudit.errors import InputError
from refaudit.models import Bibliography
from refaudit.parsing import parse_bibtex, parse_file
from refaudit.parsing.bbl import parse_bbl
from refaudit.parsing.bibtex import MAX_CROSSREF_DEPTH, MAX_VALUE_CHARS
from refaudit.parsing.files import open_stream
from tests.adversarial.helpers import finishes_within


def string_bomb(levels: int) -> str:
    """Each @string repeats the previous one four times: 4**levels characters from ~40/level."""
    lines = ['@string{s0 = "0123456789"}']
    lines += [
        f"@string{{s{n} = s{n - 1} # s{n - 1} # s{n - 1} # s{n - 1}}}" for n in range(1, levels)
    ]
    return "\n".join(lines) + "\n"


def test_string_expansion_is_capped_and_the_entry_becomes_a_parse_problem() -> None:
    text = string_bomb(20) + (
        "@article{bomb, title = s19, year = 2020}\n"
        "@article{fine, title = {Attention Is All You Need} # s2, year = 2017}\n"
    )
    assert len(text) < 1500  # 10 * 4**19 characters once expanded
    bibliography = parse_bibtex(text, file="bomb.bib")
    assert [reference.key for reference in bibliography.references] == ["fine"]
    assert bibliography.references[0].title.startswith("Attention Is All You Need0123")
    problem = next(p for p in bibliography.problems if p.key == "bomb")
    assert problem.code == "parse-error" and problem.severity == "error"
    assert "too long" in problem.message


def test_a_value_just_under_the_cap_is_kept_and_one_just_over_is_refused() -> None:
    half = "x" * (MAX_VALUE_CHARS // 2)
    text = (
        f"@string{{half = {{{half}}}}}\n"
        "@misc{under, note = half # half}\n"
        "@misc{over, note = half # half # {y}}\n"
    )
    bibliography = parse_bibtex(text)
    assert [reference.key for reference in bibliography.references] == ["under"]
    assert any(p.key == "over" and p.code == "parse-error" for p in bibliography.problems)


def test_total_expansion_across_the_file_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each value is under the per-value cap; together they pass the file's budget.
    monkeypatch.setattr("refaudit.parsing.bibtex.MAX_EXPANDED_CHARS", 10 * MAX_VALUE_CHARS)
    big = "x" * (MAX_VALUE_CHARS - 10)
    entries = "".join(f"@misc{{e{n}, note = big}}\n" for n in range(30))
    bibliography = parse_bibtex(f"@string{{big = {{{big}}}}}\n{entries}")
    assert len(bibliography.references) == 9  # the @string itself took one share
    assert sum(p.code == "parse-error" for p in bibliography.problems) == 21


def test_a_long_file_of_plain_entries_is_read_to_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file's expansion budget counts what macros add, not the text an entry spells
    out: a million-entry .bib once lost every entry past its 460,000th to it."""
    monkeypatch.setattr("refaudit.parsing.bibtex.MAX_EXPANDED_CHARS", 2000)
    entries = "".join(
        f"@article{{e{n}, title = {{A plain title of some fifty characters, number {n}}}, "
        f"journal = jt, month = mar, year = 2020}}\n"
        for n in range(100)
    )
    bibliography = parse_bibtex('@string{jt = "J. Tests"}\n' + entries)
    assert len(bibliography.references) == 100 and not bibliography.problems
    assert bibliography.references[-1].venue == "J. Tests"


def test_a_file_whose_only_entry_is_a_bomb_is_unusable(tmp_path: Path) -> None:
    path = tmp_path / "bomb.bib"
    path.write_text(string_bomb(20) + "@article{bomb, title = s19}\n")
    with pytest.raises(InputError, match="bomb"):
        parse_file(path)


@pytest.mark.parametrize(
    "text",
    [
        "@book{self, crossref = {self}, title = {A}}\n",
        "@book{a, crossref = {b}, title = {A}}\n@book{b, crossref = {a}, title = {B}}\n",
    ],
    ids=["self", "two-cycle"],
)
def test_crossref_cycles_are_reported_not_crashed_on(text: str) -> None:
    bibliography = parse_bibtex(text)
    assert len(bibliography.references) == text.count("@book")
    assert any(p.code == "crossref-cycle" for p in bibliography.problems)


def test_a_long_crossref_chain_is_cut_with_a_problem_and_no_recursion_error() -> None:
    count = 5000  # far past Python's recursion limit
    text = "".join(
        f"@inproceedings{{k{n}, title = {{Paper {n}}}, crossref = {{k{n + 1}}}}}\n"
        for n in range(count)
    )
    bibliography = parse_bibtex(text)
    assert len(bibliography.references) == count
    first = bibliography.references[0]
    assert first.fields["booktitle"] == "Paper 1"
    deep = [p for p in bibliography.problems if p.code == "crossref-too-deep"]
    assert deep and f"{MAX_CROSSREF_DEPTH} levels" in deep[0].message


def test_a_short_crossref_chain_still_inherits_through_every_level() -> None:
    text = (
        "@inproceedings{paper, title = {P}, crossref = {procs}}\n"
        "@proceedings{procs, title = {Proceedings of X}, crossref = {series}}\n"
        "@book{series, publisher = {Springer}, year = {2020}}\n"
    )
    paper = parse_bibtex(text).references[0]
    assert paper.fields["booktitle"] == "Proceedings of X"
    assert paper.fields["publisher"] == "Springer"


def test_utf16_with_a_lone_surrogate_is_read_with_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "u16.bib"
    body = "@article{k, title = {Caf".encode("utf-16-le") + b"\x00\xd8" + "}}\n".encode("utf-16-le")
    path.write_bytes(codecs.BOM_UTF16_LE + body)
    bibliography = parse_file(path)
    assert [reference.key for reference in bibliography.references] == ["k"]
    assert any(p.code == "utf16-invalid" for p in bibliography.problems)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_bib_linked_to_dev_zero_is_refused_without_reading_it(tmp_path: Path) -> None:
    link = tmp_path / "zero.bib"
    link.symlink_to("/dev/zero")
    with finishes_within(20), pytest.raises(InputError, match="not a regular file"):
        parse_file(link)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_a_named_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "refs.bib"
    os.mkfifo(fifo)
    with finishes_within(20), pytest.raises(InputError, match="not a regular file"):
        parse_file(fifo)


def test_an_oversized_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("refaudit.parsing.files.MAX_INPUT_BYTES", 1000)
    path = tmp_path / "big.bib"
    path.write_text("@misc{a, note = {" + "x" * 2000 + "}}\n")
    with pytest.raises(InputError, match="larger than"):
        parse_file(path)


def test_a_bib_read_line_by_line_may_outgrow_the_whole_file_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A million-entry .bib is streamed, never held whole: only the stream's own bound
    (and each line's) applies to it."""
    monkeypatch.setattr("refaudit.parsing.files.MAX_INPUT_BYTES", 1000)
    path = tmp_path / "long.bib"
    path.write_text("".join(f"@misc{{k{n}, title = {{Entry {n}}}}}\n" for n in range(200)))
    assert path.stat().st_size > 1000
    stream, _ = open_stream(path)
    assert len(list(stream.references())) == 200

    monkeypatch.setattr("refaudit.parsing.files.MAX_STREAMED_BYTES", 4000)
    with pytest.raises(InputError, match="larger than 0 MB"):
        open_stream(path)


def test_bbl_verb_without_endverb_is_linear() -> None:
    text = "\\entry{k}{article}{}\n\\field{title}{T}\n" + "\\verb{url}\n\\verb x\n" * 40_000
    with finishes_within(20):
        bibliography = parse_bbl(text, file="x.bbl")
    assert [reference.key for reference in bibliography.references] == ["k"]


def test_bbl_entries_without_endentry_are_linear_and_each_reported() -> None:
    count = 10_000
    text = "".join(
        f"\\entry{{k{n}}}{{article}}{{}}\n\\field{{title}}{{T{n}}}\n" for n in range(count)
    )
    with finishes_within(60):
        bibliography = parse_bbl(text, file="x.bbl")
    assert len(bibliography.references) == count
    assert sum(p.code == "parse-error" for p in bibliography.problems) == count
    assert bibliography.problems[-1].line == 2 * count - 1


@pytest.mark.parametrize("command", ["\\cite", "\\addbibresource", "\\input"])
def test_tex_with_many_unclosed_optional_arguments_is_linear(tmp_path: Path, command: str) -> None:
    (tmp_path / "refs.bib").write_text("@article{a, title = {A}}\n")
    paper = tmp_path / "paper.tex"
    paper.write_text("\\bibliography{refs}\n\\cite{a}\n" + f"{command}[ see " * 70_000)
    with finishes_within(20):
        bibliography = parse_file(paper)
    assert bibliography.cited_keys == ["a"]


def _articles(key: str, title: str, count: int) -> str:
    """`count` four-line entries whose journal is the `venue` macro."""
    return "".join(
        f"@article{{{key}{n},\n  title = {{{title}{n}}},\n  journal = venue,\n}}\n"
        for n in range(count)
    )


def _view(bibliography: Bibliography) -> object:
    """What a chunked read must keep: each reference's key, line, venue and parent's
    title, and each problem's code, line and key."""
    return (
        [(r.key, r.line, r.venue, r.fields.get("booktitle")) for r in bibliography.references],
        [(p.code, p.line, p.key) for p in bibliography.problems],
    )


def test_chunked_parsing_reads_exactly_what_one_pass_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks are parsed a chunk at a time; macros, crossrefs, duplicates and lines still span."""
    text = (
        "@string{venue = {Journal of Tests}}\n"
        + _articles("k", "T", 7)
        + "@article{broken,\n  title = {never closed,\n"
        + "@inproceedings{child, title = {C}, crossref = {k1}}\n"
        + "@article{k2, title = {Again}}\n"
    )
    whole = parse_bibtex(text, file="refs.bib")
    monkeypatch.setattr("refaudit.parsing.bibtex.CHUNK_BLOCKS", 3)
    chunked = parse_bibtex(text, file="refs.bib")

    assert _view(chunked) == _view(whole)
    assert ("child", 32, "Journal of Tests", "T1") in _view(chunked)[0]
    assert ("duplicate-key", 33, "k2") in _view(chunked)[1]


@pytest.mark.parametrize(("first", "most"), [(1, 4), (2, 1000), (8, 8)])
def test_a_stream_starting_with_small_chunks_reads_what_one_pass_reads(
    first: int, most: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long file is first read in small, growing chunks (so its first requests leave
    early): an unclosed entry, a macro, a cross-reference or a duplicate key falling on
    any of those boundaries still reads as in one pass, with the same lines."""
    from refaudit.parsing import bibtex

    text = (
        "@string{venue = {Journal of Tests}}\n"
        + _articles("k", "T", 2)
        + "@article{broken,\n  title = {never closed,\n"
        + _articles("m", "M", 9)
        + "@inproceedings{child, title = {C}, crossref = {k1}}\n"
        + "@article{m3, title = {Again}}\n"
        + "@misc{tail, title = {unclosed to the end of the file\n"
    )
    monkeypatch.setattr(bibtex, "FIRST_CHUNK_BLOCKS", 10**9)
    monkeypatch.setattr(bibtex, "CHUNK_BLOCKS", 10**9)
    whole = parse_bibtex(text, file="refs.bib")
    monkeypatch.setattr(bibtex, "FIRST_CHUNK_BLOCKS", first)
    monkeypatch.setattr(bibtex, "CHUNK_BLOCKS", most)
    streamed = parse_bibtex(text, file="refs.bib")

    assert _view(streamed) == _view(whole)
    assert [(r.key, r.line) for r in streamed.references][-3:] == [
        ("m8", 44),
        ("child", 48),
        ("m3", 49),
    ]
    assert streamed.references[0].venue == "Journal of Tests"
    assert [(p.code, p.line, p.key) for p in streamed.problems] == [
        ("parse-error", 10, "broken"),
        ("duplicate-key", 49, "m3"),
        ("parse-error", 50, "tail"),
    ]
