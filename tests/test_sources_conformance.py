"""Every recorded real Crossref, OpenAlex and DataCite record maps to a sane Work.

Reads ../shared/upstream-samples at test time (skipped when absent): the
deduplicated work corpora, saved `message` objects, and the VCR cassettes'
response bodies (see SOURCES.md there). Nothing is copied into the repo.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import shared_path

from refaudit.identifiers import normalize_doi
from refaudit.models import Notice, NoticeKind, Person, Work
from refaudit.sources import crossref, datacite, openalex

SAMPLES = ("upstream-samples",)


def cassette_bodies(folder: Path, host: str) -> Iterator[tuple[str, Any]]:
    """(uri, parsed JSON body) of every successful recorded request to `host`."""
    yaml = pytest.importorskip("yaml")
    for path in sorted(folder.rglob("*.yaml")) + sorted(folder.rglob("*.yml")):
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        recorded = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}
        for interaction in recorded.get("interactions") or recorded.get("http_interactions") or []:
            request, response = interaction.get("request", {}), interaction.get("response", {})
            uri = request.get("uri", "")
            status = response.get("status", {})
            code = status.get("code") if isinstance(status, dict) else status
            body = (response.get("body") or {}).get("string")
            if host not in uri or code != 200 or not isinstance(body, str):
                continue
            try:
                yield uri, json.loads(body)
            except ValueError:
                continue


def jsonl_works(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            record = json.loads(line)
            yield record.get("work", record)


def assert_sane(work: Work, raw_title: Any) -> None:
    if work.doi is not None:
        assert work.doi == normalize_doi(work.doi), work.doi
    if _has_text(raw_title):
        assert work.title, f"{work.doi or work.source_id}: title lost"
        assert "<" not in work.title or ">" not in work.title, work.title
    assert work.year is None or (isinstance(work.year, int) and 1000 < work.year < 2100)
    if work.date:
        assert work.date[:4].isdigit() and (work.year is None or int(work.date[:4]) == work.year)
    for person in work.authors:
        assert isinstance(person, Person)
        assert isinstance(person.family, str) and isinstance(person.given, str)
        assert person.orcid is None or len(person.orcid) == 19
    for notice in work.notices:
        assert isinstance(notice, Notice) and isinstance(notice.kind, NoticeKind)
    assert work.citation_count is None or isinstance(work.citation_count, int)


def _has_text(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    return isinstance(value, list) and any(isinstance(v, str) and v.strip() for v in value)


def run_all(
    items: list[dict[str, Any]], mapper: Callable[[dict[str, Any]], Work], title_of: Callable
) -> list[Work]:
    assert items, "no recorded items found"
    works = []
    for item in items:
        work = mapper(item)
        assert_sane(work, title_of(item))
        works.append(work)
    return works


# -- Crossref --------------------------------------------------------------------


def crossref_items() -> list[dict[str, Any]]:
    root = shared_path(*SAMPLES, "crossref")
    items = list(jsonl_works(shared_path(*SAMPLES, "corpus", "crossref_works_dedup.jsonl")))
    for path in sorted(root.glob("*-fixtures/*.json")) + sorted(root.glob("*/*item*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        message = data.get("message", data)
        items.extend(message["items"] if "items" in message else [message])
    items.extend(
        json.loads(line)
        for line in (root / "alexandria3k-crossref-sample" / "crossref-2025.jsonl")
        .read_text(encoding="utf-8")
        .split("\n")
        if line.strip()
    )
    return [item for item in items if isinstance(item, dict) and item.get("DOI")]


def test_every_recorded_crossref_work_maps_cleanly() -> None:
    works = run_all(crossref_items(), crossref.to_work, lambda item: item.get("title"))
    assert len(works) > 2000
    assert all(w.doi for w in works)
    assert sum(bool(w.authors) for w in works) > 0.8 * len(works)


def test_recorded_crossref_cassette_envelopes_parse() -> None:
    folder = shared_path(*SAMPLES, "crossref")
    seen = 0
    for _uri, body in cassette_bodies(folder, "api.crossref.org/works"):
        message = body.get("message") if isinstance(body, dict) else None
        if body.get("message-type") == "work":
            assert_sane(crossref.to_work(message), message.get("title"))
            seen += 1
        elif body.get("message-type") == "work-list":
            for item in message["items"]:
                assert_sane(crossref.to_work(item), item.get("title"))
                seen += 1
    assert seen > 10


def test_recorded_retraction_watch_notices_are_normalised() -> None:
    path = shared_path(*SAMPLES, "crossref", "retraction-check-fixtures")
    kinds: dict[str, set[NoticeKind]] = {}
    for file in path.glob("*.json"):
        work = crossref.to_work(json.loads(file.read_text(encoding="utf-8"))["message"])
        kinds[work.doi or ""] = {n.kind for n in work.notices}
        assert all(n.source in ("publisher", "retraction-watch") for n in work.notices)
    assert NoticeKind.RETRACTION in kinds["10.1016/s0140-6736(97)11096-0"]
    assert NoticeKind.OTHER not in set().union(*kinds.values())


# -- OpenAlex --------------------------------------------------------------------


def test_every_recorded_openalex_work_maps_cleanly() -> None:
    items = list(jsonl_works(shared_path(*SAMPLES, "corpus", "openalex_works_dedup.jsonl")))
    single = shared_path(*SAMPLES, "openalex", "openalex-python-fixtures", "W2741809807.json")
    items.append(json.loads(single.read_text(encoding="utf-8")))
    works = run_all(items, openalex.to_work, lambda item: item.get("display_name"))
    assert all(w.openalex_id and w.openalex_id.startswith("W") for w in works)
    assert any(w.arxiv_id for w in works) and any(w.abstract for w in works)
    peerj = works[-1]
    assert peerj.doi == "10.7717/peerj.4375" and peerj.is_retracted is False


def test_recorded_openalex_cassettes_parse() -> None:
    folder = shared_path(*SAMPLES, "openalex")
    seen = 0
    for _uri, body in cassette_bodies(folder, "api.openalex.org/works"):
        for item in body.get("results", [body]):
            assert_sane(openalex.to_work(item), item.get("display_name"))
            seen += 1
    assert seen > 10


# -- DataCite --------------------------------------------------------------------


def test_recorded_datacite_records_map_cleanly() -> None:
    folder = shared_path(*SAMPLES, "datacite")
    works = []
    for _uri, body in cassette_bodies(folder, "api.datacite.org/dois/"):
        record = body["data"]
        work = datacite.to_work(record)
        assert_sane(work, [t.get("title") for t in record["attributes"].get("titles", [])])
        works.append(work)
    for name in ("datacite.json", "datacite-dataset_v4.5.json"):
        record = json.loads((folder / "commonmeta-py-fixtures" / name).read_text("utf-8"))
        work = datacite.to_work(record)
        assert_sane(work, [t.get("title") for t in record.get("titles", [])])
        works.append(work)
    assert len(works) > 5
    arxiv = [w for w in works if w.doi and w.doi.startswith("10.48550/")]
    assert arxiv and all(w.arxiv_id for w in arxiv)
