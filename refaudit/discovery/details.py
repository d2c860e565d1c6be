"""`show`: one work in full, where each merged field came from and who disagrees.

Each field of the merged record comes from the most authoritative source that has
it (`merge.FIELD_PRIORITY`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from refaudit.asking import Ledger
from refaudit.config import Settings
from refaudit.discovery import opening
from refaudit.discovery.graph import neighbours
from refaudit.discovery.integrity import integrity_note, own_notices
from refaudit.discovery.resolve import Status, resolve
from refaudit.merge import priority
from refaudit.models import Notice, RunStats, SourceStatus, Work

if TYPE_CHECKING:
    import httpx

#: Fields `show` compares across sources.
_COMPARED_FIELDS = (
    "title",
    "authors",
    "year",
    "venue",
    "publisher",
    "volume",
    "issue",
    "pages",
    "type",
    "doi",
    "arxiv_id",
    "pmid",
    "citation_count",
)


@dataclass
class FieldOrigin:
    """Which source gave a merged field, and what the sources that disagree say."""

    field: str
    value: str
    source: str
    # `dataclasses.field`: the class's own `field` attribute shadows the bare name.
    others: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclass
class PaperDetails:
    """One work in full: merged record, per-source records, notices, citation graph."""

    identifier: str
    status: Status
    work: Work | None = None
    records: dict[str, Work] = field(default_factory=dict)
    notices: list[Notice] = field(default_factory=list)
    references: list[Work] = field(default_factory=list)
    citations: list[Work] = field(default_factory=list)
    sources: dict[str, SourceStatus] = field(default_factory=dict)
    message: str = ""
    fields: list[FieldOrigin] = field(default_factory=list)


async def paper_details(
    identifier: str,
    settings: Settings,
    *,
    references: bool = False,
    citations: bool = False,
    limit: int = 20,
    transport: httpx.AsyncBaseTransport | None = None,
    stats: RunStats | None = None,
) -> PaperDetails:
    """The merged record of one work, each source's record, notices and citation graph."""
    tracker = Ledger()
    async with opening.open_discovery_sources(settings, transport, stats=stats) as opened:
        resolution = await resolve(identifier, opened, tracker)
        work = resolution.work_for(identifier)
        details = PaperDetails(identifier, resolution.status, message=resolution.message)
        if work is not None:
            details.work = work
            details.records = resolution.records
            details.notices = own_notices(work)
            details.fields = field_origins(resolution.records, work)
            details.message = integrity_note(work)
            if references:
                details.references = await neighbours(
                    "references", work, resolution.records, opened, tracker, limit
                )
            if citations:
                details.citations = await neighbours(
                    "citations", work, resolution.records, opened, tracker, limit
                )
    details.sources = dict(tracker.statuses)
    return details


def _display(name: str, value: object) -> str:
    if value is None or value == [] or value == "":
        return ""
    if name == "authors":
        return "; ".join(person.display() for person in value)  # type: ignore[attr-defined]
    return str(value)


def _comparable(name: str, work: Work) -> str:
    """The form in which two sources' values count as the same (spelling, initials aside)."""
    from refaudit.match import normalize_text

    value = _display(name, getattr(work, name))
    if name == "authors":
        return "; ".join(normalize_text(person.full_family) for person in work.authors)
    if name in ("doi", "arxiv_id", "pmid", "year", "citation_count"):
        return value.lower()
    if name == "pages":
        return re.sub(r"\s*[-\u2013\u2014]+\s*", "-", value)
    return normalize_text(value)


def field_origins(records: dict[str, Work], shown: Work) -> list[FieldOrigin]:
    """For each compared field: the value shown, its source, and the sources that differ.

    `shown` is the record presented: the published version of a paper with a preprint,
    else all records merged.
    """
    ordered = sorted(records.values(), key=lambda work: priority(work.source))
    origins: list[FieldOrigin] = []
    for name in _COMPARED_FIELDS:
        value = _display(name, getattr(shown, name))
        if not value:
            continue
        wanted = _comparable(name, shown)
        having = [w for w in ordered if _display(name, getattr(w, name))]
        same = [w for w in having if _comparable(name, w) == wanted]
        others = {w.source: _display(name, getattr(w, name)) for w in having if w not in same}
        winner = same[0].source if same else shown.source
        origins.append(FieldOrigin(name, value, winner, others))
    return origins
