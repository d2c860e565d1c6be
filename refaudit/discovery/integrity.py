"""What a work's notices say about it: withdrawn or not, and the warning to show."""

from __future__ import annotations

from refaudit.identifiers import normalize_doi
from refaudit.models import Notice, Work
from refaudit.notices import WITHDRAWING_KINDS


def own_notices(work: Work) -> list[Notice]:
    """The notices about `work` itself: a notice record also lists the notice it is."""
    own = normalize_doi(work.doi)
    return [
        notice
        for notice in work.notices
        if not (own and notice.target_doi and normalize_doi(notice.target_doi) != own)
    ]


def is_withdrawn(work: Work) -> bool:
    """A notice withdraws the work itself (retraction, withdrawal, removal), or a source says so."""
    return work.is_retracted is True or any(
        notice.kind in WITHDRAWING_KINDS for notice in own_notices(work)
    )


def integrity_note(work: Work) -> str:
    """A warning worth showing next to any BibTeX or details of a flagged work.

    A retraction notice's own record is not a retracted work: it is named as the
    notice it is, with the DOI it concerns.
    """
    own = own_notices(work)
    notes = [
        f"note: this is the {notice.kind.value.replace('_', ' ')} notice for {notice.target_doi}"
        for notice in work.notices
        if notice not in own
    ]
    kinds = sorted({notice.kind.value.replace("_", " ") for notice in own})
    serious = sorted({n.kind.value.replace("_", " ") for n in own if n.kind in WITHDRAWING_KINDS})
    if serious:
        notes.append(f"warning: this work has a {', '.join(serious)} notice")
    elif work.is_retracted:
        notes.append("warning: a source marks this work as retracted")
    elif kinds:
        notes.append(f"notices: {', '.join(kinds)}")
    return "; ".join(dict.fromkeys(notes))
