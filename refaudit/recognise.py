"""Recognising the cited work in a source's record, whatever the citation got wrong.

Evidence gathering asks these questions to know when to stop searching, and
the verdict to know which record is the cited work: a record is convincing
when the title is close and something else (distinctive length, authors, year)
agrees, or, for a title one or two words apart, when authors or the article's
locator single it out.
"""

from __future__ import annotations

from refaudit import match
from refaudit.models import Reference, Work

# A title with at most this many words changed is a near miss when it scores at
# least this, or when this share of its words (and at least this many) is kept:
# one long word swapped in a short title ("Competitive" for "Adversarial") costs
# more characters than the score allows but leaves the title recognisable.
NEAR_MISS_MAX_WORDS = 2
NEAR_MISS_MIN_SCORE = 0.85
NEAR_MISS_MIN_KEPT_SHARE = 0.8
NEAR_MISS_MIN_KEPT_WORDS = 4
# Titles of at least this many words are distinctive enough to identify a work alone.
DISTINCTIVE_TITLE_WORDS = 5
# partial_ratio of a record title inside a free-text citation: allows a slip or two.
FREE_TEXT_TITLE_RATIO = 92
# OCR-damaged citation strings ("BliemeL", "EngiQeering") still match at these ratios.
LOCATOR_NAME_RATIO = 85
LOCATOR_VENUE_RATIO = 80


def is_convincing(reference: Reference, work: Work) -> bool:
    """Very probably the cited work, though some cited fields may be wrong.

    A close title (exact, typo, subtitle, truncation) identifies a work when it is
    long enough to be distinctive, or when the authors or the year agree. A title
    with one or two words changed (a near miss) identifies it only when the
    authors agree as well, or when year, volume and first page single out the
    article; anything further apart is another work.
    """
    if not work.title:
        return False
    if reference.title:
        title = match.compare_work_title(reference.title, work)
        if title.kind == "different" and (reread := reread_as_record(reference, work)):
            return is_convincing(reread, work)
        if title.kind == "different":
            return _near_miss(reference.title, title) and (
                _authors_agree(reference, work) is True or _same_locator(reference, work)
            )
        distinctive = len(match.title_tokens(reference.title)) >= DISTINCTIVE_TITLE_WORDS
    elif reference.free_text:
        if not title_in_text(work.title, reference.free_text):
            return locator_match(reference, work)
        distinctive = len(match.title_tokens(work.title)) >= DISTINCTIVE_TITLE_WORDS
    else:
        return False
    year_agrees = bool(reference.year and work.year and abs(reference.year - work.year) <= 1)
    if distinctive:
        return True
    # A short title ("Introduction", "Batched Dueling Bandits") needs a second witness:
    # authors that agree, or the year. A record without authors in another year is not one.
    return year_agrees or _authors_agree(reference, work) is True


def reread_as_record(reference: Reference, work: Work) -> Reference | None:
    """A free-text citation re-read around the record's title, when the string bears it out.

    The parser's segmentation is a hypothesis: when the words where it put the title
    spell the record's title (give or take a misread letter) and what follows them
    names the record's venue, the citation is read that way. A cited title with
    words of its own stays as parsed, and is compared as such.
    """
    if not (reference.free_text and reference.title and work.title):
        return None
    if match.normalize_text(reference.title) == match.normalize_text(work.title):
        return None
    # The free-text reader compiles its styles on import: not before the first request.
    from refaudit.parsing.reread import reread_with_title

    reread = reread_with_title(reference, work.title, names_written_whole(work))
    if reread is None or not reread.title or not reread.venue:
        return None
    if match.compare_titles(reread.title, work.title, work.subtitle).kind == "different":
        return None
    # Words the parser took for the title and the record reads as names must be them.
    if reread.authors != reference.authors and (
        match.compare_authors(
            reread.authors, work.authors, cited_truncated=reread.authors_truncated
        ).kind
        == "different"
    ):
        return None
    venue = match.compare_venues(
        reread.venue, work.venue, found_short=work.venue_short, found_aliases=work.venue_aliases
    )
    return reread if venue.kind in ("same", "abbreviation", "acronym") else None


def names_written_whole(work: Work) -> tuple[str, ...]:
    """The record's names that a name reader would split: an organisation with commas
    or spaces, or a person whose whole name the record puts in the family field."""
    return tuple(
        person.family
        for person in work.authors
        if (person.is_organisation or not person.given) and len(person.family.split()) > 1
    )


def _near_miss(cited_title: str, title: match.TitleComparison) -> bool:
    """One or two words changed in a title that stays recognisable."""
    changed = len(title.changed_words)
    if changed > NEAR_MISS_MAX_WORDS:
        return False
    if title.score >= NEAR_MISS_MIN_SCORE:
        return True
    kept = len(match.title_tokens(cited_title)) - changed
    words = kept + changed
    return kept >= NEAR_MISS_MIN_KEPT_WORDS and kept / words >= NEAR_MISS_MIN_KEPT_SHARE


def _same_locator(reference: Reference, work: Work) -> bool:
    """Same year, volume and first page: the cited article, whatever its title and authors say."""
    return (
        reference.year is not None
        and reference.year == work.year
        and match.compare_volume(reference.volume, work.volume) is True
        and match.compare_pages(reference.pages, work.pages) is True
    )


def settles(reference: Reference, work: Work) -> bool:
    """Stop searching: the work is convincing and its authors do not contradict the citation.

    Different works share titles ("The Legal Status of the Fetus"); a hit whose authors
    disagree is kept as a candidate, but the slower sources are still asked.
    """
    authors_agree = _authors_agree(reference, work)
    if not is_convincing(reference, work) or authors_agree is False:
        return False
    # A short title recurs across works ("Book review", "Pandora's Box"): a hit from
    # another year, or one without authors to confirm it, is kept, but the other
    # sources may still hold the cited work.
    short = len(match.title_tokens(reference.title or "")) < DISTINCTIVE_TITLE_WORDS
    if not short:
        return True
    other_year = match.compare_years(reference.year, work.year).kind == "different"
    return not other_year and (authors_agree is True or not reference.authors)


def _authors_agree(reference: Reference, work: Work) -> bool | None:
    """True/False when both sides list authors, None when either does not."""
    if not reference.authors or not work.authors:
        return None
    authors = match.compare_authors(
        reference.authors,
        work.authors,
        cited_truncated=reference.authors_truncated,
        found_partial=work.authors_partial,
    )
    return authors.kind != "different" and authors.first_author_ok


def title_in_text(title: str, text: str) -> bool:
    """A record's title appears (nearly verbatim) inside a free-text citation."""
    from rapidfuzz import fuzz

    wanted, haystack = match.normalize_text(title), match.normalize_text(text)
    if len(wanted.split()) < 3:
        return f" {wanted} " in f" {haystack} "
    return fuzz.partial_ratio(wanted, haystack) >= FREE_TEXT_TITLE_RATIO


def locator_match(reference: Reference, work: Work) -> bool:
    """A title-less citation ("F. Bliemel, J. Mark. Res. 10, 444 (1973)") names this record.

    The year and the first author's family name (the first cited, when the names
    were read) must appear, plus two of volume,
    first page, venue (in full or abbreviated as the citation's style abbreviates
    it: "Surv. Geophys." is Surveys in Geophysics) and the further authors (two or
    more cited names, all the record's, in its order): together they single out
    one article. One author, a journal and a year do not: an author publishes in
    the same journal in the same year more than once, unless the record is that one
    author's alone (`_sole_author_in_venue`).
    """
    from rapidfuzz import fuzz

    text = reference.free_text or ""
    haystack = match.normalize_text(text)
    tokens = set(haystack.split())
    if not work.year or str(work.year) not in tokens or not work.authors:
        return False
    family = match.normalize_text(work.authors[0].family)
    # The record's first author leads the names the citation was read with; only an
    # unread string is searched for the name ("Huseni" third in the list is another
    # paper's first author).
    cited = match.normalize_text(reference.authors[0].family) if reference.authors else ""
    if not family or fuzz.partial_ratio(family, cited or haystack) < LOCATOR_NAME_RATIO:
        return False
    if _locator_differs(reference, work):
        return False
    first_page = match.normalize_text((work.pages or "").split("-")[0])
    venue = match.normalize_text(work.venue or "")
    evidence = [
        bool(work.volume) and match.normalize_text(work.volume) in tokens,
        bool(first_page) and first_page in tokens,
        (bool(venue) and fuzz.partial_ratio(venue, haystack) >= LOCATOR_VENUE_RATIO)
        or _venue_abbreviated(reference, work),
        _coauthors_agree(reference, work),
    ]
    return sum(evidence) >= 2 or _sole_author_in_venue(reference, work)


def _locator_differs(reference: Reference, work: Work) -> bool:
    """The citation gives a volume or first page, and the record another one: the next
    article in the same journal and volume is not the cited one."""
    return (
        match.compare_volume(reference.volume, work.volume) is False
        or match.compare_pages(reference.pages, work.pages) is False
    )


def _sole_author_in_venue(reference: Reference, work: Work) -> bool:
    """A one-author citation that gives only the journal and the year ("J. Zauner, Z.
    fur Psychosom. Med. Psychoanal. (1978)") names a record that is that author's
    alone (family name and first initial), in that journal, that year: all the
    citation says, and the record says it too. A volume or page the citation gives
    is evidence of its own, weighed above; a second such record leaves the citation
    ambiguous (`verify` then identifies neither).
    """
    if reference.volume or reference.pages or reference.authors_truncated:
        return False
    if len(reference.authors) != 1 or len(work.authors) != 1 or reference.year != work.year:
        return False
    cited, found = reference.authors[0], work.authors[0]
    if cited.is_organisation or found.is_organisation:
        return False
    same_name = match.normalize_text(cited.family) == match.normalize_text(found.family)
    return (
        same_name
        and _first_initial(cited.given) == _first_initial(found.given) != ""
        and _venue_abbreviated(reference, work)
    )


def _first_initial(given: str) -> str:
    """The first letter of a given name, accents folded: "É." and "Emile" share "e"."""
    return match.normalize_text(given)[:1]


def _venue_abbreviated(reference: Reference, work: Work) -> bool:
    """The cited venue is the record's, abbreviated ("Electr. Power Syst. Res."), or the
    same preprint server ("SSRN Electron. J.")."""
    return venue_as_record(reference, work) is not None


def venue_as_record(reference: Reference, work: Work) -> str | None:
    """The cited venue as it names the record's, or None when it does not.

    An ACS string does not say whose a "J." before the journal is: "Gray, J. J. Cell
    Syst." is Gray, J. in J. Cell Syst. or Gray, J. J. in Cell Syst.; the record says.
    """
    if not reference.venue or not work.venue:
        return None
    readings = [reference.venue]
    if reference.venue.startswith("J. ") and reference.authors and not reference.title:
        readings.append(reference.venue.removeprefix("J. "))
    for venue in readings:
        comparison = match.compare_venues(
            venue, work.venue, found_short=work.venue_short, found_aliases=work.venue_aliases
        )
        if comparison.kind in ("same", "abbreviation", "acronym") or (
            comparison.cited_preprint and comparison.found_preprint and _server(venue, work.venue)
        ):
            return venue
    return None


def _server(cited: str, found: str) -> bool:
    """Two preprint venues name one server: "SSRN Electron. J." and "SSRN Electronic Journal"."""
    return match.normalize_text(cited).split()[:1] == match.normalize_text(found).split()[:1]


def _coauthors_agree(reference: Reference, work: Work) -> bool:
    """Two or more cited names, each one of the record's authors, the first leading."""
    if len(reference.authors) < 2:
        return False
    authors = match.compare_authors(
        reference.authors, work.authors, cited_truncated=reference.authors_truncated
    )
    return authors.kind != "different" and authors.first_author_ok and authors.matched >= 2


def is_near(reference: Reference, work: Work) -> bool:
    """The record may be the cited work: its title is close, or one or two words apart."""
    if reference.title and work.title:
        title = match.compare_work_title(reference.title, work)
        return title.kind != "different" or _near_miss(reference.title, title)
    return is_convincing(reference, work)
