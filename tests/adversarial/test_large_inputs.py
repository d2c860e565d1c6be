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
from refaudit.models import AuditReport, Verdict
from refaudit.policy import failing_results
from refaudit.render import RenderContext, render, report_stream, rows
from refaudit.render.json import JsonStream, render_json, report_data
from refaudit.render.table import render_table_text, table_batches
from refaudit.version import installed_version
from tests.report_samples import sample_report, suppressed_report

REPORTS = Path(__file__).parent.parent / "fixtures" / "reports"
EXTENSIONS = {"markdown": "md", "sarif": "sarif", "junit": "xml", "github": "txt", "html": "html"}


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
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The expected files were written by the one-pass renderers (main at 97d66d3)."""

    class Clock:
        @staticmethod
        def now(tz: object = None) -> datetime:
            return datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    monkeypatch.setattr("refaudit.render.html.datetime", Clock)
    context = _details_context(make) if detailed else RenderContext()
    report = make()
    stream = report_stream(output_format, context)
    assert stream is not None
    report.results = [
        *stream.add(report.results[:1]),
        *stream.add(report.results[1:4]),
        *stream.add(report.results[4:]),
    ]
    assert all(result.matched is None for result in report.results)
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


def test_json_with_no_results_is_still_the_one_pass_document() -> None:
    report = copy.deepcopy(sample_report())
    report.results = []
    context = RenderContext()
    expected = json.dumps(report_data(report, context), indent=2, ensure_ascii=False) + "\n"
    assert render_json(report, context) == expected


def test_a_report_streamed_batch_by_batch_has_the_same_bytes_and_keeps_light_results() -> None:
    context = RenderContext()
    full, streamed = sample_report(), sample_report()
    stream = JsonStream(context)
    kept = [*stream.add(streamed.results[:3]), *stream.add(streamed.results[3:])]
    assert all(result.matched is None and result.corrected_bibtex is None for result in kept)
    streamed.results = kept
    pieces: list[str] = []
    stream.write(streamed, pieces.append)
    assert "".join(pieces) == render(full, "json", context)
    assert [r.reference.key for r in failing_results(streamed, context.fail_on)] == [
        r.reference.key for r in failing_results(full, context.fail_on)
    ]


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


def test_the_table_keeps_whole_only_the_results_it_lists() -> None:
    context = RenderContext()
    full, light = sample_report(), sample_report()
    light.results = table_batches(context)(light.results)
    unlisted = [r for r in light.results if not rows(r, context)]
    assert unlisted and all(r.matched is None for r in unlisted)
    assert all(r.matched is not None for r in full.results if not rows(r, context))
    assert render_table_text(light, context) == render_table_text(full, context)
    verbose = RenderContext(verbose=True)
    assert table_batches(verbose)(full.results) == full.results
