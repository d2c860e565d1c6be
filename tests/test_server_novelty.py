"""MCP `assess_novelty`: the same object as `refaudit novelty --format json`, bad input refused."""

from __future__ import annotations

import pytest

from refaudit.config import Settings, load_settings
from refaudit.novelty import MAX_IDEA_CHARS
from tests.test_novelty import NOVELTY_SOURCES, PRIOR_IDEA, prior_art_world
from tests.test_server import connected, error_text, structured

pytestmark = pytest.mark.anyio


@pytest.fixture
def settings() -> Settings:
    return load_settings(overrides={"sources": list(NOVELTY_SOURCES), "max_retries": 0})


async def test_assess_novelty_names_the_prior_art(settings: Settings) -> None:
    async with connected(settings, prior_art_world()) as client:
        result = structured(await client.call_tool("assess_novelty", {"idea": PRIOR_IDEA}))

    assert result["assessment"] == "critical"
    assert result["recommendation"] == "pivot"
    assert result["similar_papers"][0]["doi"] == "10.9999/enzyme"
    assert {source["state"] for source in result["sources"]} == {"answered"}


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"idea": ""}, "at least 1 character"),
        ({"idea": "x " * 50_000}, f"at most {MAX_IDEA_CHARS}"),
        ({"idea": ["a", "list"]}, "valid string"),
        ({"idea": PRIOR_IDEA, "threshold": 3}, "less than or equal to 1"),
        ({"idea": "the of and"}, "no words to search for"),
    ],
)
async def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(
    settings: Settings, arguments: dict[str, object], complaint: str
) -> None:
    fake = prior_art_world()
    async with connected(settings, fake) as client:
        rejected = await client.call_tool("assess_novelty", arguments)
        assert complaint in error_text(rejected)
        assert fake.requests == []
        again = structured(await client.call_tool("assess_novelty", {"idea": PRIOR_IDEA}))

    assert again["status"] == "ok"
