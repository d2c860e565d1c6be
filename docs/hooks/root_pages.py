"""MkDocs hook: pages made from the repository root's files, and links that leave docs/.

README.md and CHANGELOG.md live at the repository root, where GitHub and PyPI show them,
and link into docs/ from there. On the site, docs/index.md and docs/changelog.md take
their text with those links made relative to docs/. A page of docs/ may link to a file
outside it (`../examples/…`), which works on GitHub; on the site such a link points at
the file on GitHub instead. One text thus serves both, and `mkdocs build --strict` still
checks every link that stays inside the site.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"index.md": "README.md", "changelog.md": "CHANGELOG.md"}
PAGE_OF = {source: page for page, source in PAGES.items()}
REPOSITORY = "https://github.com/refaudit/refaudit/blob/main/"
RELATIVE_LINK = re.compile(r"\]\((?![a-z]+:|#)([^)\s]+)\)")


def _from_root(path: str) -> str:
    """Where a link written relative to the repository root goes on the site."""
    path, _, anchor = path.partition("#")
    anchor = f"#{anchor}" if anchor else ""
    if path in PAGE_OF:
        return PAGE_OF[path] + anchor
    if path.startswith("docs/"):
        return path.removeprefix("docs/") + anchor
    return REPOSITORY + path + anchor


def _relinked(text: str, *, at_root: bool) -> str:
    def target(match: re.Match[str]) -> str:
        path = match.group(1)
        if at_root:
            return f"]({_from_root(path)})"
        if path.startswith("../"):
            return f"]({_from_root(path.removeprefix('../'))})"
        return match.group(0)

    return RELATIVE_LINK.sub(target, text)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    source = PAGES.get(page.file.src_uri)
    if source is None:
        return _relinked(markdown, at_root=False)
    return _relinked((ROOT / source).read_text(encoding="utf-8"), at_root=True)
