"""`refaudit mirror` and the mirror source, on small bulk files in the public layouts."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refaudit.audit import audit_paths
from refaudit.cli import app
from refaudit.config import load_settings
from refaudit.errors import MirrorError
from refaudit.mirror import open_store
from refaudit.mirror.build import build_mirror
from refaudit.mirror.store import Candidate, CandidateSearch
from refaudit.mirror.update import UpdateReport
from refaudit.models import NoticeKind, Verdict
from tests.fakes import FakeUpstreams, crossref_list, crossref_work
from tests.mirror_dumps import (
    BIBLIOGRAPHY,
    RESNET_DOI,
    RESNET_TITLE,
    build_test_mirror,
    write_dumps,
)

runner = CliRunner()


@pytest.fixture
def dumps(tmp_path: Path) -> dict[str, Path]:
    return write_dumps(tmp_path / "input")


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    return Path(build_test_mirror(tmp_path))


@pytest.fixture
def bib(tmp_path: Path) -> Path:
    path = tmp_path / "refs.bib"
    path.write_text(BIBLIOGRAPHY, encoding="utf-8")
    return path


def _audit(bib: Path, transport: FakeUpstreams, **overrides: object):  # type: ignore[no-untyped-def]
    settings = load_settings(overrides=overrides)
    return asyncio.run(audit_paths([bib], settings, transport=transport.transport()))


def test_build_reports_malformed_lines_with_file_and_line(tmp_path: Path, dumps: dict) -> None:
    location = tmp_path / "built.sqlite3"
    result = runner.invoke(
        app,
        [
            "mirror", "build", "--db", str(location),
            "--crossref", str(dumps["crossref"]),
            "--openalex", str(dumps["openalex"]),
            "--s2", str(dumps["s2"]),
            "--retractions", str(dumps["retractions"]),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    part = dumps["crossref"] / "0000.jsonl.gz"
    assert f"skipped {part}:3: not JSON" in result.output
    assert f"skipped {part}:6: not a crossref record: work without a DOI" in result.output
    s2_part = dumps["s2"] / "papers" / "part_000.jsonl.gz"
    assert f"skipped {s2_part}:3: not a semanticscholar record" in result.output
    assert "10 crossref, 3 openalex, 2 semanticscholar" in result.output
    assert "(3 line(s) skipped)" in result.output

    status = runner.invoke(app, ["mirror", "status", "--db", str(location), "--format", "json"])
    info = json.loads(status.output)
    assert info["records"] == {
        "crossref": 10,
        "openalex": 3,
        "semanticscholar": 2,
        "retraction_watch": 8,
    }
    assert info["newest"]["openalex"] == "2026-11-01"
    assert info["backend"] == "sqlite" and info["size_bytes"] > 0


def test_the_newest_partition_wins_and_lookups_use_every_identifier(mirror: Path) -> None:
    from refaudit.sources.mirror import MirrorSource

    store = open_store(str(mirror))
    sources = MirrorSource(store).as_sources()
    openalex = sources.get("openalex")
    assert openalex is not None
    by_doi = asyncio.run(openalex.lookup_dois([RESNET_DOI.upper()]))
    assert by_doi[RESNET_DOI].title == RESNET_TITLE
    assert asyncio.run(openalex.lookup_arxiv(["1706.03762"]))["1706.03762"].openalex_id == "W2"
    assert asyncio.run(openalex.lookup_pmids(["9500320"]))["9500320"].is_retracted is True
    crossref = asyncio.run(sources.get("crossref").lookup_dois([RESNET_DOI]))  # type: ignore[union-attr]
    assert crossref[RESNET_DOI].source == "crossref" and crossref[RESNET_DOI].pages == "770-778"
    store.close()


def test_fuzzy_search_finds_a_title_whose_every_word_is_misspelt(mirror: Path) -> None:
    from refaudit.sources.base import SearchQuery
    from refaudit.sources.mirror import MirrorSource

    store = open_store(str(mirror))
    crossref = MirrorSource(store).as_sources().get("crossref")
    assert crossref is not None
    hits = asyncio.run(crossref.search(SearchQuery(title="Residaul Lerning Recogntion", limit=3)))
    assert hits and hits[0].doi == RESNET_DOI
    store.close()


def test_the_typo_pass_runs_only_for_a_word_that_is_in_no_title(mirror: Path) -> None:
    from refaudit.sources.base import SearchQuery
    from refaudit.sources.mirror import MirrorSource

    store = open_store(str(mirror))
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)  # type: ignore[attr-defined]
    assert store.unknown_title_words("crossref", ["residual", "recogntion", "image"]) == [
        "recogntion"
    ]
    assert store.unknown_title_words("crossref", ["lerning"]) == ["lerning"]
    # The vocabulary table is set up on the connection's first question only.
    assert sum("CREATE VIRTUAL TABLE" in sql for sql in statements) == 1
    store._db.set_trace_callback(None)  # type: ignore[attr-defined]
    modes: list[str] = []
    candidates = store.candidates

    def counted(upstream: str, search: CandidateSearch) -> list[Candidate]:
        modes.append(search.mode)
        return candidates(upstream, search)

    store.candidates = counted  # type: ignore[method-assign]
    crossref = MirrorSource(store).as_sources().get("crossref")
    assert crossref is not None
    # Real words, no title close to them: "all" and "any" searched every word already.
    invented = SearchQuery(title="Molecular learning of residual communication networks")
    assert asyncio.run(crossref.search(invented)) != [] and modes == ["all", "any"]
    modes.clear()
    typo = SearchQuery(title="Residaul Lerning Recogntion", limit=1)
    assert asyncio.run(crossref.search(typo))[0].doi == RESNET_DOI
    assert modes == ["all", "any", "similar"]
    store.close()


def test_sources_mirror_audits_without_any_request(mirror: Path, bib: Path) -> None:
    upstreams = FakeUpstreams()  # no routes: any request fails the test
    report = _audit(bib, upstreams, sources=["mirror"], mirror=str(mirror))
    verdicts = {r.reference.key: r for r in report.results}

    assert verdicts["he2016"].verdict == Verdict.VERIFIED
    typo = verdicts["he2016typo"]
    assert typo.matched is not None and typo.matched.doi == RESNET_DOI
    assert any(f.code == "title-typo" for f in typo.findings)
    assert verdicts["vaswani2017"].matched.openalex_id == "W2"  # type: ignore[union-attr]
    assert verdicts["invented2021"].verdict == Verdict.NOT_FOUND
    assert "mirror" in verdicts["invented2021"].reason  # type: ignore[operator]

    wakefield = verdicts["wakefield1998"]
    kinds = {n.kind for n in wakefield.integrity}
    assert NoticeKind.RETRACTION in kinds
    assert any(n.record_id == "4036" for n in wakefield.integrity)  # the Retraction Watch row
    assert wakefield.flagged

    assert set(verdicts["he2016"].sources) == {"mirror"}
    assert report.mirror is not None and report.mirror.records["crossref"] == 10
    assert report.retraction_snapshot.rows == 8  # type: ignore[union-attr]
    assert upstreams.count("crossref") == 0


SLOT_MACHINES = r"""
@inproceedings{aladago2021,
  title = {Slot Machines: Discovering Winning Combinations of Random Weights in Neural Networks},
  author = {Aladago, Maxwell Mbabilla and Torresani, Lorenzo},
  booktitle = {ICML}, year = {2021}
}
"""


def test_a_paper_only_semantic_scholar_holds_is_found_in_its_datasets_release(
    tmp_path: Path, dumps: dict[str, Path]
) -> None:
    bib = tmp_path / "slots.bib"
    bib.write_text(BIBLIOGRAPHY + SLOT_MACHINES, encoding="utf-8")
    inputs = {"crossref": [dumps["crossref"]], "openalex": [dumps["openalex"]]}
    without = str(tmp_path / "without.sqlite3")
    build_mirror(without, inputs=inputs, retractions=dumps["retractions"])
    with_s2 = str(tmp_path / "with-s2.sqlite3")
    build_mirror(
        with_s2,
        inputs=inputs | {"semanticscholar": [dumps["s2"]]},
        retractions=dumps["retractions"],
    )

    def verdicts(location: str) -> dict[str, Verdict]:
        report = _audit(bib, FakeUpstreams(), sources=["mirror"], mirror=location)
        return {r.reference.key: r.verdict for r in report.results}

    before, after = verdicts(without), verdicts(with_s2)
    assert before["aladago2021"] == Verdict.NOT_FOUND  # in neither Crossref nor OpenAlex
    assert after["aladago2021"] == Verdict.VERIFIED
    assert {k: v for k, v in after.items() if k != "aladago2021"} == {
        k: v for k, v in before.items() if k != "aladago2021"
    }
    # `mirror update` has no Semantic Scholar feed: a new Datasets release is built instead.
    from refaudit.mirror.update import PARTS

    assert "semanticscholar" not in PARTS


def test_a_mirror_built_before_semantic_scholar_was_mirrored_still_answers(
    mirror: Path, bib: Path
) -> None:
    import sqlite3

    with sqlite3.connect(mirror) as db:  # the layout of a mirror built by an older refaudit
        db.executescript("DROP TABLE semanticscholar_fts; DROP TABLE semanticscholar;")
    report = _audit(bib, FakeUpstreams(), sources=["mirror"], mirror=str(mirror))
    verdicts = {r.reference.key: r.verdict for r in report.results}
    assert verdicts["he2016"] == Verdict.VERIFIED
    assert verdicts["invented2021"] == Verdict.NOT_FOUND
    assert report.mirror is not None and report.mirror.records["semanticscholar"] == 0


def test_only_what_the_mirror_cannot_settle_goes_to_the_live_sources(
    mirror: Path, tmp_path: Path
) -> None:
    bib = tmp_path / "two.bib"
    bib.write_text(
        "@inproceedings{he2016, title={Deep Residual Learning for Image Recognition},"
        " author={He, Kaiming and Zhang, Xiangyu and Ren, Shaoqing and Sun, Jian}, year={2016},"
        " doi={10.1109/CVPR.2016.90}}\n"
        "@article{fresh, title={A paper registered after the mirror was built},"
        " author={Lovelace, Ada}, year={2026}, doi={10.5555/fresh.1}}\n"
    )
    upstreams = FakeUpstreams()
    fresh = crossref_work(
        "10.5555/fresh.1", "A paper registered after the mirror was built", year=2026
    )
    upstreams.json("crossref", r"/works", crossref_list([fresh]))
    upstreams.json("openalex", r"/works", {"meta": {"count": 0}, "results": []})
    report = _audit(bib, upstreams, sources=["mirror", "crossref", "openalex"], mirror=str(mirror))
    he, new = report.results

    assert he.verdict == Verdict.VERIFIED and he.sources["mirror"].state == "answered"
    assert he.sources["crossref"].state == "not_asked"
    assert new.verdict == Verdict.VERIFIED and new.sources["crossref"].state == "answered"
    asked = [str(r.url) for r in upstreams.requests_to("crossref")]
    assert asked and all("cvpr" not in url.lower() for url in asked)


def test_check_names_the_mirror_and_its_age(mirror: Path, bib: Path) -> None:
    result = runner.invoke(app, ["check", str(bib), "--sources", "mirror", "--mirror", str(mirror)])
    assert result.exit_code == 1  # the invented and the retracted reference
    assert f"mirror: {mirror} (sqlite, data of " in result.output
    assert "sources: mirror · 0 requests" in result.output

    as_json = runner.invoke(
        app, ["check", str(bib), "--sources", "mirror", "--mirror", str(mirror), "-f", "json"]
    )
    data = json.loads(as_json.stdout)
    assert data["mirror"]["backend"] == "sqlite"
    assert data["mirror"]["records"]["openalex"] == 3


def test_bare_mirror_flag_and_environment_use_the_default_file(
    tmp_path: Path, dumps: dict, bib: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = runner.invoke(app, ["mirror", "build", "--crossref", str(dumps["crossref"])])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "data" / "mirror.sqlite3").is_file()
    bare = runner.invoke(app, ["check", "--mirror", str(bib), "--sources", "mirror", "-q"])
    assert bare.exit_code == 1 and "Traceback" not in bare.output
    monkeypatch.setenv("REFAUDIT_MIRROR", str(tmp_path / "elsewhere.sqlite3"))
    missing = runner.invoke(app, ["check", str(bib), "--sources", "mirror"])
    assert missing.exit_code == 2
    assert "no mirror at" in missing.output and "refaudit mirror build" in missing.output


def test_an_interrupted_build_leaves_the_previous_mirror_usable(
    mirror: Path, dumps: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    from refaudit.mirror import sqlite

    def interrupted(self: object, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sqlite.SqliteBuilder, "finish", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_mirror(str(mirror), inputs={"crossref": [dumps["crossref"]]})
    store = open_store(str(mirror))
    assert store.info().records["openalex"] == 3
    store.close()
    assert [p.name for p in mirror.parent.iterdir() if ".building-" in p.name] == []


def test_build_refuses_nothing_and_missing_inputs(tmp_path: Path) -> None:
    with pytest.raises(MirrorError, match="nothing to build from"):
        build_mirror(str(tmp_path / "m.sqlite3"))
    result = runner.invoke(app, ["mirror", "build", "--crossref", str(tmp_path / "absent")])
    assert result.exit_code == 2 and "no such file or folder" in result.output
    status = runner.invoke(app, ["mirror", "status", "--db", str(tmp_path / "m.sqlite3")])
    assert status.exit_code == 2 and "no mirror at" in status.output


def test_update_takes_a_day_for_since_and_refuses_anything_else(
    mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[object] = []

    async def fake_update(store: object, settings: object, **options: object) -> UpdateReport:
        asked.append(options["since"])
        return UpdateReport()

    monkeypatch.setattr("refaudit.mirror.update.update_mirror", fake_update)
    refused = runner.invoke(app, ["mirror", "update", "--db", str(mirror), "--since", "yesterday"])
    assert refused.exit_code == 2
    assert "'yesterday' does not match" in refused.output and "--since" in refused.output
    assert asked == []

    given = runner.invoke(app, ["mirror", "update", "--db", str(mirror), "--since", "2026-11-01"])
    assert given.exit_code == 0, given.output
    assert asked == ["2026-11-01"]


def test_mirror_help_shows_the_config_key_in_brackets() -> None:
    shown = runner.invoke(app, ["mirror", "status", "--help"], terminal_width=200).output
    assert "REFAUDIT_MIRROR / [mirror] url" in shown


def test_update_pages_through_changes_and_swaps_in_retraction_watch(mirror: Path) -> None:
    import httpx

    from refaudit.mirror.update import update_mirror
    from refaudit.sources.base import SearchQuery
    from refaudit.sources.mirror import MirrorSource
    from tests.fakes import FIXTURES, json_response, openalex_list, openalex_work

    upstreams = FakeUpstreams()
    added = crossref_work("10.5555/new.1", "Sparse mixtures of experts revisited", year=2026)
    upstreams.json("crossref", r"^/works$", crossref_list([added]))
    pages = {
        "*": [openalex_work("W1", "Deep Residual Learning for Image Recognition (renamed)")],
        "next": [],
    }

    def openalex_page(request: httpx.Request, _match: object) -> httpx.Response:
        cursor = request.url.params["cursor"]
        body = openalex_list(pages[cursor])
        body["meta"]["next_cursor"] = "next"
        return json_response(body)

    upstreams.route("openalex", r"^/works$", openalex_page)  # type: ignore[arg-type]
    csv_text = (FIXTURES / "retractionwatch" / "sample.csv").read_bytes()
    upstreams.route(
        "retractionwatch", r"^/?$", lambda _r, _m: httpx.Response(200, content=csv_text)
    )

    store = open_store(str(mirror), writable=True)
    settings = load_settings()
    report = asyncio.run(update_mirror(store, settings, transport=upstreams.transport()))
    assert not report.failed, report.lines()
    written = {name: part.written for name, part in report.parts.items()}
    assert written == {"crossref": 1, "openalex": 1, "retractions": 8}
    assert report.parts["openalex"].since == "2026-11-01"  # from the newest record held
    crossref_asked = upstreams.requests_to("crossref")[0].url.params
    assert (
        crossref_asked["filter"] == "from-index-date:2026-10-20" and crossref_asked["cursor"] == "*"
    )
    assert [r.url.params["cursor"] for r in upstreams.requests_to("openalex")] == ["*", "next"]

    info = store.info()
    assert info.records["crossref"] == 11 and info.records["openalex"] == 3
    assert info.updated_at is not None
    views = MirrorSource(store).as_sources()
    hits = asyncio.run(
        views.get("crossref").search(SearchQuery(title="Sparse mixtures of experts"))
    )  # type: ignore[union-attr]
    assert hits and hits[0].doi == "10.5555/new.1"
    renamed = asyncio.run(views.get("openalex").lookup_ids(["W1"]))  # type: ignore[union-attr]
    assert renamed["W1"].title.endswith("(renamed)")  # type: ignore[union-attr]
    store.close()
