"""One notice vocabulary for publisher, Retraction Watch and PubMed labels."""

from __future__ import annotations

import pytest

from refaudit.models import NoticeKind
from refaudit.notices import normalize_notice_kind


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("retraction", NoticeKind.RETRACTION),
        ("Retracted Publication", NoticeKind.RETRACTION),
        ("partial_retraction", NoticeKind.PARTIAL_RETRACTION),
        ("Partial Retraction", NoticeKind.PARTIAL_RETRACTION),
        ("partial-retraction", NoticeKind.PARTIAL_RETRACTION),
        ("withdrawn", NoticeKind.WITHDRAWAL),
        ("Withdrawal", NoticeKind.WITHDRAWAL),
        ("removal", NoticeKind.REMOVAL),
        ("Removed", NoticeKind.REMOVAL),
        ("expression of concern", NoticeKind.EXPRESSION_OF_CONCERN),
        ("Expression of Concern for", NoticeKind.EXPRESSION_OF_CONCERN),
        ("correction", NoticeKind.CORRECTION),
        ("expression_of_concern", NoticeKind.EXPRESSION_OF_CONCERN),
        ("Expression-of-Concern", NoticeKind.EXPRESSION_OF_CONCERN),
        ("Expression of concern", NoticeKind.EXPRESSION_OF_CONCERN),
        ("Retraction of an expression of concern", NoticeKind.EXPRESSION_OF_CONCERN),
        ("erratum", NoticeKind.CORRECTION),
        ("Corrigendum", NoticeKind.CORRECTION),
        ("Published Erratum", NoticeKind.CORRECTION),
        ("Reinstatement", NoticeKind.REINSTATEMENT),
        ("new_version", NoticeKind.NEW_VERSION),
        ("New version", NoticeKind.NEW_VERSION),
        ("reinstatement", NoticeKind.REINSTATEMENT),
        ("addendum", NoticeKind.OTHER),
        (None, NoticeKind.OTHER),
    ],
)
def test_labels_from_every_source_map_to_one_kind(label: str | None, kind: NoticeKind) -> None:
    assert normalize_notice_kind(label) == kind
