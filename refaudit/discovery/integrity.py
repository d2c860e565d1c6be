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


def withdrawal_note(work: Work) -> str:
    """What a `note` field says of a withdrawn work: each notice's kind, date and DOI.

    Written into the BibTeX of a retracted work cited on purpose (to discuss the
    retraction), so the printed reference says what happened to it.
    """
    parts = []
    for notice in own_notices(work):
        if notice.kind not in WITHDRAWING_KINDS:
            continue
        said = [f"{notice.kind.value.replace('_', ' ').capitalize()} notice"]
        if notice.date:
            said.append(notice.date[:10])
        if notice.notice_doi:
            said.append(f"doi:{notice.notice_doi}")
        parts.append(", ".join(said))
    if not parts:
        parts.append(f"Marked as retracted by {', '.join(work.found_in) or work.source}")
    return "; ".join(dict.fromkeys(parts))
