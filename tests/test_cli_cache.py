"""`refaudit cache info|clear` through the real Typer app."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from refaudit.cache import ResponseCache
from refaudit.cli import app


def fill_cache() -> None:
    cache = ResponseCache.in_dir(Path(os.environ["REFAUDIT_CACHE_DIR"]))
    for key, source, ttl in (("a", "crossref", 100), ("b", "crossref", -1), ("c", "openalex", 100)):
        cache.put(key, source=source, status=200, text="{}", headers={}, ttl=ttl)
    cache.close()


def test_info_reports_entries_expired_and_per_source() -> None:
    fill_cache()
    result = CliRunner().invoke(app, ["cache", "info"])

    assert result.exit_code == 0, result.output
    assert "entries:  3" in result.output and "expired:  1" in result.output
    assert "crossref" in result.output and "openalex" in result.output
    assert os.environ["REFAUDIT_CACHE_DIR"] in result.output.replace("\n", "")


def test_clear_expired_then_one_source() -> None:
    fill_cache()
    runner = CliRunner()

    expired = runner.invoke(app, ["cache", "clear", "--expired"])
    assert expired.exit_code == 0 and "removed 1 expired" in expired.output

    openalex = runner.invoke(app, ["cache", "clear", "--sources", "openalex"])
    assert "removed 1 cached answers from openalex" in openalex.output
    assert "entries:  1" in runner.invoke(app, ["cache", "info"]).output


def test_clear_unknown_source_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["cache", "clear", "--sources", "crossreff"])
    assert result.exit_code == 2
    assert "unknown source(s) crossreff" in result.output
