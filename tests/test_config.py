"""Settings: flags > env > config file > defaults, validated with messages that name the setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refaudit.cli import app
from refaudit.config import load_settings, setting_origins
from refaudit.errors import ConfigError

CONFIG = """
mailto = "file@example.org"
timeout = 12
fail_on = ["error", "retracted"]
require_verified = 0.2

[ttl_days]
search = 3

[retraction_policy]
expression_of_concern = "error"

[sources]
enabled = ["crossref", "openalex"]

[sources.crossref]
url = "http://localhost:8080/crossref/"
rate_limit = 5

[[ignore]]
key = "website"
reason = "not a publication"
"""


def write(tmp_path: Path, text: str, name: str = "refaudit.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_file_settings_are_read_from_refaudit_toml(tmp_path: Path) -> None:
    write(tmp_path, CONFIG)
    settings = load_settings(env={})
    assert settings.mailto == "file@example.org"
    assert settings.timeout == 12.0
    assert settings.fail_on == ["error", "retracted"]
    assert settings.require_verified == 0.2
    assert settings.ttl_days["search"] == 3.0 and settings.ttl_days["lookup"] == 30.0
    assert settings.retraction_policy["expression_of_concern"] == "error"
    assert settings.sources == ["crossref", "openalex"]
    assert settings.base_urls["crossref"] == "http://localhost:8080/crossref"
    assert settings.rate_limits == {"crossref": 5.0}
    assert [(r.key, r.reason) for r in settings.ignore] == [("website", "not a publication")]


def test_pyproject_tool_table_is_found(tmp_path: Path) -> None:
    write(tmp_path, '[tool.refaudit]\nmailto = "py@example.org"\n', "pyproject.toml")
    assert load_settings(env={}).mailto == "py@example.org"


def test_flags_beat_env_which_beats_the_file(tmp_path: Path) -> None:
    write(tmp_path, CONFIG)
    env = {"REFAUDIT_MAILTO": "env@example.org", "REFAUDIT_TIMEOUT": "7", "REFAUDIT_OFFLINE": "1"}
    settings = load_settings(env=env)
    assert (settings.mailto, settings.timeout, settings.offline) == ("env@example.org", 7.0, True)
    flagged = load_settings(env=env, overrides={"mailto": "flag@example.org", "timeout": None})
    assert (flagged.mailto, flagged.timeout) == ("flag@example.org", 7.0)


def test_env_fail_on_and_no_cache(tmp_path: Path) -> None:
    settings = load_settings(env={"REFAUDIT_FAIL_ON": "warning,doi", "REFAUDIT_NO_CACHE": "yes"})
    assert settings.fail_on == ["warning", "doi"]
    assert settings.use_cache is False
    with pytest.raises(ConfigError, match="REFAUDIT_OFFLINE"):
        load_settings(env={"REFAUDIT_OFFLINE": "maybe"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('timeout = "fast"', "`timeout` in .*refaudit.toml must be a number"),
        ("timeout = -1", "`timeout` in .*refaudit.toml must be a positive number of seconds"),
        ("max_retries = 2.5", "`max_retries` in .*must be an integer"),
        ('offline = "yes"', "`offline` in .*refaudit.toml must be true or false, not 'yes'"),
        ('fail_on = ["sometimes"]', "`fail_on` in .*refaudit.toml: 'sometimes' is not a fail-on"),
        ('fail_on = "error"', "`fail_on` in .*refaudit.toml must be a list of words such as"),
        ("colour = true", "refaudit.toml: unknown setting `colour`"),
        ("timout = 3", r"unknown setting `timout` \(did you mean `timeout`\?\)"),
        ("[ttl_days]\nforever = 3", "`ttl_days.forever` in .*refaudit.toml: unknown cache band"),
        ('[retraction_policy]\nretraction = "panic"', "`retraction_policy.retraction` in .*toml"),
        ('[sources.google]\nurl = "x"', "unknown source 'google'"),
        ('[[ignore]]\nreason = "no key"', "needs a key or a doi"),
        ("require_verified = 2", "`require_verified` in .*refaudit.toml must be a fraction"),
        ("processes = 0", "`processes` in .*refaudit.toml must be 1 or more"),
        ('processes = "two"', "`processes` in .*refaudit.toml must be an integer"),
        (
            "[sources.crossref]\nrate_limit = 0",
            "`sources.crossref.rate_limit` in .*refaudit.toml must be a positive",
        ),
    ],
)
def test_bad_settings_raise_config_errors_naming_the_setting(
    tmp_path: Path, text: str, message: str
) -> None:
    write(tmp_path, text)
    with pytest.raises(ConfigError, match=message):
        load_settings(env={})


def test_processes_from_the_file_caps_a_mirror_only_audits_workers(tmp_path: Path) -> None:
    from refaudit.mirror.parallel import PARALLEL_MIN_REFERENCES, worker_count

    write(tmp_path, 'processes = 1\n[sources]\nenabled = ["mirror"]\n')
    settings = load_settings(env={})
    assert settings.processes == 1
    assert worker_count(PARALLEL_MIN_REFERENCES, settings) == 1


def test_origins_say_where_each_value_comes_from(tmp_path: Path) -> None:
    write(tmp_path, CONFIG)
    origins = setting_origins(env={"REFAUDIT_TIMEOUT": "3"})
    assert origins["timeout"] == "env"
    assert origins["mailto"].startswith("file (") and "refaudit.toml" in origins["mailto"]
    assert origins["max_retries"] == "default"


def test_config_show_masks_secrets_and_names_origins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, CONFIG)
    monkeypatch.setenv("S2_API_KEY", "s2-secret-key-123456")
    result = CliRunner().invoke(app, ["config", "show", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "s2-secret-key-123456" not in result.output
    data = json.loads(result.output)
    assert data["settings"]["api_keys"]["semanticscholar"] == "********"
    assert data["origins"]["api_keys"] == "env"
    assert data["settings"]["mailto"] == "file@example.org"
    table = CliRunner().invoke(app, ["config", "show"])
    assert table.exit_code == 0 and "s2-secret-key-123456" not in table.output


def test_a_broken_config_file_is_exit_2_with_a_clear_message(tmp_path: Path) -> None:
    write(tmp_path, "timeout = [", "broken.toml")
    result = CliRunner().invoke(app, ["config", "show", "--config", "broken.toml"])
    assert result.exit_code == 2
    assert "broken.toml: cannot read configuration" in result.output
    missing = CliRunner().invoke(app, ["check", "x.bib", "--config", "nope.toml"])
    assert missing.exit_code == 2 and "nope.toml" in missing.output
