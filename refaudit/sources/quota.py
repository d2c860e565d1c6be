"""Request budgets of the key-gated sources, shared by every run through the cache database.

Scopus Search allows 20,000 requests a week per key and IEEE Xplore 200 calls a
day: a budget that lived only in one process would let the third run of the day
be refused halfway. A `Budget` sits in front of a source's `SourceClient`:
before each request it refuses to send when the key was rejected in this run or
its quota is spent, and after each live answer it books the request, from the
API's own headers where it sends them (Scopus' `X-RateLimit-Remaining` and
`X-RateLimit-Reset`), else by counting. Cached answers cost nothing and are not
booked. The key itself is never stored: rows are keyed by a fingerprint of it.
"""

from __future__ import annotations

import datetime
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass

from refaudit.cache import QuotaRow, ResponseCache
from refaudit.errors import KeyRejected, QuotaSpent, RateLimited, SourceError
from refaudit.sources.registry import Quota, SourceEntry
from refaudit.sources.response import Fetched

#: What a source module makes of a live answer: the error it stands for, if any.
Classify = Callable[[Fetched], SourceError | None]


def key_fingerprint(key: str) -> str:
    """A stable id for a key that reveals nothing about it."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def window_end(quota: Quota, now: float) -> float:
    """When a window opened now resets: next 00:00 UTC, or a window's length from now."""
    if quota.resets == "utc-midnight":
        return (now // quota.window_s + 1) * quota.window_s
    return now + quota.window_s


def spent_reason(entry: SourceEntry, until: float) -> str:
    """The one sentence a run says about a spent quota (the same for every reference)."""
    assert entry.quota is not None
    moment = datetime.datetime.fromtimestamp(until, datetime.UTC)
    when = (
        "00:00 UTC"
        if entry.quota.resets == "utc-midnight" and moment.time() == datetime.time(0)
        else moment.strftime("%Y-%m-%d %H:%M UTC")
    )
    period = "daily" if entry.quota.window == "day" else "weekly"
    return f"{entry.title} {period} quota spent until {when}"


@dataclass
class QuotaView:
    """A budget as `refaudit sources` shows it."""

    quota: int
    used: int
    left: int
    resets_at: str | None
    spent_until: str | None
    measured: str


class Budget:
    """The gate in front of one keyed source's client (see `SourceClient.gate`)."""

    def __init__(
        self,
        entry: SourceEntry,
        key: str,
        ledger: ResponseCache | None,
        classify: Classify,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        assert entry.quota is not None
        self.entry = entry
        self.quota = entry.quota
        self.key_id = key_fingerprint(key)
        self._ledger = ledger
        self._classify = classify
        self._clock = clock
        self._row: QuotaRow | None = None
        self.rejected: KeyRejected | None = None

    def state(self) -> QuotaRow:
        """The current window's row (a new window when the old one has reset)."""
        now = self._clock()
        stored = self._ledger.quota(self.entry.name, self.key_id) if self._ledger else None
        row = stored or self._row
        if row is None or row.window_end <= now:
            row = QuotaRow(
                self.entry.name,
                self.key_id,
                self.quota.calls,
                0,
                None,
                window_end(self.quota, now),
                None,
            )
        if row.spent_until is not None and row.spent_until <= now:
            row.spent_until = None
        self._row = row
        return row

    def check(self, url: str) -> QuotaRow:
        """Raise when nothing may be sent: the key was refused this run, or the quota is spent."""
        if self.rejected is not None:
            raise KeyRejected(self.entry.name, self.rejected.reason, url=url)
        row = self.state()
        left = row.remaining if row.remaining is not None else row.quota - row.used
        if row.spent_until is None and left <= 0:
            row.spent_until = row.window_end
        if row.spent_until is not None:
            self._save(row)
            raise QuotaSpent(
                self.entry.name,
                spent_reason(self.entry, row.spent_until),
                until=row.spent_until,
                url=url,
            )
        return row

    def admit(self, url: str) -> None:
        """`check`, then book the request (just before it is sent: calls cannot overdraw)."""
        row = self.check(url)
        row.used += 1
        if row.remaining is not None:
            row.remaining -= 1
        self._save(row)

    def answered(self, fetched: Fetched) -> None:
        """Read what the answer says about the key and its budget; raise the error it stands for."""
        error = self._classify(fetched)
        row = self.state()
        if isinstance(error, KeyRejected):
            self.rejected = error
            self._unbook(row)
        elif isinstance(error, QuotaSpent):
            row.spent_until = error.until
            row.remaining = 0
            error = QuotaSpent(
                self.entry.name,
                spent_reason(self.entry, error.until),
                until=error.until,
                url=error.url,
            )
        elif isinstance(error, RateLimited):
            self._unbook(row)  # refused by the per-second limit: not counted by the service
        self._from_headers(row, fetched.headers)
        self._save(row)
        if error is not None:
            raise error

    def view(self) -> QuotaView:
        row = self.state()
        left = row.remaining if row.remaining is not None else max(0, row.quota - row.used)
        return QuotaView(
            quota=row.quota,
            used=row.used,
            left=0 if row.spent_until else left,
            resets_at=_iso(row.window_end) if row.used or row.spent_until else None,
            spent_until=_iso(row.spent_until) if row.spent_until else None,
            measured="headers" if row.remaining is not None else "counted",
        )

    def _from_headers(self, row: QuotaRow, headers: dict[str, str]) -> None:
        """Scopus announces its quota, what is left and when it resets on every answer."""
        try:
            if "x-ratelimit-limit" in headers:
                row.quota = int(headers["x-ratelimit-limit"])
            if "x-ratelimit-remaining" in headers:
                row.remaining = int(headers["x-ratelimit-remaining"])
                row.used = max(0, row.quota - row.remaining)
            if "x-ratelimit-reset" in headers:
                row.window_end = float(headers["x-ratelimit-reset"])
        except ValueError:
            return

    def _unbook(self, row: QuotaRow) -> None:
        row.used = max(0, row.used - 1)
        if row.remaining is not None:
            row.remaining += 1

    def _save(self, row: QuotaRow) -> None:
        self._row = row
        if self._ledger is not None:
            self._ledger.save_quota(row)


def _iso(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
