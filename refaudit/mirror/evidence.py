"""Evidence from the mirror first; only what it cannot settle goes to the live APIs.

The mirror answers through the same `gather_evidence` as the live sources
(`MirrorSource.as_sources` routes the questions). A reference is
settled by the mirror when every identifier it cites was found there and the
records found identify the work; the others are gathered again from the live
sources, and both sets of records are kept. Per reference, the mirror's part
is reported as the one source `mirror`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from refaudit.evidence import Evidence, complete_for_screening, gather_evidence, needs_search
from refaudit.models import Reference, SourceStatus
from refaudit.recognise import is_convincing
from refaudit.sources import Sources, registry

MIRROR = "mirror"


async def gather_mirror_first(
    references: list[Reference],
    mirror: Sources,
    live: Sources,
    *,
    on_done: Callable[[], None] | None = None,
) -> list[Evidence]:
    """Evidence for every reference: the mirror's, plus the live sources' for the unsettled."""
    evidence = await _as_mirror(lambda: gather_evidence(references, mirror))
    unsettled = [i for i, item in enumerate(evidence) if live.enabled and not settled(item)]
    for _ in range(len(evidence) - len(unsettled)):
        if on_done:
            on_done()
    if not unsettled:
        return evidence
    fresh = await gather_evidence([evidence[i].reference for i in unsettled], live, on_done=on_done)
    for index, item in zip(unsettled, fresh, strict=True):
        evidence[index] = _combine(evidence[index], item)
    return evidence


async def complete_mirror_first(
    wanted: list[tuple[Evidence, str]], mirror: Sources, live: Sources
) -> None:
    """Crossref's record (for its notices) of identified works: from the mirror, else live."""
    await _as_mirror(lambda: complete_for_screening(wanted, mirror), [item for item, _ in wanted])
    missing = [
        (item, doi)
        for item, doi in wanted
        if not any(
            w.source == "crossref" and (w.doi or "").lower() == doi
            for w in item.id_records + item.candidates
        )
    ]
    if missing and live.get("crossref") is not None:
        await complete_for_screening(missing, live)


def settled(item: Evidence) -> bool:
    """The mirror found every cited identifier and a record that identifies the work."""
    reference = item.reference
    if item.failures:
        return False
    cited = (
        (reference.doi, item.doi_records),
        (reference.arxiv_id, item.arxiv_records),
        (reference.pmid, item.pmid_records),
    )
    if any(identifier and not records for identifier, records in cited):
        return False
    if not needs_search(item):
        return True
    return any(is_convincing(reference, work) for work in item.candidates)


async def _as_mirror(
    run: Callable[[], Awaitable[list[Evidence] | None]], items: list[Evidence] | None = None
) -> list[Evidence]:
    """Run a gathering step on the mirror's views; report what they did as `mirror`."""
    before = {id(item): dict(item.statuses) for item in items or []}
    result = await run()
    gathered = items if items is not None else result or []
    for item in gathered:
        previous = before.get(id(item), {})
        touched = {n: s for n, s in item.statuses.items() if previous.get(n) is not s}
        item.statuses = {n: s for n, s in item.statuses.items() if n not in touched} | previous
        if touched:
            failed = [s for s in touched.values() if s.state == "failed"]
            item.statuses[MIRROR] = failed[0] if failed else SourceStatus("answered")
        for name in ("doi_failed", "arxiv_failed"):
            failed_names = getattr(item, name)
            if failed_names & touched.keys():
                setattr(item, name, (failed_names - touched.keys()) | {MIRROR})
    return gathered


def _combine(first: Evidence, second: Evidence) -> Evidence:
    """One reference's mirror evidence and live evidence, as if gathered together."""
    second.doi_records = first.doi_records + second.doi_records
    second.arxiv_records = first.arxiv_records + second.arxiv_records
    second.pmid_records = first.pmid_records + second.pmid_records
    second.candidates = first.candidates + second.candidates
    second.statuses = {**first.statuses, **second.statuses}
    second.doi_asked |= first.doi_asked
    second.doi_failed |= first.doi_failed
    second.arxiv_failed |= first.arxiv_failed
    second.searched = first.searched or second.searched
    second.searched_by |= first.searched_by
    for records in (
        second.doi_records,
        second.arxiv_records,
        second.pmid_records,
        second.candidates,
    ):
        records.sort(key=lambda work: registry.order(work.source))
    return second
