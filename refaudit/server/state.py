"""What one MCP server process shares across its sessions and calls.

The lifespan opens the source clients once (rate limits, circuit breakers, the
connection pool and the cache then hold across every call and session) and keeps
the health each source has shown, for `refaudit://sources`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from refaudit.config import Settings
from refaudit.models import AuditReport, RunStats, SourceStatus
from refaudit.render import RenderContext

if TYPE_CHECKING:
    import httpx

    from refaudit.sources import Sources


@dataclass
class SourceHealth:
    """What this server process has seen of one source so far."""

    last_state: str = "not used yet"
    last_reason: str | None = None
    last_seen: str | None = None


@dataclass
class ServerState:
    """Shared by every session of one server process (and yielded by its lifespan)."""

    settings: Settings
    root: Path | None
    transport: httpx.AsyncBaseTransport | None
    health: dict[str, SourceHealth] = field(default_factory=dict)
    totals: RunStats = field(default_factory=RunStats)
    """every run's requests, cache hits, rate limits and failures, per source"""
    sources: Sources | None = None
    """the source clients opened once in the server's lifespan, shared by every call"""

    def record_report(self, report: AuditReport) -> None:
        """Fold one run's per-source outcome and cost into the process-wide view."""
        self.record_statuses([result.sources for result in report.results])
        self.record_stats(report.stats)

    def record_statuses(self, runs: list[Mapping[str, SourceStatus]]) -> None:
        """A source is failing if it failed anywhere in this run, ok if it answered."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        failed: dict[str, str | None] = {}
        used: set[str] = set()
        for statuses in runs:
            for name, status in statuses.items():
                if status.state == "failed":
                    failed.setdefault(name, status.reason)
                elif status.state in ("answered", "cached"):
                    used.add(name)
        for name in used | set(failed):
            health = self.health.setdefault(name, SourceHealth())
            health.last_seen = now
            if name in failed:
                health.last_state, health.last_reason = "failing", failed[name]
            else:
                health.last_state, health.last_reason = "ok", None

    def record_stats(self, stats: RunStats) -> None:
        """Add one run's request, cache-hit, rate-limit and failure counts."""
        self.totals.add(stats)


def render_context(settings: Settings) -> RenderContext:
    """Tools judge `flagged` by the server's fail policy, as `refaudit check` does."""
    return RenderContext(fail_on=list(settings.fail_on))
