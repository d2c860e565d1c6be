"""When silence, or one source's record, may be called an error.

A finding that says something does not exist (a DOI no source knows, no
published version of a preprint) or that one record contradicts the citation
is made only from the sources that answered and would hold the thing: a
source that failed, or one that could never hold it, leaves the point
"could not be confirmed", naming the source and why. `verify.py` asks here
before it lets such a finding stand.
"""

from __future__ import annotations

import datetime

from refaudit import planner
from refaudit.evidence import Evidence
from refaudit.findings import MISMATCH_CODES
from refaudit.models import Finding, Work
from refaudit.sources import registry

#: A work this recent may not be in every index yet: arXiv and DataCite list new
#: works within days, Semantic Scholar and OpenAlex within weeks to months, and
#: books, chapters and theses reach them later still.
RECENT_MONTHS = 12
#: Kinds that are registered or listed as they appear: a journal deposits an
#: article's DOI at online publication, DBLP, Semantic Scholar and OpenAlex list a
#: conference's papers as its proceedings come out (most are preprints first), and
#: an institution's report is issued with its number, ISBN or DOI. No index holding
#: such a work is evidence, however new it is; it is also how a fabricated "2026"
#: paper in a journal or at a conference, or an invented agency's report, looks.
_LISTED_ON_APPEARING = frozenset({"article", "conference", "report"})
#: Entry types of reports, which `planner.kind_of` reads as preprints without a venue.
_REPORT_TYPES = frozenset({"techreport", "report"})

#: Field contradictions that records of other versions of the work could lift: a
#: preprint and its published version differ in venue, online and print in year.
_VERSION_FIELDS = {"venue-mismatch": "venue", "year-mismatch": "year"}


def doi_holders(evidence: Evidence) -> list[str]:
    """The sources that answered and would hold the cited DOI's record, were it registered."""
    doi = evidence.reference.doi or ""
    return [name for name in evidence.asked if registry.holds_doi(name, doi)]


def doi_beyond_sources_asked(
    evidence: Evidence, versions: list[Work], named: set[str]
) -> list[Finding]:
    """A cited DOI that none of the sources that answered would hold (with `--sources
    ieee`, a DOI outside IEEE's prefixes): nothing says it is wrong, nothing confirms it."""
    doi = evidence.reference.doi
    if not doi or "doi" in named or evidence.doi_records or evidence.doi_failed:
        return []
    if doi.lower() in {w.doi.lower() for w in versions if w.doi} or doi_holders(evidence):
        return []
    asked = ", ".join(evidence.asked)
    return [
        Finding.of(
            "unconfirmed",
            f"DOI {doi} could not be confirmed (not in the sources asked: "
            f"{asked or 'none answered'}; none would hold it)",
            field="doi",
            cited=doi,
            source=asked or None,
        )
    ]


def publisher_gives_another_doi(evidence: Evidence, records: list[Work]) -> list[Finding]:
    """The cited DOI, which none of the sources asked would hold, is not the DOI the
    work's publisher index gives it (with `--sources ieee`, an IEEE paper cited with a
    DOI outside IEEE's prefixes): a contradiction by the publisher's own record, not a
    claim that the cited DOI does not exist."""
    doi = (evidence.reference.doi or "").lower()
    if not doi or evidence.doi_records or evidence.doi_failed or doi_holders(evidence):
        return []
    for work in records:
        source = registry.BY_NAME.get(work.source)
        own = (work.doi or "").lower()
        if source is None or not source.doi_prefixes or not own.startswith(source.doi_prefixes):
            continue
        if own != doi:
            return [
                Finding.of(
                    "doi-differs",
                    f"DOI {evidence.reference.doi} is not this work's: {source.title}, its "
                    f"publisher's index, gives {work.doi}",
                    cited=evidence.reference.doi,
                    found=work.doi,
                    source=work.source,
                    record=f"doi:{work.doi}",
                )
            ]
    return []


def contradicted_without_answers(
    evidence: Evidence, versions: list[Work], published: list[Work], findings: list[Finding]
) -> tuple[list[Finding], list[Finding]]:
    """Venue and year contradictions that stand, and those that become "could not be
    confirmed" because a source that could hold another version of the work failed.

    `versions` are the records of the work and its other versions, `published` those
    of a published version. "Only a preprint of this work is known" claims that no
    published version exists; a year that only one source's record contradicts may
    be another record's. Either stands only when every source that could hold the
    work answered, or (a contradiction) when records from two sources agree on it.
    Titles and authors are what identified the work in every index, so a changed
    word or an invented author stands on any one record.
    """
    failures = evidence.failures
    kind = planner.kind_of(evidence.reference)
    holders = sorted(n for n in failures if planner.cannot_index(n, kind) is None)
    if not holders:
        return findings, []
    why = "; ".join(f"{name}: {failures[name]}" for name in holders)
    kept, moved = [], []
    for finding in findings:
        field = _VERSION_FIELDS.get(finding.code)
        if field is None:
            kept.append(finding)
            continue
        if field == "venue":
            recorded = sorted({w.source for w in published})
        else:
            recorded = sorted({w.source for w in versions if w.year})
        if len(recorded) > 1:
            kept.append(finding)
            continue
        contradicted = f"only {', '.join(recorded)}'s record" if recorded else "only a preprint"
        moved.append(
            Finding.of(
                "unconfirmed",
                f"{field} {finding.cited} could not be confirmed: {contradicted} contradicts "
                f"it, and a source that may hold another version failed ({why})",
                field=field,
                cited=finding.cited,
                source=", ".join(holders),
            )
        )
    return kept, moved


def too_recent(
    evidence: Evidence,
    findings: list[Finding],
    *,
    related: bool = False,
    today: datetime.date | None = None,
) -> str | None:
    """Why finding nothing proves nothing for a work of the last months, or None.

    "Nothing" must be nothing at all: not when a lookup proved a cited identifier
    false (an invented arXiv id or DOI: those lookups answer at once for new works
    too) or found it on another work, not when a record contradicts the citation's
    fields, not when a `related` record (a near title) exists, and not for the kinds
    indexed as they appear (`_LISTED_ON_APPEARING`). `today` is the clock's date
    unless a caller fixes it.
    """
    reference = evidence.reference
    if reference.year is None or related:
        return None
    if any(f.severity == "error" or f.code in MISMATCH_CODES for f in findings):
        return None
    kind = "report" if reference.entry_type in _REPORT_TYPES else planner.kind_of(reference).work
    if kind in _LISTED_ON_APPEARING:
        return None
    today = today or datetime.date.today()
    # Without a month, the latest one the year allows: the rule is there to spare
    # faithful citations of new work.
    month = reference.month or 12
    age = (today.year - reference.year) * 12 + today.month - month
    if age > RECENT_MONTHS or reference.year > today.year:
        return None
    return (
        f"unverified: too recent to be indexed everywhere ({reference.year}; "
        f"{', '.join(evidence.asked)} have no record of it yet)"
    )
