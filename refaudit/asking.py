"""Asking a source: one call, its outcome recorded, and one rule for "absent" vs "unknown".

Evidence gathering, discovery and the retraction look-ups all ask sources the
same way: `ask` runs the call and records on a `Ledger` (one per reference,
identifier or question) whether the source answered or failed; the planner
records the sources it chose not to ask and why. `Ledger.outcome` is the only
place that decides whether "nothing found" means the thing is absent (every
source that could hold it answered) or unknown (one of them failed, or none
was asked): a failure never becomes "not found".
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from refaudit.errors import NothingToAsk, OfflineMiss, SourceError
from refaudit.models import NotAskedWhy, SourceStatus

T = TypeVar("T")
Outcome = Literal["absent", "unknown"]


@dataclass
class Ledger:
    """How each source took part in answering one question."""

    statuses: dict[str, SourceStatus] = field(default_factory=dict, kw_only=True)

    def answered(self, source: str, *, from_cache: bool = False) -> None:
        """A source answered (a failure on another call for the same question stands)."""
        if self.statuses.get(source, SourceStatus("not_asked")).state != "failed":
            self.statuses[source] = SourceStatus("cached" if from_cache else "answered")

    def failed(self, source: str, reason: str) -> None:
        self.statuses[source] = SourceStatus("failed", reason)

    def not_asked(self, source: str, why: NotAskedWhy, detail: str) -> None:
        """The planner left `source` out: the verdict was decided, or it cannot hold the work."""
        if source not in self.statuses or self.statuses[source].state == "not_asked":
            self.statuses[source] = SourceStatus("not_asked", detail, why=why)

    @property
    def failures(self) -> dict[str, str]:
        return {n: s.reason or "failed" for n, s in self.statuses.items() if s.state == "failed"}

    @property
    def asked(self) -> list[str]:
        """Sources that answered, in name order."""
        return sorted(n for n, s in self.statuses.items() if s.state in ("answered", "cached"))

    def failure_text(self) -> str:
        return "; ".join(f"{name}: {reason}" for name, reason in sorted(self.failures.items()))

    def outcome(self, holders: Iterable[str] | None = None) -> Outcome:
        """Nothing was found: is the thing absent, or is that unknown?

        Absent only when at least one source that could hold it answered and none
        of those failed; `holders` narrows the sources that count (by default all).
        """
        wanted = set(holders) if holders is not None else set(self.statuses)
        states = [s.state for n, s in self.statuses.items() if n in wanted]
        if "failed" in states or not any(s in ("answered", "cached") for s in states):
            return "unknown"
        return "absent"


async def ask(ledgers: Ledger | Iterable[Ledger], source: str, call: Awaitable[T]) -> T | None:
    """Await one source call, recording its answer or failure on every ledger it serves.

    Returns None when the source failed, or was not asked as the query gave it nothing
    to search by; only `SourceError` is caught (anything else is a bug and propagates).
    """
    served = [ledgers] if isinstance(ledgers, Ledger) else list(ledgers)
    try:
        result = await call
    except NothingToAsk as exc:
        for ledger in served:
            ledger.not_asked(source, "no_query", exc.reason)
        return None
    except SourceError as exc:
        reason = f"offline: {exc.reason}" if isinstance(exc, OfflineMiss) else exc.reason
        for ledger in served:
            ledger.failed(source, reason)
        return None
    for ledger in served:
        ledger.answered(source)
    return result
