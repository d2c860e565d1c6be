"""`refaudit search | bibtex | show` through the CLI runner, against the fake upstreams."""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import refaudit.discovery.opening
from refaudit.cli import app
from refaudit.config import Settings
from refaudit.models import RunStats
from refaudit.sources import Sources, open_sources
from tests.test_discovery import DEEP_DOI, GAN_S2, SOURCES, World, unthrottled, world

__all__ = ["unthrottled"]  # the autouse fixture, shared with the library tests

runner = CliRunner()


@pytest.fixture
def upstreams(monkeypatch: pytest.MonkeyPatch) -> World:
    """Route every source the commands open to a fresh fake world, without retries."""
    fake_world = world()
    monkeypatch.setenv("REFAUDIT_SOURCES", ",".join(SOURCES))

    def fake_open(
        settings: Settings,
        transport: httpx.AsyncBaseTransport | None,
        names: list[str] | None = None,
        stats: RunStats | None = None,
    ) -> AbstractAsyncContextManager[Sources]:
        settings.max_retries = 0
        return open_sources(
            settings, stats or RunStats(), transport=fake_world.transport(), names=names
        )

    monkeypatch.setattr(refaudit.discovery.opening, "open_discovery_sources", fake_open)
    return fake_world


def test_search_table_shows_one_row_per_merged_work(upstreams: World) -> None:
    result = runner.invoke(app, ["search", "deep learning"], env={"COLUMNS": "200"})

    assert result.exit_code == 0, result.output
    assert "Deep Learning for Tests" in result.stdout
    assert "LeCun & Bengio" in result.stdout
    assert "crossref, openalex, semanticscholar" in result.stdout
    assert result.stdout.count("Deep Learning for Tests") == 1


def test_search_json_lists_works_with_their_sources(upstreams: World) -> None:
    result = runner.invoke(app, ["search", "deep learning", "--format", "json", "--bibtex"])

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["query"] == "deep learning"
    assert data["status"] == "ok"
    assert data["works"][0]["doi"] == DEEP_DOI
    assert data["works"][0]["found_in"] == ["crossref", "openalex", "semanticscholar"]
    assert data["sources"]["crossref"] == {"state": "answered", "reason": None, "why": None}
    assert data["bibtex"][0]["key"] == "lecun2015deep"


def test_search_with_every_source_down_exits_3(upstreams: World) -> None:
    for name in SOURCES:
        upstreams.fake.fail(name, "503", times=5)
    result = runner.invoke(app, ["search", "deep learning"])

    assert result.exit_code == 3
    assert "no source could answer" in result.stderr
    assert "no works found" not in result.stdout


def test_a_source_the_query_gives_nothing_to_search_by_is_no_answer(
    upstreams: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PubMed is searched by title words; a search's free text has none, so PubMed is not
    # asked, and with every other source down nothing answered at all.
    monkeypatch.setenv("REFAUDIT_SOURCES", ",".join([*SOURCES, "pubmed"]))
    for name in SOURCES:
        upstreams.fake.fail(name, "503", times=5)
    result = runner.invoke(app, ["search", "deep learning", "--format", "json"])

    assert result.exit_code == 3
    data = json.loads(result.stdout)
    assert data["status"] == "unverified"
    assert data["sources"]["pubmed"]["state"] == "not_asked"
    assert data["sources"]["pubmed"]["why"] == "no_query"


def test_bibtex_prints_entries_with_refaudit_keys(upstreams: World) -> None:
    result = runner.invoke(app, ["bibtex", DEEP_DOI, GAN_S2])

    assert result.exit_code == 0, result.output
    assert "@article{lecun2015deep," in result.stdout
    assert "@article{goodfellow2014generative," in result.stdout


def test_bibtex_exit_codes_not_found_1_invalid_2(upstreams: World) -> None:
    assert runner.invoke(app, ["bibtex", DEEP_DOI, "10.9999/missing"]).exit_code == 1
    assert runner.invoke(app, ["bibtex", "doi:"]).exit_code == 2
    assert runner.invoke(app, ["bibtex"]).exit_code == 2


def test_bibtex_during_an_outage_exits_3_and_never_says_not_found(upstreams: World) -> None:
    for name in SOURCES:
        upstreams.fake.fail(name, "drop", times=20)
    outage = runner.invoke(app, ["bibtex", DEEP_DOI])
    assert outage.exit_code == 3
    assert "unverified" in outage.stderr and "not_found" not in outage.stderr


def test_bibtex_reads_identifiers_from_a_file(upstreams: World, tmp_path: Path) -> None:
    listing = tmp_path / "ids.txt"
    listing.write_text(f"# my reading list\n{DEEP_DOI}\n\n{GAN_S2}\n", encoding="utf-8")
    result = runner.invoke(app, ["bibtex", "--from", str(listing)])

    assert result.exit_code == 0, result.output
    assert result.stdout.count("@article{") == 2


def test_bibtex_appends_to_a_bib_file_and_never_a_second_copy(
    upstreams: World, tmp_path: Path
) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{keep, title = {Kept}}\n", encoding="utf-8")

    first = runner.invoke(app, ["bibtex", DEEP_DOI, "-o", str(bib)])
    assert first.exit_code == 0, first.output
    assert first.stdout == ""
    assert "appended 1 entries" in first.stderr
    once = bib.read_text(encoding="utf-8")
    assert once.startswith("@article{keep, title = {Kept}}\n\n@article{lecun2015deep,\n")

    for extra in ([], ["--rename"]):
        again = runner.invoke(app, ["bibtex", DEEP_DOI, "-o", str(bib), *extra])
        assert again.exit_code == 0, again.output
        assert "appended 0 entries" in again.stderr
        assert "already in" in again.stderr and "as lecun2015deep" in again.stderr
        assert bib.read_text(encoding="utf-8") == once


def test_bibtex_of_a_retracted_work_is_an_error_and_never_appended(
    upstreams: World, tmp_path: Path
) -> None:
    from tests.test_discovery import crossref_update, deep_crossref

    upstreams.crossref = [deep_crossref(updated_by=[crossref_update("retraction", "10.1000/ret")])]
    bib = tmp_path / "refs.bib"
    result = runner.invoke(app, ["bibtex", DEEP_DOI, "-o", str(bib)])
    assert result.exit_code == 1
    assert f"error: {DEEP_DOI} is retracted; not written" in result.stderr
    assert not bib.exists() or "lecun" not in bib.read_text(encoding="utf-8")


def test_bibtex_of_a_retracted_work_is_written_on_request_with_a_note_naming_the_notice(
    upstreams: World, tmp_path: Path
) -> None:
    from tests.test_discovery import crossref_update, deep_crossref

    notice = crossref_update("retraction", "10.1000/ret_2016", date=(2016, 3, 4))
    upstreams.crossref = [deep_crossref(updated_by=[notice])]
    bib = tmp_path / "refs.bib"

    printed = runner.invoke(app, ["bibtex", DEEP_DOI, "--allow-retracted"])
    appended = runner.invoke(app, ["bibtex", DEEP_DOI, "--allow-retracted", "-o", str(bib)])

    assert printed.exit_code == 0, printed.output
    note = r"note = {Retraction notice, 2016-03-04, doi:10.1000/ret\_2016},"
    assert "@article{lecun2015deep," in printed.stdout and note in printed.stdout
    assert f"warning: {DEEP_DOI} is retracted; written with a note" in printed.stderr
    assert appended.exit_code == 0, appended.output
    assert note in bib.read_text(encoding="utf-8")
    assert "is retracted" in appended.stderr


def test_search_bibtex_leaves_out_a_retracted_hit_and_says_why(upstreams: World) -> None:
    from tests.test_discovery import crossref_update, deep_crossref

    notice = crossref_update("retraction", "10.1000/ret_2016", date=(2016, 3, 4))
    upstreams.crossref = [deep_crossref(updated_by=[notice])]

    table = runner.invoke(app, ["search", "deep learning", "--bibtex"], env={"COLUMNS": "200"})
    listed = runner.invoke(app, ["search", "deep learning", "--bibtex", "--format", "json"])

    assert table.exit_code == 0, table.output
    assert "@article{lecun2015deep" not in table.stdout
    assert f"warning: {DEEP_DOI} is retracted; its BibTeX is not printed" in table.stderr
    assert "Retraction notice, 2016-03-04" in table.stderr
    [entry] = json.loads(listed.stdout)["bibtex"]
    assert entry["status"] == "retracted"
    assert "note = {Retraction notice, 2016-03-04" in entry["bibtex"]


def test_show_json_has_merged_record_provenance_and_citations(upstreams: World) -> None:
    from tests.test_discovery import s2_paper

    upstreams.citations = [s2_paper("9" * 40, "A Follow-up", citations=12)]
    result = runner.invoke(app, ["show", DEEP_DOI, "--citations", "--format", "json"])

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "ok"
    assert data["work"]["title"] == "Deep Learning for Tests"
    assert set(data["records"]) == {"crossref", "openalex", "semanticscholar"}
    year = next(f for f in data["fields"] if f["field"] == "year")
    assert year == {
        "field": "year",
        "value": "2015",
        "source": "crossref",
        "others": {"openalex": "2014"},
    }
    assert [w["title"] for w in data["citations"]] == ["A Follow-up"]


def test_show_table_and_not_found_exit_code(upstreams: World) -> None:
    shown = runner.invoke(app, ["show", DEEP_DOI], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "openalex: 2014" in shown.stdout

    missing = runner.invoke(app, ["show", "10.9999/missing"])
    assert missing.exit_code == 1
    assert "not_found" in missing.stderr
