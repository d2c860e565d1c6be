"""Word manuscripts: citation-manager field codes read as records, printed lists as text."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from refaudit.cli import app
from refaudit.config import load_settings
from refaudit.errors import InputError
from refaudit.models import JSON_SCHEMA_VERSION, Verdict
from refaudit.parsing import parse_file
from tests.fakes import FakeUpstreams, crossref_work, empty_searches
from tests.word import Manuscript, add_footnote_field, csl_item, endnote_record

LECUN = csl_item(
    2417,
    title="Deep learning",
    authors=[("LeCun", "Yann"), ("Bengio", "Yoshua"), ("Hinton", "Geoffrey")],
    year=2015,
    container="Nature",
    doi="10.1038/nature14539",
    volume="521",
    issue="7553",
    page="436-444",
    note="Citation Key: lecun2015deep\nPMID: 26017442",
)
VASWANI = csl_item(
    "ITEM-2",
    title="Attention is all you need",
    authors=[("Vaswani", "Ashish"), ("Shazeer", "Noam")],
    year=2017,
    kind="paper-conference",
    container="Advances in Neural Information Processing Systems",
    volume="30",
    page="5998-6008",
)
MNIH = endnote_record(
    27,
    title="Human-level control through deep reinforcement learning",
    authors=["Mnih, Volodymyr", "Kavukcuoglu, Koray", "Silver, David"],
    year=2015,
    journal="Nature",
    doi="10.1038/nature14236",
    volume="518",
    pages="529-533",
)
HE_PRINTED = (
    "[4] K. He, X. Zhang, S. Ren, and J. Sun, “Deep residual learning for image "
    "recognition,” in Proceedings of the IEEE Conference on Computer Vision and Pattern "
    "Recognition, pp. 770–778, 2016."
)


def _by_key(path: Path) -> dict[str, Any]:
    return {reference.key: reference for reference in parse_file(path).references}


def test_zotero_field_codes_give_the_library_record_field_by_field(tmp_path: Path) -> None:
    doc = Manuscript()
    doc.heading("Introduction")
    doc.zotero([LECUN], "(LeCun et al., 2015)")
    doc.zotero([LECUN, VASWANI], "(LeCun et al., 2015; Vaswani et al., 2017)")

    references = parse_file(doc.save(tmp_path / "paper.docx")).references

    # Cited twice, read once; Better BibTeX's citation key (from Extra) names it.
    lecun, vaswani = references
    assert (lecun.key, lecun.origin, vaswani.origin) == (
        "lecun2015deep",
        "zotero field code",
        "zotero field code",
    )
    assert (lecun.title, lecun.year, lecun.venue) == ("Deep learning", 2015, "Nature")
    assert (lecun.volume, lecun.number, lecun.pages) == ("521", "7553", "436-444")
    assert (lecun.doi, lecun.pmid, lecun.entry_type) == (
        "10.1038/nature14539",
        "26017442",
        "article",
    )
    assert [a.display() for a in lecun.authors] == [
        "Yann LeCun",
        "Yoshua Bengio",
        "Geoffrey Hinton",
    ]
    assert lecun.line == 2  # the paragraph of its first citation
    # Without a citation key the Zotero item key (from the item's URI) names it.
    assert re.fullmatch(r"[0-9A-F]{8}", vaswani.key)
    assert (vaswani.entry_type, vaswani.venue) == (
        "inproceedings",
        "Advances in Neural Information Processing Systems",
    )
    assert vaswani.fields["booktitle"] == "Advances in Neural Information Processing Systems"


def test_mendeley_endnote_and_simple_fields_are_read_as_records(tmp_path: Path) -> None:
    doc = Manuscript()
    doc.mendeley([VASWANI], "(Vaswani et al., 2017)")
    doc.endnote([MNIH], "[2]")
    doc.simple_field(
        " ADDIN ZOTERO_ITEM CSL_CITATION "
        + json.dumps({"citationItems": [{"id": 9, "itemData": LECUN, "uris": []}]}),
        "[3]",
    )

    references = _by_key(doc.save(tmp_path / "paper.docx"))

    assert {key: r.origin for key, r in references.items()} == {
        "vaswani2017": "mendeley field code",
        "mnih2015": "endnote field code",
        "lecun2015deep": "zotero field code",
    }
    mnih = references["mnih2015"]
    assert mnih.title == "Human-level control through deep reinforcement learning"
    assert (mnih.doi, mnih.volume, mnih.pages, mnih.venue) == (
        "10.1038/nature14236",
        "518",
        "529-533",
        "Nature",
    )
    assert [a.family for a in mnih.authors] == ["Mnih", "Kavukcuoglu", "Silver"]


@pytest.mark.parametrize("padding", ["", " ", "  "])  # base64 with no, one and two "="
def test_endnote_cite_data_keeps_its_record_base64_in_the_field_data(
    tmp_path: Path, padding: str
) -> None:
    doc = Manuscript()
    doc.endnote([MNIH.replace("<Year>", f"{padding}<Year>")], "[1]", as_data=True)

    bibliography = parse_file(doc.save(tmp_path / "paper.docx"))

    (mnih,) = bibliography.references
    assert (mnih.origin, mnih.doi, mnih.year) == ("endnote field code", "10.1038/nature14236", 2015)
    assert bibliography.problems == []


def test_citations_in_footnotes_are_read(tmp_path: Path) -> None:
    doc = Manuscript()
    doc.text("A claim that a note-style citation supports.")
    path = doc.save(tmp_path / "paper.docx")
    citation = {"citationItems": [{"id": 3, "itemData": VASWANI, "uris": []}]}
    add_footnote_field(path, f" ADDIN ZOTERO_ITEM CSL_CITATION {json.dumps(citation)} ", "1.")

    (reference,) = parse_file(path).references

    assert (reference.key, reference.origin) == ("vaswani2017", "zotero field code")
    assert reference.line is None  # a footnote has no paragraph number in the body


def test_the_printed_list_is_read_only_where_no_field_code_carries_the_reference(
    tmp_path: Path,
) -> None:
    doc = Manuscript()
    doc.zotero([LECUN], "(LeCun et al., 2015)")
    doc.heading("References")
    # Zotero's own bibliography field: its entries are the records above, printed.
    doc.bibliography_field(
        ' ADDIN ZOTERO_BIBL {"uncited":[],"omitted":[],"custom":[]} CSL_BIBLIOGRAPHY ',
        ["LeCun, Y., Bengio, Y., & Hinton, G. (2015). Deep learning. Nature, 521, 436–444."],
    )
    # A printed entry of a field-code record outside the field is still not read twice ...
    doc.text("LeCun Y, Bengio Y, Hinton G. Deep learning. Nature. 2015;521(7553):436-444.")
    # ... and one typed by hand is read as free text.
    doc.text(HE_PRINTED)
    doc.heading("Appendix A")
    doc.text("Table A1 lists the hyperparameters used in every experiment reported here.")

    references = parse_file(doc.save(tmp_path / "paper.docx")).references

    assert [(r.key, r.origin) for r in references] == [
        ("lecun2015deep", "zotero field code"),
        ("4", "printed text"),
    ]
    printed = references[1]
    assert printed.title == "Deep residual learning for image recognition"
    assert printed.free_text is not None and printed.free_text.startswith("K. He")
    assert (printed.label, printed.text) == ("[4]", HE_PRINTED)
    assert printed.line == 5


def test_an_item_added_to_the_bibliography_uncited_is_read_from_its_printed_entry(
    tmp_path: Path,
) -> None:
    doc = Manuscript()
    doc.zotero([LECUN], "(LeCun et al., 2015)")
    doc.heading("References")
    # Zotero lists uncited items by URI only; their data is just the printed entry.
    doc.bibliography_field(
        ' ADDIN ZOTERO_BIBL {"uncited":[["http://zotero.org/users/4417/items/QW8E2RTY"]],'
        '"omitted":[],"custom":[]} CSL_BIBLIOGRAPHY ',
        [
            "Hochreiter, S., & Schmidhuber, J. (1997). Long short-term memory. Neural "
            "Computation, 9(8), 1735–1780.",
            "LeCun, Y., Bengio, Y., & Hinton, G. (2015). Deep learning. Nature, 521(7553), "
            "436–444. https://doi.org/10.1038/nature14539",
        ],
    )

    references = parse_file(doc.save(tmp_path / "paper.docx")).references

    assert [(r.origin, r.year) for r in references] == [
        ("zotero field code", 2015),
        ("printed text", 1997),
    ]
    assert references[1].title == "Long short-term memory"


def test_a_document_without_field_codes_is_read_from_its_reference_list(tmp_path: Path) -> None:
    doc = Manuscript()
    doc.heading("Results")
    doc.text("We follow earlier work [1], [2] closely in every respect that matters here.")
    doc.text("7. References")
    doc.text(
        "1. Hochreiter S, Schmidhuber J. Long short-term memory. Neural Comput. 1997;9(8):1735-80."
    )
    doc.text("")
    doc.text(HE_PRINTED.replace("[4]", "2."))
    doc.heading("Supplementary material")
    doc.text("S1. Lovelace A. Notes on the analytical engine. Taylor's Memoirs. 1843;3:666-731.")

    references = parse_file(doc.save(tmp_path / "paper.docx")).references

    assert [(r.key, r.origin, r.year) for r in references] == [
        ("1", "printed text", 1997),
        ("2", "printed text", 2016),
    ]
    assert references[0].title == "Long short-term memory"


def test_an_unreadable_field_code_is_reported_and_its_printed_entry_used(tmp_path: Path) -> None:
    doc = Manuscript()
    doc.field(' ADDIN ZOTERO_ITEM CSL_CITATION {"citationItems": [{"itemData": ', "(Smith)")
    doc.heading("References")
    doc.text(HE_PRINTED)

    bibliography = parse_file(doc.save(tmp_path / "paper.docx"))

    assert [r.origin for r in bibliography.references] == ["printed text"]
    (problem,) = bibliography.problems
    assert (problem.code, problem.line) == ("field-code-unreadable", 1)


def test_a_document_with_no_references_says_where_they_are_looked_for(tmp_path: Path) -> None:
    doc = Manuscript()
    doc.heading("Introduction")
    doc.text("A manuscript that cites nothing at all, and has no reference list either.")
    with pytest.raises(InputError, match="no references found") as error:
        parse_file(doc.save(tmp_path / "paper.docx"))
    assert "References" in (error.value.hint or "")


# The whole pipeline: a faithful field-code record verifies with no finding; a wrong one
# is flagged on the field the library got wrong; the JSON says which path each took.

LECUN_WORK = crossref_work(
    "10.1038/nature14539",
    "Deep learning",
    authors=[("Yann", "LeCun"), ("Yoshua", "Bengio"), ("Geoffrey", "Hinton")],
    year=2015,
    venue="Nature",
    volume="521",
    issue="7553",
    page="436-444",
)
MNIH_WORK = crossref_work(
    "10.1038/nature14236",
    "Human-level control through deep reinforcement learning",
    authors=[("Volodymyr", "Mnih"), ("Koray", "Kavukcuoglu"), ("David", "Silver")],
    year=2015,
    venue="Nature",
    volume="518",
    page="529-533",
)
# PubMed's esummary of the same paper (Zotero's Extra carries its PMID).
LECUN_PUBMED = {
    "uid": "26017442",
    "pubdate": "2015 May 28",
    "source": "Nature",
    "authors": [
        {"name": "LeCun Y", "authtype": "Author"},
        {"name": "Bengio Y", "authtype": "Author"},
        {"name": "Hinton G", "authtype": "Author"},
    ],
    "title": "Deep learning.",
    "volume": "521",
    "issue": "7553",
    "pages": "436-44",
    "pubtype": ["Journal Article", "Review"],
    "articleids": [
        {"idtype": "pubmed", "value": "26017442"},
        {"idtype": "doi", "value": "10.1038/nature14539"},
    ],
}


def _upstreams() -> FakeUpstreams:
    fake = FakeUpstreams()
    empty_searches(fake)
    fake.serve_crossref([LECUN_WORK, MNIH_WORK])
    fake.json("openalex", r"/works", {"meta": {"count": 0}, "results": []})
    fake.json(
        "pubmed", r"/esummary.fcgi", {"result": {"uids": ["26017442"], "26017442": LECUN_PUBMED}}
    )
    return fake


@pytest.mark.anyio
async def test_field_code_records_are_audited_as_structured_data(tmp_path: Path) -> None:
    from refaudit.audit import audit_paths

    doc = Manuscript()
    doc.zotero([LECUN], "(LeCun et al., 2015)")
    doc.endnote([MNIH.replace(">2015</style>", ">2012</style>")], "[2]")
    settings = load_settings(env={"REFAUDIT_CACHE_DIR": "cache", "REFAUDIT_DATA_DIR": "data"})
    settings.rate_limits = {name: 1000.0 for name in settings.sources}
    settings.use_cache = False

    report = await audit_paths(
        [doc.save(tmp_path / "paper.docx")], settings, transport=_upstreams().transport()
    )

    results = {r.reference.key: r for r in report.results}
    faithful = results["lecun2015deep"]
    assert faithful.verdict == Verdict.VERIFIED
    assert [f.code for f in faithful.findings if f.severity != "info"] == []
    wrong_year = results["mnih2012"]
    assert wrong_year.verdict == Verdict.MISMATCH
    year = next(f for f in wrong_year.findings if f.code == "year-mismatch")
    assert (year.cited, year.found) == ("2012", "2015")
    assert "year = {2015}" in (wrong_year.corrected_bibtex or "")


def test_check_reports_which_path_each_reference_took(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = Manuscript()
    doc.zotero([LECUN], "(LeCun et al., 2015)")
    doc.heading("References")
    doc.text(HE_PRINTED)
    path = doc.save(tmp_path / "paper.docx")
    monkeypatch.chdir(tmp_path)
    transport = _upstreams().transport()
    real_client = httpx.AsyncClient.__init__

    def through_fakes(self: httpx.AsyncClient, *args: Any, **kwargs: Any) -> None:
        kwargs["transport"] = transport
        real_client(self, *args, **kwargs)

    monkeypatch.setattr(httpx.AsyncClient, "__init__", through_fakes)
    monkeypatch.setenv("REFAUDIT_CACHE_DIR", str(tmp_path / "cache"))

    result = CliRunner().invoke(
        app, ["check", str(path), "--format", "json", "--fail-on", "none", "--no-cache"]
    )

    assert result.exit_code in (0, 3), result.output
    report = json.loads(result.stdout)
    assert report["schema_version"] == JSON_SCHEMA_VERSION
    origins = {r["key"]: r["reference"]["origin"] for r in report["results"]}
    assert origins == {"lecun2015deep": "zotero field code", "4": "printed text"}
    assert report["files"] == [str(path)]


def test_fix_writes_a_word_files_references_to_a_new_bib_only(tmp_path: Path) -> None:
    doc = Manuscript()
    doc.zotero([LECUN], "(LeCun et al., 2015)")
    path = doc.save(tmp_path / "paper.docx")
    before = path.read_bytes()
    runner = CliRunner()
    for flag in ("--in-place", "--diff"):
        result = runner.invoke(app, ["fix", str(path), flag])
        assert result.exit_code == 2 and "cannot write into this input" in result.output
    assert path.read_bytes() == before


def test_tex_math_in_a_record_title_stays_math_and_the_rest_is_text(tmp_path: Path) -> None:
    item = csl_item(
        5,
        title="A 3.9 ppm/$^\\circ$C bandgap reference & 5% supply rejection",
        authors=[("Andreou", "Charalambos")],
        year=2012,
        container="IEEE Journal of Solid-State Circuits",
    )
    doc = Manuscript()
    doc.zotero([item], "[1]")

    (reference,) = parse_file(doc.save(tmp_path / "paper.docx")).references

    assert reference.fields["title"] == (
        "A 3.9 ppm/$^\\circ$C bandgap reference \\& 5\\% supply rejection"
    )
    # read as LaTeX, as a .bib title is: the math converted, the escapes undone
    assert "$" not in reference.title and "\\" not in reference.title
    assert reference.title.endswith("C bandgap reference & 5% supply rejection")
