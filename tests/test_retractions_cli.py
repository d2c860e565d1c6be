"""`refaudit retractions …` through the Typer runner: tables, JSON and exit codes.

The sub-app is invoked on its own so these tests do not depend on other command groups.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refaudit.cli.retractions import retractions_app
from refaudit.retractions import CREDIT

SAMPLE = Path(__file__).parent / "fixtures" / "retractionwatch" / "sample.csv"
WAKEFIELD = "10.1016/S0140-6736(97)11096-0"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def installed(runner: CliRunner) -> CliRunner:
    result = runner.invoke(retractions_app, ["update", "--url", str(SAMPLE)])
    assert result.exit_code == 0, result.output
    return runner


def run(runner: CliRunner, *args: str) -> tuple[int, str]:
    result = runner.invoke(retractions_app, list(args))
    return result.exit_code, result.output


def test_update_installs_a_csv_and_reports_repaired_rows(runner: CliRunner) -> None:
    code, output = run(runner, "update", "--url", str(SAMPLE))
    assert code == 0
    assert "Loaded 8 notices" in output and "1 rows had bytes" in output
    assert "(records 90003)" in output
    assert CREDIT in " ".join(output.split())


def test_update_json_and_a_bad_file_keeps_the_snapshot(runner: CliRunner, tmp_path: Path) -> None:
    code, output = run(runner, "update", "--url", str(SAMPLE), "--format", "json")
    report = json.loads(output)
    assert code == 0 and report["rows"] == 8 and report["credit"] == CREDIT
    assert report["repaired_records"] == ["90003"] and report["skipped"] == []
    bad = tmp_path / "bad.csv"
    bad.write_text("<html>login</html>\n", encoding="utf-8")
    code, output = run(runner, "update", "--url", str(bad))
    assert code == 2 and "not the Retraction Watch CSV" in output
    code, output = run(runner, "status", "--format", "json")
    assert code == 0 and json.loads(output)["rows"] == 8


def test_status_without_a_snapshot_explains_how_to_get_one(runner: CliRunner) -> None:
    code, output = run(runner, "status")
    assert code == 2 and "retractions update" in output


def test_status_table(installed: CliRunner) -> None:
    code, output = run(installed, "status")
    assert code == 0 and "newest notice" in output and "2024-11-19" in output


def test_check_offline_exits_1_on_a_retraction_and_shows_the_history(installed: CliRunner) -> None:
    code, output = run(installed, "check", "--offline", "--format", "json", WAKEFIELD)
    assert code == 1
    report = json.loads(output)
    (answer,) = report["results"]
    assert report["credit"] == CREDIT
    assert answer["status"] == "retraction" and answer["withdrawn"] is True
    assert [n["date"] for n in answer["notices"]] == ["2004-03-06", "2010-02-06"]
    assert answer["snapshot_age_days"] == 0.0


def test_check_table_names_sources_age_and_credit(installed: CliRunner) -> None:
    code, output = run(installed, "check", "--offline", WAKEFIELD)
    flat = " ".join(output.split())
    assert code == 1
    assert "Snapshot age: 0 days" in flat and CREDIT in flat
    assert "retraction" in flat and "correction" in flat


def test_check_exits_3_when_nothing_could_be_checked(installed: CliRunner) -> None:
    code, output = run(installed, "check", "--offline", "10.5555/unknown-paper")
    assert code == 3 and "not a clean result" in " ".join(output.split())


def test_check_exits_0_for_an_expression_of_concern_only(
    installed: CliRunner, tmp_path: Path
) -> None:
    listing = tmp_path / "dois.txt"
    listing.write_text("see https://doi.org/10.1111/jnc.12345 for details\n", encoding="utf-8")
    code, output = run(installed, "check", "--offline", "--from", str(listing), "-f", "json")
    assert code == 0 and json.loads(output)["results"][0]["status"] == "reinstatement"


def test_check_bad_input_exits_2(installed: CliRunner) -> None:
    assert run(installed, "check")[0] == 2
    code, output = run(installed, "check", "--offline", "-f", "json", "nonsense", WAKEFIELD)
    assert code == 2 and json.loads(output)["results"][0]["status"] == "invalid"


def test_author_search_recent_and_record_in_json_and_table(installed: CliRunner) -> None:
    code, output = run(installed, "author", "Wakefield AJ", "-f", "json")
    listing = json.loads(output)
    assert code == 0 and {r["record_id"] for r in listing["records"]} == {"4036", "17269"}
    assert listing["credit"] == CREDIT
    code, output = run(installed, "author", "Wakefield AJ")
    assert code == 0 and "Notices for Wakefield AJ (2)" in output
    assert CREDIT in " ".join(output.split())

    code, output = run(
        installed, "search", "--journal", "Lancet", "--type", "retraction", "-f", "json"
    )
    assert code == 0 and [r["record_id"] for r in json.loads(output)["records"]] == ["4036"]
    code, output = run(installed, "search", "covid")
    assert code == 0 and "Matching notices (2)" in output
    assert run(installed, "search", "--since", "yesterday")[0] == 2
    assert run(installed, "search")[0] == 2
    code, output = run(installed, "search", "--type", "misconduct")
    assert code == 2 and "not a notice type" in output and "expression-of-concern" in output

    code, output = run(installed, "recent", "--limit", "2", "-f", "json")
    assert code == 0 and [r["notice_date"] for r in json.loads(output)["records"]] == [
        "2024-11-19",
        "2022-08-01",
    ]
    code, output = run(installed, "recent", "--limit", "1")
    assert code == 0 and "Recent notices (1)" in output
    assert run(installed, "recent", "--days", "3", "--limit", "2")[0] == 2

    code, output = run(installed, "record", "10.1056/NEJMc2021225", "-f", "json")
    notice = json.loads(output)
    assert code == 0 and notice["records"][0]["record_id"] == "23530"
    assert notice["credit"] == CREDIT
    code, output = run(installed, "record", "10.1056/NEJMc2021225")
    assert code == 0 and "Notice 10.1056/nejmc2021225" in output
