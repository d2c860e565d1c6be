"""`refaudit sources`: enabled or why not, key set or missing (never shown), limits, quota."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refaudit.cache import ResponseCache
from refaudit.cli import app
from refaudit.config import load_settings
from refaudit.sources import registry
from refaudit.sources.quota import Budget
from refaudit.sources.scopus import classify

SECRET = "elsevier-secret-0042"


def sources_json(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, dict]:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(app, ["sources", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    return {s["name"]: s for s in json.loads(result.output)["sources"]}


def test_without_keys_the_keyed_sources_are_off_and_say_how_to_enable_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown = sources_json(monkeypatch)

    assert list(shown) == list(registry.SOURCE_NAMES)
    assert shown["crossref"]["enabled"] is True
    for name, variable in (("scopus", "ELSEVIER_API_KEY"), ("ieee", "IEEE_API_KEY")):
        assert shown[name]["enabled"] is False
        assert shown[name]["key"] == "missing"
        assert variable in shown[name]["why_not"]
    table = CliRunner().invoke(app, ["sources"], env={"COLUMNS": "120"}).output
    assert "scopus: needs an API key" in table and "IEEE_API_KEY" in table


def test_with_a_key_the_quota_left_comes_from_the_shared_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = load_settings(env={**os.environ, "ELSEVIER_KEY": SECRET})
    ledger = ResponseCache.in_dir(Path(settings.resolved_cache_dir()))
    budget = Budget(registry.entry("scopus"), SECRET, ledger, classify)
    budget.admit("https://api.elsevier.com/content/search/scopus")
    ledger.close()

    shown = sources_json(monkeypatch, ELSEVIER_KEY=SECRET)

    scopus = shown["scopus"]
    assert (scopus["enabled"], scopus["key"]) == (True, "set")
    assert scopus["quota"]["used"] == 1
    assert scopus["quota"]["left"] == 19_999
    assert scopus["quota"]["measured"] == "counted"
    assert scopus["rate_limits"]["default"]["rps"] == 9


def test_naming_a_keyed_source_without_its_key_is_a_clear_error(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a, title={A title}, year={2020}}\n", encoding="utf-8")

    result = CliRunner().invoke(app, ["check", str(bib), "--sources", "ieee"])

    assert result.exit_code == 2
    assert "ieee needs an API key" in result.output
    assert "IEEE_API_KEY" in result.output
