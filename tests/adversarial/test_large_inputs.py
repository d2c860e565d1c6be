"""Large bibliographies: reports are written as the audit goes, with the same bytes.

`tests/test_audit.py` checks that the pipeline runs in batches; memory figures
are measured in `bench/hostile_inputs.py`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from refaudit.baseline import build_baseline
from refaudit.errors import CIRCUIT_OPEN
from refaudit.models import AuditReport, Person, SourceStatus, Verdict
from refaudit.policy import (
    Tally,
    failing_results,
    report_tally,
)
from refaudit.render import (
    RenderContext,
    consulted_sources,
    outage_line,
    render,
    report_stream,
    report_summary,
    source_failures,
    verdict_counts,
)
from refaudit.render.json import JsonStream, render_json, report_data
from refaudit.render.table import outcome_lines, summary_lines
from refaudit.version import installed_version
from tests.report_samples import sample_report, streamed, suppressed_report

REPORTS = Path(__file__).parent.parent / "fixtures" / "reports"
EXTENSIONS = {
    "markdown": "md",
    "sarif": "sarif",
    "junit": "xml",
    "github": "txt",
    "html": "html",
    "table": "table.txt",
}


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The HTML footer's time, fixed: the compared pages are written at different moments."""

    class Clock:
        @staticmethod
        def now(tz: object = None) -> datetime:
            return datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    monkeypatch.setattr("refaudit.render.html.datetime", Clock)


def _only(verdict: Verdict) -> AuditReport:
    """The sample's references of one verdict (not found: a details section without rows)."""
    report = sample_report()
    report.results = [result for result in report.results if result.verdict == verdict]
    return report


def _details_context(make: Callable[[], AuditReport]) -> RenderContext:
    half = make()
    half.results = half.results[::2]
    return RenderContext(
        details=True, verbose=True, baseline=build_baseline(half), fail_on=["error", "warning"]
    )


@pytest.mark.parametrize("output_format", EXTENSIONS)
@pytest.mark.parametrize(
    ("name", "make", "detailed"),
    [
        ("sample-default", sample_report, False),
        ("sample-details", sample_report, True),
        ("suppressed-default", suppressed_report, False),
        ("not-found-details", lambda: _only(Verdict.NOT_FOUND), True),
        ("empty", lambda: AuditReport(files=["refs.bib"]), False),
    ],
)
def test_each_format_streamed_batch_by_batch_has_the_bytes_of_the_one_pass_renderer(
    name: str,
    make: Callable[[], AuditReport],
    detailed: bool,
    output_format: str,
    fixed_clock: None,
) -> None:
    """The expected files were written by the one-pass renderers (main at 97d66d3; the
    table's by the one that kept the listed results, at 6c2ee60)."""
    context = _details_context(make) if detailed else RenderContext()
    report = make()
    stream = report_stream(output_format, context)
    report = streamed(report, stream.add, Tally(context.fail_on, context.baseline), batch=3)
    assert report.results == []
    pieces: list[str] = []
    stream.write(report, pieces.append)
    text = "".join(pieces).replace(installed_version(), "<version>")
    text = text.replace("2026-01-01 12:00 UTC</footer>", "<date> UTC</footer>")
    expected = (REPORTS / f"{name}.{EXTENSIONS[output_format]}").read_text(encoding="utf-8")
    assert text == expected


def test_json_written_result_by_result_is_the_one_pass_document() -> None:
    report = copy.deepcopy(sample_report())
    report.results = report.results * 50
    context = RenderContext()
    expected = json.dumps(report_data(report, context), indent=2, ensure_ascii=False) + "\n"
    assert render_json(report, context) == expected


def test_json_of_awkward_text_is_the_one_pass_document() -> None:
    """Results are written by pydantic's serialiser: quotes, backslashes, control
    characters, line separators, astral characters and markup come out as json.dumps
    writes them."""
    report = copy.deepcopy(sample_report())
    awkward = 'Schrödinger’s “cat” \\ {\\"o} \t\x07\x7f \u2028 𝔊 😀 </script> &amp;'
    for result in report.results:
        result.reference.title = awkward
        result.reference.authors[:1] = [Person(family="Ørsted\n", given="H. C.")]
        if result.matched is not None:
            result.matched.venue = awkward
    context = RenderContext()
    expected = json.dumps(report_data(report, context), indent=2, ensure_ascii=False) + "\n"
    assert render_json(report, context) == expected


def test_json_with_no_results_is_still_the_one_pass_document() -> None:
    report = copy.deepcopy(sample_report())
    report.results = []
    context = RenderContext()
    expected = json.dumps(report_data(report, context), indent=2, ensure_ascii=False) + "\n"
    assert render_json(report, context) == expected


def test_an_empty_streamed_report_is_the_empty_report() -> None:
    stream = JsonStream(RenderContext())
    pieces: list[str] = []
    stream.write(AuditReport(), pieces.append)
    assert "".join(pieces) == render(AuditReport(), "json", RenderContext())


def test_a_reports_repr_does_not_spell_out_its_results() -> None:
    # asyncio.run formats its main task's result when the run ends: a full repr of a
    # 100,000-result report cost hundreds of megabytes at the very end of `check`.
    report = copy.deepcopy(sample_report())
    report.results = report.results * 1000
    assert repr(report) == f"<AuditReport: {len(report.results)} results, 1 problems>"


def _outage_report(*, offline: bool = False) -> AuditReport:
    """Every checked reference unverified: the sources failed, one circuit opened."""
    report = sample_report()
    unverified = report.results[4]
    report.results = [report.results[5]]  # the skipped one is not counted as checked
    for number in range(7):
        result = copy.deepcopy(unverified)
        result.reference.key = f"down{number}"
        result.sources = {
            "crossref": SourceStatus("failed", f"{CIRCUIT_OPEN}connection refused by 127.0.0.1"),
            "openalex": SourceStatus("failed", "timed out for api.openalex.org"),
        }
        report.results.append(result)
    report.stats.cache_hits = {}
    report.offline = offline
    return report


def _baseline_context() -> RenderContext:
    known = sample_report()
    known.results = known.results[::2]
    return RenderContext(baseline=build_baseline(known), fail_on=["error", "warning"])


@pytest.mark.parametrize(
    ("make", "make_context"),
    [
        (sample_report, RenderContext),
        (sample_report, _baseline_context),
        (sample_report, lambda: RenderContext(fail_on=["retracted", "unverified"], quiet=True)),
        (suppressed_report, lambda: RenderContext(details=True, verbose=True)),
        (_outage_report, RenderContext),
        (lambda: _outage_report(offline=True), lambda: RenderContext(fail_on=["unverified"])),
    ],
    ids=["default", "baseline-fail-on", "retracted-quiet", "suppressed", "outage", "offline"],
)
def test_a_streamed_report_keeps_only_counts_and_tells_what_the_whole_one_tells(
    make: Callable[[], AuditReport], make_context: Callable[[], RenderContext], fixed_clock: None
) -> None:
    """The summary, the exit code's inputs and the closing lines, from counts alone."""
    context = make_context()
    for output_format in ("table", *EXTENSIONS, "json"):
        whole = make()
        stream = report_stream(output_format, context)
        kept = streamed(make(), stream.add, Tally(context.fail_on, context.baseline), batch=2)
        assert kept.results == [] and kept.tally is not None
        pieces: list[str] = []
        stream.write(kept, pieces.append)
        assert "".join(pieces) == render(whole, output_format, make_context()), output_format

    whole_tally = report_tally(whole, context.fail_on, context.baseline)
    assert len(failing_results(whole, context.fail_on, context.baseline)) == whole_tally.failing
    for tell in (
        lambda report: report_summary(report, context),
        lambda report: summary_lines(report, context),
        lambda report: outcome_lines(report, context),
        lambda report: (outage_line(report), source_failures(report)),
        lambda report: (verdict_counts(report), consulted_sources(report), report.counts()),
        lambda report: (
            report_tally(report).nothing_answered(),
            report_tally(report).unverified_share(),
        ),
    ):
        assert tell(kept) == tell(whole)


def test_a_streamed_report_answers_only_for_the_policy_it_was_counted_under() -> None:
    context = RenderContext(fail_on=["error"])
    kept = streamed(sample_report(), lambda _results: [], Tally(context.fail_on))
    assert report_summary(kept, context)["failing"] == 3
    with pytest.raises(ValueError, match="kept counts, not results"):
        report_summary(kept, RenderContext(fail_on=["warning"]))
    with pytest.raises(ValueError, match="kept counts, not results"):
        failing_results(kept, ["error"])
