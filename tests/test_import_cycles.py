"""No two refaudit modules import each other, however indirectly.

A circle makes import order matter and hides a missing layer; the lazy imports
inside functions that usually paper over one count here as imports too, and so
do the ones made only for type checking.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "refaudit"


def module_names(package: Path) -> dict[str, Path]:
    """Every module of `package` by dotted name (a package by its own name)."""
    names = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _targets(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: set[str]
) -> set[str]:
    """The package's modules one import statement names, relative imports resolved.

    `from a import b` names module a.b when there is one, else a; a parent package
    run on the way to a submodule is not counted (every module would reach it).
    """
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = module.split(".")
            anchor = parts[: len(parts) - node.level + is_package]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        names = [
            f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
            for alias in node.names
        ]
    return {name for name in names if name in modules and name != module}


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module → the package's modules it imports anywhere in its body."""
    modules = module_names(package)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[name] |= _targets(node, name, path.name == "__init__.py", set(modules))
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_refaudit_has_no_import_circles() -> None:
    graph = import_graph(PACKAGE)
    described = [
        "; ".join(f"{m} imports {', '.join(sorted(graph[m] & set(c)))}" for m in c)
        for c in circles(graph)
    ]
    assert described == []


def test_a_circle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    package = tmp_path / "demo"
    (package / "store").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text("from demo.policy import Tally\n")
    (package / "policy.py").write_text("def tally():\n    from demo import models\n")
    (package / "store" / "__init__.py").write_text("from demo.store.sqlite import open_db\n")
    (package / "store" / "sqlite.py").write_text("from . import base\n")
    (package / "store" / "base.py").write_text("from .. import store\n")
    (package / "engine.py").write_text("import demo.models\n")
    assert circles(import_graph(package)) == [
        ["demo.models", "demo.policy"],
        ["demo.store", "demo.store.base", "demo.store.sqlite"],
    ]
