"""The terminal table: severity groups, summary line, details, suppressed and baselined marks."""

from __future__ import annotations

import copy
import io

import pytest
from report_samples import sample_report, suppressed_report
from rich.console import Console

from refaudit.baseline import build_baseline
from refaudit.models import InputProblem, SnapshotState
from refaudit.render import RenderContext, render, table
from refaudit.render.table import render_table


def table_text(context: RenderContext, report=None) -> str:
    return render(report or sample_report(), "table", context)


def test_table_groups_results_by_what_fails_then_severity() -> None:
    text = table_text(RenderContext())
    failing, errors, warnings, skipped = (
        text.index(t) for t in ("Failing the run (2)", "Errors (1)", "Warnings (1)", "Suppressed")
    )
    assert failing < errors < warnings < skipped
    assert failing < text.index("smith2021quantum") < text.index("wakefield1998") < errors
    assert errors < text.index("lecun2015deep") < warnings < text.index("offline2020") < skipped
    assert "2 reference(s) fail" in text, "the same two, by the same definition"
    wakefield = next(line for line in text.splitlines() if "wakefield1998" in line)
    assert "retracted" in wakefield.split("│")[2] and "verified" not in wakefield


def test_summary_line_counts_every_verdict_and_the_cost_of_the_run() -> None:
    text = table_text(RenderContext())
    assert (
        "6 references: 1 verified · 1 mismatch · 1 not found · 1 retracted · 1 unverified · "
        "1 skipped" in text
    )
    assert (
        "sources: crossref, openalex, semanticscholar · 10 requests · 2 cache hits · 1.2 s" in text
    )
    assert "2 reference(s) fail (--fail-on not_found,doi,retracted)" in text


def test_verified_references_are_listed_only_when_verbose() -> None:
    assert "vaswani2017attention" not in table_text(RenderContext())
    assert "1 verified reference(s) not listed" in table_text(RenderContext())
    assert "vaswani2017attention" in table_text(RenderContext(verbose=True))


def test_input_problems_are_listed_with_file_and_line() -> None:
    assert "refs.bib:50 [broken] entry has no closing brace" in table_text(RenderContext())


def test_details_show_cited_against_correct_with_source_and_record() -> None:
    text = table_text(RenderContext(details=True))
    assert "cited:   2016" in text
    assert "correct: 2015" in text
    assert "source:  crossref 10.1038/nature14539" in text
    assert "notice:  retraction 2010-02-06 10.1016/s0140-6736(10)60175-4" in text
    assert "cited:" not in table_text(RenderContext())


def test_suppressed_findings_are_shown_with_their_reason_and_do_not_fail() -> None:
    text = table_text(RenderContext(fail_on=["error"]), suppressed_report())
    assert "[suppressed: print" in text  # the reason may wrap inside the cell
    assert "Suppressed and skipped (1)" in text
    assert "nothing fails" in text


def test_baselined_findings_are_marked_and_stop_failing() -> None:
    report = sample_report()
    text = table_text(RenderContext(baseline=build_baseline(report)), report)
    assert "[baseline]" in text
    assert "nothing fails" in text


def test_quiet_prints_only_what_fails_and_the_summary() -> None:
    lines = table_text(RenderContext(quiet=True)).splitlines()
    assert lines[:2] == [
        "refs.bib:21: error not-found [smith2021quantum] "
        "No such work found in crossref, openalex, semanticscholar",
        "refs.bib:28: error retracted [wakefield1998] "
        "retracted on 2010-02-06 (notice 10.1016/s0140-6736(10)60175-4)",
    ]
    assert lines[2].startswith("6 references:")
    assert not any("lecun2015deep" in line for line in lines), "a warning that passes is hidden"


def test_quiet_still_names_an_entry_left_out_and_the_summary_counts_it() -> None:
    report = sample_report()
    report.problems.append(
        InputProblem(
            "refs.bib",
            "could not parse this @article entry, so it is left out: unbalanced braces",
            line=60,
            key="cut",
            severity="error",
            code="parse-error",
        )
    )
    lines = table_text(RenderContext(quiet=True), report).splitlines()
    assert (
        "refs.bib:60: error parse-error [cut] could not parse this @article entry, so it is "
        "left out: unbalanced braces" in lines
    )
    assert not any("[broken]" in line for line in lines), "a warning about the input is hidden"
    assert "1 input error(s) — what they name was not read, so not checked" in lines
    assert "input error" not in table_text(RenderContext(quiet=True))


def test_piped_output_is_one_finding_per_line_like_ruff_concise() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, no_color=True)
    render_table(sample_report(), RenderContext(), console)
    lines = buffer.getvalue().splitlines()
    findings = [line for line in lines if line.startswith("refs.bib:")]
    assert (
        "refs.bib:11: error year-mismatch [lecun2015deep] year 2016 differs from the record"
        in (findings[0])
    )
    assert "refs.bib:50: warning parse-error [broken] entry has no closing brace" in findings
    assert not any("│" in line for line in lines), "no tables"
    unverified = next(line for line in findings if "[offline2020]" in line)
    assert unverified.endswith("unverified (sources down: crossref, openalex)")
    assert "  crossref: timeout after 20 s (1 reference(s))" in lines, "each failure once"


def test_narrow_terminals_keep_identifiers_whole() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, force_terminal=True, color_system=None)
    render_table(sample_report(), RenderContext(details=False, verbose=True), console)
    text = buffer.getvalue()
    assert max(len(line) for line in text.splitlines() if "│" in line) <= 80
    assert "10.1016/s0140-6736(10)60175-4" in text, "a DOI is never folded across lines"


def test_colour_is_dropped_when_the_console_has_no_colour() -> None:
    buffer = io.StringIO()
    render_table(sample_report(), RenderContext(), Console(file=buffer, no_color=True, width=120))
    assert "\x1b[" not in buffer.getvalue()
    coloured = io.StringIO()
    console = Console(file=coloured, force_terminal=True, color_system="standard", width=120)
    render_table(sample_report(), RenderContext(), console)
    assert "\x1b[31m" in coloured.getvalue()


def test_summary_names_the_snapshot_online_and_offline_but_its_absence_only_offline() -> None:
    report = sample_report()
    report.retraction_snapshot = SnapshotState(
        available=True, downloaded_at="2026-11-01T06:12:40+00:00", age_days=1.4, rows=61482
    )
    line = "retraction screening: Retraction Watch snapshot of 2026-11-01 (1 day old)"
    assert line in table_text(RenderContext(), report).splitlines()
    assert line in table_text(RenderContext(quiet=True), report).splitlines()
    assert line in render(report, "github", RenderContext()).splitlines()
    report.retraction_snapshot = SnapshotState(available=False)
    assert "retraction screening" not in table_text(RenderContext(), report)
    report.offline = True
    assert "retraction screening: no Retraction Watch snapshot" in table_text(
        RenderContext(), report
    )


def test_unverified_references_are_named_as_no_verdict_with_the_failing_sources() -> None:
    text = table_text(RenderContext(fail_on=("not_found",)))
    assert "1 reference(s) unverified — not checked, not cleared" in text
    assert "  crossref: timeout after 20 s (1 reference(s))\n  openalex: HTTP 503" in text
    assert "nothing fails among the references checked" not in text  # not_found still fails


def test_a_run_that_checked_nothing_does_not_look_clean() -> None:
    report = sample_report()
    report.results = [r for r in report.results if r.reference.key == "offline2020"]
    text = table_text(RenderContext(), report)
    assert "nothing fails among the references checked" in text
    assert "nothing fails (--fail-on" not in text


def test_parse_and_retraction_listings_fit_80_columns_without_splitting_identifiers(
    tmp_path, monkeypatch
) -> None:
    from typer.testing import CliRunner

    from refaudit.cli import app

    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@inproceedings{ronneberger2015unet,\n  title = {U-Net: Convolutional Networks for"
        " Biomedical Image Segmentation},\n  author = {Ronneberger, Olaf and Fischer, Philipp},\n"
        "  booktitle = {MICCAI},\n  year = {2015},\n  doi = {10.1007/978-3-319-24574-4_28},\n}\n"
        "@misc{site,\n  title = {A web page with a long address},\n"
        "  url = {https://example.org/a/very/long/path/that/would/never/fit/in/eighty/columns},\n}\n",
        encoding="utf-8",
    )
    text = CliRunner().invoke(app, ["parse", str(bib)], env={"COLUMNS": "80"}).stdout
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any("doi:10.1007/978-3-319-24574-4_28" in line for line in lines)


def test_a_listing_naming_a_column_it_does_not_have_is_refused_when_declared() -> None:
    """A misspelt column in drop_order would otherwise fail only on a narrow terminal."""
    from refaudit.cli.common import Columns

    with pytest.raises(ValueError, match="not a column of .*: notice doi"):
        Columns(("date", "title", "notice DOI"), prose=("title",), drop_order=("notice doi",))


def test_a_group_longer_than_a_chunk_is_consecutive_tables_with_one_header_and_one_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An offline run lists every reference as unverified: a table per TABLE_CHUNK of them,
    each as wide as the whole group's, the longest key (in the last chunk) never folded."""
    report = sample_report()
    unverified = report.results[4]
    report.results = []
    for number in range(8):
        result = copy.deepcopy(unverified)
        result.reference.key = f"entry{number}" if number < 7 else "a-much-longer-key-2024"
        report.results.append(result)
    whole = table_text(RenderContext(), report)
    monkeypatch.setattr(table, "TABLE_CHUNK", 3)
    chunked = table_text(RenderContext(), report)

    assert chunked.count("Warnings (8)") == 1 and chunked.count("┃ key ") == 1
    assert chunked.count("\n┌") == 2, "two more tables, without title or header"
    rows = [line for line in chunked.splitlines() if line.startswith("│")]
    assert rows == [line for line in whole.splitlines() if line.startswith("│")]
    assert len({len(line) for line in rows}) == 1 and "│ a-much-longer-key-2024 │" in chunked
    assert chunked.split("Input problems")[1] == whole.split("Input problems")[1]
