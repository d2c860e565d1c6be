"""BibTeX/biblatex parsing: macros, crossrefs, identifiers, and files that are partly broken."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from refaudit.models import Bibliography, Reference
from refaudit.parsing import parse_bibtex, parse_file

FIXTURES = Path(__file__).parent / "fixtures" / "bib"


def _by_key(bibliography: Bibliography) -> dict[str, Reference]:
    return {reference.key: reference for reference in bibliography.references}


@pytest.fixture
def physics() -> dict[str, Reference]:
    return _by_key(parse_file(FIXTURES / "physics.bib"))


def test_string_macros_and_concatenation_are_expanded(physics: dict[str, Reference]) -> None:
    assert physics["Aad:2012tfa"].venue == "Phys. Lett. B"
    assert physics["Aad:2012tfa"].fields["journal"] == "Phys. Lett. B"
    assert physics["Maldacena:1997re"].venue == "Adv. Theor. Math. Phys. (Suppl.)"


def test_month_macro_becomes_a_month_number(physics: dict[str, Reference]) -> None:
    assert physics["Aad:2012tfa"].month == 8
    assert physics["pyhf_joss"].month == 11


@pytest.mark.parametrize(
    ("month", "number"),
    [("jan # {~15}", 1), ('"March~3--5"', 3), ("{Sept.}", 9), ("oct", 10), ("{11}", 11)],
)
def test_month_with_a_day_still_names_the_month(month: str, number: int) -> None:
    text = f"@inproceedings{{talk, title={{Talk}}, year=2019, month={month}}}\n"
    assert parse_bibtex(text).references[0].month == number


def test_line_is_the_line_of_the_entry_header(physics: dict[str, Reference]) -> None:
    lines = (FIXTURES / "physics.bib").read_text().splitlines()
    for reference in physics.values():
        assert lines[reference.line - 1].lstrip().lower().startswith("@"), reference.key
        assert reference.key in lines[reference.line - 1]


def test_collaboration_author_with_others_is_truncated(physics: dict[str, Reference]) -> None:
    atlas = physics["Aad:2012tfa"]
    assert [person.family for person in atlas.authors] == ["Aad"]
    assert atlas.authors_truncated is True
    cms = physics["CMS:2012qbp"].authors[0]
    assert cms.family == "CMS Collaboration" and cms.is_organisation


def test_arxiv_ids_from_eprint_howpublished_and_datacite_doi(physics: dict[str, Reference]) -> None:
    assert physics["Aad:2012tfa"].arxiv_id == "1207.7214"
    assert physics["Maldacena:1997re"].arxiv_id == "hep-th/9711200"
    assert (physics["pyhf_joss"].arxiv_id, physics["pyhf_joss"].arxiv_version) == ("2211.15838", 2)
    assert physics["Alpha:2020"].arxiv_id == "2005.01234"
    assert physics["Alpha:2020"].doi == "10.48550/arxiv.2005.01234"


def test_doi_is_taken_from_a_doi_org_url(physics: dict[str, Reference]) -> None:
    assert physics["CMS:2012qbp"].doi == "10.1016/j.physletb.2012.08.021"
    assert physics["Aad:2012tfa"].doi == "10.1016/j.physletb.2012.08.020"


def test_title_math_and_braces_become_readable_unicode(physics: dict[str, Reference]) -> None:
    assert physics["Alpha:2020"].title == "α-divergence bounds for Bayesian unfolding"
    assert physics["Maldacena:1997re"].title == (
        "The Large N limit of superconformal field theories and supergravity"
    )
    assert physics["Aad:2012tfa"].pages == "1-29"


def test_biomed_export_identifiers_and_issue_field() -> None:
    refs = _by_key(parse_file(FIXTURES / "biomed.bib"))
    smith = refs["smith2019"]
    assert smith.doi == "10.1056/nejmoa1234567"
    assert (smith.pmid, smith.pmcid) == ("31483962", "PMC6771234")
    assert (smith.number, smith.pages, smith.month) == ("5", "1203-1214", 9)
    assert [p.full_family for p in smith.authors] == ["Smith", "O'Neill", "Škoda"]
    garcia = refs["garcia2021"]
    assert (garcia.year, garcia.month, garcia.venue) == (2021, 3, "The Lancet Respiratory Medicine")
    assert (garcia.pmid, garcia.pmcid) == ("33600123", "PMC7900012")
    assert garcia.doi == "10.1016/s2213-2600(21)00031-x"
    assert garcia.authors[1].particle == "de la" and garcia.authors[1].family == "Cruz"
    assert garcia.authors[2].is_organisation


def test_a_doi_field_that_is_not_a_doi_is_reported_and_ignored() -> None:
    bibliography = parse_file(FIXTURES / "biomed.bib")
    assert _by_key(bibliography)["nodoi2010"].doi is None
    (problem,) = [p for p in bibliography.problems if p.code == "invalid-doi"]
    assert problem.key == "nodoi2010" and problem.line == 28


def test_crossref_child_inherits_booktitle_year_and_editors() -> None:
    refs = _by_key(parse_file(FIXTURES / "ml.bib"))
    child = refs["vaswani2017"]
    assert child.venue == "Advances in Neural Information Processing Systems 30"
    assert child.year == 2017 and child.publisher == "Curran Associates"
    assert child.title == "Attention is All you Need"
    assert [editor.full_family for editor in child.editors] == ["Guyon", "von Luxburg"]
    assert child.authors[6].family == "Kaiser" and child.authors[6].given == "Łukasz"


def test_biblatex_types_dates_and_eprints() -> None:
    refs = _by_key(parse_file(FIXTURES / "ml.bib"))
    assert refs["kingma2014adam"].arxiv_id == "1412.6980"
    assert refs["kingma2014adam"].arxiv_version == 9
    llama = refs["llama2023"]
    assert (llama.entry_type, llama.year, llama.month, llama.arxiv_id) == (
        "online",
        2023,
        2,
        "2302.13971",
    )
    sklearn = refs["sklearn"]
    assert (sklearn.entry_type, sklearn.year, sklearn.url) == (
        "software",
        2024,
        "https://scikit-learn.org",
    )
    assert sklearn.doi is None and sklearn.arxiv_id is None
    assert refs["imagenet"].doi == "10.1109/cvpr.2009.5206848"


def test_ignore_reason_from_field_or_comment_above_the_entry() -> None:
    refs = _by_key(parse_file(FIXTURES / "ml.bib"))
    assert refs["internal2024"].ignore_reason == "internal tech note, not published"
    assert refs["blog2023"].ignore_reason == "blog post, no DOI"
    assert refs["blog2023"].url == "https://example.org/blog/post_1"
    assert refs["kingma2014adam"].ignore_reason is None


def test_names_with_particles_suffixes_organisations_and_cjk() -> None:
    refs = _by_key(parse_file(FIXTURES / "humanities.bib"))
    waals = refs["vanderwaals1873"].authors[0]
    assert (waals.particle, waals.family, waals.given) == ("van der", "Waals", "Johannes Diderik")
    assert refs["vanderwaals1873"].title == "Over de Continuïteit van den Gas- en Vloeistoftoestand"
    fontaine, beethoven = refs["delafontaine1668"].authors
    assert (fontaine.particle, fontaine.family) == ("de la", "Fontaine")
    assert (beethoven.particle, beethoven.family) == ("van", "Beethoven")
    assert refs["delafontaine1668"].isbn == "9782070368228"
    king = refs["king1963"].authors[0]
    assert (king.given, king.family, king.suffix) == ("Martin Luther", "King", "Jr.")
    zhang = refs["zhang2015"]
    assert [p.family for p in zhang.authors] == ["张三", "李四", "Wang", "Nakamura Hiroshi"]
    assert zhang.title == "中国古代文学研究" and zhang.venue == "东亚文化论集"
    assert zhang.editors[0].suffix == "Jr."
    unesco = refs["unesco2019"].authors[0]
    assert unesco.is_organisation and unesco.family.startswith("United Nations Educational")


def test_broken_entries_are_reported_with_lines_and_the_rest_survives() -> None:
    bibliography = parse_file(FIXTURES / "broken.bib")
    keys = [reference.key for reference in bibliography.references]
    assert keys == ["good1", "good2", "good1", "good3"]
    failures = {p.key: p for p in bibliography.problems if p.code == "parse-error"}
    assert set(failures) == {"unbalanced", "nocomma"}
    assert (
        failures["unbalanced"].line == 10 and "unbalanced braces" in failures["unbalanced"].message
    )
    assert failures["nocomma"].line == 23
    assert all(p.severity == "error" for p in failures.values())


def test_duplicate_keys_are_reported_and_both_entries_kept() -> None:
    bibliography = parse_file(FIXTURES / "broken.bib")
    (duplicate,) = [p for p in bibliography.problems if p.code == "duplicate-key"]
    assert (duplicate.key, duplicate.line) == ("good1", 27)
    assert "line 3" in duplicate.message
    second = bibliography.references[2]
    assert second.title == "Same key as the first entry" and second.year == 2004
    assert any(p.code == "duplicate-field" and p.key == "good1" for p in bibliography.problems)


def test_undefined_macro_is_reported_and_kept_as_written() -> None:
    bibliography = parse_file(FIXTURES / "broken.bib")
    assert _by_key(bibliography)["good2"].venue == "undefinedjournal"
    (problem,) = [p for p in bibliography.problems if p.code == "undefined-macro"]
    assert problem.key == "good2" and "undefinedjournal" in problem.message


def test_comment_and_preamble_blocks_are_not_entries() -> None:
    keys = {r.key for r in parse_file(FIXTURES / "broken.bib").references}
    assert "commented" not in keys


def test_utf8_bom_is_stripped(tmp_path: Path) -> None:
    path = tmp_path / "bom.bib"
    path.write_bytes(b"\xef\xbb\xbf@article{bom, title={Caf\xc3\xa9}, year={2020}}\n")
    bibliography = parse_file(path)
    assert bibliography.references[0].key == "bom"
    assert bibliography.references[0].title == "Café"
    assert bibliography.problems == []


def test_latin1_file_is_decoded_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "old.bib"
    path.write_bytes(
        b"@article{old,\n  author = {M\xfcller, J\xf6rg},\n  title = {Caf\xe9}, year = 1999}\n"
    )
    bibliography = parse_file(path)
    assert bibliography.references[0].authors[0].family == "Müller"
    (problem,) = bibliography.problems
    assert (problem.code, problem.line, problem.severity) == ("latin1-decoded", 2, "warning")


def test_parse_bibtex_on_text_reports_problems_without_a_file() -> None:
    bibliography = parse_bibtex("@article{a, title={T}, year={2001}}\n@article{b title={x}}\n")
    assert [r.key for r in bibliography.references] == ["a"]
    assert bibliography.problems[0].file == "<bibtex>" and bibliography.problems[0].line == 2


# Children before and after their parents, a chain, a cycle, a macro defined after its
# use, an ignore comment and a duplicate key: everything that needs more than one entry.
LINKED = """@string{conf = "Proc. of Conf"}
% refaudit: ignore a talk
@inproceedings{early, title={Early}, crossref={proc}}
@article{dup, title={First}}
@proceedings{proc, title={The Proceedings}, booktitle=conf, year=2001, crossref={series}}
@book{series, title={Series}, publisher={Pub}}
@inproceedings{late, title={Late}, crossref={PROC}, note=later}
@misc{loop, title={Loop}, crossref={loop}}
@article{dup, title={Second}}
@string{later = "defined at the end"}
"""


@pytest.mark.parametrize("chunk", [1, 2, 1000])
def test_a_bib_read_in_chunks_gives_what_one_pass_gives(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from refaudit.parsing import bibtex

    monkeypatch.setattr(bibtex, "CHUNK_BLOCKS", chunk)
    parsed = parse_bibtex(LINKED, file="refs.bib")
    refs = _by_key(parsed)
    assert refs["early"].venue == refs["late"].venue == "The Proceedings"
    assert refs["early"].year == 2001 and refs["early"].publisher == "Pub"
    assert refs["late"].fields["note"] == "defined at the end"
    assert refs["early"].ignore_reason == "a talk" and refs["late"].ignore_reason is None
    assert [(p.line, p.key, p.code) for p in parsed.problems] == [
        (8, "loop", "crossref-cycle"),
        (9, "dup", "duplicate-key"),
    ]


def _counted_lines(text: str, read: list[str]) -> Callable[[], Iterator[str]]:
    """`text` a line at a time, each reading from its start; `read` holds the lines read."""
    from refaudit.parsing import bibtex

    def lines() -> Iterator[str]:
        read.clear()
        for line in bibtex.text_lines(text):
            read.append(line)
            yield line

    return lines


def test_a_long_bib_hands_out_references_before_it_is_read_to_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from refaudit.parsing import bibtex

    monkeypatch.setattr(bibtex, "CHUNK_BLOCKS", 10)
    text = "".join(f"@article{{k{i}, title={{Title {i}}}, year=2000}}\n" for i in range(100))
    read: list[str] = []
    stream = bibtex.BibtexStream(_counted_lines(text, read), file="long.bib")
    stream.prepare()
    assert stream.entries == 100
    first = next(stream.references())
    assert first.key == "k0" and len(read) <= 11


def test_a_bib_of_thousands_of_entries_hands_out_its_first_after_a_few_lines() -> None:
    """Its first identifiers can be sent while the thousand blocks after them are parsed."""
    from refaudit.parsing import bibtex

    entry = "@article{{k{0}, title={{Title {0}}}, doi={{10.1000/{0}}}}}\n"
    text = "".join(entry.format(i) for i in range(3000))
    read: list[str] = []
    stream = bibtex.BibtexStream(_counted_lines(text, read), file="long.bib")
    stream.prepare()
    references = stream.references()
    first = next(references)
    assert first.key == "k0" and first.doi == "10.1000/0" and len(read) <= 20
    assert [r.key for r in references] == [f"k{i}" for i in range(1, 3000)]


def test_a_bib_that_changes_between_its_two_readings_is_refused(tmp_path: Path) -> None:
    from refaudit.errors import InputError
    from refaudit.parsing.files import open_stream

    path = tmp_path / "refs.bib"
    path.write_text(LINKED, encoding="utf-8")
    stream, problems = open_stream(path)
    assert not problems
    path.write_text(LINKED + "@misc{new, title={New}}\n", encoding="utf-8")
    with pytest.raises(InputError, match="changed while it was being read"):
        list(stream.references())


def test_a_streamed_latin1_file_reports_the_line_read_text_reports(tmp_path: Path) -> None:
    from refaudit.parsing.files import open_stream, read_text

    path = tmp_path / "old.bib"
    path.write_bytes(b"@article{a, title={Plain}}\n@article{b, title={Caf\xe9}}\n")
    stream, problems = open_stream(path)
    assert problems == read_text(path)[1] and problems[0].line == 2
    assert [r.title for r in stream.references()] == ["Plain", "Café"]


def test_duplicate_keys_are_found_after_the_keys_move_to_disk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A million-entry .bib keeps its keys in a temporary file, not in memory: duplicates
    are still told, with the line each key was first defined on."""
    from refaudit.parsing import keylines

    monkeypatch.setattr(keylines, "SPILL_KEYS", 3)
    text = "".join(f"@misc{{k{n}, title={{Entry {n}}}}}\n" for n in range(10))
    text += "@misc{k1, title={Again}}\n@misc{k8, title={Again}}\n"
    bibliography = parse_bibtex(text)
    duplicates = [(p.key, p.line) for p in bibliography.problems if p.code == "duplicate-key"]
    assert duplicates == [("k1", 11), ("k8", 12)]
    messages = [p.message for p in bibliography.problems if p.code == "duplicate-key"]
    assert "line 2" in messages[0] and "line 9" in messages[1]
    assert len(bibliography.references) == 12

    lines = keylines.KeyLines()
    assert [lines.first_seen(f"k{n}", n) for n in range(5)] == [None] * 5
    assert lines._db is not None, "past SPILL_KEYS the keys move to disk"
    assert (lines.first_seen("k0", 20), lines.first_seen("k4", 21)) == (0, 4)
    lines.close()


@pytest.mark.parametrize("name", ["broken.bib", "physics.bib", "ml.bib", "humanities.bib"])
def test_an_opened_bib_gives_the_references_and_problems_of_a_whole_read(name: str) -> None:
    """A file is read in one pass when its outline allows (macros first, no crossref),
    else in two; either way as `parse_file` reads it: macros, broken entries, duplicates."""
    from refaudit.parsing.files import open_stream

    whole = parse_file(FIXTURES / name)
    stream, problems = open_stream(FIXTURES / name)
    assert list(stream.references()) == whole.references
    assert problems + stream.problems() == whole.problems


def test_a_bib_is_audited_from_its_first_entries_without_a_first_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from refaudit.parsing import bibtex
    from refaudit.parsing.files import open_stream

    monkeypatch.setattr(bibtex, "CHUNK_BLOCKS", 10)
    parsed: list[str] = []
    parse_chunk = bibtex._parse_chunk
    monkeypatch.setattr(
        bibtex,
        "_parse_chunk",
        lambda chunk, offset: parsed.append(chunk) or parse_chunk(chunk, offset),
    )
    path = tmp_path / "long.bib"
    entries = "".join(f"@article{{k{i}, title={{Title {i}}}, journal=j}}\n" for i in range(100))
    path.write_text('@string{j = "Journal"}\n' + entries, encoding="utf-8")
    stream, _ = open_stream(path)
    first = next(stream.references())
    assert (first.key, first.venue, stream.entries) == ("k0", "Journal", 100)
    assert len(parsed) == 1, "only the first chunk was parsed"

    path.write_text(entries + '@string{j = "Journal"}\n', encoding="utf-8")
    stream, _ = open_stream(path)
    assert next(stream.references()).venue == "Journal", "a late @string: two passes"
