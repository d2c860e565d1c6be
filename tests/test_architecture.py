"""docs/architecture.md's layer table is the rule imports follow, and it names every module.

A contributor reads the table to learn what a module may import; this test keeps it
true: each module of refaudit/ belongs to one row (the longest path the table names
for it), imports only from its own row and the rows below, and every path the table
names exists.
"""

from __future__ import annotations

import re

from tests.test_import_cycles import PACKAGE, import_graph

ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
CODE = re.compile(r"`([\w./]+)`")


def layers(text: str) -> list[tuple[str, list[str]]]:
    """(layer, dotted module prefixes) per row of the layer table, bottom row first."""
    section = text.split("## Packages, their one job", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "---"):
            continue
        rows.append((cells[0], [_dotted(path) for path in CODE.findall(cells[1])]))
    return rows[::-1]


def _dotted(path: str) -> str:
    parts = path.removesuffix("/").removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["refaudit", *parts])


def _within(module: str, prefix: str) -> bool:
    """`module` is `prefix` or inside it; the package's own `__init__.py` holds only itself."""
    return module == prefix or (prefix != "refaudit" and module.startswith(prefix + "."))


def row_of(module: str, rows: list[tuple[str, list[str]]]) -> int | None:
    """The row whose longest matching prefix names `module`."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(rows):
        for prefix in prefixes:
            if _within(module, prefix) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return best[0] if best else None


def test_the_layer_table_places_every_module_and_names_only_real_ones() -> None:
    rows = layers(ARCHITECTURE.read_text(encoding="utf-8"))
    graph = import_graph(PACKAGE)
    assert len(rows) >= 6
    unplaced = sorted(m for m in graph if row_of(m, rows) is None)
    assert unplaced == [], f"add these to the layer table of {ARCHITECTURE.name}: {unplaced}"
    named = {prefix for _, prefixes in rows for prefix in prefixes}
    stale = sorted(p for p in named if not any(_within(m, p) for m in graph))
    assert stale == [], f"{ARCHITECTURE.name} names modules that do not exist: {stale}"


def test_every_import_points_down_the_layer_table() -> None:
    rows = layers(ARCHITECTURE.read_text(encoding="utf-8"))
    upward = []
    for module, targets in import_graph(PACKAGE).items():
        own = row_of(module, rows)
        for target in sorted(targets):
            theirs = row_of(target, rows)
            if own is not None and theirs is not None and theirs > own:
                upward.append(f"{module} ({rows[own][0]}) imports {target} ({rows[theirs][0]})")
    assert upward == []


def test_rows_are_read_bottom_first_and_the_longest_path_decides() -> None:
    table = (
        "## Packages, their one job\n\n| layer | modules | job |\n|---|---|---|\n"
        "| pipelines | `mirror/parallel.py` | workers |\n"
        "| sources | `mirror/`, `cache.py` | stores |\n"
    )
    rows = layers(table)
    assert [name for name, _ in rows] == ["sources", "pipelines"]
    assert row_of("refaudit.mirror.parallel", rows) == 1
    assert row_of("refaudit.mirror.store", rows) == 0
    assert row_of("refaudit.mirror", rows) == 0
    assert row_of("refaudit.cache", rows) == 0
    assert row_of("refaudit.caches", rows) is None
    assert row_of("refaudit.new_module", [("front ends", ["refaudit"])]) is None
