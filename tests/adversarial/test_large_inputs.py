"""Large bibliographies: the JSON report is written as the audit goes, with the same bytes.

`tests/test_audit.py` checks that the pipeline runs in batches; memory figures
are measured in `bench/hostile_inputs.py`.
"""

from __future__ import annotations

import copy
import json

from refaudit.models import AuditReport
from refaudit.policy import failing_results
from refaudit.render import RenderContext, render, rows
from refaudit.render.json import JsonStream, render_json, report_data
from refaudit.render.table import render_table_text, table_batches
from tests.report_samples import sample_report


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
