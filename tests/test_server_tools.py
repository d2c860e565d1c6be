"""The research-assistant tools: batch verification, corrections, BibTeX from metadata,
limits, retraction filters, and source clients shared across calls."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from refaudit.server import discovery, tools
from refaudit.server.calling import server_state
from refaudit.server.state import ServerState
from tests.fakes import FakeClock, openalex_list, openalex_work
from tests.test_server import (
    RETRACTED,
    RETRACTED_DOI,
    WIDGETS,
    WIDGETS_DOI,
    connected,
    error_text,
    install_snapshot,
    settings_for,
    structured,
    upstreams,
)

pytestmark = pytest.mark.anyio

WRONG_YEAR = """@article{lovelace2017,
  title = {Deep learning for widget inspection},
  author = {Lovelace, Ada and Turing, Alan},
  journal = {Journal of Widget Science},
  year = {2017},
  doi = {10.1234/widgets.2019},
}
"""


# -- verify_references ---------------------------------------------------------------


async def test_verify_references_takes_objects_and_free_text_in_one_call() -> None:
    references: list[Any] = [
        {"key": "widgets", "doi": WIDGETS_DOI, "year": 2017},
        "Wakefield AJ, Murch SH. Ileal-lymphoid-nodular hyperplasia, non-specific colitis, "
        "and pervasive developmental disorder in children. The Lancet. 1998.",
        {"title": "Deep learning for widget inspection", "authors": ["Ada Lovelace"]},
    ]
    async with connected(settings_for(), upstreams(WIDGETS, RETRACTED)) as client:
        report = structured(await client.call_tool("verify_references", {"references": references}))

    results = report["results"]
    assert [r["key"] for r in results] == ["widgets", "ref2", "ref3"]
    assert results[0]["verdict"] == "mismatch"
    assert any(f["field"] == "year" and f["found"] == "2019" for f in results[0]["findings"])
    assert results[1]["retracted"] is True
    assert results[2]["matched"]["doi"] == WIDGETS_DOI
    assert report["summary"]["total"] == 3


async def _flagged_by_every_tool(fail_on: list[str], work: dict[str, Any], **cited: Any) -> set:
    """`flagged` (and the summary count) from the three verification tools, one citation."""
    bibtex = "@article{cited,\n" + "".join(f"  {k} = {{{v}}},\n" for k, v in cited.items()) + "}\n"
    async with connected(settings_for(fail_on=fail_on), upstreams(work)) as client:
        one = structured(await client.call_tool("verify_reference", cited))
        many = structured(await client.call_tool("verify_references", {"references": [cited]}))
        bib = structured(await client.call_tool("verify_bibliography", {"bibtex": bibtex}))
    assert many["fail_on"] == bib["fail_on"] == fail_on
    for report in (many, bib):
        assert report["summary"]["flagged"] == report["summary"]["failing"]
        assert report["summary"]["flagged"] == sum(r["flagged"] for r in report["results"])
    results = [one, many["results"][0], bib["results"][0]]
    assert all(r["flagged"] == r["failing"] for r in results)
    return {(r["verdict"], r["flagged"]) for r in results}


async def test_an_error_finding_the_fail_policy_leaves_out_is_not_flagged() -> None:
    wrong_year = {"doi": WIDGETS_DOI, "title": WIDGETS["title"][0], "year": 2017}

    assert await _flagged_by_every_tool(["not_found", "retracted"], WIDGETS, **wrong_year) == {
        ("mismatch", False)
    }


async def test_an_error_finding_the_fail_policy_names_is_flagged() -> None:
    wrong_year = {"doi": WIDGETS_DOI, "title": WIDGETS["title"][0], "year": 2017}

    assert await _flagged_by_every_tool(["error"], WIDGETS, **wrong_year) == {("mismatch", True)}


async def test_a_retracted_work_is_flagged_only_when_the_policy_fails_on_retracted() -> None:
    cited = {"doi": RETRACTED_DOI, "title": RETRACTED["title"][0], "year": 1998}

    flagged = await _flagged_by_every_tool(["retracted"], RETRACTED, **cited)
    tolerated = await _flagged_by_every_tool(["not_found"], RETRACTED, **cited)

    assert {is_flagged for _verdict, is_flagged in flagged} == {True}
    assert {is_flagged for _verdict, is_flagged in tolerated} == {False}


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"references": []}, "at least 1 item"),
        ({"references": ["x"] * 10_000}, "at most 500 items"),
        ({"references": [{"year": 2020}]}, "references[0]: give either a citation string"),
        ({"references": [{"doi": "nonsense"}]}, "is not a DOI"),
        ({"references": [{"title": "T", "colour": "red"}]}, "Extra inputs are not permitted"),
        ({"references": "Smith 2020"}, "valid list"),
    ],
)
async def test_verify_references_refuses_bad_arguments_with_a_clear_error(
    arguments: dict[str, Any], complaint: str
) -> None:
    fake = upstreams(WIDGETS)
    async with connected(settings_for(), fake) as client:
        result = await client.call_tool("verify_references", arguments)

    assert complaint in error_text(result)
    assert fake.requests == []


# -- correct_bibliography ----------------------------------------------------------------


async def test_correct_bibliography_returns_the_corrected_text_and_a_diff() -> None:
    text = "% my references\n" + WRONG_YEAR
    async with connected(settings_for(), upstreams(WIDGETS)) as client:
        fixed = structured(await client.call_tool("correct_bibliography", {"bibtex": text}))

    assert "year = {2019}" in fixed["bibtex"]
    assert fixed["bibtex"].startswith("% my references\n@article{lovelace2017,")
    assert "-  year = {2017}," in fixed["diff"] and "+  year = {2019}," in fixed["diff"]
    assert fixed["corrected"] == [
        {"key": "lovelace2017", "line": 2, "action": "corrected", "fields": ["year"]}
    ]
    assert fixed["summary"]["mismatch"] == 1


async def test_correct_bibliography_leaves_a_correct_bibliography_byte_for_byte() -> None:
    text = WRONG_YEAR.replace("2017", "2019")
    async with connected(settings_for(), upstreams(WIDGETS)) as client:
        fixed = structured(await client.call_tool("correct_bibliography", {"bibtex": text}))

    assert fixed["bibtex"] == text
    assert fixed["diff"] == "" and fixed["corrected"] == []


@pytest.mark.parametrize(
    ("bibtex", "complaint"),
    [
        ("", "at least 1 character"),
        ("x" * (tools.MAX_BIBTEX_CHARS + 1), f"at most {tools.MAX_BIBTEX_CHARS}"),
        (
            "".join(f"@misc{{k{n}, title={{T{n}}}}}\n" for n in range(tools.MAX_ENTRIES + 1)),
            f"at most {tools.MAX_ENTRIES:,} are checked",
        ),
    ],
)
async def test_oversized_bibliographies_are_refused_before_any_request(
    bibtex: str, complaint: str
) -> None:
    fake = upstreams(WIDGETS)
    async with connected(settings_for(), fake) as client:
        for tool in ("correct_bibliography", "verify_bibliography"):
            result = await client.call_tool(tool, {"bibtex": bibtex})
            assert complaint in error_text(result), tool

    assert fake.requests == []


# -- get_bibtex from metadata, search and details limits ----------------------------------


async def test_get_bibtex_writes_entries_from_search_results_without_asking_again() -> None:
    fake = upstreams(WIDGETS)
    async with connected(settings_for(), fake) as client:
        found = structured(
            await client.call_tool("search_references", {"query": "widget inspection"})
        )
        asked = len(fake.requests)
        hand_written = {
            "title": "Widget tolerance in humid climates",
            "authors": ["Grace Hopper"],
            "year": 2022,
            "venue": "Journal of Widget Science",
        }
        first = structured(
            await client.call_tool(
                "get_bibtex", {"works": [found["works"][0], hand_written, found["works"][0]]}
            )
        )
        again = structured(await client.call_tool("get_bibtex", {"works": [found["works"][0]]}))

    assert len(fake.requests) == asked
    keys = [entry["key"] for entry in first["entries"]]
    assert keys == ["lovelace2019deep", "hopper2022widget", "lovelace2019deepa"]
    assert {entry["source"] for entry in first["entries"]} == {"metadata"}
    assert "doi = {10.1234/widgets.2019}" in first["entries"][0]["bibtex"]
    assert "@misc{hopper2022widget," in first["bibtex"]
    assert again["entries"][0]["bibtex"] == first["entries"][0]["bibtex"]


async def test_get_bibtex_needs_identifiers_or_works() -> None:
    async with connected(settings_for(), upstreams()) as client:
        result = await client.call_tool("get_bibtex", {})
        too_many = await client.call_tool("get_bibtex", {"identifiers": ["10.1/x"] * 101})

    assert "give `identifiers`, `works`, or both" in error_text(result)
    assert "at most 100 items" in error_text(too_many)


@pytest.mark.parametrize(
    ("field", "value", "complaint"),
    [
        ("doi", "10.1/" + "x" * 400, "at most 300 characters"),
        ("venue", "Journal of " + "Widgets " * 300, "at most 2000 characters"),
        ("pmid", "1" * 50, "at most 20 characters"),
        ("year", 20222, "less than or equal to 2999"),
    ],
)
async def test_get_bibtex_refuses_metadata_beyond_the_bounds_verify_reference_has(
    field: str, value: object, complaint: str
) -> None:
    """A work given as metadata is bounded field by field as a citation is."""
    work = {"title": "Widget tolerance in humid climates", field: value}
    fake = upstreams(WIDGETS)
    async with connected(settings_for(), fake) as client:
        as_metadata = await client.call_tool("get_bibtex", {"works": [work]})
        as_citation = await client.call_tool(
            "verify_reference", {"title": work["title"], field: value}
        )

    assert complaint in error_text(as_metadata)
    assert complaint in error_text(as_citation)
    assert fake.requests == []


def long_abstract_openalex() -> dict[str, Any]:
    words = [f"word{n}" for n in range(400)]
    return openalex_work(
        "W1",
        "Widget inspection at scale",
        doi="10.1234/scale",
        cited_by_count=42,
        abstract_inverted_index={word: [n] for n, word in enumerate(words)},
    )


async def test_search_returns_up_to_100_works_with_short_abstracts_and_citation_counts() -> None:
    fake = upstreams()
    fake.route("openalex", r"/works", lambda _r, _m: openalex_list([long_abstract_openalex()]))
    async with connected(settings_for(), fake) as client:
        found = structured(
            await client.call_tool("search_references", {"query": "widgets", "limit": 100})
        )
        too_many = await client.call_tool("search_references", {"query": "widgets", "limit": 101})

    (work,) = found["works"]
    assert work["citation_count"] == 42
    assert len(work["abstract"]) <= discovery.ABSTRACT_CHARS + 2
    assert work["abstract"].startswith("word0 word1") and work["abstract"].endswith(" …")
    assert "less than or equal to 100" in error_text(too_many)
    per_page = [r.url.params.get("per_page") for r in fake.requests_to("openalex")]
    assert "100" in per_page


async def test_paper_details_gives_counts_and_lists_up_to_500() -> None:
    citing = [
        openalex_work(f"W{n}", f"Citing paper {n}", doi=f"10.1/c{n}", cited_by_count=n)
        for n in range(3)
    ]
    fake = upstreams(WIDGETS)

    def openalex(request: httpx.Request, _m: re.Match[str]) -> Any:
        wanted = request.url.params.get("filter", "")
        if wanted.startswith("cites:"):
            return openalex_list(citing)
        if wanted.startswith("doi:"):
            return openalex_list([openalex_work("W9", WIDGETS["title"][0], doi=WIDGETS_DOI)])
        return openalex_list([])

    fake.route("openalex", r"/works", openalex)
    async with connected(settings_for(), fake) as client:
        details = structured(
            await client.call_tool(
                "paper_details", {"identifier": WIDGETS_DOI, "citations": True, "limit": 500}
            )
        )
        too_many = await client.call_tool(
            "paper_details", {"identifier": WIDGETS_DOI, "limit": 501}
        )

    assert details["citation_count"] == 3
    assert details["citations_listed"] == 3 and details["references_listed"] is None
    assert [w["title"] for w in details["citations"]][0] == "Citing paper 2"
    assert "less than or equal to 500" in error_text(too_many)


# -- retraction filters --------------------------------------------------------------------


async def test_retraction_tools_filter_by_journal_and_notice_years() -> None:
    settings = settings_for()
    await install_snapshot(settings)
    async with connected(settings, upstreams()) as client:
        in_2010 = structured(
            await client.call_tool("search_retractions", {"year_from": 2010, "year_to": 2010})
        )
        lancet_later = structured(
            await client.call_tool(
                "retractions_by_author",
                {"name": "Wakefield", "journal": "lancet", "year_from": 2011},
            )
        )
        by_journal = structured(
            await client.call_tool("recent_retractions", {"journal": "widget science"})
        )

    assert [(r["original_doi"], r["journal"]) for r in in_2010["records"]] == [
        (RETRACTED_DOI, "The Lancet")
    ]
    assert lancet_later["records"] == []
    assert [r["journal"] for r in by_journal["records"]] == ["Journal of Widget Science"]


# -- one set of source clients per server ---------------------------------------------------


async def test_calls_share_one_circuit_breaker_so_a_dead_source_stops_costing_requests() -> None:
    fake = upstreams(WIDGETS)
    fake.fail("crossref", "503", times=1_000)
    clock = FakeClock()
    server_settings = settings_for(sources=["crossref"])
    async with connected(server_settings, fake, clock=clock) as client:
        for _ in range(6):
            await client.call_tool("verify_reference", {"doi": WIDGETS_DOI})
        failing = len(fake.requests_to("crossref"))
        last = structured(await client.call_tool("verify_reference", {"doi": WIDGETS_DOI}))
        health = json.loads(
            (await client.read_resource("refaudit://sources")).contents[0].text  # type: ignore[union-attr]
        )

    assert len(fake.requests_to("crossref")) == failing
    assert last["verdict"] == "unverified"
    assert "circuit open" in last["reason"]
    crossref = next(s for s in health["sources"] if s["name"] == "crossref")
    assert crossref["health"]["requests"] == failing
    assert crossref["health"]["circuit"].startswith("circuit open")


async def test_rate_limit_waits_use_the_injected_clock() -> None:
    fake = upstreams(WIDGETS)
    fake.fail("crossref", "429", times=1, retry_after=30)
    clock = FakeClock()
    async with connected(settings_for(max_retries=1), fake, clock=clock) as client:
        verdict = structured(await client.call_tool("verify_reference", {"doi": WIDGETS_DOI}))

    assert verdict["verdict"] == "verified"
    assert sum(clock.sleeps) >= 30


async def test_tools_are_module_functions_callable_with_a_context() -> None:
    class Request:
        lifespan_context = ServerState(settings=settings_for(), root=None, transport=None)

    class Context:
        request_context = Request()

    with pytest.raises(Exception, match="give either a citation string"):
        await tools.verify_reference(Context())  # type: ignore[arg-type]
    assert isinstance(server_state(Context()), ServerState)  # type: ignore[arg-type]


def test_idle_http_sessions_are_closed_within_minutes() -> None:
    from refaudit.server import build_server, http_app
    from refaudit.server.http import SESSION_IDLE_TIMEOUT_S

    server = build_server(settings_for())
    http_app(server, host="127.0.0.1", port=8000, token=None)

    assert server.session_manager.session_idle_timeout == SESSION_IDLE_TIMEOUT_S
    assert 60 <= SESSION_IDLE_TIMEOUT_S <= 10 * 60
