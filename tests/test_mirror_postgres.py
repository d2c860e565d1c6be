"""The PostgreSQL mirror backend on a throwaway cluster (skipped where PostgreSQL is absent)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from refaudit.audit import audit_paths
from refaudit.cli import app
from refaudit.config import load_settings
from refaudit.mirror import open_store
from refaudit.mirror.build import build_mirror
from refaudit.models import NoticeKind, Verdict
from refaudit.sources.base import SearchQuery
from refaudit.sources.mirror import MirrorSource
from tests.fakes import FakeUpstreams
from tests.mirror_dumps import BIBLIOGRAPHY, RESNET_DOI, write_dumps
from tests.pg_cluster import throwaway_cluster, why_unavailable

pytestmark = pytest.mark.skipif(why_unavailable() is not None, reason=str(why_unavailable()))
runner = CliRunner()


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with throwaway_cluster() as url:
        yield url


@pytest.fixture
def dumps(tmp_path: Path) -> dict[str, Path]:
    return write_dumps(tmp_path / "dumps")


@pytest.fixture
def built(cluster: str, dumps: dict[str, Path]) -> str:
    build_mirror(
        cluster,
        inputs={"crossref": [dumps["crossref"]], "openalex": [dumps["openalex"]]},
        retractions=dumps["retractions"],
    )
    return cluster


def test_build_and_status_through_the_cli(cluster: str, dumps: dict[str, Path]) -> None:
    result = runner.invoke(
        app,
        ["mirror", "build", "--db", cluster, "--crossref", str(dumps["crossref"]),
         "--openalex", str(dumps["openalex"]), "--s2", str(dumps["s2"]),
         "--retractions", str(dumps["retractions"])],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert ":3: not JSON" in result.output
    assert "10 crossref, 3 openalex, 2 semanticscholar" in result.output
    status = runner.invoke(app, ["mirror", "status", "--db", cluster, "--format", "json"])
    info = json.loads(status.output)
    assert info["backend"] == "postgresql"
    assert info["records"] == {
        "crossref": 10,
        "openalex": 3,
        "semanticscholar": 2,
        "retraction_watch": 8,
    }
    assert info["size_bytes"] > 0


def test_trigram_search_finds_a_title_whose_every_word_is_misspelt(built: str) -> None:
    store = open_store(built)
    crossref = MirrorSource(store).as_sources().get("crossref")
    assert crossref is not None
    query = SearchQuery(title="Deep Residaul Lerning for Imaeg Recogntion", limit=3)
    hits = asyncio.run(crossref.search(query))
    assert hits and hits[0].doi == RESNET_DOI
    store.close()


def test_words_in_no_title_are_told_apart_by_the_index(built: str) -> None:
    store = open_store(built)
    words = ["residual", "recogntion", "image", "o'brien"]
    assert store.unknown_title_words("crossref", words) == ["recogntion", "o'brien"]
    assert store.unknown_title_words("crossref", ["''"]) == []
    store.close()


def test_sources_mirror_audits_from_postgres_without_network(built: str, tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(BIBLIOGRAPHY, encoding="utf-8")
    settings = load_settings(overrides={"sources": ["mirror"], "mirror": built})
    upstreams = FakeUpstreams()
    report = asyncio.run(audit_paths([bib], settings, transport=upstreams.transport()))
    verdicts = {r.reference.key: r for r in report.results}
    assert verdicts["he2016"].verdict == Verdict.VERIFIED
    assert verdicts["he2016typo"].matched.doi == RESNET_DOI  # type: ignore[union-attr]
    assert verdicts["invented2021"].verdict == Verdict.NOT_FOUND
    wakefield = verdicts["wakefield1998"]
    assert NoticeKind.RETRACTION in {n.kind for n in wakefield.integrity}
    assert any(n.record_id == "4036" for n in wakefield.integrity)
    assert report.mirror is not None and report.mirror.backend == "postgresql"


def test_an_interrupted_build_leaves_the_previous_mirror(
    built: str, dumps: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from refaudit.mirror import postgres

    def interrupted(self: object, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(postgres.PostgresBuilder, "finish", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_mirror(built, inputs={"crossref": [dumps["crossref"]]})
    store = open_store(built)
    assert store.info().records["openalex"] == 3
    store.close()
    import psycopg

    with psycopg.connect(built) as db:
        schemas = [r[0] for r in db.execute("SELECT nspname FROM pg_namespace")]
    assert [s for s in schemas if s.startswith("refaudit_mirror_")] == []


def test_an_unreachable_server_is_one_clear_line(tmp_path: Path) -> None:
    url = f"postgresql://postgres@/postgres?host={tmp_path}&connect_timeout=2"
    result = runner.invoke(app, ["mirror", "status", "--db", url])
    assert result.exit_code == 2
    assert "cannot connect to postgresql://postgres@/postgres" in result.output
    assert "Traceback" not in result.output


def test_upserts_replace_by_key_and_are_searchable_at_once(built: str) -> None:
    from refaudit.mirror.records import MirrorRecord
    from tests.fakes import crossref_work

    store = open_store(built)
    fresh = crossref_work("10.5555/new.1", "Sparse mixtures of experts revisited", year=2026)
    renamed = crossref_work(RESNET_DOI, "Deep residual learning, second edition", year=2016)
    written = store.upsert([MirrorRecord.from_json("crossref", w) for w in (fresh, renamed)])
    assert written == 2 and store.info().records["crossref"] == 11
    crossref = MirrorSource(store).as_sources().get("crossref")
    hits = asyncio.run(crossref.search(SearchQuery(title="Sparse mixtures of experts")))  # type: ignore[union-attr]
    assert hits and hits[0].doi == "10.5555/new.1"
    found = asyncio.run(crossref.lookup_dois([RESNET_DOI]))  # type: ignore[union-attr]
    assert found[RESNET_DOI].title == "Deep residual learning, second edition"
    store.close()
