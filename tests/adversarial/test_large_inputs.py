"""Large bibliographies: the JSON report is written one result at a time, with the same bytes."""

from __future__ import annotations

import copy
import json

from refaudit.render import RenderContext
from refaudit.render.json import render_json, report_data
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
