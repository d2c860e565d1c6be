"""Whole records: how likely a found work is the cited one, and whether two records are one work."""

from __future__ import annotations

from refaudit.identifiers import normalize_doi
from refaudit.match.authors import compare_authors, first_authors_agree
from refaudit.match.locators import compare_years
from refaudit.match.text import normalize_text
from refaudit.match.titles import TitleComparison, compare_titles
from refaudit.match.venues import compare_venues
from refaudit.models import Reference, Work

# Candidate-score weights: the title identifies a work far better than a year.
WEIGHT_TITLE = 0.6
WEIGHT_AUTHORS = 0.25
WEIGHT_YEAR = 0.1
WEIGHT_VENUE = 0.05

_YEAR_KIND_SCORE = {"exact": 1.0, "adjacent": 0.7, "different": 0.0}
_VENUE_KIND_SCORE = {
    "same": 1.0,
    "abbreviation": 1.0,
    "acronym": 1.0,
    "preprint": 0.8,
    "compatible": 0.6,
    "different": 0.0,
}


def candidate_score(reference: Reference, work: Work) -> float:
    """How likely `work` is the work `reference` cites, from 0 to 1.

    Fields missing on either side are left out and the remaining weights are
    rescaled, so a title-only reference is judged on its title alone.
    """
    parts: list[tuple[float, float]] = []
    if reference.title and work.title:
        parts.append((WEIGHT_TITLE, compare_work_title(reference.title, work).score))
    if reference.authors and work.authors:
        authors = compare_authors(
            reference.authors,
            work.authors,
            cited_truncated=reference.authors_truncated,
            found_partial=work.authors_partial,
        )
        parts.append((WEIGHT_AUTHORS, authors.score))
    year = compare_years(reference.year, work.year)
    if year.kind != "unknown":
        parts.append((WEIGHT_YEAR, _YEAR_KIND_SCORE[year.kind]))
    venue = compare_venues(
        reference.venue, work.venue, found_short=work.venue_short, found_type=work.type
    )
    if venue.kind in _VENUE_KIND_SCORE:
        parts.append((WEIGHT_VENUE, _VENUE_KIND_SCORE[venue.kind]))
    total = sum(weight for weight, _ in parts)
    if not total:
        return 0.0
    return round(sum(weight * score for weight, score in parts) / total, 4)


def compare_work_title(cited: str, work: Work) -> TitleComparison:
    """`compare_titles` against the record's title and its titles in other languages."""
    comparison = compare_titles(cited, work.title or "", work.subtitle)
    for alias in work.title_aliases:
        other = compare_titles(cited, alias)
        if other.score > comparison.score:
            comparison = other
    return comparison


def is_same_work(a: Work, b: Work) -> bool:
    """Whether two source records describe one work, for merging candidates.

    Different DOIs mean different records even when they share an arXiv id:
    the preprint and its published version must stay apart, because citing
    one for the other is itself a finding.
    """
    doi_a, doi_b = normalize_doi(a.doi), normalize_doi(b.doi)
    if doi_a and doi_b:
        return doi_a == doi_b
    if a.arxiv_id and b.arxiv_id and a.arxiv_id.lower() == b.arxiv_id.lower():
        return True
    if a.pmid and b.pmid and a.pmid == b.pmid:
        return True
    if not a.title or not b.title or normalize_text(a.title) != normalize_text(b.title):
        return False
    if a.year is not None and b.year is not None and abs(a.year - b.year) > 1:
        return False
    if a.authors and b.authors:
        return first_authors_agree(a.authors, b.authors)
    return True
