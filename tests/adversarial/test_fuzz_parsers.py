"""Property-based fuzzing of every parser: any input gives references and problems, or an
InputError, never another exception.

The number of examples is small in the test suite (the `ci` profile, a few seconds);
`python bench/fuzz_parsers.py` runs the same properties with the `long` profile.
"""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from refaudit.errors import InputError
from refaudit.fix import FixOutcome, apply_fixes, scan_entries, verify_fix
from refaudit.models import AuditReport
from refaudit.parsing import bbl, parse_bibtex, parse_file, parse_freetext
from refaudit.parsing.bbl import parse_bbl
from refaudit.parsing.pdflist import reference_list
from refaudit.parsing.pdftext import TextLine
from tests import pdfbytes

# The suite writes no example database into the checkout; a failure prints its input.
settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("REFAUDIT_FUZZ_PROFILE", "ci"))

# Pieces that steer the fuzzer into the parsers' interesting states.
BIBTEX_PIECES = [
    "@article{",
    "@book(",
    "@string{",
    "@comment{",
    "@preamble{",
    "@inproceedings{k,",
    "key,",
    "title = ",
    "author = ",
    "year = ",
    "crossref = {k}",
    "crossref = {key}",
    "{",
    "}",
    "(",
    ")",
    '"',
    "#",
    ",",
    "=",
    "\n",
    "%",
    "\\",
    '{"}',
    "\\{",
    "\\}",
    "jan",
    "s0",
    "@string{s0 = s0 # s0}",
    '{\\"u}',
    "$\\alpha$",
    "and others",
    "\t",
]
LATEX_PIECES = [
    "\\cite{",
    "\\cite[",
    "\\citep[p.~5]{",
    "\\cites{a}{",
    "\\nocite{*}",
    "\\input{",
    "\\bibliography{",
    "\\addbibresource{",
    "../",
    "/etc/passwd",
    "refs",
    "}",
    "{",
    "]",
    "[",
    "%",
    "\\%",
    "\\begin{thebibliography}{9}",
    "\\bibitem{",
    "\\bibitem[",
    "\n",
    "\\end{thebibliography}",
    ",",
    " ",
    "a",
    "\\\\",
]
BBL_PIECES = [
    "\\entry{",
    "}{article}{}",
    "\\endentry",
    "\\verb{",
    "\\verb ",
    "\\endverb",
    "\\field{title}{",
    "\\name{author}{1}{}{",
    "{{hash=1}{family={",
    "}, given={",
    "\\list{publisher}{1}{",
    "\\true{moreauthor}",
    "\\range{pages}{",
    "{",
    "}",
    "\n",
    "%",
]
CHARACTERS = st.characters(codec="utf-8", exclude_categories=("Cs",))


def soup(pieces: list[str]) -> st.SearchStrategy[str]:
    part = st.one_of(st.sampled_from(pieces), st.text(CHARACTERS, max_size=8))
    return st.lists(part, max_size=60).map("".join)


@given(soup(BIBTEX_PIECES))
def test_bibtex_text_never_raises(text: str) -> None:
    bibliography = parse_bibtex(text, file="fuzz.bib")
    for problem in bibliography.problems:
        assert problem.file == "fuzz.bib" and problem.message


@given(soup(BIBTEX_PIECES))
def test_fix_scans_what_the_parser_reads_and_an_empty_fix_verifies(text: str) -> None:
    keys = [span.key for span in scan_entries(text)]
    parsed = [reference.key for reference in parse_bibtex(text).references]
    assert set(keys) <= set(parsed) | {""}
    assert apply_fixes(text, AuditReport()).text == text
    verify_fix(text, FixOutcome(text=text))


@given(soup(BBL_PIECES), st.integers(1, 200))
def test_bbl_text_never_raises_and_reads_alike_in_pieces(text: str, piece: int) -> None:
    whole = parse_bbl(text, file="fuzz.bbl")
    with mock.patch.object(bbl, "_READ_CHARS", piece):
        assert parse_bbl(text, file="fuzz.bbl") == whole


@given(st.text(CHARACTERS, max_size=300))
def test_free_text_citations_never_raise(text: str) -> None:
    parse_freetext(text, key="k")


@given(soup(LATEX_PIECES), soup(BIBTEX_PIECES), st.binary(max_size=200))
def test_files_on_disk_never_raise_anything_but_input_error(
    tmp_path_factory: object, tex: str, bib: str, raw: bytes
) -> None:
    folder = Path(tmp_path_factory.mktemp("fuzz"))  # type: ignore[attr-defined]
    (folder / "refs.bib").write_text(bib, encoding="utf-8")
    (folder / "raw.bib").write_bytes(raw)
    (folder / "paper.tex").write_text(tex, encoding="utf-8")
    for name in ("paper.tex", "refs.bib", "raw.bib"):
        try:
            parse_file(folder / name)
        except InputError:
            pass


LINE_PIECES = ["References", "[1] ", "[2] ", "1. ", "2. ", "Appendix", "A. Author, ", "2020.", "-"]


@given(
    st.lists(
        st.tuples(
            st.integers(1, 3),
            st.floats(0, 600),
            st.floats(0, 600),
            st.floats(0, 800),
            st.floats(1, 30),
            soup(LINE_PIECES),
        ),
        max_size=80,
    )
)
def test_any_page_layout_gives_entries_never_an_error(
    rows: list[tuple[int, float, float, float, float, str]],
) -> None:
    lines = [
        TextLine(page, x0, x0 + width, y, size, text, 612.0, 792.0)
        for page, x0, width, y, size, text in rows
    ]
    for entry in reference_list(lines):
        assert entry.text and entry.page in {1, 2, 3}


@settings(max_examples=6)
@given(st.binary(min_size=1, max_size=40), st.integers(0, 10_000))
def test_a_damaged_pdf_is_read_or_refused_with_an_input_error(
    tmp_path_factory: object, garbage: bytes, at: int
) -> None:
    good = pdfbytes.text_page(["References", '[1] A. Author, "A title," in Proc. X, 2020.'])
    at %= len(good)
    path = Path(tmp_path_factory.mktemp("pdf")) / "damaged.pdf"  # type: ignore[attr-defined]
    path.write_bytes(good[:at] + garbage + good[at + len(garbage) :])
    try:
        parse_file(path)
    except InputError:
        pass


# Field-code instructions as citation managers write them, in pieces.
FIELD_PIECES = [
    " ADDIN ZOTERO_ITEM CSL_CITATION ",
    " ADDIN CSL_CITATION ",
    " ADDIN EN.CITE ",
    " ADDIN EN.CITE.DATA ",
    "<EndNote>",
    "<Cite>",
    "<record>",
    "</record>",
    "<titles><title>",
    "<ref-type name=",
    "{",
    "}",
    "[",
    "]",
    '"citationItems":',
    '"itemData":',
    '"issued":',
    '{"date-parts":[[',
    '"author":[{"family":"A"}]',
    '"title":',
    '"uris":',
    ",",
    ":",
    '"',
    "null",
    "1e999",
    "-1",
    "<",
    ">",
    "&",
    "\\",
]


@given(soup(FIELD_PIECES), st.binary(min_size=1, max_size=64), st.integers(0, 20_000))
def test_word_documents_never_raise_anything_but_input_error(
    instruction: str, noise: bytes, at: int
) -> None:
    import io

    from refaudit.parsing.docx import parse_docx
    from tests.word import Manuscript

    # Word can only hold characters XML allows; the rest could never reach the reader.
    instruction = "".join(
        c for c in instruction if (c >= " " or c in "\t\n\r") and c not in "\ufffe\uffff"
    )
    doc = Manuscript()
    doc.field(instruction, "[1]")
    doc.heading("References")
    doc.text("Lovelace A. Notes on the analytical engine. Taylor's Memoirs. 1843;3:666-731.")
    buffer = io.BytesIO()
    doc.document.save(buffer)
    whole = buffer.getvalue()
    damaged = whole[:at] + noise + whole[at + len(noise) :]
    for data in (whole, damaged):
        try:
            parse_docx(data, file="paper.docx")
        except InputError:
            pass
