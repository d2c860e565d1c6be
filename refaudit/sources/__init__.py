"""The upstream sources, registered by name and imported only when a run needs them.

Adding a source is one module of the shape described in `base.py` and one entry
in `registry.SOURCES`.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from types import ModuleType
from typing import TYPE_CHECKING, Any

from refaudit.models import RunStats
from refaudit.sources import registry

if TYPE_CHECKING:
    import httpx

    from refaudit.cache import ResponseCache
    from refaudit.config import Settings
    from refaudit.sources.base import Source
    from refaudit.sources.client import SourceClient
    from refaudit.sources.doiorg import DoiResolver
    from refaudit.sources.pacing import RateLimit
    from refaudit.sources.quota import Budget

    #: A registry target: every source is built as `cls(client, settings)`.
    SourceFactory = Callable[[SourceClient, Settings], Source]


class Sources:
    """The sources enabled for one run, each with its own SourceClient."""

    def __init__(
        self,
        sources: Mapping[str, Source],
        clients: Mapping[str, SourceClient],
        cache: ResponseCache | None = None,
        cache_problem: str | None = None,
        resolver: DoiResolver | None = None,
    ) -> None:
        self._sources = dict(sources)
        self.clients = dict(clients)
        self._cache = cache
        self._cache_problem = cache_problem
        #: doi.org, asked about DOIs no registration agency among the sources knows
        self.resolver = resolver

    @property
    def cache_problem(self) -> str | None:
        """Why this run could not use (or stopped using) the response cache, if it did."""
        return self._cache_problem or (self._cache.problem if self._cache else None)

    @property
    def enabled(self) -> list[str]:
        return list(self._sources)

    def get(self, name: str) -> Source | None:
        return self._sources.get(name)

    def floor_s(self, requests: Mapping[str, int]) -> float:
        """Seconds the sources' rate limits need for `requests` (sources run in parallel)."""
        return max(
            (
                count / self.clients[name].slowest_rps
                for name, count in requests.items()
                if name in self.clients
            ),
            default=0.0,
        )

    def only(self, names: list[str] | None) -> Sources:
        """The same open clients, restricted to `names` (all of them for None)."""
        if names is None:
            return self
        return Sources(
            {name: source for name, source in self._sources.items() if name in names},
            {name: client for name, client in self.clients.items() if name in names},
            self._cache,
            self._cache_problem,
            self.resolver,
        )

    def with_capability(self, capability: str, *, budgeted: bool = False) -> list[Source]:
        """The sources that can do `capability`; quota-bound ones only when `budgeted`."""
        return [
            s
            for s in self._sources.values()
            if capability in s.capabilities
            and (budgeted or registry.entry(s.name).asked == "always")
        ]


def load(name: str) -> tuple[SourceFactory, ModuleType]:
    """The source class registered under `name`, and its module."""
    module_name, class_name = registry.entry(name).target.split(":")
    module = importlib.import_module(module_name)
    return getattr(module, class_name), module


def rate_limits_for(module: ModuleType, settings: Settings) -> dict[str, RateLimit]:
    """A module's pools (`rate_limits(settings)` or `RATE_LIMIT`), with the user's rps override."""
    name = module.NAME
    chooser = getattr(module, "rate_limits", None)
    limits = dict(chooser(settings)) if chooser else {"default": module.RATE_LIMIT}
    override = settings.rate_limits.get(name)
    if override:
        limits = {pool: dataclasses.replace(lim, rps=override) for pool, lim in limits.items()}
    return limits


#: Clients a long-running process (the MCP server) opened once, handed out by
#: `open_sources` inside `sharing(...)` instead of opening new ones.
_SHARED: ContextVar[Sources | None] = ContextVar("refaudit_shared_sources", default=None)


@contextmanager
def sharing(sources: Sources) -> Iterator[None]:
    """Within this block, every `open_sources` hands out these open clients.

    Rate limits, circuit breakers, connections and the cache then hold across every
    run (and every MCP session) instead of starting afresh for each. Each run still
    counts its own requests into the stats it passes to `open_sources`.
    """
    token = _SHARED.set(sources)
    try:
        yield
    finally:
        _SHARED.reset(token)


def usable(name: str, settings: Settings) -> bool:
    """A registered source that has the key it needs."""
    entry = registry.BY_NAME.get(name)
    return entry is not None and (not entry.requires_key or bool(settings.api_key(name)))


def unusable_reason(name: str, settings: Settings) -> tuple[str, str] | None:
    """Why a source named by the user cannot be asked (message, hint), or None."""
    entry = registry.BY_NAME.get(name)
    if entry is None:
        return f"unknown source {name!r}", f"known: {', '.join(registry.SOURCE_NAMES)}"
    if not usable(name, settings):
        return f"{name} needs an API key", f"get {entry.key_help}"
    return None


def budget_for(
    name: str, module: ModuleType, settings: Settings, ledger: ResponseCache | None
) -> Budget | None:
    """The quota gate of a keyed source (None for the free ones)."""
    from refaudit.sources.quota import Budget

    entry = registry.entry(name)
    key = settings.api_key(name)
    if entry.quota is None or not key:
        return None
    return Budget(entry, key, ledger, module.classify)


@asynccontextmanager
async def open_sources(
    settings: Settings,
    stats: RunStats,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    names: list[str] | None = None,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
) -> AsyncIterator[Sources]:
    """Open one client per enabled source (sharing one cache) and close them afterwards.

    `clock` and `sleep` (default: the monotonic clock and `asyncio.sleep`) pace rate
    limits, back-offs and the breaker's cooldown: tests pass a fake clock whose sleep
    only advances it. Inside `sharing(...)` the shared clients are handed out instead
    and stay open.

    A source that needs a key is opened only when one is configured; its client
    gets a `Budget` that keeps the key's quota in the cache database, which is
    therefore opened even with `--no-cache` (the budget is not a cached answer).
    """
    from refaudit.cache import open_cache
    from refaudit.sources import doiorg
    from refaudit.sources.client import RUN_STATS, SourceClient

    shared = _SHARED.get()
    if shared is not None:
        token = RUN_STATS.set(stats)
        try:
            yield shared.only(names)
        finally:
            RUN_STATS.reset(token)
        return
    wanted = [n for n in (names or settings.sources) if usable(n, settings)]
    budgeted = any(registry.entry(n).quota for n in wanted)
    cache, cache_problem = (
        open_cache(settings.resolved_cache_dir())
        if settings.use_cache or budgeted
        else (None, None)
    )
    sources: dict[str, Source] = {}
    clients: dict[str, SourceClient] = {}
    extra_clients: list[SourceClient] = []
    timing: dict[str, Any] = {"clock": clock, "sleep": sleep}
    timing = {name: value for name, value in timing.items() if value is not None}
    try:
        for name in wanted:
            cls, module = load(name)
            client = SourceClient(
                name,
                settings.base_urls[name],
                settings=settings,
                stats=stats,
                limits=rate_limits_for(module, settings),
                cache=cache if settings.use_cache else None,
                transport=transport,
                **timing,
                gate=budget_for(name, module, settings, cache),
                hedging=True,
            )
            clients[name] = client
            sources[name] = cls(client, settings)
        resolver = None
        if any(registry.entry(n).registers_dois for n in wanted) and settings.base_urls.get(
            doiorg.NAME
        ):
            resolver_client = SourceClient(
                doiorg.NAME,
                settings.base_urls[doiorg.NAME],
                settings=settings,
                stats=stats,
                limits=rate_limits_for(doiorg, settings),
                cache=cache if settings.use_cache else None,
                transport=transport,
                **timing,
            )
            extra_clients.append(resolver_client)
            resolver = doiorg.DoiResolver(resolver_client)
        yield Sources(sources, clients, cache, cache_problem, resolver)
    finally:
        for client in [*clients.values(), *extra_clients]:
            await client.aclose()
        if cache is not None:
            cache.close()
