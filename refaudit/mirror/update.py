"""`refaudit mirror update`: bring a mirror forward from the live APIs.

Each mirrored source's `changes_since(day)` pages through what changed (Crossref
`filter=from-index-date:`, OpenAlex `filter=from_updated_date:`, both with cursor
paging) through the ordinary source clients (rate limits, retries, circuit
breaker); the Retraction Watch CSV is downloaded as `refaudit retractions update`
does and its rows swapped in.
Each part is committed on its own, so an interrupted update keeps what it has
already written and the next one starts from the newest record held. The mirror's
`update_running` entry holds the start of an update until it ends, so the next one
can say that an earlier update was cut short.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from refaudit.config import Settings
from refaudit.crashpoint import crash_point
from refaudit.errors import SourceError
from refaudit.mirror.records import UPSTREAMS, MalformedRecord, MirrorRecord
from refaudit.mirror.store import MirrorStore, now_iso
from refaudit.models import RunStats
from refaudit.sources import load

if TYPE_CHECKING:
    import httpx

    from refaudit.mirror.build import BuildProgress

#: The mirrored sources whose API lists what changed since a day (Semantic Scholar's
#: changes come as a new Datasets release, loaded with `mirror build`).
UPDATABLE = tuple(u for u in UPSTREAMS if hasattr(load(u)[0], "changes_since"))
PARTS = (*UPDATABLE, "retractions")


@dataclass
class PartUpdate:
    """What updating one part of the mirror (a source, or the retractions) did."""

    written: int = 0
    skipped: int = 0
    #: the day a source's changes were fetched from
    since: str | None = None
    #: why the part failed (what it wrote before failing is kept)
    error: str | None = None


@dataclass
class UpdateReport:
    parts: dict[str, PartUpdate] = field(default_factory=dict)
    #: an earlier update that was killed before it finished, in one sentence
    interrupted: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(part.error for part in self.parts.values())

    def lines(self) -> list[str]:
        lines = [f"note: {sentence}" for sentence in self.interrupted]
        for name in PARTS:
            part = self.parts.get(name)
            if part is None:
                continue
            if part.error:
                lines.append(f"{name}: failed: {part.error}")
            else:
                since = f" since {part.since}" if part.since else ""
                skipped = f" ({part.skipped} skipped)" if part.skipped else ""
                lines.append(f"{name}: {part.written:,} records{since}{skipped}")
        return lines


async def update_mirror(
    store: MirrorStore,
    settings: Settings,
    *,
    since: str | None = None,
    parts: list[str] = list(PARTS),  # noqa: B006 - read only
    transport: httpx.AsyncBaseTransport | None = None,
    progress: BuildProgress | None = None,
) -> UpdateReport:
    """Fetch what changed upstream and write it into `store`; a failed part is reported."""
    from refaudit.sources import open_sources

    report = UpdateReport()
    info = store.info()
    if info.meta.get("update_running"):
        report.interrupted.append(
            f"an earlier mirror update (started {info.meta['update_running']}) was interrupted;"
            " the records it wrote are kept and this update goes on from the newest one held"
        )
    store.set_meta({"update_running": now_iso()})
    fallback = (info.updated_at or info.built_at or now_iso())[:10]
    names = [p for p in parts if p in UPDATABLE]
    async with open_sources(settings, RunStats(), transport=transport, names=names) as sources:
        for upstream in names:
            source = sources.get(upstream)
            day = since or info.newest.get(upstream) or fallback
            part = report.parts[upstream] = PartUpdate(since=day)
            pages = source.changes_since(day)  # type: ignore[union-attr]
            if progress:
                progress.step(f"fetching {upstream} changes since {day}")
            try:
                async for page in pages:
                    records = []
                    for item in page:
                        try:
                            records.append(MirrorRecord.from_json(upstream, item))
                        except MalformedRecord:
                            part.skipped += 1
                    part.written += store.upsert(records)
                    crash_point("mirror-update-page")
            except SourceError as exc:
                part.error = exc.message
    if "retractions" in parts:
        await _update_retractions(store, settings, report, transport)
    store.set_meta(
        {"updated_at": datetime.now(UTC).isoformat(timespec="seconds"), "update_running": ""}
    )
    return report


async def _update_retractions(
    store: MirrorStore,
    settings: Settings,
    report: UpdateReport,
    transport: httpx.AsyncBaseTransport | None,
) -> None:
    from refaudit.retractions.download import download_snapshot
    from refaudit.retractions.store import snapshot_path

    try:
        await download_snapshot(settings, transport=transport)
    except SourceError as exc:
        report.parts["retractions"] = PartUpdate(error=exc.message)
        return
    written = store.replace_retractions(snapshot_path(settings))
    report.parts["retractions"] = PartUpdate(written=written)
