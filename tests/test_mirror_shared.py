"""A mirror built from the simulator's bulk export agrees with its live APIs, record for record.

Needs ../shared (skipped when absent): `export_dumps.py` writes the demo corpus in the
Crossref and OpenAlex bulk layouts with the same renderers that answer the simulated
APIs, so every record read from the mirror must equal the live answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from refaudit.config import load_settings
from refaudit.mirror import open_store
from refaudit.mirror.build import build_mirror
from refaudit.models import RunStats
from refaudit.sources import open_sources
from refaudit.sources.mirror import MirrorSource
from tests.conftest import shared_path

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def simulator() -> Iterator[str]:
    serve = shared_path("scholarsim", "serve.py")
    process = subprocess.Popen(
        [sys.executable, str(serve), "--corpus", "demo", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        assert "listening on" in line, line
        yield line.rsplit(" ", 1)[-1].strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def export(tmp_path: Path) -> Path:
    script = shared_path("scholarsim", "export_dumps.py")
    out = tmp_path / "demo"
    command = [sys.executable, str(script), "--corpus", "demo", "--out", str(out)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return out


def _ids(folder: Path, field: str) -> list[str]:
    values = []
    for part in sorted(folder.rglob("*.gz")):
        with gzip.open(part, "rt", encoding="utf-8") as lines:
            values += [json.loads(line)[field] for line in lines]
    return values


def _comparable(work: object) -> dict[str, object]:
    data = dataclasses.asdict(work)  # type: ignore[call-overload]
    data.pop("score")  # a list answer's relevance score, not part of the record
    return data


def test_every_record_in_the_mirror_equals_the_live_answer(
    export: Path, simulator: str, tmp_path: Path
) -> None:
    location = str(tmp_path / "demo.sqlite3")
    build_mirror(
        location,
        inputs={"crossref": [export / "crossref"], "openalex": [export / "openalex"]},
        retractions=export / "retraction_watch.csv",
    )
    dois = [doi.lower() for doi in _ids(export / "crossref", "DOI")]
    work_ids = [url.rsplit("/", 1)[-1] for url in _ids(export / "openalex", "id")]
    settings = load_settings(
        env={
            "REFAUDIT_CROSSREF_URL": f"{simulator}/crossref",
            "REFAUDIT_OPENALEX_URL": f"{simulator}/openalex",
            "REFAUDIT_CACHE_DIR": str(tmp_path / "c"),
        }
    )
    store = open_store(location)
    views = MirrorSource(store).as_sources()

    async def both() -> tuple[dict, dict, dict, dict]:
        async with open_sources(settings, RunStats(), names=["crossref", "openalex"]) as live:
            return (
                await live.get("crossref").lookup_dois(dois),  # type: ignore[union-attr]
                await views.get("crossref").lookup_dois(dois),  # type: ignore[union-attr]
                await live.get("openalex").lookup_ids(work_ids),  # type: ignore[union-attr]
                await views.get("openalex").lookup_ids(work_ids),  # type: ignore[union-attr]
            )

    live_crossref, mirror_crossref, live_openalex, mirror_openalex = asyncio.run(both())
    store.close()
    assert len(dois) == 28 and set(mirror_crossref) == set(live_crossref) == set(dois)
    for doi in dois:
        assert _comparable(mirror_crossref[doi]) == _comparable(live_crossref[doi]), doi
    assert len(work_ids) == 39 and set(mirror_openalex) == set(live_openalex)
    for work_id in work_ids:
        assert _comparable(mirror_openalex[work_id]) == _comparable(live_openalex[work_id])


def test_semantic_scholar_papers_in_the_mirror_equal_the_live_answers(
    simulator: str, tmp_path: Path
) -> None:
    """The Datasets `papers` release names the venue by id (its `publication-venues`
    release holds the names) and leaves abstracts to another release: the rest of
    every paper must equal the Graph API's."""
    script = Path(__file__).resolve().parents[1] / "bench" / "export_s2.py"
    out = tmp_path / "s2"
    command = [sys.executable, str(script), "--corpus", "demo", "--out", str(out)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    location = str(tmp_path / "demo-s2.sqlite3")
    build_mirror(location, inputs={"semanticscholar": [out]})
    dois = sorted(
        {ids["DOI"].lower() for ids in _ids(out, "externalids") if ids.get("DOI")},
    )
    settings = load_settings(
        env={
            "REFAUDIT_SEMANTICSCHOLAR_URL": f"{simulator}/s2",
            "REFAUDIT_CACHE_DIR": str(tmp_path / "c"),
        }
    )
    store = open_store(location)
    view = MirrorSource(store).as_sources().get("semanticscholar")

    async def both() -> tuple[dict, dict]:
        async with open_sources(settings, RunStats(), names=["semanticscholar"]) as live:
            return (
                await live.get("semanticscholar").lookup_dois(dois),  # type: ignore[union-attr]
                await view.lookup_dois(dois),  # type: ignore[union-attr]
            )

    live, mirrored = asyncio.run(both())
    store.close()
    assert len(dois) > 20 and set(mirrored) == set(live) == set(dois)
    elsewhere = ("venue", "venue_short", "venue_aliases", "abstract")
    for doi in dois:
        expected = {k: v for k, v in _comparable(live[doi]).items() if k not in elsewhere}
        found = {k: v for k, v in _comparable(mirrored[doi]).items() if k not in elsewhere}
        assert found == expected, doi
