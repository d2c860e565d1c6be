"""Inputs that are not files on this machine: a Zotero library, an arXiv paper.

`check zotero:` and `check arXiv:2106.09685` name them where a file would go; each
is read into references (`read_remote`) before the audit starts, and audited with
the files given beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

    from refaudit.config import Settings
    from refaudit.models import Bibliography


def is_remote(spec: str) -> bool:
    """Whether a command-line input names a library or a paper rather than a file."""
    from refaudit.remote.arxiv import is_arxiv
    from refaudit.remote.zotero import is_zotero

    return is_zotero(spec) or is_arxiv(spec)


async def read_remote(
    spec: str, settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
) -> Bibliography:
    """The references of a `zotero:` library or an arXiv paper.

    Raises:
        InputError: the input cannot be read (as each reader says).
    """
    from refaudit.remote import arxiv, zotero

    if zotero.is_zotero(spec):
        return await zotero.read_library(zotero.parse_spec(spec), settings, transport=transport)
    return await arxiv.read_paper(spec, settings, transport=transport)
