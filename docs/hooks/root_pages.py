"""MkDocs hook: the site's overview and changelog pages are README.md and CHANGELOG.md.

Both files live at the repository root, where GitHub and PyPI show them, and link into
docs/ from there. On the site, docs/index.md and docs/changelog.md take their text with
those links made relative to docs/, and links to other files of the repository pointed
at GitHub, so that one text serves both and `mkdocs build --strict` checks its links.
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


def _relinked(text: str) -> str:
    def target(match: re.Match[str]) -> str:
        path, _, anchor = match.group(1).partition("#")
        anchor = f"#{anchor}" if anchor else ""
        if path in PAGE_OF:
            return f"]({PAGE_OF[path]}{anchor})"
        if path.startswith("docs/"):
            return f"]({path.removeprefix('docs/')}{anchor})"
        return f"]({REPOSITORY}{path}{anchor})"

    return RELATIVE_LINK.sub(target, text)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    source = PAGES.get(page.file.src_uri)
    if source is None:
        return markdown
    return _relinked((ROOT / source).read_text(encoding="utf-8"))
