"""What `refaudit sources` and the MCP `refaudit://sources` resource say about each source.

One description per registry entry: whether it is enabled (and why not), whether
its key is set (never the key), its published limits and pacing, its quota as
the cache database keeps it, and the health the calling process has seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from refaudit.config import Settings
from refaudit.sources import load, rate_limits_for, registry, usable


def describe_sources(
    settings: Settings, health: Mapping[str, Mapping[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """One plain-data description per registered source, in registry order."""
    ledger = _ledger(settings)
    try:
        return [
            _describe(entry, settings, ledger, (health or {}).get(entry.name))
            for entry in registry.SOURCES
        ]
    finally:
        if ledger is not None:
            ledger.close()


def _describe(
    entry: registry.SourceEntry,
    settings: Settings,
    ledger: Any,
    health: Mapping[str, Any] | None,
) -> dict[str, Any]:
    module = load(entry.name)[1]
    key = settings.api_key(entry.name)
    chosen = entry.name in settings.sources
    enabled = chosen and usable(entry.name, settings)
    if enabled:
        why_not = None
    elif not chosen:
        why_not = "not among the configured sources (--sources, REFAUDIT_SOURCES, sources.enabled)"
    else:
        why_not = f"needs an API key: {entry.key_help}"
    quota = None
    if entry.quota is not None:
        quota = {"calls": entry.quota.calls, "window": entry.quota.window}
        if key:
            from refaudit.sources.quota import Budget

            quota |= asdict(Budget(entry, key, ledger, module.classify).view())
    return {
        "name": entry.name,
        "title": entry.title,
        "enabled": enabled,
        "why_not": why_not,
        "base_url": settings.base_urls.get(entry.name),
        "url_variable": entry.url_env,
        "api_key_configured": key is not None,
        "key": "set" if key else ("missing" if entry.requires_key else "optional"),
        "key_variables": list(entry.key_env),
        "asked": entry.asked,
        "capabilities": sorted(entry.capabilities),
        "published_limits": entry.limits,
        "rate_limits": {
            pool: {"rps": limit.rps, "burst": limit.burst, "concurrency": limit.concurrency}
            for pool, limit in rate_limits_for(module, settings).items()
        },
        "quota": quota,
        "health": dict(health) if health is not None else {"state": "not used yet"},
    }


def _ledger(settings: Settings) -> Any:
    """The cache database holding the quotas, when one exists (never created just to read)."""
    from refaudit.cache import ResponseCache

    path = settings.resolved_cache_dir() / "responses.sqlite3"
    if not path.is_file():
        return None
    return ResponseCache(path)
