"""Every recorded S2, arXiv and dblp response in ../shared/upstream-samples maps to a sane Work.

These are real answers from the services (see upstream-samples/SOURCES.md), read at
test time and never copied. PubMed is absent on purpose: the samples hold only XML
E-utilities replies, and refaudit reads esummary JSON (its shape is pinned by the
hand-written fixtures in tests/fixtures/pubmed instead).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from refaudit.models import Work
from refaudit.sources import arxiv, dblp, semanticscholar
from refaudit.sources.response import Fetched
from tests.conftest import shared_path

pytestmark = pytest.mark.shared

S2_PAPER_ID = re.compile(r"[0-9a-f]{40}")
S2_PAPER_ROUTES = re.compile(
    r"/graph/v1/paper/(batch|search|search/match|[^/]+/(references|citations)|[^/?]+)\?"
)


def assert_sane(work: Work) -> None:
    """What every mapped record must satisfy, whatever the source."""
    assert work.title is None or (work.title.strip() == work.title and "<" not in work.title)
    assert work.year is None or 1500 <= work.year <= 2100
    assert work.doi is None or (work.doi == work.doi.lower() and work.doi.startswith("10."))
    for person in work.authors:
        assert person.family and person.family == person.family.strip()
        assert not re.search(r"\s\d{4}$", person.display())


def s2_papers_in(body: Any, uri: str) -> Iterator[dict[str, Any]]:
    """Paper objects in one recorded S2 answer, whatever the endpoint."""
    if isinstance(body, list):
        yield from (item for item in body if item is not None)
    elif isinstance(body, dict) and "data" in body:
        for item in body["data"]:
            nested = item.get("citedPaper") or item.get("citingPaper")
            yield nested if ("/references" in uri or "/citations" in uri) else item
    elif isinstance(body, dict) and "paperId" in body:
        yield body


def recorded_response(response: dict[str, Any]) -> tuple[int, str]:
    """VCR cassettes come in two layouts (vcrpy's and the httpx recorder's)."""
    if "status" in response:
        return response["status"]["code"], response["body"]["string"]
    return response["status_code"], response["content"]


def s2_cassette_papers() -> Iterator[tuple[str, dict[str, Any]]]:
    yaml = pytest.importorskip("yaml")
    folder = shared_path("upstream-samples", "semanticscholar", "danielnsilva-semanticscholar")
    for path in sorted(folder.glob("*.yaml")):
        for interaction in yaml.safe_load(path.read_text())["interactions"]:
            uri = interaction["request"]["uri"]
            status, text = recorded_response(interaction["response"])
            if status != 200 or not S2_PAPER_ROUTES.search(uri):
                continue
            if "/search/bulk" in uri or "/authors" in uri:
                continue
            body = json.loads(text)
            for paper in s2_papers_in(body, uri):
                if paper is not None:
                    yield f"{path.name}: {uri}", paper


def test_every_recorded_s2_paper_maps_to_a_sane_work() -> None:
    seen = 0
    for where, paper in s2_cassette_papers():
        work = semanticscholar.to_work(paper)
        assert_sane(work)
        assert work.s2_id is None or S2_PAPER_ID.fullmatch(work.s2_id), where
        external = paper.get("externalIds") or {}
        if external.get("DOI"):
            assert work.doi == external["DOI"].lower(), where
        if paper.get("authors"):
            assert len(work.authors) == len([a for a in paper["authors"] if a.get("name")])
        seen += 1
    assert seen > 100


def test_recorded_s2_fixture_objects_and_refchecker_cache_map() -> None:
    folder = shared_path("upstream-samples", "semanticscholar")
    papers: list[dict[str, Any]] = []
    for name in ("Paper.json", "PaperWithNullValues.json"):
        papers.append(json.loads((folder / "danielnsilva-semanticscholar" / name).read_text()))
    for line in (folder / "refchecker_api_cache_semantic_scholar.jsonl").read_text().splitlines():
        response = json.loads(line)["response"]
        items = response if isinstance(response, list) else [response]
        papers.extend(item for item in items if isinstance(item, dict) and "paperId" in item)
    works = [semanticscholar.to_work(paper) for paper in papers]
    for work in works:
        assert_sane(work)
    turing = works[0]
    assert turing.title == "Computing Machinery and Intelligence"
    assert (turing.year, turing.doi, turing.dblp_key) == (
        1950,
        "10.1093/mind/lix.236.433",
        "journals/x/Turing50",
    )
    assert works[1].authors == [] and works[1].title is None
    assert len(works) > 200


def arxiv_fixtures() -> list[Path]:
    folder = shared_path("upstream-samples", "arxiv", "arxiv.py-fixtures")
    return sorted(folder.glob("*.json"))


def test_every_recorded_arxiv_feed_parses_and_maps() -> None:
    entries_seen = 0
    for path in arxiv_fixtures():
        recorded = json.loads(path.read_text())
        fetched = Fetched(recorded["status_code"], recorded["body"], recorded["url"])
        entries, rejected = arxiv.parse_feed(fetched)
        if recorded["status_code"] == 400:
            assert rejected == "abc", path.name
            continue
        for entry in entries:
            work = arxiv.to_work(entry)
            assert_sane(work)
            assert work.arxiv_id and work.arxiv_version and work.primary_category, path.name
            assert work.doi == f"10.48550/arxiv.{work.arxiv_id}".lower()
            assert (work.type, work.venue) == ("preprint", "arXiv")
            assert "\n" not in (work.title or "")
            entries_seen += 1
    assert entries_seen > 50


def test_recorded_arxiv_id_lookups_name_the_asked_id() -> None:
    by_name = {p.name: p for p in arxiv_fixtures()}
    recorded = json.loads(by_name["id_astro-ph_0601001_s0_m100_3150dca9dc76.json"].read_text())
    entries, _ = arxiv.parse_feed(Fetched(200, recorded["body"], recorded["url"]))
    work = arxiv.to_work(entries[0])

    assert (work.arxiv_id, work.arxiv_version) == ("astro-ph/0601001", 1)
    assert work.journal_ref == "ActaAstron.56:1-50,2006"
    assert [a.family for a in work.authors] == ["Gould", "Dorsher", "Gaudi", "Udalski"]
    assert work.date == "2006-01-02"


def test_every_recorded_dblp_hit_maps_to_a_sane_work() -> None:
    path = shared_path("upstream-samples", "dblp", "refchecker_api_cache_dblp.jsonl")
    hits = [
        hit
        for line in path.read_text().splitlines()
        for hit in (json.loads(line)["response"] or [])
    ]
    for hit in hits:
        work = dblp.to_work(hit)
        assert_sane(work)
        info = hit["info"]
        assert work.dblp_key == info["key"]
        assert work.year == int(info["year"])
        assert work.title and not work.title.endswith(".")
        authors = (info.get("authors") or {}).get("author")
        expected = 0 if authors is None else len(authors) if isinstance(authors, list) else 1
        assert len(work.authors) == expected
        if info.get("doi"):
            assert work.doi == info["doi"].lower()
    assert len(hits) > 500
