"""The one place discovery opens its sources, so tests can route them to fakes."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

from refaudit.config import Settings
from refaudit.models import RunStats

if TYPE_CHECKING:
    import httpx

    from refaudit.sources import Sources


def open_discovery_sources(
    settings: Settings,
    transport: httpx.AsyncBaseTransport | None,
    names: list[str] | None = None,
    stats: RunStats | None = None,
) -> AbstractAsyncContextManager[Sources]:
    """The sources, counting requests, cache hits and failures into `stats` when given."""
    from refaudit.sources import open_sources

    return open_sources(settings, stats or RunStats(), transport=transport, names=names)
