"""BibTeX for works: the agency's own entry when it has one, else one written from the record.

Keys follow refaudit's `{family}{year}{firstword}` convention and are unique across
one answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from refaudit.asking import Ledger, ask
from refaudit.config import Settings
from refaudit.discovery import opening
from refaudit.discovery.agency import (
    BIBTEX_HEAD,
    BibtexProvider,
    agency_for,
    one_field_per_line,
    with_note,
)
from refaudit.discovery.integrity import integrity_note, is_withdrawn, withdrawal_note
from refaudit.discovery.resolve import Status, resolve
from refaudit.models import RunStats, Work

if TYPE_CHECKING:
    import httpx

    from refaudit.sources import Sources


@dataclass
class BibtexEntry:
    """BibTeX for one requested identifier, or why there is none."""

    identifier: str
    """as it was asked for: a DOI, arXiv id, PMID, S2 or OpenAlex id, or a title"""
    status: Status
    bibtex: str | None = None
    """the entry, keyed `key`; null when there is no record to write it from"""
    key: str | None = None
    source: str | None = None
    """crossref/datacite (the DOI agency's own BibTeX) or record (built from the record)"""
    message: str = ""
    """why there is no entry, or what to know about it (a retraction notice, say)"""
    work: Work | None = None
    """the merged record the entry describes"""


async def bibtex_entries(
    items: Sequence[str | Work],
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    stats: RunStats | None = None,
) -> list[BibtexEntry]:
    """BibTeX for each identifier, title or merged record, keys unique across the list.

    An identifier or title is first resolved in the databases; a record (a search
    hit) is written as it is. Crossref DOIs use Crossref's own BibTeX (content
    negotiation), DataCite DOIs (arXiv's 10.48550 included) DataCite's; anything
    else is written from the merged record. Keys follow refaudit's
    `{family}{year}{firstword}` convention. A withdrawn work's entry has status
    "retracted" and a `note` naming each notice (kind, date, DOI); callers write it
    only when asked to.
    """
    async with opening.open_discovery_sources(settings, transport, stats=stats) as opened:
        made = await asyncio.gather(*(_entry(item, opened) for item in items))
    taken: set[str] = set()
    return [rekey(entry, taken) for entry in made]


async def _entry(item: str | Work, opened: Sources) -> BibtexEntry:
    """One item's entry (keyed as its agency or record gives it), or why there is none."""
    tracker = Ledger()
    if isinstance(item, str):
        resolution = await resolve(item, opened, tracker)
        work = resolution.work_for(item)
        if work is None:
            return BibtexEntry(item, resolution.status, message=resolution.message)
        label = item
    else:
        label, work = _label(item), item
    bibtex, source, note = await _fetch_bibtex(work, opened, tracker)
    status: Status = "ok"
    if is_withdrawn(work):
        # Written only when asked for (to discuss the retraction), and then saying so.
        status, bibtex = "retracted", with_note(bibtex, withdrawal_note(work))
    return BibtexEntry(label, status, bibtex, source=source, message=note, work=work)


def _label(work: Work) -> str:
    """What an entry built from a record (not from a user's text) is listed as."""
    return work.doi or (f"arXiv:{work.arxiv_id}" if work.arxiv_id else work.title or "")


async def _fetch_bibtex(work: Work, opened: Sources, tracker: Ledger) -> tuple[str, str, str]:
    """(BibTeX, origin, note): the agency's own entry, else one written from the record."""
    from refaudit.bibtex import work_to_entry

    agency = agency_for(work)
    source = opened.get(agency) if agency else None
    note = ""
    if agency and work.doi and isinstance(source, BibtexProvider):
        text = await ask(tracker, agency, source.fetch_bibtex(work.doi))
        if text and BIBTEX_HEAD.match(text):
            return one_field_per_line(text), agency, integrity_note(work)
        status = tracker.statuses.get(agency)
        failure = status.reason if status and status.state == "failed" else "no BibTeX returned"
        note = f"{agency} BibTeX unavailable ({failure}); "
    built_from = ", ".join(work.found_in)
    note += f"built from the merged record ({built_from})"
    integrity = integrity_note(work)
    return work_to_entry(work), "record", f"{note}. {integrity}" if integrity else note


def metadata_entry(work: Work) -> BibtexEntry:
    """BibTeX written from metadata the caller already holds (no source is asked)."""
    from refaudit.bibtex import work_to_entry

    return BibtexEntry(
        _label(work),
        "ok",
        work_to_entry(work),
        source="metadata",
        message="written from the metadata given, not checked against a source",
        work=work,
    )


def rekey(entry: BibtexEntry, taken: set[str]) -> BibtexEntry:
    """Give `entry` refaudit's key for its work, unique against `taken` (which it joins)."""
    from refaudit.bibtex import make_key

    if entry.bibtex is None or entry.work is None:
        return entry
    lowered = {key.lower() for key in taken}
    key = make_key(entry.work, lowered)
    taken.add(key)
    bibtex = BIBTEX_HEAD.sub(lambda m: f"@{m.group(1)}{{{key},", entry.bibtex, count=1)
    return dataclasses.replace(entry, bibtex=bibtex, key=key)
