"""Comparing a citation's fields with the records of the work it was taken to cite.

`decide` has found the work (`Identity`); here each cited field (title,
authors, year, venue, pages, volume, identifiers) is checked against every
record of it, and a finding is made only when none of them agrees.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, replace

from refaudit import match
from refaudit.identifiers import is_datacite_arxiv_doi
from refaudit.merge import priority
from refaudit.models import Finding, Reference, Work

# Work types cited by publisher or institution rather than by a container's title.
_PUBLISHED_BY = frozenset(
    {"book", "monograph", "edited-book", "report", "thesis", "dissertation", "dataset"}
)

# A record with at most this many authors, all cited, may simply be incomplete.
SHORT_AUTHOR_RECORD = 2


@dataclass
class Identity:
    """The work a reference is taken to cite, as the group of records describing it."""

    records: list[Work]
    via: str  # "doi", "arxiv", "pmid" or "search"

    @property
    def primary(self) -> Work:
        return min(self.records, key=lambda w: priority(w.source))


def compare_fields(reference: Reference, identity: Identity, pool: list[Work]) -> list[Finding]:
    """Findings for every cited field the records of the work contradict.

    Title and authors are checked against every version of the work (preprint
    and published); venue and year against the version the citation names: a
    published venue must match a published record, "arXiv" the preprint.
    """
    versions = identity.records + linked_versions(identity.records, pool)
    findings: list[Finding] = []
    findings.extend(_title_findings(reference, versions))
    findings.extend(_author_findings(reference, versions))
    venue_findings, cited_form = _venue_findings(reference, versions)
    findings.extend(venue_findings)
    findings.extend(_year_findings(reference, cited_form or versions))
    findings.extend(_locator_findings(reference, identity.records))
    findings.extend(_identifier_info(reference, versions))
    return findings


def linked_versions(group: list[Work], pool: list[Work]) -> list[Work]:
    """Other versions of the work in `pool`: its preprint or its published record."""
    arxiv_ids = {w.arxiv_id.lower() for w in group if w.arxiv_id}
    dois = {w.doi.lower() for w in group if w.doi}
    published = {w.published_version_doi.lower() for w in group if w.published_version_doi}
    linked = []
    for work in pool:
        if any(work is member for member in group):
            continue
        doi = (work.doi or "").lower()
        same_arxiv = bool(work.arxiv_id and work.arxiv_id.lower() in arxiv_ids)
        points_here = bool(
            work.published_version_doi and work.published_version_doi.lower() in dois
        )
        if same_arxiv or (doi and doi in published) or points_here or _same_title(group[0], work):
            linked.append(work)
    return linked


def _same_title(a: Work, b: Work) -> bool:
    if not a.title or not b.title:
        return False
    if match.compare_titles(a.title, b.title).kind not in ("exact", "minor", "word_form"):
        return False
    if a.year and b.year and abs(a.year - b.year) > 3:
        return False
    if a.authors and b.authors:
        return match.compare_authors(a.authors[:3], b.authors).first_author_ok
    return True


def is_preprint(work: Work) -> bool:
    return (
        work.type == "preprint"
        or work.source == "arxiv"
        or is_datacite_arxiv_doi(work.doi)
        or bool(work.venue and match.is_preprint_venue(work.venue))
    )


def _title_findings(reference: Reference, records: list[Work]) -> list[Finding]:
    titled = [w for w in records if w.title]
    if not reference.title or not titled:
        return []
    comparisons = [
        (match.compare_work_title(reference.title, _with_own_title(w)), w) for w in titled
    ]
    best, work = max(comparisons, key=lambda pair: pair[0].score)
    full = _full_title(work)
    difference = _title_difference(best, reference.title, full)
    if difference is None:
        return []
    code, message = difference
    return [
        Finding.of(
            code,
            message,
            cited=reference.title,
            found=full,
            source=work.source,
            record=record_id(work),
        )
    ]


def _title_difference(best: match.TitleComparison, cited: str, full: str) -> tuple[str, str] | None:
    """(code, message) for how the cited title differs from the record's `full` one, if it does."""
    if best.kind in ("different", "word_form"):
        changed = ", ".join(
            f"“{a}” → “{b}”" if a and b else f"“{a}” added" if a else f"“{b}” dropped"
            for a, b in best.changed_words[:3]
            if a or b
        )
        detail = f" ({changed})" if changed else ""
        return "title-mismatch", f"Title differs from the record{detail}"
    if best.kind == "typo":
        changed = ", ".join(f"“{a}” → “{b}”" for a, b in best.changed_words)
        return "title-typo", f"Title has a spelling slip ({changed})"
    if best.kind == "subtitle" and _adds_words(cited, full):
        return "title-mismatch", "Title adds a subtitle no record of this work has"
    if best.kind in ("subtitle", "truncated"):
        form = "without its subtitle" if best.kind == "subtitle" else "shortened"
        return "title-form", f"Title is cited {form}"
    return None


def _with_own_title(work: Work) -> Work:
    """The record, or a copy of it with its own title when a notice label prefixed it."""
    title = _own_title(work)
    return work if title == work.title else replace(work, title=title)


def _own_title(work: Work) -> str:
    """The record's title without the label a retraction in place put before it."""
    retracted = bool(work.is_retracted) or any(n.target_doi == work.doi for n in work.notices)
    return match.strip_notice_prefix(work.title or "", retracted=retracted)


def _adds_words(cited: str, found: str) -> bool:
    return len(match.title_tokens(cited)) > len(match.title_tokens(found))


def _full_title(work: Work) -> str:
    title = work.title or ""
    if work.subtitle and work.subtitle.lower() not in title.lower():
        return f"{title}: {work.subtitle}"
    return title


def _author_findings(reference: Reference, records: list[Work]) -> list[Finding]:
    listed = [w for w in records if w.authors]
    # A partial list (Scopus' first author) can neither confirm nor fault co-authors:
    # it is compared only when no record lists them all.
    with_authors = [w for w in listed if not w.authors_partial] or listed
    if not reference.authors or not with_authors:
        return []
    comparisons = [
        (
            match.compare_authors(
                reference.authors,
                w.authors,
                cited_truncated=reference.authors_truncated,
                found_partial=w.authors_partial,
            ),
            w,
        )
        for w in with_authors
    ]
    best, work = max(comparisons, key=lambda pair: pair[0].score)
    cited = "; ".join(p.display() for p in reference.authors)
    found = "; ".join(p.display() for p in work.authors[:12]) + (
        "; …" if len(work.authors) > 12 else ""
    )
    common = dict(cited=cited, found=found, source=work.source, record=record_id(work))
    if best.placeholder:
        return [Finding.of("placeholder-authors", "Authors look like placeholders", **common)]
    if best.kind == "different" and _record_lists_fewer(best, work):
        return [
            Finding.of(
                "author-list-short",
                f"The record lists only {len(work.authors)} author(s); the others cited "
                f"({', '.join(best.extra)}) cannot be checked",
                **common,
            )
        ]
    if best.kind == "different":
        parts = []
        if best.extra:
            parts.append(f"not authors of this work: {', '.join(best.extra)}")
        if best.missing:
            parts.append(f"missing: {', '.join(best.missing[:6])}")
        detail = "; ".join(parts) or "author list differs"
        return [Finding.of("author-mismatch", f"Authors differ ({detail})", **common)]
    findings = []
    if best.misspelled:
        pairs = ", ".join(f"{a} → {b}" for a, b in best.misspelled)
        findings.append(
            Finding.of("author-misspelled", f"Author name misspelt ({pairs})", **common)
        )
    if best.order_changed:
        findings.append(Finding.of("author-order", "Authors are in a different order", **common))
    return findings


def _record_lists_fewer(comparison: match.AuthorComparison, work: Work) -> bool:
    """Every author of a very short record list is cited first: the record is incomplete.

    Old and retraction-derived records often keep only the first author or two.
    """
    return (
        len(work.authors) <= SHORT_AUTHOR_RECORD
        and not comparison.missing
        and comparison.first_author_ok
        and comparison.matched == len(work.authors)
    )


def _year_findings(reference: Reference, records: list[Work]) -> list[Finding]:
    if reference.year is None:
        return []
    current = datetime.date.today().year
    years = sorted({w.year for w in records if w.year})
    source = next((w for w in records if w.year), None)
    common = dict(
        cited=str(reference.year),
        found=", ".join(map(str, years)) or None,
        source=source.source if source else None,
        record=record_id(source) if source else None,
    )
    if reference.year > current + 1:
        return [Finding.of("future-date", f"Year {reference.year} is in the future", **common)]
    if not years or reference.year in years:
        return []
    comparison = match.compare_years(reference.year, years[0], other_years=years[1:])
    if comparison.kind == "adjacent":
        return [
            Finding.of(
                "year-adjacent",
                f"Year differs by one from the record ({', '.join(map(str, years))}); "
                "often online-first vs print or preprint vs published",
                **common,
            )
        ]
    return [Finding.of("year-mismatch", f"Year should be {years[0]}", **common)]


def _venue_findings(reference: Reference, versions: list[Work]) -> tuple[list[Finding], list[Work]]:
    """Venue findings, and the records of the version the citation names (for the year)."""
    preprints = [w for w in versions if is_preprint(w)]
    published = [w for w in versions if not is_preprint(w) and (w.venue or w.venue_short)]
    cited = reference.venue
    if not cited:
        return _published_version(reference, published), []
    if match.is_preprint_venue(cited):
        return _published_version(reference, published), preprints
    if not published:
        if not preprints or _journal_ref_names(preprints, cited):
            return [], []
        work = preprints[0]
        return [
            Finding.of(
                "venue-mismatch",
                "Cited as published, but only a preprint of this work is known",
                cited=cited,
                found=work.venue or "arXiv",
                source=work.source,
                record=record_id(work),
            )
        ], preprints
    comparisons = [
        match.compare_venues(
            cited,
            w.venue,
            found_short=w.venue_short,
            found_type=w.type,
            found_aliases=w.venue_aliases,
        )
        for w in published
    ]
    # Books, reports and theses are cited by their publisher or institution.
    comparisons += [
        match.compare_venues(cited, w.publisher)
        for w in versions
        if w.publisher and (w.type or "") in _PUBLISHED_BY
    ]
    kinds = {c.kind for c in comparisons}
    if kinds - {"different", "unconfirmed"}:
        return [], published
    work = published[0]
    found = "; ".join(dict.fromkeys(w.venue or w.venue_short or "" for w in published))
    evidence = dict(cited=cited, found=found, source=work.source, record=record_id(work))
    named = work.venue or work.venue_short
    if "unconfirmed" in kinds:
        # Neither confirmed nor contradicted: an error needs another venue's name.
        message = f"Venue could not be confirmed as {named}"
        return [Finding.of("venue-unconfirmed", message, **evidence)], published
    return [Finding.of("venue-mismatch", f"Venue should be {named}", **evidence)], published


def _journal_ref_names(preprints: list[Work], cited: str) -> bool:
    """A preprint record names the cited venue after all.

    arXiv's journal reference is the authors' own note of where it appeared; and a
    record some index types as a preprint may still carry its proceedings' name.
    """
    named = [w.journal_ref for w in preprints if w.journal_ref]
    named += [w.venue for w in preprints if w.venue and not match.is_preprint_venue(w.venue)]
    return any(match.compare_venues(cited, venue).kind != "different" for venue in named)


def _published_version(reference: Reference, records: list[Work]) -> list[Finding]:
    """A preprint is cited although the group holds a published version."""
    cited_preprint = bool(reference.arxiv_id) and (
        not reference.venue or match.is_preprint_venue(reference.venue)
    )
    published = [
        w for w in records if w.type not in ("preprint", None) and w.source != "arxiv" and w.venue
    ]
    if not cited_preprint or not published:
        return []
    work = published[0]
    return [
        Finding.of(
            "published-version-available",
            f"Published version: {work.venue}" + (f" ({work.year})" if work.year else ""),
            cited=reference.venue or "arXiv",
            found=work.venue,
            source=work.source,
            record=record_id(work),
        )
    ]


_LOCATORS = (("pages", match.compare_pages), ("volume", match.compare_volume))


def _locator_findings(reference: Reference, records: list[Work]) -> list[Finding]:
    """Pages and volume, when cited, must agree with at least one record that has them."""
    findings = []
    for name, compare in _LOCATORS:
        cited = getattr(reference, name)
        known = [w for w in records if getattr(w, name)]
        if not cited or not known:
            continue
        if all(compare(cited, getattr(w, name)) is False for w in known):
            found = getattr(known[0], name)
            findings.append(
                Finding.of(
                    f"{name}-mismatch",
                    f"{name.capitalize()} should be {found}",
                    cited=cited,
                    found=found,
                    source=known[0].source,
                    record=record_id(known[0]),
                )
            )
    return findings


def _identifier_info(reference: Reference, records: list[Work]) -> list[Finding]:
    findings = []
    if reference.arxiv_id and reference.arxiv_version:
        latest = max((w.arxiv_version or 0 for w in records if w.source == "arxiv"), default=0)
        if latest and reference.arxiv_version > latest:
            findings.append(
                Finding.of(
                    "arxiv-version",
                    f"arXiv:{reference.arxiv_id} has no version {reference.arxiv_version} "
                    f"(latest is v{latest})",
                    cited=f"{reference.arxiv_id}v{reference.arxiv_version}",
                    found=f"{reference.arxiv_id}v{latest}",
                    source="arxiv",
                )
            )
    if not reference.doi:
        registered = next((w for w in records if w.doi and w.type != "preprint"), None)
        registered = registered or next((w for w in records if w.doi), None)
        if registered:
            findings.append(
                Finding.of(
                    "doi-available",
                    f"DOI could be added: {registered.doi}",
                    found=registered.doi,
                    source=registered.source,
                    record=record_id(registered),
                )
            )
    return findings


def record_id(work: Work | None) -> str | None:
    if work is None:
        return None
    if work.doi:
        return f"doi:{work.doi}"
    ids = work.ids()
    if ids:
        name, value = next(iter(ids.items()))
        return f"{name}:{value}"
    return work.url or work.source_id
