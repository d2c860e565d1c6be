"""One work from several sources' records of it.

Sources describe the same work with different completeness: Crossref and
DataCite own the registered metadata, PubMed and arXiv curate their own, the
aggregators (DBLP, OpenAlex, Semantic Scholar) copy from them. The verifier's
matched record, `refaudit show` and search results are all built here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from refaudit.identifiers import normalize_doi
from refaudit.models import Notice, Work
from refaudit.sources import registry

#: Which source's value wins when records disagree: registration agencies first,
#: then curated indexes, then the aggregators that copy from them.
FIELD_PRIORITY = registry.by_field_priority()
#: Work fields `merge_records` combines by a rule of their own; every other field
#: takes the first value in source-priority order.
_SPECIALLY_MERGED = frozenset(
    {"source", "source_id", "arxiv_version", "citation_count", "is_retracted", "notices"}
    | {"authors", "authors_partial"}
    | {"score", "found_in"}
)


def priority(source: str) -> int:
    return FIELD_PRIORITY.index(source) if source in FIELD_PRIORITY else len(FIELD_PRIORITY)


def merge_records(records: Sequence[Work]) -> Work:
    """One Work from several sources' records of the same work.

    Each field takes the value of the highest-priority source that has one;
    citation counts take the largest; a retraction flag from any source sticks;
    notices are pooled. `found_in` lists the contributing sources.
    """
    ordered = sorted(records, key=lambda work: priority(work.source))
    primary = ordered[0]
    merged = Work(source=primary.source, source_id=primary.source_id)
    for name in (f.name for f in dataclasses.fields(Work) if f.name not in _SPECIALLY_MERGED):
        value = next((getattr(w, name) for w in ordered if getattr(w, name)), None)
        if value is not None:
            setattr(merged, name, value)
    # A whole author list beats a partial one (Scopus' first author only) from a surer source.
    with_authors = [w for w in ordered if w.authors]
    authors_record = next((w for w in with_authors if not w.authors_partial), None) or next(
        iter(with_authors), None
    )
    if authors_record is not None:
        merged.authors = authors_record.authors
        merged.authors_partial = authors_record.authors_partial
    venue_record = next((w for w in ordered if w.venue), None)
    merged.venue_short = venue_record.venue_short if venue_record else merged.venue_short
    versions = [w.arxiv_version for w in ordered if w.arxiv_version]
    merged.arxiv_version = max(versions) if versions else None
    counts = [w.citation_count for w in ordered if w.citation_count is not None]
    merged.citation_count = max(counts) if counts else None
    flags = [w.is_retracted for w in ordered if w.is_retracted is not None]
    merged.is_retracted = any(flags) if flags else None
    merged.notices = _pooled_notices(ordered)
    merged.found_in = list(dict.fromkeys(w.source for w in ordered))
    return merged


def _pooled_notices(records: Sequence[Work]) -> list[Notice]:
    pooled: dict[tuple[str, str | None], Notice] = {}
    for work in records:
        for notice in work.notices:
            pooled.setdefault((notice.kind.value, normalize_doi(notice.notice_doi)), notice)
    return sorted(pooled.values(), key=lambda notice: notice.date or "")
