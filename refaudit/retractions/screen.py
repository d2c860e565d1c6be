"""Integrity screening: notices from every source → one chronological list → findings.

Crossref (`updated-by`), OpenAlex (`is_retracted`), PubMed (publication types
and "Retraction in" links) and the Retraction Watch snapshot often describe the
same notice. `merge_notices` folds them into one entry per notice, keeping the
richest fields, and `findings_for` turns each notice into a Finding whose
severity comes from `settings.retraction_policy`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from refaudit.config import Settings
from refaudit.identifiers import normalize_doi
from refaudit.models import (
    Finding,
    Notice,
    NoticeKind,
    Result,
    RetractionRecord,
    Verdict,
    Work,
)
from refaudit.notices import NOTICE_FINDING_CODES, NOTICE_HEADLINES, WITHDRAWING_KINDS
from refaudit.retractions.store import CREDIT
from refaudit.sources import registry


class NoticeRows(Protocol):
    """Retraction Watch rows to screen against: the snapshot, or a mirror's copy of it."""

    def lookup_doi(self, doi: str) -> list[RetractionRecord]: ...

    def lookup_pmid(self, pmid: str) -> list[RetractionRecord]: ...

    def lookup_title(self, title: str, year: int | None = None) -> list[RetractionRecord]: ...


# Whose account of a notice wins field by field: the publisher's own, then Retraction Watch.
# Then the sources that report notices without naming where they come from.
_PROVENANCE_ORDER = ("publisher", "retraction-watch", *registry.ranked_by("notice_provenance"))
_COARSE_SOURCES = frozenset(registry.ranked_by("notice_provenance"))
# Sources whose bare "retracted" flag stands for a notice no other source names.
_FLAGGING_SOURCES = registry.names_where("retraction_flag")
# Sources that screen every identified work when no snapshot is installed.
_SCREENING_SOURCES = registry.names_where("screens_retractions")


def severity_for(kind: NoticeKind, settings: Settings) -> str:
    """error | warning | info | ignore; new versions and unknown notices are never flagged."""
    if kind not in NOTICE_FINDING_CODES:
        return "ignore"
    return settings.retraction_policy.get(kind.value, "ignore")


def notices_from_work(work: Work) -> list[Notice]:
    """The notices a source record carries about the work itself (not about its targets)."""
    own = normalize_doi(work.doi)
    kept = []
    for notice in work.notices:
        target = normalize_doi(notice.target_doi)
        if target and own and target != own:
            continue
        if not notice.reported_by:
            notice.reported_by = work.source
        if not notice.source and work.source in _COARSE_SOURCES:
            notice.source = work.source
        kept.append(notice)
    return kept


def collect_notices(
    works: Iterable[Work], records: Iterable[RetractionRecord] = ()
) -> list[Notice]:
    """Merge the notices of several source records and snapshot rows about one work.

    A bare `is_retracted` flag (OpenAlex's) becomes a dateless retraction notice
    only when no source names the retraction itself.
    """
    works = list(works)
    notices: list[Notice] = []
    for work in works:
        notices.extend(notices_from_work(work))
    notices.extend(record.to_notice() for record in records)
    merged = merge_notices(notices)
    flaggers = [w for w in works if w.is_retracted and w.source in _FLAGGING_SOURCES]
    if flaggers and not any(n.kind in WITHDRAWING_KINDS for n in merged):
        merged.append(
            Notice(
                kind=NoticeKind.RETRACTION,
                label="is_retracted",
                source=flaggers[0].source,
                reported_by=flaggers[0].source,
                record_id=flaggers[0].openalex_id or flaggers[0].source_id,
            )
        )
    return merged


def merge_notices(notices: Iterable[Notice]) -> list[Notice]:
    """One notice per (kind, notice DOI) or (kind, date), richest fields first, oldest first."""
    merged: list[Notice] = []
    for notice in sorted(notices, key=_provenance_rank):
        twin = next((m for m in merged if _same_notice(m, notice)), None)
        if twin is None:
            merged.append(_copy(notice))
        else:
            _absorb(twin, notice)
    return sorted(merged, key=lambda n: (n.date is None, n.date or "", n.kind.value))


def _provenance_rank(notice: Notice) -> int:
    source = (notice.source or "").lower()
    return (
        _PROVENANCE_ORDER.index(source) if source in _PROVENANCE_ORDER else len(_PROVENANCE_ORDER)
    )


def _same_notice(kept: Notice, other: Notice) -> bool:
    """Same kind and notice DOI, or same kind and date; `kept` ranks higher in provenance."""
    doi_kept, doi_other = normalize_doi(kept.notice_doi), normalize_doi(other.notice_doi)
    if _rw_record(kept) and _rw_record(kept) == _rw_record(other):
        return True
    if {kept.kind, other.kind} <= WITHDRAWING_KINDS and doi_kept and doi_kept == doi_other:
        # Crossref files a Retraction Watch withdrawal or removal as a plain "retraction"
        # (the snapshot tells them apart by their reasons): one notice DOI, one notice.
        return True
    if kept.kind != other.kind:
        # PubMed files withdrawals, removals and Wakefield's 2004 partial retraction alike
        # under "Retraction in": a DOI-less coarse notice on the date of a precise one is that one.
        return (
            other.source in _COARSE_SOURCES
            and not doi_other
            and bool(doi_kept)
            and _dates_agree(kept.date, other.date)
        )
    if doi_kept and doi_other:
        return doi_kept == doi_other
    if kept.date and other.date:
        return _dates_agree(kept.date, other.date)
    # One side knows neither a DOI nor a date shared with the other: it adds nothing new.
    return not (doi_kept or kept.date) or not (doi_other or other.date)


def _rw_record(notice: Notice) -> str | None:
    """The Retraction Watch record id (OpenAlex's work id is not one)."""
    return notice.record_id if notice.source not in _COARSE_SOURCES else None


def _dates_agree(a: str | None, b: str | None) -> bool:
    """ISO dates, either possibly partial ("2010-02" agrees with "2010-02-06")."""
    return bool(a and b and (a.startswith(b) or b.startswith(a)))


def _copy(notice: Notice) -> Notice:
    return Notice(**{**vars(notice), "notice_doi": normalize_doi(notice.notice_doi)})


def _absorb(kept: Notice, other: Notice) -> None:
    if {kept.kind, other.kind} == {NoticeKind.RETRACTION, NoticeKind.PARTIAL_RETRACTION}:
        kept.kind = NoticeKind.PARTIAL_RETRACTION
    elif {kept.kind, other.kind} <= WITHDRAWING_KINDS and kept.kind != other.kind:
        # A publisher's "withdrawal" that Retraction Watch records as a retraction (or the
        # reverse) is one notice: it keeps the graver kind and the withdrawal's wording.
        withdrawal = kept if kept.kind is NoticeKind.WITHDRAWAL else other
        graver = other if withdrawal is kept else kept
        kept.kind, kept.label = graver.kind, withdrawal.label or kept.label
    if kept.date and other.date and len(other.date) > len(kept.date):
        kept.date = other.date if _dates_agree(kept.date, other.date) else kept.date
    for name in ("notice_doi", "date", "label", "source", "record_id", "reason", "target_doi"):
        if not getattr(kept, name) and getattr(other, name):
            value = getattr(other, name)
            setattr(kept, name, normalize_doi(value) if name == "notice_doi" else value)
    reporters = [r for r in (kept.reported_by or "").split(", ") if r]
    for reporter in (other.reported_by or "").split(", "):
        if reporter and reporter not in reporters:
            reporters.append(reporter)
    kept.reported_by = ", ".join(reporters) or None


def findings_for(notices: Sequence[Notice], settings: Settings) -> list[Finding]:
    """One Finding per notice the policy does not ignore, in the notices' order."""
    findings = []
    for notice in notices:
        severity = severity_for(notice.kind, settings)
        if severity == "ignore":
            continue
        findings.append(
            Finding(
                code=NOTICE_FINDING_CODES[notice.kind],
                severity=severity,  # type: ignore[arg-type]
                message=describe(notice),
                field=None,
                found=notice.label,
                source=notice.reported_by,
                record=notice.notice_doi or notice.record_id,
            )
        )
    return findings


def describe(notice: Notice) -> str:
    """A one-line account of a notice, crediting Retraction Watch when its data are shown."""
    parts = [NOTICE_HEADLINES.get(notice.kind, notice.kind.value.replace("_", " ").capitalize())]
    parts.append(f"on {notice.date}" if notice.date else "(date unknown)")
    if notice.notice_doi:
        parts.append(f"— notice {notice.notice_doi}")
    if notice.source in _FLAGGING_SOURCES and not notice.notice_doi:
        title = registry.entry(notice.source).title
        parts.append(f"— {title} marks the work as retracted; no notice found elsewhere")
    if notice.reason:
        parts.append(f"— reason: {notice.reason.strip().rstrip(';')}")
    text = " ".join(parts)
    if shows_retraction_watch_data(notice):
        text += f" [{CREDIT}]"
    return text


def shows_retraction_watch_data(notice: Notice) -> bool:
    """Whether showing this notice shows Retraction Watch data, which its licence asks to credit.

    A publisher notice merged with Retraction Watch's account of it carries its record id.
    """
    return (
        notice.source == "retraction-watch"
        or "retractionwatch" in (notice.reported_by or "")
        or _rw_record(notice) is not None
    )


def screen_results(
    results: Sequence[Result],
    records_by_result: Sequence[Sequence[Work]],
    settings: Settings,
    *,
    snapshot: NoticeRows | None,
) -> None:
    """Attach integrity notices and findings to each result, in place.

    `records_by_result[i]` holds every Work the sources returned for result i's
    identity. A result without a match, identifiers or snapshot hit is left
    alone: an unresolved DOI is the verifier's `doi-not-registered`, not "clean".
    """
    for result, records in zip(results, records_by_result, strict=True):
        works = list(records)
        if result.matched is not None and all(result.matched is not w for w in works):
            works.insert(0, result.matched)
        rows = _snapshot_rows(result, snapshot) if snapshot is not None else []
        notices = collect_notices(works, rows)
        if not notices and not result.integrity:
            if snapshot is None and not settings.offline:
                _unscreened(result, works)
            continue
        result.integrity = merge_notices([*result.integrity, *notices])
        present = {(f.code, f.record) for f in result.findings}
        for finding in findings_for(result.integrity, settings):
            if (finding.code, finding.record) not in present:
                result.findings.append(finding)


def _unscreened(result: Result, works: Sequence[Work]) -> None:
    """A verified work that no retraction source could screen is unverified, not cleared.

    Without a snapshot, Crossref and OpenAlex carry the notices: when every one of them
    failed and none of their records is at hand, a retracted work would pass unseen.
    """
    if result.verdict is not Verdict.VERIFIED or any(w.source in _SCREENING_SOURCES for w in works):
        return
    states = {
        name: status.state
        for name in _SCREENING_SOURCES
        if (status := result.sources.get(name)) is not None
    }
    failed = sorted(name for name, state in states.items() if state == "failed")
    if not failed or any(state in ("answered", "cached") for state in states.values()):
        return
    result.verdict = Verdict.UNVERIFIED
    result.reason = f"retraction status unknown: {', '.join(failed)} could not be asked"
    result.findings.append(Finding.of("unverified", result.reason))


def _snapshot_rows(result: Result, snapshot: NoticeRows) -> list[RetractionRecord]:
    """Snapshot rows by DOI and PMID (the match's, else the cited ones), else by title + year."""
    matched, reference = result.matched, result.reference
    doi = normalize_doi(matched.doi if matched and matched.doi else reference.doi)
    pmid = matched.pmid if matched and matched.pmid else reference.pmid
    rows: list[RetractionRecord] = []
    if doi:
        rows.extend(snapshot.lookup_doi(doi))
    if pmid:
        rows.extend(r for r in snapshot.lookup_pmid(pmid) if r not in rows)
    if rows or doi or pmid or reference.arxiv_id:
        return rows
    # No identifier anywhere: an exact normalised title with a year one apart at most.
    title = matched.title if matched and matched.title else reference.title
    year = matched.year if matched and matched.year else reference.year
    return snapshot.lookup_title(title, year) if title else []
