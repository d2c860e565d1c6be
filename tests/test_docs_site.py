"""The documentation site lists every page of docs/ and builds without a warning.

A page added to docs/ but not to mkdocs.yml's navigation, a link to a missing page or
anchor: each is a warning that `mkdocs build --strict` turns into a failure.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


class _Loader(yaml.SafeLoader):
    """mkdocs.yml names Python objects (`!!python/name:`); only the page names matter here."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _pages(value)]
    if isinstance(nav, list):
        return [page for item in nav for page in _pages(item)]
    return []


def test_every_page_of_docs_is_in_the_navigation_once() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    listed = _pages(config["nav"])
    assert len(listed) == len(set(listed)), "a page is listed twice"
    pages = {path.relative_to(ROOT / "docs").as_posix() for path in (ROOT / "docs").rglob("*.md")}
    assert sorted(pages - set(listed)) == [], "add these pages to mkdocs.yml's nav"
    assert sorted(set(listed) - pages) == [], "mkdocs.yml lists pages docs/ does not have"
    assert listed[0] == "index.md"


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None, reason="needs the docs extra (mkdocs)"
)
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    warnings = [line for line in built.stderr.splitlines() if "WARNING" in line]
    assert built.returncode == 0 and not warnings, "\n".join(warnings) or built.stderr[-2000:]
    assert (tmp_path / "architecture" / "index.html").is_file()
    assert "audit_bibliography" in (tmp_path / "api" / "index.html").read_text(encoding="utf-8")
