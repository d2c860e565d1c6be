"""Resolution: find every source's record of the work an identifier or title names.

A title is resolved only when a search finds a work whose title agrees with it
("verified first"), and when every source fails the answer is `unverified`,
never `not_found`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from refaudit.asking import Ledger, ask
from refaudit.discovery.fusion import cluster, search_all
from refaudit.discovery.identifiers import parse_identifier
from refaudit.identifiers import DATACITE_ARXIV_PREFIX, is_datacite_arxiv_doi, normalize_doi
from refaudit.merge import merge_records, priority
from refaudit.models import Work
from refaudit.sources import registry

if TYPE_CHECKING:
    from refaudit.sources import Sources

Status = Literal["ok", "retracted", "not_found", "unverified", "invalid"]

#: Title-comparison kinds that make a title lookup confident enough to emit BibTeX.
CONFIDENT_TITLE_KINDS = frozenset({"exact", "minor", "word_form", "typo"})
#: How many hits each source returns when a title is looked up.
TITLE_CANDIDATES = 5
#: How many closest candidates a not-found title message names.
CLOSEST_SHOWN = 3

_LOOKUPS: dict[str, tuple[str, str]] = {
    "doi": ("doi", "lookup_dois"),
    "arxiv": ("arxiv", "lookup_arxiv"),
    "pmid": ("pmid", "lookup_pmids"),
    "s2": ("s2", "lookup_ids"),
    "openalex": ("openalex", "lookup_ids"),
}
#: Sources that never hold arXiv's DataCite DOIs, so they are not asked for them.
_NOT_FOR_ARXIV_DOIS = frozenset(registry.SOURCE_NAMES) - registry.names_where("holds_arxiv_dois")
_PREPRINT_RECORD_TYPES = frozenset({"preprint", "posted-content"})


@dataclass
class Resolution:
    """The records found for one identifier or title, or why there are none."""

    status: Status
    records: dict[str, Work] = field(default_factory=dict)
    message: str = ""

    @property
    def work(self) -> Work | None:
        return merge_records(list(self.records.values())) if self.records else None

    @property
    def published_work(self) -> Work | None:
        """The work as published, when its records include the published version.

        A conference paper with an arXiv preprint resolves (by OpenAlex or Semantic
        Scholar id, by title) to records of both, and the preprint's (arXiv, DataCite) outrank the
        aggregators' field by field: merged, the entry would be the preprint's. The
        preprint's records only fill in fields the published ones lack (its arXiv id).
        """
        published = [work for work in self.records.values() if not _is_preprint_record(work)]
        preprints = [work for work in self.records.values() if _is_preprint_record(work)]
        if not published or not preprints:
            return self.work
        merged = merge_records([_without_arxiv_doi(work) for work in published])
        if not merged.arxiv_id:
            merged.arxiv_id = next((w.arxiv_id for w in preprints if w.arxiv_id), None)
        merged.found_in = [*merged.found_in, *(w.source for w in preprints)]
        pooled = merge_records(list(self.records.values()))
        merged.notices, merged.is_retracted = pooled.notices, pooled.is_retracted
        return merged

    def work_for(self, text: str) -> Work | None:
        """The record to present for `text`: the published version, unless it names the preprint.

        An arXiv id or arXiv's DataCite DOI asks for the preprint; any other id or a
        title asks for the paper, which readers cite as published.
        """
        identifier = parse_identifier(text)
        names_preprint = identifier is not None and (
            identifier.kind == "arxiv" or is_datacite_arxiv_doi(identifier.value)
        )
        return self.work if names_preprint else self.published_work


def _is_preprint_record(work: Work) -> bool:
    """A record of the preprint: typed so, on a preprint server, or only arXiv's DOI."""
    from refaudit.match import is_preprint_venue

    return (
        (work.type or "").lower() in _PREPRINT_RECORD_TYPES
        or is_preprint_venue(work.venue)
        or (not work.venue and is_datacite_arxiv_doi(work.doi or ""))
    )


def _without_arxiv_doi(work: Work) -> Work:
    """An aggregator's published record may carry the preprint's DataCite DOI; drop it."""
    return dataclasses.replace(work, doi=None) if is_datacite_arxiv_doi(work.doi or "") else work


async def _lookup(
    kind: str,
    value: str,
    opened: Sources,
    tracker: Ledger,
    records: dict[str, Work],
    *,
    skip: Collection[str] = (),
) -> None:
    """Ask every capable source lacking a record for `value`; add what they find."""
    capability, method = _LOOKUPS[kind]
    targets = [
        source
        for source in opened.with_capability(capability)
        if source.name not in records and source.name not in skip
    ]
    answers = await asyncio.gather(
        *(ask(tracker, source.name, getattr(source, method)([value])) for source in targets)
    )
    for source, answer in zip(targets, answers, strict=True):
        if answer:
            records[source.name] = next(iter(answer.values()))


async def resolve(text: str, opened: Sources, tracker: Ledger) -> Resolution:
    """Find the database records of the work `text` names (an identifier or a title)."""
    identifier = parse_identifier(text)
    if identifier is None:
        return Resolution(
            "invalid", message=f"{text.strip()!r} is neither an identifier nor a title"
        )
    if identifier.kind == "title":
        return await _resolve_title(identifier.value, opened, tracker)
    records: dict[str, Work] = {}
    asked: set[tuple[str, str]] = {(identifier.kind, identifier.value)}
    skip = _NOT_FOR_ARXIV_DOIS if is_datacite_arxiv_doi(identifier.value) else ()
    await _lookup(identifier.kind, identifier.value, opened, tracker, records, skip=skip)
    if identifier.kind == "arxiv":
        arxiv_doi = f"{DATACITE_ARXIV_PREFIX}arxiv.{identifier.value}".lower()
        asked.add(("doi", arxiv_doi))
        await _lookup("doi", arxiv_doi, opened, tracker, records, skip=_NOT_FOR_ARXIV_DOIS)
    records = _consistent(records)
    if records:
        await _complete(records, opened, tracker, asked)
        return Resolution("ok", records)
    return _nothing_found(f"no source knows {identifier.kind} {identifier.value}", tracker)


def _consistent(records: dict[str, Work]) -> dict[str, Work]:
    """Drop records describing another version of the work than the most authoritative one.

    Semantic Scholar answers an arXiv id with the published paper; its DOI then
    differs from the preprint's DataCite DOI and `is_same_work` keeps them apart.
    """
    from refaudit.match import is_same_work

    if not records:
        return records
    anchor = min(records.values(), key=lambda work: priority(work.source))
    return {name: work for name, work in records.items() if is_same_work(anchor, work)}


async def _complete(
    records: dict[str, Work], opened: Sources, tracker: Ledger, asked: set[tuple[str, str]]
) -> None:
    """Ask the remaining sources by the DOI and arXiv id the found records carry."""
    merged = merge_records(list(records.values()))
    wanted = [("doi", normalize_doi(merged.doi)), ("arxiv", merged.arxiv_id)]
    for kind, value in wanted:
        if not value or (kind, value) in asked:
            continue
        asked.add((kind, value))
        skip = _NOT_FOR_ARXIV_DOIS if kind == "doi" and is_datacite_arxiv_doi(value) else ()
        found: dict[str, Work] = {}
        await _lookup(kind, value, opened, tracker, found, skip=[*skip, *records])
        kept = _consistent({**records, **found})
        records.clear()
        records.update(kept)


def _nothing_found(message: str, tracker: Ledger) -> Resolution:
    """not_found only when every source asked really answered; otherwise unverified."""
    if tracker.outcome() == "absent":
        return Resolution("not_found", message=message)
    if not tracker.asked:
        return Resolution(
            "unverified", message=f"no source could answer ({tracker.failure_text()})"
        )
    return Resolution(
        "unverified", message=f"{message}, but some sources failed ({tracker.failure_text()})"
    )


async def _resolve_title(title: str, opened: Sources, tracker: Ledger) -> Resolution:
    """Search for `title`; accept only a work whose title agrees with it."""
    from refaudit.match import compare_titles
    from refaudit.sources.base import SearchQuery

    answers = await search_all(
        opened.with_capability("search"),
        SearchQuery(title=title, limit=TITLE_CANDIDATES),
        tracker,
    )
    scored = []
    for found in cluster(answers):
        merged = merge_records(found.records)
        comparison = compare_titles(title, merged.title or "", merged.subtitle)
        scored.append((comparison, merged, found))
    scored.sort(key=lambda item: (-item[0].score, -(item[1].citation_count or 0)))
    confident = [item for item in scored if item[0].kind in CONFIDENT_TITLE_KINDS]
    if confident:
        best = max(confident, key=lambda item: (item[0].score, item[1].citation_count or 0))
        records = {work.source: work for work in reversed(best[2].records)}
        await _complete(records, opened, tracker, set())
        return Resolution("ok", records)
    closest = "; ".join(_describe(merged) for _, merged, _ in scored[:CLOSEST_SHOWN])
    message = f"no work titled {title!r} found"
    if closest:
        message += f"; closest: {closest}"
    return _nothing_found(message, tracker)


def _describe(work: Work) -> str:
    parts = [f"“{work.title}”"]
    if work.year:
        parts.append(str(work.year))
    identifier = work.doi or (f"arXiv:{work.arxiv_id}" if work.arxiv_id else None)
    if identifier:
        parts.append(identifier)
    return " ".join(parts)
