"""The MCP server in memory: every tool, resource and prompt against fake upstreams."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.types import CallToolResult

from refaudit.config import Settings, load_settings
from refaudit.models import JSON_SCHEMA_VERSION
from refaudit.retractions.csvload import COLUMNS
from refaudit.retractions.download import download_snapshot
from refaudit.server import build_server, is_loopback, transport_security
from refaudit.sources import registry
from tests.fakes import (
    FakeClock,
    FakeUpstreams,
    crossref_list,
    crossref_update,
    crossref_work,
    empty_searches,
    openalex_list,
    openalex_work,
)

pytestmark = pytest.mark.anyio

WIDGETS_DOI = "10.1234/widgets.2019"
WIDGETS = crossref_work(
    WIDGETS_DOI,
    "Deep learning for widget inspection",
    authors=[("Ada", "Lovelace"), ("Alan", "Turing")],
    year=2019,
    venue="Journal of Widget Science",
    volume="12",
    page="101-118",
)
RETRACTED_DOI = "10.1016/s0140-6736(97)11096-0"
RETRACTION_NOTICE_DOI = "10.1016/s0140-6736(10)60175-4"
RETRACTED = crossref_work(
    RETRACTED_DOI,
    "Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive developmental "
    "disorder in children",
    authors=[("A J", "Wakefield"), ("S H", "Murch")],
    year=1998,
    venue="The Lancet",
    updated_by=[crossref_update("retraction", RETRACTION_NOTICE_DOI, date=(2010, 2, 2))],
)

EVERY_TOOL = {
    "assess_novelty",
    "correct_bibliography",
    "verify_reference",
    "verify_references",
    "verify_bibliography",
    "search_references",
    "get_bibtex",
    "paper_details",
    "check_retractions",
    "retractions_by_author",
    "recent_retractions",
    "search_retractions",
    "get_notice",
}
SNAPSHOT_ONLY_TOOLS = {"retractions_by_author", "recent_retractions", "search_retractions"}


def settings_for(**overrides: Any) -> Settings:
    """Crossref and OpenAlex only; no retries and Crossref's paid pool, so no test waits."""
    return load_settings(
        overrides={
            "sources": ["crossref", "openalex"],
            "max_retries": 0,
            "api_keys": {"crossref": "plus-token-for-tests"},
            **overrides,
        }
    )


def upstreams(*works: dict[str, Any]) -> FakeUpstreams:
    """Crossref knows `works` (by DOI and by title words); OpenAlex knows nothing."""
    fake = FakeUpstreams()
    fake.serve_crossref(list(works))
    fake.serve_openalex([])

    def crossref_search(request: httpx.Request, _match: re.Match[str]) -> dict[str, Any]:
        params = request.url.params
        if "filter" in params:
            wanted = {part[4:].lower() for part in params["filter"].split(",")}
            return crossref_list([w for w in works if w["DOI"].lower() in wanted])
        query = params.get("query.bibliographic") or params.get("query", "")
        words = set(re.findall(r"\w+", query.lower()))
        hits = [w for w in works if words & set(re.findall(r"\w+", w["title"][0].lower()))]
        return crossref_list(hits)

    fake.route("crossref", r"/works", crossref_search)
    fake.route(
        "crossref",
        r"/works/(?P<doi>10\..+)/transform/application/x-bibtex",
        lambda _r, m: httpx.Response(
            200,
            text=f" @article{{Lovelace_2019, title={{Deep learning}}, DOI={{{m['doi']}}}}}",
            headers={"content-type": "application/x-bibtex"},
        ),
    )
    return fake


@asynccontextmanager
async def connected(
    settings: Settings,
    fake: FakeUpstreams,
    root: Path | None = None,
    clock: FakeClock | None = None,
) -> AsyncIterator[Client]:
    """An in-memory client of a server on the fake upstreams; rate limits and back-offs
    pace a fake clock, so no test waits."""
    clock = clock or FakeClock()
    server = build_server(
        settings, transport=fake.transport(), root=root, clock=clock, sleep=clock.sleep
    )
    async with Client(server, raise_exceptions=True) as client:
        yield client


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    return " ".join(getattr(block, "text", "") for block in result.content)


# -- listing -------------------------------------------------------------------------------


async def test_every_tool_is_listed_read_only_with_an_output_schema() -> None:
    async with connected(settings_for(), upstreams()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(tools) == EVERY_TOOL
    for name, tool in tools.items():
        assert tool.output_schema is not None, name
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.idempotent_hint is True
        assert tool.annotations.open_world_hint is (name not in SNAPSHOT_ONLY_TOOLS), name
    verify = tools["verify_reference"]
    assert {"citation", "title", "authors", "doi", "arxiv_id", "pmid"} <= set(
        verify.input_schema["properties"]
    )
    assert {"findings", "reference", "matched", "retracted"} <= set(
        verify.output_schema["properties"]
    )


async def test_resources_and_the_verify_before_citing_prompt_are_listed() -> None:
    async with connected(settings_for(), upstreams()) as client:
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        prompt = await client.get_prompt("verify-before-citing", {"citations": "Smith 2020"})

    assert resources == {"refaudit://sources", "refaudit://policy", "refaudit://guide"}
    assert prompts == {"verify-before-citing"}
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "unverified" in text and "NOT evidence" in text
    assert "Smith 2020" in text


async def test_the_guide_says_how_to_use_the_tools_together() -> None:
    async with connected(settings_for(), upstreams()) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        contents = (await client.read_resource("refaudit://guide")).contents

    guide = contents[0].text  # type: ignore[union-attr]
    assert "Verify every reference before you cite it" in guide
    assert "UNKNOWN, not missing" in guide
    assert "Prefer the corrected entry" in guide
    named = set(re.findall(r"\b([a-z]+(?:_[a-z]+)+)\b", guide)) & listed
    assert named == listed, f"tools the guide does not mention: {listed - named}"


async def test_policy_resource_shows_the_configured_fail_and_retraction_policy() -> None:
    settings = settings_for(
        fail_on=["not_found", "year-mismatch"],
        retraction_policy={"retraction": "error", "expression_of_concern": "info"},
    )
    async with connected(settings, upstreams()) as client:
        contents = (await client.read_resource("refaudit://policy")).contents

    policy = json.loads(contents[0].text)  # type: ignore[union-attr]
    assert set(policy["fail_on"]) == {"not_found", "year_mismatch"}
    assert "year-mismatch" in policy["fail_on"]["year_mismatch"]
    assert policy["retraction_policy"]["expression_of_concern"] == "info"
    assert policy["finding_codes"]["year-mismatch"]["severity"] == "error"
    assert "NOT not_found" in policy["verdicts"]["unverified"]


# -- verify_reference --------------------------------------------------------------------


async def test_verify_reference_reports_a_wrong_year_with_the_correct_value_and_source() -> None:
    async with connected(settings_for(), upstreams(WIDGETS)) as client:
        result = await client.call_tool(
            "verify_reference",
            {
                "title": "Deep learning for widget inspection",
                "authors": ["Ada Lovelace", "Turing, Alan"],
                "year": 2017,
                "venue": "Journal of Widget Science",
                "doi": "https://doi.org/10.1234/WIDGETS.2019",
            },
        )

    verdict = structured(result)
    assert verdict["verdict"] == "mismatch"
    assert verdict["reference"]["doi"] == WIDGETS_DOI
    assert [a["family"] for a in verdict["reference"]["authors"]] == ["Lovelace", "Turing"]
    year = next(d for d in verdict["findings"] if d["field"] == "year")
    assert (year["cited"], year["found"], year["source"]) == ("2017", "2019", "crossref")
    assert verdict["matched"]["doi"] == WIDGETS_DOI
    assert verdict["matched"]["subtitle"] is None and "journal_ref" in verdict["matched"]
    assert [a["given"] for a in verdict["matched"]["authors"]] == ["Ada", "Alan"]
    assert verdict["sources"]["crossref"]["state"] == "answered"
    assert "2019" in verdict["corrected_bibtex"]
    assert verdict["retracted"] is False


async def test_verify_reference_reads_a_free_text_citation() -> None:
    citation = (
        "Lovelace, A., & Turing, A. (2019). Deep learning for widget inspection. "
        "Journal of Widget Science, 12, 101-118."
    )
    async with connected(settings_for(), upstreams(WIDGETS)) as client:
        verdict = structured(await client.call_tool("verify_reference", {"citation": citation}))

    assert verdict["reference"]["year"] == 2019
    assert verdict["reference"]["title"] == "Deep learning for widget inspection"
    assert verdict["verdict"] in ("verified", "mismatch")
    assert verdict["matched"]["doi"] == WIDGETS_DOI


async def test_verify_reference_flags_a_retracted_work() -> None:
    async with connected(settings_for(), upstreams(RETRACTED)) as client:
        verdict = structured(
            await client.call_tool(
                "verify_reference",
                {"doi": RETRACTED_DOI, "title": RETRACTED["title"][0], "year": 1998},
            )
        )

    assert verdict["retracted"] is True
    assert verdict["flagged"] is True
    assert [notice["kind"] for notice in verdict["integrity"]] == ["retraction"]
    assert verdict["integrity"][0]["notice_doi"] == RETRACTION_NOTICE_DOI
    assert "retracted" in {f["code"] for f in verdict["findings"]}


async def test_an_outage_gives_unverified_never_not_found_and_shows_in_source_health() -> None:
    fake = upstreams(WIDGETS)
    fake.fail("crossref", "503", times=100)
    fake.fail("openalex", "drop", times=100)
    async with connected(settings_for(), fake) as client:
        verdict = structured(
            await client.call_tool(
                "verify_reference", {"title": "Deep learning for widget inspection"}
            )
        )
        contents = (await client.read_resource("refaudit://sources")).contents

    assert verdict["verdict"] == "unverified"
    assert verdict["flagged"] is False
    assert {name: s["state"] for name, s in verdict["sources"].items()} == {
        "crossref": "failed",
        "openalex": "failed",
    }
    health = {s["name"]: s["health"] for s in json.loads(contents[0].text)["sources"]}  # type: ignore[union-attr]
    assert health["crossref"]["state"] == "failing"
    assert "503" in health["crossref"]["reason"] or "unavailable" in health["crossref"]["reason"]
    assert health["crossref"]["failures"] >= 1
    assert health["dblp"]["state"] == "not used yet"


async def test_sources_resource_lists_every_source_with_url_and_rate_limit() -> None:
    async with connected(settings_for(), upstreams()) as client:
        contents = (await client.read_resource("refaudit://sources")).contents

    sources = {s["name"]: s for s in json.loads(contents[0].text)["sources"]}  # type: ignore[union-attr]
    assert list(sources) == list(registry.SOURCE_NAMES)
    assert sources["crossref"]["enabled"] is True
    assert sources["dblp"]["enabled"] is False
    assert sources["crossref"]["base_url"] == "https://api.crossref.org"
    assert sources["crossref"]["rate_limits"]["default"]["rps"] > 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "give either a citation"),
        ({"doi": "not a doi"}, "is not a DOI"),
        ({"arxiv_id": "17.06"}, "is not an arXiv identifier"),
        ({"pmid": "PM-12"}, "is not a PubMed id"),
        ({"pmid": "\u0661\u0662\u0663"}, "is not a PubMed id"),
    ],
)
async def test_unusable_arguments_come_back_as_tool_errors(
    arguments: dict[str, Any], message: str
) -> None:
    fake = upstreams()
    async with connected(settings_for(), fake) as client:
        result = await client.call_tool("verify_reference", arguments)

    assert message in error_text(result)
    assert fake.requests == []


async def test_a_malformed_argument_is_rejected_and_the_session_keeps_serving() -> None:
    async with connected(settings_for(), upstreams(WIDGETS)) as client:
        rejected = await client.call_tool("verify_reference", {"doi": WIDGETS_DOI, "year": "soon"})
        wrong_type = await client.call_tool("get_bibtex", {"identifiers": "10.1/x"})
        verdict = structured(await client.call_tool("verify_reference", {"doi": WIDGETS_DOI}))

    assert "year" in error_text(rejected)
    assert wrong_type.is_error
    assert verdict["matched"]["doi"] == WIDGETS_DOI


async def test_concurrent_calls_on_one_session_each_get_their_own_answer() -> None:
    works = [
        crossref_work(f"10.5555/w{i}", f"Widget study number {i}", year=2000 + i) for i in range(6)
    ]
    answers: dict[int, dict[str, Any]] = {}
    async with connected(settings_for(), upstreams(*works)) as client:

        async def verify(i: int) -> None:
            result = await client.call_tool("verify_reference", {"doi": f"10.5555/w{i}"})
            answers[i] = structured(result)

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                for i in range(6):
                    group.start_soon(verify, i)

    assert {i: a["matched"]["year"] for i, a in answers.items()} == {i: 2000 + i for i in range(6)}


# -- verify_bibliography ------------------------------------------------------------------

BIBTEX = f"""
@article{{lovelace2019,
  title = {{Deep learning for widget inspection}},
  author = {{Lovelace, Ada and Turing, Alan}},
  journal = {{Journal of Widget Science}},
  year = {{2019}},
  doi = {{{WIDGETS_DOI}}},
}}
@article{{ghost2021,
  title = {{Quantum gravitational widget entanglement}},
  author = {{Nobody, Nemo}},
  journal = {{Journal of Imaginary Results}},
  year = {{2021}},
  doi = {{10.9999/does-not-exist}},
}}
"""


async def test_verify_bibliography_gives_per_entry_verdicts_and_a_summary() -> None:
    async with connected(settings_for(), upstreams(WIDGETS)) as client:
        audit = structured(await client.call_tool("verify_bibliography", {"bibtex": BIBTEX}))

    verdicts = {entry["key"]: entry["verdict"] for entry in audit["results"]}
    assert verdicts["lovelace2019"] == "verified"
    assert verdicts["ghost2021"] == "not_found"
    assert [entry["key"] for entry in audit["results"] if entry["flagged"]] == ["ghost2021"]
    summary = audit["summary"]
    assert summary["total"] == 2 and summary["flagged"] == 1
    assert summary["verified"] == 1 and summary["not_found"] == 1
    assert audit["schema_version"] == JSON_SCHEMA_VERSION


async def test_verify_bibliography_says_offline_that_no_retraction_snapshot_screened(
    tmp_path: Path,
) -> None:
    settings = settings_for(offline=True, data_dir=tmp_path, cache_dir=tmp_path)
    async with connected(settings, upstreams(WIDGETS)) as client:
        audit = structured(await client.call_tool("verify_bibliography", {"bibtex": BIBTEX}))

    assert audit["offline"] is True
    assert audit["retraction_snapshot"]["available"] is False


async def test_verify_bibliography_reports_input_problems() -> None:
    broken = BIBTEX + "\n@article{broken, title = {Unclosed\n"
    async with connected(settings_for(), upstreams(WIDGETS)) as client:
        audit = structured(await client.call_tool("verify_bibliography", {"bibtex": broken}))

    assert audit["problems"] and audit["summary"]["problems"] == len(audit["problems"])
    assert {entry["key"] for entry in audit["results"]} >= {"lovelace2019", "ghost2021"}


async def test_verify_bibliography_reads_a_file_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "refs.bib").write_text(BIBTEX, encoding="utf-8")
    async with connected(settings_for(), upstreams(WIDGETS), root=tmp_path) as client:
        audit = structured(
            await client.call_tool("verify_bibliography", {"path": "paper/refs.bib"})
        )

    assert audit["summary"]["total"] == 2
    assert audit["files"]


async def test_verify_bibliography_reads_a_word_manuscript_inside_the_root(tmp_path: Path) -> None:
    from tests.word import Manuscript, csl_item

    doc = Manuscript()
    doc.zotero(
        [
            csl_item(
                7,
                title="Deep learning for widget inspection",
                authors=[("Lovelace", "Ada"), ("Turing", "Alan")],
                year=2019,
                container="Journal of Widget Science",
                doi=WIDGETS_DOI,
            )
        ],
        "(Lovelace & Turing, 2019)",
    )
    doc.save(tmp_path / "manuscript.docx")
    async with connected(settings_for(), upstreams(WIDGETS), root=tmp_path) as client:
        audit = structured(
            await client.call_tool("verify_bibliography", {"path": "manuscript.docx"})
        )

    (result,) = audit["results"]
    assert result["verdict"] == "verified"
    assert result["reference"]["origin"] == "zotero field code"


@pytest.mark.parametrize("path", ["../secrets.bib", "/etc/passwd", "paper/../../x.bib"])
async def test_verify_bibliography_refuses_paths_outside_the_root(
    tmp_path: Path, path: str
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secrets.bib").write_text(BIBTEX, encoding="utf-8")
    fake = upstreams()
    async with connected(settings_for(), fake, root=root) as client:
        result = await client.call_tool("verify_bibliography", {"path": path})

    assert "outside the allowed root" in error_text(result)
    assert fake.requests == []


async def test_verify_bibliography_refuses_symlinks_that_lead_outside_the_root(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secrets.bib").write_text(BIBTEX, encoding="utf-8")
    (root / "refs.bib").symlink_to(tmp_path / "secrets.bib")
    (root / "home").symlink_to(tmp_path, target_is_directory=True)
    fake = upstreams()
    async with connected(settings_for(), fake, root=root) as client:
        linked_file = await client.call_tool("verify_bibliography", {"path": "refs.bib"})
        linked_dir = await client.call_tool("verify_bibliography", {"path": "home/secrets.bib"})

    assert "outside the allowed root" in error_text(linked_file)
    assert "outside the allowed root" in error_text(linked_dir)
    assert fake.requests == []


@pytest.mark.parametrize("path", ["refs\x00.bib", "x" * 300 + ".bib"], ids=["nul", "too-long"])
async def test_verify_bibliography_refuses_an_unusable_file_name(tmp_path: Path, path: str) -> None:
    fake = upstreams()
    async with connected(settings_for(), fake, root=tmp_path) as client:
        result = await client.call_tool("verify_bibliography", {"path": path})
        still = await client.call_tool("verify_reference", {"doi": "not a doi"})

    assert "not a usable file name" in error_text(result)
    assert "is not a DOI" in error_text(still)
    assert fake.requests == []


async def test_verify_bibliography_refuses_every_path_without_a_root(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text(BIBTEX, encoding="utf-8")
    async with connected(settings_for(), upstreams()) as client:
        result = await client.call_tool("verify_bibliography", {"path": "refs.bib"})
        neither = await client.call_tool("verify_bibliography", {})

    assert "--root" in error_text(result)
    assert "exactly one" in error_text(neither)


# -- discovery -------------------------------------------------------------------------------


async def test_search_references_returns_merged_records_and_source_statuses() -> None:
    fake = upstreams(WIDGETS)
    fake.json(
        "openalex",
        r"/works",
        openalex_list(
            [
                openalex_work(
                    "W123",
                    "Deep learning for widget inspection",
                    doi=WIDGETS_DOI,
                    year=2019,
                )
            ]
        ),
    )
    async with connected(settings_for(), fake) as client:
        found = structured(
            await client.call_tool("search_references", {"query": "widget inspection", "limit": 5})
        )

    assert found["status"] == "ok"
    top = found["works"][0]
    assert top["doi"] == WIDGETS_DOI
    assert set(top["found_in"]) == {"crossref", "openalex"}
    assert set(found["sources"]) == {"crossref", "openalex"}


async def test_search_references_spares_the_slow_pools_once_the_titled_work_is_found() -> None:
    fake = upstreams(WIDGETS)
    empty_searches(fake)
    settings = settings_for(sources=["crossref", "openalex", "semanticscholar", "arxiv"])
    async with connected(settings, fake) as client:
        titled = structured(
            await client.call_tool("search_references", {"query": WIDGETS["title"][0]})
        )
        words = structured(await client.call_tool("search_references", {"query": "widgets"}))

    assert titled["works"][0]["doi"] == WIDGETS_DOI
    assert titled["sources"]["semanticscholar"]["state"] == "not_asked"
    assert titled["sources"]["arxiv"]["state"] == "not_asked"
    assert words["sources"]["semanticscholar"]["state"] == "answered"
    assert fake.count("semanticscholar") == fake.count("arxiv") == 1


async def test_discovery_calls_count_in_the_source_health() -> None:
    fake = upstreams(WIDGETS, RETRACTED)
    async with connected(settings_for(), fake) as client:
        structured(await client.call_tool("search_references", {"query": "widget inspection"}))
        structured(await client.call_tool("get_bibtex", {"identifiers": [WIDGETS_DOI]}))
        structured(await client.call_tool("paper_details", {"identifier": RETRACTED_DOI}))
        contents = (await client.read_resource("refaudit://sources")).contents

    health = {s["name"]: s["health"] for s in json.loads(contents[0].text)["sources"]}  # type: ignore[union-attr]
    assert health["crossref"]["requests"] == fake.count("crossref") > 0
    assert health["openalex"]["requests"] == fake.count("openalex") > 0
    assert health["crossref"]["state"] == "ok"


async def test_search_references_rejects_an_unknown_source_name() -> None:
    async with connected(settings_for(), upstreams()) as client:
        result = await client.call_tool(
            "search_references", {"query": "widgets", "sources": ["google-scholar"]}
        )

    assert result.is_error


async def test_search_references_refuses_a_reversed_year_range() -> None:
    fake = upstreams(WIDGETS)
    async with connected(settings_for(), fake) as client:
        result = await client.call_tool(
            "search_references", {"query": "widgets", "year_from": 2020, "year_to": 2000}
        )

    assert "year_from 2020 is after year_to 2000" in error_text(result)
    assert fake.requests == []


async def test_get_bibtex_uses_the_agency_entry_and_reports_unknown_identifiers() -> None:
    async with connected(settings_for(), upstreams(WIDGETS)) as client:
        entries = structured(
            await client.call_tool(
                "get_bibtex", {"identifiers": [WIDGETS_DOI, "10.9999/does-not-exist"]}
            )
        )

    first, second = entries["entries"]
    assert first["status"] == "ok"
    assert first["source"] == "crossref"
    assert WIDGETS_DOI in first["bibtex"]
    assert second["status"] == "not_found"
    assert second["bibtex"] is None
    assert entries["bibtex"].count("@") == 1


async def test_get_bibtex_gives_a_retracted_work_only_when_allowed_and_names_its_notice() -> None:
    async with connected(settings_for(), upstreams(WIDGETS, RETRACTED)) as client:
        default, allowed = [
            structured(
                await client.call_tool(
                    "get_bibtex",
                    {"identifiers": [WIDGETS_DOI, RETRACTED_DOI], "allow_retracted": allow},
                )
            )
            for allow in (False, True)
        ]

    note = f"note = {{Retraction notice, 2010-02-02, doi:{RETRACTION_NOTICE_DOI}}}"
    for answer in (default, allowed):
        widgets, retracted = answer["entries"]
        assert (widgets["status"], retracted["status"]) == ("ok", "retracted")
        assert note in retracted["bibtex"]
        assert "retraction" in retracted["message"]
    assert default["bibtex"].count("@") == 1 and "Wakefield" not in default["bibtex"]
    assert allowed["bibtex"].count("@") == 2 and note in allowed["bibtex"]


async def test_paper_details_shows_the_record_and_where_each_field_came_from() -> None:
    async with connected(settings_for(), upstreams(RETRACTED)) as client:
        details = structured(await client.call_tool("paper_details", {"identifier": RETRACTED_DOI}))
        missing = structured(
            await client.call_tool("paper_details", {"identifier": "10.9999/does-not-exist"})
        )

    assert details["status"] == "ok"
    assert details["work"]["year"] == 1998
    assert "crossref" in details["records"]
    assert any(f["field"] == "title" and f["source"] == "crossref" for f in details["fields"])
    assert [n["kind"] for n in details["notices"]] == ["retraction"]
    assert missing["status"] == "not_found"
    assert missing["work"] is None


# -- retractions -------------------------------------------------------------------------------

RW_ROWS = [
    {
        "Record ID": "4036",
        "Title": RETRACTED["title"][0],
        "Journal": "The Lancet",
        "Publisher": "Elsevier",
        "Author": "A J Wakefield;S H Murch",
        "ArticleType": "Research Article;",
        "RetractionDate": "2/2/2010 0:00",
        "RetractionDOI": RETRACTION_NOTICE_DOI,
        "RetractionPubMedID": "20137807",
        "OriginalPaperDate": "2/28/1998 0:00",
        "OriginalPaperDOI": RETRACTED_DOI,
        "OriginalPaperPubMedID": "9500320",
        "RetractionNature": "Retraction",
        "Reason": "+Falsification/Fabrication of Data;+Investigation by Journal/Publisher;",
        "Paywalled": "No",
    },
    {
        "Record ID": "50001",
        "Title": "Widget tolerance in humid climates",
        "Journal": "Journal of Widget Science",
        "Publisher": "Widget Press",
        "Author": "Grace Hopper",
        "RetractionDate": "3/14/2024 0:00",
        "RetractionDOI": "10.1234/widgets.eoc.2024",
        "RetractionPubMedID": "0",
        "OriginalPaperDate": "6/1/2022 0:00",
        "OriginalPaperDOI": "10.1234/widgets.2022",
        "OriginalPaperPubMedID": "0",
        "RetractionNature": "Expression of concern",
        "Reason": "+Concerns/Issues About Data;",
        "Paywalled": "No",
    },
]


def retraction_watch_csv() -> str:
    """Two rows in the real Retraction Watch layout (every line ends with a comma)."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*COLUMNS, ""])
    for row in RW_ROWS:
        writer.writerow([row.get(column, "") for column in COLUMNS] + [""])
    return out.getvalue()


async def install_snapshot(settings: Settings) -> None:
    transport = httpx.MockTransport(
        lambda _request: httpx.Response(
            200, text=retraction_watch_csv(), headers={"content-type": "text/csv"}
        )
    )
    await download_snapshot(settings, transport=transport)


async def test_check_retractions_screens_each_doi_in_order() -> None:
    dois = [RETRACTED_DOI, WIDGETS_DOI, "not-a-doi"]
    async with connected(settings_for(), upstreams(RETRACTED, WIDGETS)) as client:
        check = structured(await client.call_tool("check_retractions", {"dois": dois}))

    statuses = [(r["input"], r["status"], r["withdrawn"]) for r in check["results"]]
    assert statuses == [
        (RETRACTED_DOI, "retraction", True),
        (WIDGETS_DOI, "clean", False),
        ("not-a-doi", "invalid", False),
    ]
    assert "Retraction Watch" in check["credit"]


async def test_check_retractions_during_an_outage_says_unknown_not_clean() -> None:
    fake = upstreams(WIDGETS)
    fake.fail("crossref", "503", times=100)
    fake.fail("openalex", "503", times=100)
    async with connected(settings_for(), fake) as client:
        check = structured(await client.call_tool("check_retractions", {"dois": [WIDGETS_DOI]}))

    assert check["results"][0]["status"] == "unknown"
    assert check["results"][0]["found"] is None


async def test_snapshot_tools_explain_how_to_get_a_snapshot_when_there_is_none() -> None:
    async with connected(settings_for(), upstreams()) as client:
        result = await client.call_tool("retractions_by_author", {"name": "Wakefield"})

    assert "no Retraction Watch snapshot" in error_text(result)
    assert "refaudit retractions update" in error_text(result)


async def test_snapshot_tools_answer_from_the_local_retraction_watch_copy() -> None:
    settings = settings_for()
    await install_snapshot(settings)
    async with connected(settings, upstreams()) as client:
        by_author = structured(
            await client.call_tool("retractions_by_author", {"name": "Wakefield AJ"})
        )
        recent = structured(await client.call_tool("recent_retractions", {"limit": 1}))
        searched = structured(
            await client.call_tool("search_retractions", {"journal": "Journal of Widget Science"})
        )
        notice = structured(
            await client.call_tool("get_notice", {"notice_doi": RETRACTION_NOTICE_DOI})
        )
        nothing_asked = await client.call_tool("search_retractions", {})

    assert [r["original_doi"] for r in by_author["records"]] == [RETRACTED_DOI]
    assert by_author["records"][0]["kind"] == "retraction"
    assert [r["record_id"] for r in recent["records"]] == ["50001"]
    assert [r["nature"] for r in searched["records"]] == ["Expression of concern"]
    assert notice["found"] is True
    assert notice["records"][0]["original_doi"] == RETRACTED_DOI
    assert "snapshot" in notice["origin"]
    assert "at least one" in error_text(nothing_asked)


async def test_get_notice_rejects_a_malformed_doi_with_the_cli_message() -> None:
    async with connected(settings_for(), upstreams()) as client:
        result = await client.call_tool("get_notice", {"notice_doi": "retraction-123"})

    assert "is not a DOI" in error_text(result)


# -- HTTP safety settings ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
    ],
)
def test_only_loopback_binds_count_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_dns_rebinding_protection_allows_only_the_bound_names() -> None:
    security = transport_security("127.0.0.1", 8123)

    assert security.enable_dns_rebinding_protection
    assert {"127.0.0.1:8123", "localhost:8123", "[::1]:8123"} <= set(security.allowed_hosts)
    assert "evil.example:8123" not in security.allowed_hosts
    assert not any(entry.endswith(":*") for entry in security.allowed_hosts)
    assert "http://localhost:8123" in security.allowed_origins
    extra = transport_security("10.0.0.5", 9000, ("refaudit.lab.example",))
    assert set(extra.allowed_hosts) == {"10.0.0.5:9000", "refaudit.lab.example:9000"}
