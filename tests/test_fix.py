"""BibTeX writing and `apply_fixes`: only what is wrong is replaced; other bytes are kept."""

from __future__ import annotations

import copy

import pytest
from report_samples import BIB_TEXT, sample_report

from refaudit.bibtex import (
    corrected_entry,
    escape_latex,
    make_key,
    protect_title,
    work_to_entry,
)
from refaudit.fix import apply_fixes, scan_entries
from refaudit.merge import merge_records
from refaudit.models import AuditReport, Finding, Person, Reference, Result, Verdict, Work
from refaudit.parsing.bibtex import parse_bibtex


def corrected_lecun() -> str:
    mismatch = sample_report().results[1]
    return corrected_entry(mismatch.reference, mismatch.matched, mismatch.findings)


def test_escape_latex_escapes_every_special_character() -> None:
    assert escape_latex("R&D 100% $5 #1 a_b {x} ~ ^ \\") == (
        r"R\&D 100\% \$5 \#1 a\_b \{x\} \textasciitilde{} \textasciicircum{} \textbackslash{}"
    )


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("BERT: Pre-training of deep transformers", "{BERT}: Pre-training of deep transformers"),
        ("Training ImageNet in one hour", "Training {ImageNet} in one hour"),
        (
            "Variational inference for Bayesian networks",
            "Variational inference for {Bayesian} networks",
        ),
        ("Attention Is All You Need", "Attention Is All You Need"),
        ("Scaling GPT-3 to 100% of tasks", "Scaling {GPT-3} to 100\\% of tasks"),
    ],
)
def test_titles_protect_acronyms_and_proper_nouns(title: str, expected: str) -> None:
    assert protect_title(title) == expected


def test_corrected_entry_keeps_key_type_and_uncontradicted_fields() -> None:
    entry = corrected_lecun()
    assert entry.startswith("@article{lecun2015deep,\n")
    assert "  year = {2015}," in entry
    assert "  pages = {436--444}," in entry
    assert "  note = {A review}," in entry, "a field no source contradicts is kept"
    assert "  doi = {10.1038/nature14539}," in entry, "a missing identifier is added"
    assert "title = {Deep Learning}" in entry, "title-form differences are the user's choice"
    assert "number" not in entry, "nothing the user did not write is added except identifiers"


def test_corrected_entry_fixes_a_clearly_wrong_entry_type() -> None:
    reference = Reference(
        key="k", entry_type="article", fields={"title": "X", "journal": "Proc. NeurIPS"}
    )
    work = Work(source="dblp", type="proceedings-article", title="X", venue="NeurIPS")
    entry = corrected_entry(reference, work, [])
    assert entry.startswith("@inproceedings{k,")
    assert "booktitle = {Proc. NeurIPS}" in entry and "journal" not in entry


def test_a_printed_citation_is_written_whole_from_its_record() -> None:
    """A reference read from a printed list (PDF, Word) has no BibTeX fields of its own."""
    printed = (
        'J. D. Watson and F. H. C. Crick, "Molecular structure of nucleic acids," '
        "Nature, vol. 171, pp. 737-738, 1956."
    )
    reference = Reference(
        key="2", entry_type="article", title="Molecular structure of nucleic acids",
        authors=[Person("Watson", "J. D."), Person("Crick", "F. H. C.")], year=1956,
        venue="Nature", free_text=printed, origin="printed text",
    )  # fmt: skip
    work = Work(
        source="crossref", type="journal-article", doi="10.1038/171737a0", year=1953,
        title="Molecular Structure of Nucleic Acids", venue="Nature", volume="171",
        pages="737-738", authors=[Person("Watson", "J. D."), Person("Crick", "F. H. C.")],
    )  # fmt: skip
    year = Finding("year-mismatch", "error", "Year should be 1953", field="year", found="1953")
    (entry,) = parse_bibtex(corrected_entry(reference, work, [year])).references
    assert (entry.key, entry.year, entry.venue, entry.volume) == ("2", 1953, "Nature", "171")
    assert entry.title == "Molecular Structure of Nucleic Acids"
    assert [a.family for a in entry.authors] == ["Watson", "Crick"]


def test_a_wrong_doi_with_no_replacement_is_dropped_not_guessed() -> None:
    reference = Reference(
        key="k", fields={"title": "X", "doi": "10.9999/bogus"}, doi="10.9999/bogus"
    )
    finding = Finding("doi-not-registered", "error", "no such DOI", field="doi")
    entry = corrected_entry(reference, Work(source="openalex", title="X"), [finding])
    assert "doi" not in entry


def test_work_to_entry_writes_only_fields_the_record_gives() -> None:
    work = Work(
        source="crossref",
        type="journal-article",
        title="Deep learning",
        authors=[Person("LeCun", "Yann"), Person("Waals", "J. D.", particle="van der")],
        year=2015,
        venue="Nature & Science",
        doi="10.1038/nature14539",
    )
    assert work_to_entry(work) == (
        "@article{lecun2015deep,\n"
        "  title = {Deep learning},\n"
        "  author = {LeCun, Yann and van der Waals, J. D.},\n"
        "  journal = {Nature \\& Science},\n"
        "  year = {2015},\n"
        "  doi = {10.1038/nature14539},\n"
        "}\n"
    )


def test_make_key_is_ascii_skips_stopwords_and_is_unique() -> None:
    work = Work(
        source="x", title="The Ünïcode Problem", authors=[Person("Gödel", "Kurt")], year=1931
    )
    assert make_key(work, set()) == "godel1931unicode"
    assert make_key(work, {"godel1931unicode", "godel1931unicodea"}) == "godel1931unicodeb"


def test_scanner_finds_the_entries_bibtexparser_reads_and_skips_comments_and_strings() -> None:
    # BibTeX has no % comments outside entries: an @ entry on a % line is read (and audited).
    text = "% @article{commented,}\n@comment{x}\n@string{a = {b}}\n@book(k1, title={A {B}})\n"
    assert [(s.key, s.line) for s in scan_entries(text)] == [("commented", 1), ("k1", 4)]
    assert [r.key for r in parse_bibtex(text).references] == ["commented", "k1"]


def test_fix_replaces_only_the_mismatched_entry_and_keeps_every_other_byte() -> None:
    outcome = apply_fixes(BIB_TEXT, sample_report())
    start = BIB_TEXT.index("@article{lecun2015deep")
    end = BIB_TEXT.index("@article{smith2021quantum")
    assert outcome.text.startswith(BIB_TEXT[:start])
    assert outcome.text.endswith(BIB_TEXT[BIB_TEXT.index("}\n", start) + 1 :])
    assert BIB_TEXT[start:end] not in outcome.text
    assert "\tyear = {2015}," in outcome.text, "the entry keeps its own (tab) indentation"
    assert [(c.key, c.action, c.fields) for c in outcome.changes] == [
        ("lecun2015deep", "corrected", ("doi", "pages", "year"))
    ]
    assert outcome.text.count("@") == BIB_TEXT.count("@")


def test_unconfirmed_entries_are_left_alone_and_listed() -> None:
    outcome = apply_fixes(BIB_TEXT, sample_report())
    assert [(r.reference.key, why) for r, why in outcome.left] == [
        ("smith2021quantum", "not found"),
        ("offline2020", "unverified"),
    ]
    assert "@article{smith2021quantum,\n  title = {Quantum Gravity" in outcome.text


def test_add_ids_inserts_a_doi_line_into_verified_entries_only_where_missing() -> None:
    assert (
        "10.5555/3295222.3295349" not in apply_fixes(BIB_TEXT, sample_report(), add_ids=True).text
    )
    report = sample_report()
    vaswani = next(r for r in report.results if r.reference.key == "vaswani2017attention")
    vaswani.findings.append(
        Finding("doi-available", "info", "DOI could be added", found="10.5555/3295222.3295349")
    )
    outcome = apply_fixes(BIB_TEXT, report, add_ids=True)
    assert "  year      = {2017},\n  doi       = {10.5555/3295222.3295349},\n}" in outcome.text
    assert outcome.text.count("doi = {10.1016/S0140-6736(97)11096-0}") == 1
    assert ("vaswani2017attention", "added-ids") in [(c.key, c.action) for c in outcome.changes]


def test_windows_line_endings_survive_a_fix() -> None:
    crlf = BIB_TEXT.replace("\n", "\r\n")
    outcome = apply_fixes(crlf, sample_report())
    untouched = crlf[: crlf.index("@article{lecun2015deep")]
    assert outcome.text.startswith(untouched)
    assert outcome.text.endswith(crlf[crlf.index("@article{smith2021quantum") - 4 :])


def test_nothing_changes_when_no_entry_is_corrected() -> None:
    report = copy.deepcopy(sample_report())
    report.results = [report.results[0], report.results[2]]
    assert apply_fixes(BIB_TEXT, report).text == BIB_TEXT


MACRO_BIB = """@string{nature = "Nature"}
@string{nips = "Advances in Neural Information Processing Systems"}

% wrong year, venue given as a macro
@article{watson1953dna,
  author  = {Watson, J. D. and Crick, F. H. C.},
  title   = "Molecular Structure of Nucleic Acids",
  journal = nature,
  year    = {1956},
  volume  = {171},
}

@article{krizhevsky2012imagenet,
  author    = {Krizhevski, Alex and Sutskever, Ilya and Hinton, Geoffrey E.},
  title     = {{ImageNet} Classification with Deep Convolutional Neural Networks},
  journal   = nips # { 25},
  year      = {2012},
  doi       = {10.9999/not-registered},
}
"""


def _mismatch(key: str, work: Work, findings: list[Finding]) -> Result:
    reference = next(r for r in parse_bibtex(MACRO_BIB, file="refs.bib").references if r.key == key)
    return Result(reference, Verdict.MISMATCH, findings=findings, matched=work)


def test_a_correction_rewrites_only_contradicted_fields_keeping_macros_quotes_and_alignment() -> (
    None
):
    work = Work(
        source="openalex",
        type="journal-article",
        title="Molecular Structure of Nucleic Acids",
        authors=[Person("Watson", "J. D."), Person("Crick", "F. H. C.")],
        year=1953,
        venue="Nature",
        volume="171",
        doi="10.1038/171737a0",
    )
    finding = Finding("year-mismatch", "error", "Year should be 1953", field="year")
    only_year = apply_fixes(
        MACRO_BIB, AuditReport(results=[_mismatch("watson1953dna", work, [finding])])
    )
    assert [(c.key, c.fields) for c in only_year.changes] == [("watson1953dna", ("year",))]
    assert "10.1038/171737a0" not in only_year.text, "no identifier check did not report"
    offered = Finding("doi-available", "info", "DOI could be added", found="10.1038/171737a0")
    outcome = apply_fixes(
        MACRO_BIB, AuditReport(results=[_mismatch("watson1953dna", work, [finding, offered])])
    )
    assert outcome.text == MACRO_BIB.replace(
        "  year    = {1956},\n  volume  = {171},\n",
        "  year    = {1953},\n  volume  = {171},\n  doi     = {10.1038/171737a0},\n",
    )
    assert [(c.key, c.fields) for c in outcome.changes] == [("watson1953dna", ("doi", "year"))]


def test_add_ids_never_gives_a_published_paper_its_preprint_doi() -> None:
    report = sample_report()
    vaswani = next(r for r in report.results if r.reference.key == "vaswani2017attention")
    vaswani.findings.append(
        Finding("doi-available", "info", "DOI could be added", found="10.48550/arXiv.1706.03762")
    )
    outcome = apply_fixes(BIB_TEXT, report, add_ids=True)
    assert "10.48550" not in outcome.text, "cited in NeurIPS (booktitle = nips)"


def test_a_type_correction_renames_the_venue_field_and_a_dropped_field_loses_its_line() -> None:
    work = Work(
        source="dblp",
        type="proceedings-article",
        title="ImageNet Classification with Deep Convolutional Neural Networks",
        authors=[
            Person("Krizhevsky", "Alex"),
            Person("Sutskever", "Ilya"),
            Person("Hinton", "Geoffrey E."),
        ],
        year=2012,
        venue="NeurIPS",
    )
    findings = [
        Finding("author-misspelled", "warning", "Krizhevski → Krizhevsky", field="authors"),
        Finding("doi-not-registered", "error", "no such DOI", field="doi"),
    ]
    result = _mismatch("krizhevsky2012imagenet", work, findings)
    outcome = apply_fixes(MACRO_BIB, AuditReport(results=[result]))
    start = MACRO_BIB.index("@article{krizhevsky")
    assert outcome.text[:start] == MACRO_BIB[:start]
    assert outcome.text[start:] == (
        "@inproceedings{krizhevsky2012imagenet,\n"
        "  author    = {Krizhevsky, Alex and Sutskever, Ilya and Hinton, Geoffrey E.},\n"
        "  title     = {{ImageNet} Classification with Deep Convolutional Neural Networks},\n"
        "  booktitle = nips # { 25},\n"
        "  year      = {2012},\n"
        "}\n"
    )
    assert outcome.changes[0].fields == ("author", "booktitle", "doi", "journal", "type")


NEURIPS_BIB = """@string{neurips = "Advances in Neural Information Processing Systems"}

@inproceedings{krizhevsky2012imagenet,
  author    = {Krizhevski, Alex and Sutskever, Ilya and Hinton, Geoffrey E.},
  title     = {{ImageNet} Classification with Deep Convolutional Neural Networks},
  booktitle = neurips # { 25},
  year      = {2012},
}
"""
ALEXNET_AUTHORS = [
    Person("Krizhevsky", "Alex"),
    Person("Sutskever", "Ilya"),
    Person("Hinton", "Geoffrey E."),
]


def _alexnet(source: str, work_type: str) -> Work:
    """The NeurIPS 2012 paper as one source describes it: no DOI, its own type word."""
    return Work(
        source=source,
        type=work_type,
        title="ImageNet Classification with Deep Convolutional Neural Networks",
        authors=ALEXNET_AUTHORS,
        year=2012,
        venue="Advances in Neural Information Processing Systems 25 (NIPS 2012)",
    )


@pytest.mark.parametrize(
    "records",
    [
        pytest.param([_alexnet("openalex", "article")], id="openalex-article"),
        pytest.param([_alexnet("semanticscholar", "journal-article")], id="s2-journalarticle"),
        pytest.param(
            [_alexnet("openalex", "article"), _alexnet("semanticscholar", "journal-article")],
            id="openalex+s2",
        ),
    ],
)
def test_an_aggregators_article_type_never_turns_a_conference_paper_into_an_article(
    records: list[Work],
) -> None:
    reference = parse_bibtex(NEURIPS_BIB, file="refs.bib").references[0]
    finding = Finding("author-misspelled", "warning", "Krizhevski → Krizhevsky", field="authors")
    result = Result(reference, Verdict.MISMATCH, findings=[finding], matched=merge_records(records))
    outcome = apply_fixes(NEURIPS_BIB, AuditReport(results=[result]))
    assert outcome.text == NEURIPS_BIB.replace("Krizhevski,", "Krizhevsky,")
    assert outcome.changes[0].fields == ("author",)


def test_dblp_proceedings_type_in_a_merged_record_corrects_an_article() -> None:
    matched = merge_records(
        [_alexnet("openalex", "article"), _alexnet("dblp", "proceedings-article")]
    )
    reference = Reference(
        key="k", entry_type="article", fields={"title": "X", "journal": "NeurIPS"}
    )
    assert corrected_entry(reference, matched, []).startswith("@inproceedings{k,")


@pytest.mark.parametrize(
    ("cited", "source", "work_type", "expected"),
    [
        ("inproceedings", "crossref", "journal-article", "article"),
        ("article", "crossref", "proceedings-article", "inproceedings"),
        ("inproceedings", "pubmed", "journal-article", "article"),
        ("misc", "crossref", "journal-article", "misc"),
        ("incollection", "openalex", "article", "incollection"),
        ("book", "openalex", "article", "book"),
        ("inproceedings", "crossref", "book-chapter", "inproceedings"),
    ],
)
def test_only_a_journal_or_proceedings_type_from_a_registry_or_dblp_changes_the_type(
    cited: str, source: str, work_type: str, expected: str
) -> None:
    reference = Reference(key="k", entry_type=cited, fields={"title": "X"})
    work = Work(source=source, type=work_type, title="X", venue="V")
    assert corrected_entry(reference, work, []).startswith(f"@{expected}{{k,")


def test_an_entry_it_cannot_read_field_by_field_is_replaced_whole() -> None:
    work = Work(source="crossref", type="journal-article", title="X", year=2020, venue="J")
    reference = Reference(
        key="k", entry_type="article", fields={"title": "X", "year": "2019"}, line=1
    )
    finding = Finding("year-mismatch", "error", "Year should be 2020", field="year")
    text = "@article{k, title = {X}, year = 2019 2019}\n"
    result = Result(reference, Verdict.MISMATCH, findings=[finding], matched=work)
    outcome = apply_fixes(text, AuditReport(results=[result]))
    assert outcome.text == "@article{k,\n  title = {X},\n  year = {2020},\n}\n"


@pytest.mark.parametrize(
    ("venue", "entry_type"),
    [
        ("Advances in Neural Information Processing Systems 25", "@inproceedings{"),
        ("Communications of the ACM", "@article{"),
    ],
    ids=["neurips", "journal"],
)
def test_an_entry_for_an_openalex_article_takes_its_type_from_the_venue(
    venue: str, entry_type: str
) -> None:
    work = Work(
        source="openalex",
        type="article",
        title="ImageNet Classification with Deep Convolutional Neural Networks",
        authors=[Person("Krizhevsky", "Alex")],
        year=2012,
        venue=venue,
    )
    assert work_to_entry(work).startswith(entry_type)
