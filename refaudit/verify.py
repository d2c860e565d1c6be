"""Deciding: evidence about one reference → a verdict with field-level findings.

Pure functions, no I/O. The rules, in order:

1. A record reached through the cited identifier is the identity when the
   citation describes it (title close, authors not contradicted). Otherwise the
   best search candidate is, and the identifier is reported as pointing
   elsewhere; with no candidate, the identifier's record is kept and its
   title and authors reported as wrong.
2. Records of the same work from every source form one group; a cited field is
   right when any record of the group agrees (sources disagree on venue forms,
   print vs online years, name spellings).
3. Nothing found: `not_found` only when every source asked has answered;
   otherwise `unverified`, naming the sources that failed.
4. A cited field that only a failed source could have checked (a DOI no
   registry could be asked about, a venue no answering source records) is
   "could not be confirmed": the reference is `unverified` on that point and the
   failing sources are named. A failure never silently clears a field, and never
   makes an error of absence or of one record's contradiction (`absence.py`).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import replace

from refaudit import absence, match, planner
from refaudit.compare import Identity, compare_fields, is_preprint, linked_versions, record_id
from refaudit.evidence import Evidence
from refaudit.findings import MISMATCH_CODES
from refaudit.identifiers import arxiv_id_from_doi
from refaudit.merge import merge_records, priority
from refaudit.models import Finding, Reference, Result, SourceStatus, Verdict, Work
from refaudit.recognise import (
    is_convincing,
    names_written_whole,
    reread_as_record,
    title_in_text,
    venue_as_record,
)
from refaudit.sources.doiorg import TITLE as DOI_ORG
from refaudit.sources.doiorg import Registration

# A search hit below this candidate score is not the cited work, however it ranks.
MIN_IDENTITY_SCORE = 0.55

# Below this title similarity, a cited identifier's work is not the work the entry describes.
RELATED_TITLE_SCORE = 0.6

# Record types of a whole book, which a chapter's book title and a book citation name.
_BOOK_TYPES = frozenset({"book", "monograph", "edited-book", "reference-book", "book-set"})
# A cited book title names the DOI's book when the titles agree up to these differences.
_SAME_TITLE_KINDS = frozenset({"exact", "minor", "typo", "subtitle"})


def decide(
    evidence: Evidence,
    *,
    enabled_sources: Sequence[str] = (),
    today: datetime.date | None = None,
) -> Result:
    """The verdict on one reference, from everything the sources returned.

    `today` dates "too recent to be indexed" (the clock's date unless given).
    """
    reference = evidence.reference
    statuses = {name: SourceStatus("not_asked") for name in enabled_sources}
    statuses.update(evidence.statuses)
    result = Result(reference=reference, verdict=Verdict.UNVERIFIED, sources=statuses)

    skip_reason = planner.nothing_to_check(reference)
    if skip_reason:
        result.verdict = Verdict.SKIPPED
        result.reason = skip_reason
        result.findings.append(Finding.of("skipped", skip_reason))
        return result

    # Where a free-text title ends is the parser's guess; a record may settle it first.
    written = _as_written(reference, evidence.id_records + evidence.candidates)
    identity, findings = _identify(replace(evidence, reference=written))
    result.findings.extend(findings)
    if identity is None:
        return _nothing_found(evidence, result, today)

    result.matched = merge_records(identity.records)
    registration = evidence.doi_registration
    if reference.doi and registration and registration.registered and evidence.doi_records:
        result.findings.append(_agency_note(reference.doi, registration, None, compared=True))
    pool = evidence.id_records + evidence.candidates
    compared = compare_fields(_as_written(reference, identity.records), identity, pool)
    compared, beyond = _beyond_sources_asked(evidence, identity, compared)
    versions = identity.records + linked_versions(identity.records, pool)
    published = [w for w in versions if not is_preprint(w) and (w.venue or w.venue_short)]
    compared, unanswered = absence.contradicted_without_answers(
        evidence, versions, published, compared
    )
    result.findings.extend(compared)
    result.findings.extend(
        beyond + unanswered + unconfirmed_fields(evidence, identity, result.findings)
    )
    unconfirmed = [f for f in result.findings if f.code == "unconfirmed"]
    if any(f.code in MISMATCH_CODES for f in result.findings):
        result.verdict = Verdict.MISMATCH
    elif unconfirmed:
        result.verdict = Verdict.UNVERIFIED
        result.reason = "could not be confirmed: " + "; ".join(f.message for f in unconfirmed)
        return result
    else:
        result.verdict = Verdict.VERIFIED
    score = match.candidate_score(reference, result.matched) if reference.title else 0.8
    result.confidence = round(min(1.0, score + (0.15 if identity.via != "search" else 0.0)), 2)
    return result


def unconfirmed_fields(
    evidence: Evidence, identity: Identity, findings: Sequence[Finding]
) -> list[Finding]:
    """Cited fields that no record checked because a source that could have failed.

    A failure can hide the registry that would say "DOI not registered", or the
    index holding the record that has the venue; a cited DOI that no source
    asked would hold is unchecked too. (A failure can also hide the record that
    agrees with a field another record contradicts: see `absence.py`.)
    """
    failures = evidence.failures
    reference = evidence.reference
    versions = identity.records + linked_versions(
        identity.records, evidence.id_records + evidence.candidates
    )
    named = {f.field for f in findings if f.field}
    out = absence.doi_beyond_sources_asked(evidence, versions, named)
    if not failures:
        return out

    def unconfirmed(field: str, cited: str, failed: Sequence[str]) -> Finding:
        why = "; ".join(f"{name}: {failures.get(name, 'failed')}" for name in sorted(failed))
        return Finding.of(
            "unconfirmed",
            f"{_FIELD_NAMES[field]} {cited} could not be confirmed ({why})",
            field=field,
            cited=cited,
            source=", ".join(sorted(failed)),
        )

    if reference.doi and "doi" not in named and evidence.doi_failed:
        if reference.doi.lower() not in {w.doi.lower() for w in versions if w.doi}:
            out.append(unconfirmed("doi", reference.doi, sorted(evidence.doi_failed)))
    if reference.arxiv_id and "arxiv" not in named and evidence.arxiv_failed:
        known = {w.arxiv_id.lower() for w in versions if w.arxiv_id}
        if reference.arxiv_id.lower() not in known:
            out.append(unconfirmed("arxiv", reference.arxiv_id, sorted(evidence.arxiv_failed)))
    checks = (
        ("venue", reference.venue, lambda w: w.venue or w.venue_short or w.journal_ref),
        ("year", reference.year, lambda w: w.year),
        ("authors", reference.authors, lambda w: w.authors),
    )
    for field, cited, recorded in checks:
        if not cited or field in named or any(recorded(w) for w in versions):
            continue
        if field == "venue" and match.is_preprint_venue(str(cited)):
            continue
        shown = "; ".join(p.display() for p in cited) if isinstance(cited, list) else str(cited)
        out.append(unconfirmed(field, shown, sorted(failures)))
    return out


def _beyond_sources_asked(
    evidence: Evidence, identity: Identity, findings: list[Finding]
) -> tuple[list[Finding], list[Finding]]:
    """ "Only a preprint is known" means nothing when no source asked indexes the cited kind.

    With `--sources crossref,arxiv`, a conference paper found as its arXiv preprint
    may well have a published version none of the asked sources holds: its venue is
    unconfirmed, not wrong.
    """
    kind = planner.kind_of(evidence.reference)
    asked = evidence.asked
    if not asked or kind.preprint or any(planner.covers(name, kind) for name in asked):
        return findings, []
    versions = identity.records + linked_versions(
        identity.records, evidence.id_records + evidence.candidates
    )
    if any(not is_preprint(w) and (w.venue or w.venue_short) for w in versions):
        return findings, []
    kept = [f for f in findings if f.code != "venue-mismatch"]
    moved = [
        Finding(
            "unconfirmed",
            "warning",
            f"venue {f.cited} could not be confirmed (not in the sources asked: "
            f"{', '.join(asked)} do not index {planner.describe(kind)})",
            field="venue",
            cited=f.cited,
            source=", ".join(asked),
        )
        for f in findings
        if f.code == "venue-mismatch"
    ]
    return kept, moved


_FIELD_NAMES = {
    "doi": "DOI",
    "arxiv": "arXiv id",
    "venue": "venue",
    "year": "year",
    "authors": "authors",
}


def _identify(evidence: Evidence) -> tuple[Identity | None, list[Finding]]:
    reference = evidence.reference
    findings: list[Finding] = []
    pool = evidence.id_records + evidence.candidates

    for via, records in (
        ("doi", evidence.doi_records),
        ("arxiv", evidence.arxiv_records),
        ("pmid", evidence.pmid_records),
    ):
        ordered = sorted(records, key=lambda w: priority(w.source))
        described = [w for w in ordered if is_convincing(reference, w)]
        if described and not _review_of_cited_book(reference, described[0], evidence.candidates):
            return Identity(_group(described[0], pool), via), findings

    best = _best_candidate(reference, evidence.candidates)
    if best is not None:
        identity = Identity(_group(best, pool), "search")
        findings.extend(_identifier_elsewhere(evidence, identity))
        return identity, findings

    for via, records in (("doi", evidence.doi_records), ("arxiv", evidence.arxiv_records)):
        if not records:
            continue
        record = sorted(records, key=lambda w: priority(w.source))[0]
        if _related_title(reference, record):
            # The identifier's work, cited with its title altered and nothing else matching:
            # the cited title and authors are wrong for that identifier.
            return Identity(_group(record, pool), via), findings
        # A title unrelated to the identifier's work: a fabrication wearing a real identifier.
        findings.append(_borrowed_identifier(reference, record, via))
        return None, findings
    findings.extend(_unregistered_doi(evidence))
    if not (_arxiv_only_via_doi(reference) and findings):
        findings.extend(_unknown_arxiv_id(evidence))
    return None, findings


def _related_title(reference: Reference, work: Work) -> bool:
    if not reference.title or not work.title:
        return True
    return match.compare_work_title(reference.title, work).score >= RELATED_TITLE_SCORE


def _borrowed_identifier(reference: Reference, work: Work, via: str) -> Finding:
    cited = reference.doi if via == "doi" else reference.arxiv_id
    return Finding.of(
        "doi-points-elsewhere" if via == "doi" else "arxiv-points-elsewhere",
        f"{'DOI' if via == 'doi' else 'arXiv id'} {cited} belongs to an unrelated work: "
        f"“{work.title}”",
        cited=cited,
        source=work.source,
        record=record_id(work),
    )


def _best_candidate(reference: Reference, candidates: list[Work]) -> Work | None:
    plausible = [w for w in candidates if is_convincing(reference, w)]
    if not plausible:
        return None
    text = reference.free_text or ""
    if not reference.title and not any(w.title and title_in_text(w.title, text) for w in plausible):
        # Authors, venue, year and locator that fit two works name neither.
        if any(_another_work(plausible[0], w) for w in plausible[1:]):
            return None
    if reference.entry_type == "book" and any(_is_book(w) for w in plausible):
        # A book shares its title with its reviews; the cited book is the book.
        plausible = [w for w in plausible if _is_book(w)]
    scored = [
        (match.candidate_score(reference, w) if reference.title else 0.7, w) for w in plausible
    ]
    score, best = max(scored, key=lambda pair: (pair[0], -priority(pair[1].source)))
    return best if score >= MIN_IDENTITY_SCORE else None


def _another_work(work: Work, other: Work) -> bool:
    """Two records that are not one work seen by two sources: their titles differ."""
    if not work.title or not other.title:
        return False
    return match.compare_titles(work.title, other.title).kind not in _SAME_TITLE_KINDS


def _is_book(work: Work) -> bool:
    return work.type in _BOOK_TYPES


def _review_of_cited_book(reference: Reference, work: Work, candidates: list[Work]) -> bool:
    """The cited identifier's record is an article about the cited book (a review of it).

    Said only when a book of that title is among the search candidates, so the book can
    be the identity and the identifier reported as pointing at its review.
    """
    if reference.entry_type != "book" or _is_book(work) or not work.venue:
        return False
    return any(_is_book(w) and is_convincing(reference, w) for w in candidates)


def _container_of(reference: Reference, work: Work) -> bool:
    """`work` is the book the cited chapter appears in (its title is the cited book title)."""
    if not reference.venue or not work.title or not _is_book(work):
        return False
    return match.compare_titles(reference.venue, work.title).kind in _SAME_TITLE_KINDS


def _group(anchor: Work, pool: list[Work]) -> list[Work]:
    group = [anchor]
    for work in pool:
        if work is not anchor and any(match.is_same_work(work, member) for member in group):
            group.append(work)
    return group


def _identifier_elsewhere(evidence: Evidence, identity: Identity) -> list[Finding]:
    """The cited DOI / arXiv id resolves, but to a different work than the one cited."""
    reference = evidence.reference
    findings: list[Finding] = []
    group_dois = {w.doi.lower() for w in identity.records if w.doi}
    book = next((w for w in evidence.doi_records if _container_of(reference, w)), None)
    if reference.doi and book is not None and reference.doi.lower() not in group_dois:
        findings.append(_book_doi(reference.doi, book, identity.primary))
    elif reference.doi and evidence.doi_records and reference.doi.lower() not in group_dois:
        findings.append(
            _points_elsewhere(
                "doi-points-elsewhere",
                f"DOI {reference.doi} is registered for a different work",
                reference.doi,
                identity.primary.doi,
                evidence.doi_records[0],
            )
        )
    elif reference.doi and not evidence.doi_records:
        findings.extend(
            _unregistered_doi(evidence, found=identity.primary.doi)
            or absence.publisher_gives_another_doi(evidence, identity.records)
        )
    if _arxiv_only_via_doi(reference) and findings:
        return findings  # the arXiv id is the cited DOI's; one finding says it
    if reference.arxiv_id and not evidence.arxiv_records:
        findings.extend(_unknown_arxiv_id(evidence, found=identity.primary.arxiv_id))
    group_arxiv = {w.arxiv_id.lower() for w in identity.records if w.arxiv_id}
    if (
        reference.arxiv_id
        and evidence.arxiv_records
        and reference.arxiv_id.lower() not in group_arxiv
    ):
        findings.append(
            _points_elsewhere(
                "arxiv-points-elsewhere",
                f"arXiv:{reference.arxiv_id} is a different work",
                reference.arxiv_id,
                identity.primary.arxiv_id,
                evidence.arxiv_records[0],
            )
        )
    return findings


def _points_elsewhere(code: str, what: str, cited: str, found: str | None, other: Work) -> Finding:
    """The cited identifier is `other`'s, a different work from the one cited."""
    return Finding.of(
        code,
        f"{what}: “{other.title}”",
        cited=cited,
        found=found,
        source=other.source,
        record=record_id(other),
    )


def _book_doi(doi: str, book: Work, chapter: Work) -> Finding:
    """A chapter cited with the DOI of the book it is in: right book, not the chapter's DOI."""
    common = dict(cited=doi, source=book.source, record=record_id(book))
    if chapter.doi:
        return Finding.of(
            "doi-of-book",
            f"DOI {doi} is the book's (“{book.title}”); the chapter's own DOI is {chapter.doi}",
            found=chapter.doi,
            **common,
        )
    return Finding.of(
        "doi-book-only",
        f"DOI {doi} is the book's (“{book.title}”); the chapter has no DOI of its own",
        **common,
    )


def _arxiv_only_via_doi(reference: Reference) -> bool:
    """The entry's arXiv id is only what its 10.48550/arXiv.* DOI spells out."""
    derived = arxiv_id_from_doi(reference.doi)
    return bool(derived and derived.lower() == (reference.arxiv_id or "").lower())


def _unregistered_doi(evidence: Evidence, found: str | None = None) -> list[Finding]:
    """A cited DOI no source that would hold it knows: said only when every source asked
    about it answered, and one of them would have its record (`registry.holds_doi`).

    When doi.org was asked, its word decides: a DOI it resolves is real, registered
    with an agency none of the sources reads (a note, never an error); a DOI it does
    not know is unregistered.
    """
    doi = evidence.reference.doi
    registration = evidence.doi_registration
    if doi and DOI_ORG in evidence.doi_failed and not evidence.doi_records:
        return [
            Finding.of(
                "unconfirmed",
                f"DOI {doi} could not be confirmed ({DOI_ORG}: failed; no source knows it)",
                cited=doi,
                source=DOI_ORG,
            )
        ]
    if doi and registration is not None and registration.registered:
        return [_agency_note(doi, registration, found, compared=False)]
    if not doi or evidence.doi_records or evidence.doi_failed:
        return []
    holders = absence.doi_holders(evidence)
    if not holders:
        return []
    if registration is not None:
        holders.append(DOI_ORG)
    return [
        Finding.of(
            "doi-not-registered",
            f"DOI {doi} does not resolve in {', '.join(holders)}",
            cited=doi,
            found=found,
            source=", ".join(holders),
        )
    ]


def _agency_note(
    doi: str, registration: Registration, found: str | None, *, compared: bool
) -> Finding:
    """Where a DOI that Crossref and DataCite do not hold is registered."""
    agency = f"with {registration.agency}" if registration.agency else "at doi.org"
    detail = (
        "not with Crossref or DataCite; another index holds the work"
        if compared
        else "whose metadata none of the sources holds: it exists, but what it names was "
        "not compared"
    )
    return Finding.of(
        "doi-other-agency",
        f"DOI {doi} is registered {agency}, {detail}",
        cited=doi,
        found=found,
        source=DOI_ORG,
    )


def _unknown_arxiv_id(evidence: Evidence, found: str | None = None) -> list[Finding]:
    """A cited arXiv id that arXiv itself (which answered) does not know."""
    arxiv_id = evidence.reference.arxiv_id
    arxiv_answered = evidence.statuses.get("arxiv", SourceStatus("not_asked")).state in (
        "answered",
        "cached",
    )
    if not arxiv_id or evidence.arxiv_records or evidence.arxiv_failed or not arxiv_answered:
        return []
    return [
        Finding.of(
            "arxiv-not-found",
            f"arXiv has no paper arXiv:{arxiv_id}",
            cited=arxiv_id,
            found=found,
            source="arxiv",
        )
    ]


def _nothing_found(evidence: Evidence, result: Result, today: datetime.date | None) -> Result:
    registration = evidence.doi_registration
    if (registration is not None and registration.registered) or (DOI_ORG in evidence.doi_failed):
        # A real DOI whose agency no source reads, or one doi.org could not be asked about:
        # the work may exist with metadata nobody here can see.
        result.verdict = Verdict.UNVERIFIED
        result.reason = (
            "the cited DOI exists (doi.org resolves it), but no source holds its metadata"
            if registration is not None
            else f"no source knows the cited DOI, and {DOI_ORG} could not be asked"
        )
        return result
    if evidence.outcome() == "unknown":
        result.verdict = Verdict.UNVERIFIED
        result.reason = (
            f"no match among the sources that answered, and some failed ({evidence.failure_text()})"
            if evidence.failures
            else "no source could be asked"
        )
        result.findings.append(Finding.of("unverified", result.reason))
        return result
    asked = evidence.asked
    kind = planner.kind_of(evidence.reference)
    if evidence.searched and not any(planner.covers(name, kind) for name in asked):
        # Silence from sources that do not index this kind of work proves nothing.
        result.verdict = Verdict.UNVERIFIED
        result.reason = (
            f"unverified (not in the sources asked): {', '.join(asked)} "
            f"do not index {planner.describe(kind)}"
        )
        result.findings.append(Finding("unverified", "warning", result.reason))
        return result
    if evidence.reference.free_text and not evidence.reference.title:
        # Physics and chemistry styles print no title: authors, venue, volume and pages
        # alone are too little to say that a work does not exist.
        result.verdict = Verdict.UNVERIFIED
        result.reason = (
            "the citation has no title to search by, and no record matches its authors, "
            "year, venue, volume and pages confidently"
        )
        result.findings.append(Finding.of("unverified", result.reason))
        return result
    closest = _closest_title(evidence)
    recent = absence.too_recent(evidence, result.findings, related=bool(closest), today=today)
    if recent:
        result.verdict = Verdict.UNVERIFIED
        result.reason = recent
        result.findings.append(Finding("unverified", "warning", recent))
        return result
    result.verdict = Verdict.NOT_FOUND
    hint = f"; closest: “{closest}”" if closest else ""
    result.reason = f"no matching record in {', '.join(asked)}{hint}"
    result.confidence = 0.9 if len(asked) >= 3 else 0.7
    result.findings.append(
        Finding.of("not-found", f"No such work found in {', '.join(asked)}{hint}")
    )
    return result


def _closest_title(evidence: Evidence) -> str | None:
    """The nearest title found, only when it is related to the cited one."""
    reference = evidence.reference
    if not evidence.candidates or not reference.title:
        return None
    # Only the title is shown, so the nearest title is what counts (scoring every
    # candidate's authors and venue too cost a fifth of a mirror audit's CPU).
    title = reference.title
    best = max(evidence.candidates, key=lambda w: match.compare_work_title(title, w).score)
    return best.title if _related_title(reference, best) else None


def _as_written(reference: Reference, records: list[Work]) -> Reference:
    """A free-text citation re-read where its title meets its venue, using the records.

    In "Kapp RA. Sino-American Economic Exchanges. The Legal Contributions. Pacific
    Affairs. 1986" the parser cannot know that the second sentence is still the
    title, nor in "… research directions.Inf. Fusion. 2024" that the journal began
    a word earlier; a record whose title and venue the string spells, in that
    order, says where (see `reread_as_record`). Names a record writes in one field
    ("…, Washington, DC (United States)") say where the cited names split.
    """
    for work in records:
        reread = reread_as_record(reference, work)
        if reread is not None:
            return reread
    # The free-text reader compiles its styles on import: not before the first request.
    from refaudit.parsing.reread import reread_names

    for work in records:
        names = reread_names(reference, names_written_whole(work))
        if names is not None:
            return replace(reference, authors=names)
    if not reference.title:
        # A title-less ACS citation's "J." read as the journal's, where the record says so.
        venue = next((v for w in records if (v := venue_as_record(reference, w))), None)
        if venue and venue != reference.venue:
            return replace(reference, venue=venue)
    return reference
