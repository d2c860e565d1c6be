"""Compiled .bbl files: biber's biblatex data read as entries, and arXiv sources without .bib."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import shared_path

from refaudit.errors import InputError
from refaudit.parsing import parse_file
from refaudit.parsing.bbl import parse_bbl

SOURCE = Path(__file__).parent / "fixtures" / "tex" / "arxiv-source"


def test_biber_entries_become_structured_references() -> None:
    bibliography = parse_file(SOURCE / "paper.bbl")
    refs = {reference.key: reference for reference in bibliography.references}

    assert list(refs) == ["he2016", "lecun2015", "vaswani2017", "waals1873", "who2020"]
    assert not bibliography.problems
    resnet = refs["he2016"]
    assert (resnet.entry_type, resnet.line, resnet.year) == ("inproceedings", 22, 2016)
    assert resnet.title == "Deep Residual Learning for Image Recognition"
    assert [person.family for person in resnet.authors] == ["He", "Zhang", "Ren", "Sun"]
    assert resnet.venue == (
        "Proceedings of the IEEE Conference on Computer Vision and Pattern Recognition (CVPR)"
    )
    assert (resnet.pages, resnet.doi) == ("770-778", "10.1109/cvpr.2016.90")


def test_biber_truncation_dates_eprints_particles_and_organisations() -> None:
    refs = {r.key: r for r in parse_file(SOURCE / "paper.bbl").references}

    lecun = refs["lecun2015"]
    assert lecun.authors_truncated and [p.family for p in lecun.authors] == ["LeCun", "Bengio"]
    assert (lecun.venue, lecun.volume, lecun.number, lecun.month) == ("Nature", "521", "7553", 5)
    assert refs["vaswani2017"].arxiv_id == "1706.03762"
    waals = refs["waals1873"].authors[0]
    assert (waals.given, waals.particle, waals.family) == ("Johannes Diderik", "van der", "Waals")
    who = refs["who2020"].authors[0]
    assert (who.family, who.is_organisation) == ("World Health Organization", True)
    assert "sortinit" not in refs["he2016"].fields and "namehash" not in refs["he2016"].fields


def test_older_positional_names_and_a_missing_endentry() -> None:
    text = (
        "\\refsection{0}\n"
        "  \\entry{knuth1984}{article}{}\n"
        "    \\name{author}{1}{}{%\n"
        "      {{hash=4}{Knuth}{K\\bibinitperiod}{Donald\\bibnamedelima E.}"
        "{D\\bibinitperiod}{}{}{}{}}%\n"
        "    }\n"
        "    \\field{journaltitle}{The Computer Journal}\n"
        "    \\field{title}{Literate Programming}\n"
        "  \\entry{watson1953}{article}{}\n"
        "    \\field{title}{Molecular Structure of Nucleic Acids}\n"
        "  \\endentry\n"
        "\\endrefsection\n"
    )
    bibliography = parse_bbl(text, file="old.bbl")

    knuth, watson = bibliography.references
    assert (knuth.authors[0].given, knuth.authors[0].family) == ("Donald E.", "Knuth")
    assert knuth.venue == "The Computer Journal"
    assert watson.title == "Molecular Structure of Nucleic Acids"
    (problem,) = bibliography.problems
    assert (problem.code, problem.key, problem.line) == ("parse-error", "knuth1984", 2)


def test_a_thebibliography_bbl_is_still_read_as_free_text() -> None:
    text = (
        "\\begin{thebibliography}{1}\n"
        "\\bibitem{a} A. Author. A title. 2001.\n"
        "\\end{thebibliography}"
    )

    (reference,) = parse_bbl(text, file="plain.bbl").references

    assert (reference.key, reference.entry_type) == ("a", "misc")


def test_paper_without_its_bib_file_is_audited_from_its_compiled_bbl(tmp_path: Path) -> None:
    folder = shutil.copytree(SOURCE, tmp_path / "source")

    bibliography = parse_file(folder / "paper.tex")

    assert [r.key for r in bibliography.references] == ["he2016", "lecun2015", "vaswani2017"]
    assert bibliography.cited_keys == ["he2016", "vaswani2017", "lecun2015"]
    assert str(folder / "paper.bbl") in bibliography.files
    (missing,) = [p for p in bibliography.problems if p.code == "missing-bib-file"]
    assert missing.severity == "warning"
    assert "read the compiled bibliography paper.bbl instead" in missing.message


def test_a_paper_with_neither_bib_nor_bbl_still_fails_clearly(tmp_path: Path) -> None:
    folder = shutil.copytree(SOURCE, tmp_path / "source")
    (folder / "paper.bbl").unlink()

    with pytest.raises(InputError, match="references.bib"):
        parse_file(folder / "paper.tex")


def test_physics_style_bibitems_keep_titles_venues_and_linked_identifiers() -> None:
    """JHEP/INSPIRE items wrap the journal in \\href{doi}{…} and put the year in brackets."""
    bibliography = parse_file(SOURCE.parent / "jhep.bbl")
    refs = {reference.key: reference for reference in bibliography.references}

    maldacena = refs["Maldacena:1997re"]
    assert maldacena.title == (
        "The Large N limit of superconformal field theories and supergravity"
    )
    assert [(p.given, p.family) for p in maldacena.authors] == [("J. M.", "Maldacena")]
    assert (maldacena.venue, maldacena.volume, maldacena.number, maldacena.pages) == (
        "Int. J. Theor. Phys.",
        "38",
        None,
        "1113",
    )
    assert (maldacena.year, maldacena.doi, maldacena.arxiv_id) == (
        1999,
        "10.1023/a:1026654312961",
        "hep-th/9711200",
    )
    assert "~" not in maldacena.free_text and "\\" not in maldacena.free_text

    atlas = refs["ATLAS:2012yve"]
    assert atlas.title and atlas.title.startswith("Observation of a new particle")
    assert atlas.authors[0].is_organisation and atlas.authors[0].family == "ATLAS collaboration"
    assert (atlas.venue, atlas.volume, atlas.pages, atlas.year) == (
        "Phys. Lett. B",
        "716",
        "1",
        2012,
    )
    assert atlas.arxiv_id == "1207.7214"

    higgs = refs["Higgs:1964pj"]
    assert (higgs.venue, higgs.volume, higgs.number, higgs.pages) == (
        "Phys. Rev. Lett.",
        "13",
        None,
        "508-509",
    )
    assert higgs.doi == "10.1103/physrevlett.13.508"


def _biber_entries(count: int) -> str:
    return "".join(
        f"\\entry{{k{n}}}{{article}}{{}}\n  \\field{{title}}{{Title {n}}}\n"
        f"  \\verb{{url}}\n  \\verb https://example.org/{n}\n  \\endverb\n\\endentry\n"
        for n in range(count)
    )


def test_references_come_out_of_a_bbl_before_it_is_read_to_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from refaudit.parsing import bbl

    monkeypatch.setattr(bbl, "_READ_CHARS", 1000)
    lines = _biber_entries(2000).splitlines(keepends=True)
    read: list[str] = []

    def reading() -> Iterator[str]:
        read.clear()
        for line in lines:
            read.append(line)
            yield line

    stream = bbl.BblStream(reading, file="long.bbl")
    stream.prepare()
    assert stream.entries == 2000
    first = next(stream.references())
    assert (first.key, first.url, first.line) == ("k0", "https://example.org/0", 1)
    assert len(read) < 500  # of 12,000 lines


@pytest.mark.parametrize("size", [1, 50, 1 << 16])
def test_a_bbl_read_in_small_pieces_gives_what_one_read_gives(
    monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """Heads across lines and reads, a missing \\endentry, a repeated key, text around."""
    from refaudit.parsing import bbl

    text = (
        "\\refsection{0}\n"
        + _biber_entries(3)
        + "\\entry{split\n key}{misc}{\n}\n\\field{title}{Split}\n"
        + "\\entry{k1}{book}{}\n\\field{title}{Again}\n\\endentry\n"
        + "\\entry{" + "x" * 990 + "}{article}{}{}\n\\field{year}{2001}\n\\endentry\n"
        + _biber_entries(2)
        + "\\endrefsection\n"
    )  # fmt: skip
    whole = parse_bbl(text, file="x.bbl")
    monkeypatch.setattr(bbl, "_READ_CHARS", size)
    pieces = parse_bbl(text, file="x.bbl")
    assert [r.key for r in whole.references] == ["k0", "k1", "k2", "split\n key", "x" * 990]
    assert [(p.line, p.key) for p in whole.problems] == [(20, "split\n key")]
    assert pieces == whole


def test_a_long_bbl_is_streamed_into_the_audit(tmp_path: Path) -> None:
    from refaudit.audit import InputStream

    path = tmp_path / "long.bbl"
    path.write_text(_biber_entries(30), encoding="utf-8")
    inputs = InputStream([path])
    assert inputs.total == 30
    assert [r.key for r in inputs.references()] == [f"k{n}" for n in range(30)]
    assert inputs.files == [str(path)]


BBL_FIXTURES = Path(__file__).parent / "fixtures" / "bbl"


def test_an_acm_bbl_is_read_from_its_markup() -> None:
    references = parse_file(BBL_FIXTURES / "acm.bbl").references
    assert [r.key for r in references] == ["he2016deep", "lecun2015deep", "vaswani2017attention"]
    he = references[0]
    assert he.title == "Deep Residual Learning for Image Recognition"
    assert [p.family for p in he.authors] == ["He", "Zhang", "Ren", "Sun"]
    assert (he.year, he.pages, he.doi) == (2016, "770–778", "10.1109/cvpr.2016.90")
    assert he.venue is not None and he.venue.startswith("Proceedings of the IEEE Conference")
    lecun = references[1]
    assert (lecun.venue, lecun.volume, lecun.number) == ("Nature", "521", "7553")


def test_a_revtex_bbl_with_nested_labels_is_read_from_its_markup() -> None:
    references = parse_file(BBL_FIXTURES / "apsrev.bbl").references
    assert [r.key for r in references] == ["jumper2021", "kipf2017"]
    jumper, kipf = references
    assert jumper.title == "Highly accurate protein structure prediction with AlphaFold"
    assert [p.family for p in jumper.authors] == ["Jumper", "Evans", "Hassabis"]
    assert (jumper.venue, jumper.volume, jumper.year) == ("Nature", "596", 2021)
    assert jumper.doi == "10.1038/s41586-021-03819-2"
    assert (kipf.venue, kipf.year, kipf.authors[0].given) == ("ICLR", 2017, "T. N.")
    assert "NoStop" not in (kipf.free_text or "")


def test_an_ieee_year_is_never_a_page_volume_or_issue_number() -> None:
    yan, chen = parse_file(BBL_FIXTURES / "ieeetran.bbl").references
    assert (yan.year, yan.pages) == (2017, "2049-2060")
    assert (chen.year, chen.volume, chen.number) == (2019, "1999", "2018")


@pytest.mark.parametrize(
    "name", ["gen-acm", "gen-ieeetran", "gen-plainnat", "hallmark-dev_public-apsrev"]
)
def test_every_benchmark_bbl_gives_every_entry_with_its_title(name: str) -> None:
    folder = shared_path("bench", "public", "pdf")
    labels = json.loads((folder / f"{name}.labels.json").read_text())["labels"]
    references = parse_file(folder / f"{name}.bbl").references
    assert [r.key for r in references] == [label["key"] for label in labels]
    assert sum(bool(r.title) for r in references) >= 0.99 * len(references)
