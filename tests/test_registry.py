"""The source registry is the one place that names sources."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from refaudit.config import load_settings
from refaudit.sources import load, registry
from refaudit.sources.base import Source

REPO = Path(__file__).resolve().parents[1]
NAMES = frozenset(registry.SOURCE_NAMES)
# The registry names sources by definition; each source module names only itself.
ALLOWED = {REPO / "refaudit" / "sources" / "registry.py"}


def _listed_names(node: ast.AST) -> list[str]:
    """Source names written as elements of one literal collection or Literal[...].

    Identifier kinds share some names ("arxiv", "openalex"): a collection counts as a
    list of sources when source names are at least half of its strings.
    """
    if isinstance(node, ast.Dict):
        elements = [key for key in node.keys if key is not None]
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        elements = node.elts
    else:
        return []
    strings = [
        e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)
    ]
    names = [s for s in strings if s in NAMES]
    return names if 2 * len(names) >= len(strings) else []


def hand_written_lists(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        f"{path.relative_to(REPO)}:{node.lineno}: {', '.join(names)}"
        for node in ast.walk(tree)
        if len(names := _listed_names(node)) >= 2
    ]


def test_no_module_but_the_registry_lists_source_names() -> None:
    files = [*sorted((REPO / "refaudit").rglob("*.py")), *sorted((REPO / "bench").glob("*.py"))]
    offenders = [line for path in files if path not in ALLOWED for line in hand_written_lists(path)]
    assert offenders == [], "read these from refaudit.sources.registry instead:\n" + "\n".join(
        offenders
    )


def test_the_guard_catches_a_hand_written_list(tmp_path: Path) -> None:
    sample = REPO / "refaudit" / "_sample.py"
    text = (
        'ORDER = ("crossref", "dblp")\nONE = {"openalex": 1}\n'
        'for x in ["pubmed", "arxiv"]: pass\n'
        'KINDS = ("doi", "arxiv", "pmid", "openalex", "title")\n'
        'PROVENANCE = ("publisher", "retraction-watch", "pubmed", "openalex")\n'
    )
    sample.write_text(text, encoding="utf-8")
    try:
        found = hand_written_lists(sample)
    finally:
        sample.unlink()
    assert [line.split(": ", 1)[1] for line in found] == [
        "crossref, dblp",
        "pubmed, arxiv",
        "pubmed, openalex",
    ]


@pytest.mark.parametrize("entry", registry.SOURCES, ids=lambda e: e.name)
def test_every_entry_loads_a_source_of_that_name(entry: registry.SourceEntry) -> None:
    cls, module = load(entry.name)
    assert issubclass(cls, Source)
    assert cls.name == module.NAME == entry.name
    assert entry.base_url.startswith("https://")
    assert entry.url_env == f"REFAUDIT_{entry.name.upper()}_URL"


def test_url_and_key_overrides_come_from_the_registry() -> None:
    env = {e.url_env: f"http://127.0.0.1:9/{e.name}" for e in registry.SOURCES}
    env.update({e.key_env[0]: f"key-{e.name}" for e in registry.SOURCES if e.key_env})
    settings = load_settings(env=env)
    for entry in registry.SOURCES:
        assert settings.base_urls[entry.name] == f"http://127.0.0.1:9/{entry.name}"
        if entry.key_env:
            assert settings.api_key(entry.name) == f"key-{entry.name}"


def test_the_evidence_order_is_unchanged_for_the_free_sources() -> None:
    titles = registry.stages("title")
    assert titles[:3] == (("openalex",), ("crossref",), ("pubmed",))
    # The slowest pools are the last resorts: Semantic Scholar, DBLP, then arXiv.
    assert titles[3:] == (("semanticscholar",), ("dblp",), ("arxiv",))
    assert registry.stages("free_text")[:2] == (("crossref",), ("openalex",))
    assert set(registry.resolvers("doi", 0)) == {"crossref", "openalex"}
    assert set(registry.resolvers("doi", 1)) == {"datacite", "semanticscholar"}
    free = [n for n in registry.by_field_priority() if registry.entry(n).asked == "always"]
    assert free == [
        "crossref",
        "datacite",
        "pubmed",
        "arxiv",
        "dblp",
        "openalex",
        "semanticscholar",
    ]
