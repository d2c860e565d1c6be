"""LaTeX documents: citations, \\input, bibliography resources and \\bibitem lists."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from refaudit.errors import InputError
from refaudit.models import Bibliography, InputProblem
from refaudit.parsing import parse_file

FIXTURES = Path(__file__).parent / "fixtures" / "tex"


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    """A copy of the fixture paper (outside.tex sits one level above its folder)."""
    shutil.copytree(FIXTURES / "paper", tmp_path / "tex" / "paper")
    shutil.copy(FIXTURES / "outside.tex", tmp_path / "tex" / "outside.tex")
    return tmp_path / "tex" / "paper" / "main.tex"


def _codes(bibliography: Bibliography, code: str) -> dict[str, int | None]:
    return {p.key or p.message: p.line for p in bibliography.problems if p.code == code}


def test_cited_keys_in_order_of_first_citation_across_inputs(paper: Path) -> None:
    bibliography = parse_file(paper)
    assert bibliography.cited_keys == [
        "knuth1984",
        "oetiker2023",
        "deep1",
        "deep2",
        "lamport1994",
        "missing2020",
        "bibtex1988",
        "cited-in-footnote",
        "nocited",
    ]


def test_commented_out_citations_are_ignored_but_escaped_percent_is_not_a_comment(
    paper: Path,
) -> None:
    keys = parse_file(paper).cited_keys or []
    assert not {"commentedout", "alsocommented", "trailing"} & set(keys)
    assert keys[0] == "knuth1984"


def test_only_cited_entries_are_returned_by_default(paper: Path) -> None:
    bibliography = parse_file(paper)
    keys = [r.key for r in bibliography.references]
    assert keys == [
        "knuth1984",
        "lamport1994",
        "bibtex1988",
        "oetiker2023",
        "deep1",
        "deep2",
        "nocited",
    ]
    assert bibliography.references[0].title == "The TeXbook"
    assert bibliography.references[0].file == str(paper.parent / "library.bib")


def test_all_entries_keeps_uncited_ones(paper: Path) -> None:
    keys = [r.key for r in parse_file(paper, all_entries=True).references]
    assert "neverused" in keys


def test_undefined_and_uncited_keys_are_reported_with_lines(paper: Path) -> None:
    bibliography = parse_file(paper)
    assert _codes(bibliography, "undefined-citation") == {"missing2020": 8, "cited-in-footnote": 9}
    (undefined,) = [p for p in bibliography.problems if p.key == "missing2020"]
    assert undefined.file == str(paper) and undefined.severity == "warning"
    (uncited,) = [p for p in bibliography.problems if p.code == "uncited-entry"]
    assert (uncited.key, uncited.severity, uncited.line) == ("neverused", "info", 31)


def test_inputs_are_followed_but_never_outside_the_document_folder(paper: Path) -> None:
    bibliography = parse_file(paper)
    intro = paper.parent / "sections" / "intro.tex"
    assert str(intro) in bibliography.files
    assert str(paper.parent / "sections" / "details.tex") in bibliography.files
    assert "from-outside" not in (bibliography.cited_keys or [])
    (outside,) = [p for p in bibliography.problems if p.code == "input-outside-folder"]
    assert (outside.file, outside.line) == (str(intro), 4)


def test_nocite_star_keeps_every_entry_and_reports_none_uncited(paper: Path) -> None:
    paper.write_text(paper.read_text().replace(r"\nocite{nocited}", r"\nocite{*}"))
    bibliography = parse_file(paper)
    assert "neverused" in [r.key for r in bibliography.references]
    assert _codes(bibliography, "uncited-entry") == {}


def test_bibliography_command_resolves_several_files_and_reports_missing_ones(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.bib").write_text("@article{a, title={A}, year={2001}}\n")
    (tmp_path / "b.bib").write_text("@article{b, title={B}, year={2002}}\n")
    tex = tmp_path / "doc.tex"
    tex.write_text("\\cite{a,b}\n\\cite{b}\n\\bibliography{a, b,gone}\n")
    bibliography = parse_file(tex)
    assert [r.key for r in bibliography.references] == ["a", "b"]
    (missing,) = [p for p in bibliography.problems if p.code == "missing-bib-file"]
    assert (missing.line, missing.file) == (3, str(tex)) and "gone.bib" in missing.message


def test_missing_only_bibliography_is_an_input_error(tmp_path: Path) -> None:
    tex = tmp_path / "doc.tex"
    tex.write_text("\\cite{a}\n\\bibliography{nowhere}\n")
    with pytest.raises(InputError, match=r"doc\.tex.*nowhere\.bib"):
        parse_file(tex)


def test_tex_without_any_bibliography_is_an_input_error(tmp_path: Path) -> None:
    tex = tmp_path / "doc.tex"
    tex.write_text("\\documentclass{article}\\begin{document}Hi\\end{document}\n")
    with pytest.raises(InputError, match="no references found"):
        parse_file(tex)


def test_input_nesting_is_limited(tmp_path: Path) -> None:
    for depth in range(12):
        (tmp_path / f"level{depth}.tex").write_text(
            f"\\cite{{k{depth}}}\\input{{level{depth + 1}}}\n"
        )
    (tmp_path / "refs.bib").write_text("@misc{k0, title={Zero}}\n")
    main = tmp_path / "main.tex"
    main.write_text("\\input{level0}\n\\bibliography{refs}\n")
    bibliography = parse_file(main)
    assert "k9" in (bibliography.cited_keys or []) and "k10" not in (bibliography.cited_keys or [])
    assert any(p.code == "input-too-deep" for p in bibliography.problems)


def test_thebibliography_items_become_free_text_references() -> None:
    path = FIXTURES / "bibitems.tex"
    bibliography = parse_file(path)
    refs = {r.key: r for r in bibliography.references}
    assert list(refs) == ["lecun2015", "vaswani2017", "who2020"]
    assert (refs["lecun2015"].line, refs["vaswani2017"].line, refs["who2020"].line) == (6, 10, 15)
    assert (
        refs["lecun2015"].title == "Deep learning"
        and refs["lecun2015"].doi == "10.1038/nature14539"
    )
    assert refs["vaswani2017"].arxiv_id == "1706.03762"
    assert refs["who2020"].title == "Global tuberculosis report 2020"
    assert refs["who2020"].authors[0].family == "World Health Organization"
    assert _codes(bibliography, "undefined-citation") == {"nowhere": 3}


def test_bbl_file_is_read_as_bibitems() -> None:
    bibliography = parse_file(FIXTURES / "refs.bbl")
    first, second = bibliography.references
    assert (first.key, first.line, first.title) == ("hochreiter1997", 4, "Long short-term memory")
    assert (second.key, second.line, second.venue, second.year) == ("watson1953", 7, "Nature", 1953)
    assert bibliography.cited_keys is None


def _long_bib(count: int) -> str:
    return "".join(f"@article{{k{n}, title = {{Title {n}}}, year = 2001}}\n" for n in range(count))


def test_a_papers_bib_file_is_streamed_into_the_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cited entries come out of the .bib before it is read to the end."""
    from refaudit.audit import InputStream
    from refaudit.parsing import files
    from refaudit.parsing.bibtex import Lines

    (tmp_path / "refs.bib").write_text(_long_bib(3000), encoding="utf-8")
    paper = tmp_path / "paper.tex"
    paper.write_text("\\cite{k1,k2999}\n\\nocite{k5}\n\\bibliography{refs}\n", encoding="utf-8")
    read = [0]
    real = files.file_lines

    def counted(path: Path) -> tuple[Lines, list[InputProblem]]:
        lines, problems = real(path)

        def reading() -> Iterator[str]:
            read[0] = 0
            for line in lines():
                read[0] += 1
                yield line

        return reading, problems

    monkeypatch.setattr(files, "file_lines", counted)
    inputs = InputStream([paper])
    assert inputs.total == 3
    references = inputs.references()
    assert next(references).key == "k1"
    assert read[0] < 1500  # of 3,000 lines: the first chunk of blocks
    assert [r.key for r in references] == ["k5", "k2999"]
    assert inputs.files == [str(paper), str(tmp_path / "refs.bib")]


def test_problems_of_a_papers_files_keep_their_order(tmp_path: Path) -> None:
    """Each file's problems where the one-pass parser put them, an unreadable one between."""
    (tmp_path / "a.bib").write_text("@article{a, title = {A}, month = foo}\n", encoding="utf-8")
    (tmp_path / "b.bib").write_text("  \n", encoding="utf-8")
    (tmp_path / "c.bib").write_text("@article{c, title = {C}}\n@article{c, title={D}}\n")
    paper = tmp_path / "paper.tex"
    paper.write_text("\\cite{a,gone}\n\\bibliography{a,b,c,missing}\n", encoding="utf-8")
    bibliography = parse_file(paper)
    assert [r.key for r in bibliography.references] == ["a"]
    assert [(p.code, p.key) for p in bibliography.problems] == [
        ("missing-bib-file", None),
        ("undefined-macro", "a"),
        ("unreadable-bib-file", None),
        ("duplicate-key", "c"),
        ("undefined-citation", "gone"),
        ("uncited-entry", "c"),
        ("uncited-entry", "c"),
    ]


def test_bibliographies_are_read_in_the_order_the_document_names_them(tmp_path: Path) -> None:
    """A preamble's resource comes before one an \\input file adds, as biber reads them."""
    (tmp_path / "main.bib").write_text("@book{intro, title = {First}}\n", encoding="utf-8")
    (tmp_path / "extra.bib").write_text("@book{appendix, title = {Second}}\n", encoding="utf-8")
    (tmp_path / "appendix.tex").write_text(
        "\\addbibresource{extra.bib}\nSee \\cite{appendix}.\n", encoding="utf-8"
    )
    paper = tmp_path / "paper.tex"
    paper.write_text(
        "\\usepackage{biblatex}\n\\addbibresource{main.bib}\n\\begin{document}\n"
        "\\input{appendix}\n\\include {intro-missing}\n\\cite{intro}\n\\end{document}\n",
        encoding="utf-8",
    )
    bibliography = parse_file(paper)
    assert [(r.key, Path(r.file or "").name) for r in bibliography.references] == [
        ("intro", "main.bib"),
        ("appendix", "extra.bib"),
    ]
    assert [Path(file).name for file in bibliography.files] == [
        "paper.tex",
        "appendix.tex",
        "main.bib",
        "extra.bib",
    ]
    assert _codes(bibliography, "missing-input") == {"\\include file 'intro-missing' not found": 5}
