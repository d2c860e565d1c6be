"""One vocabulary for integrity notices, whoever reports them.

Crossref writes `expression_of_concern`, Retraction Watch "Expression of
concern", PubMed "Expression of Concern for"; corrections arrive as
erratum, corrigendum or correction. Every source maps its label through
`normalize_notice_kind` so the retraction policy sees one `NoticeKind`.
"""

from __future__ import annotations

import enum
import re


class NoticeKind(enum.StrEnum):
    """Normalised integrity-notice taxonomy (publisher and Retraction Watch vocabularies)."""

    RETRACTION = "retraction"
    PARTIAL_RETRACTION = "partial_retraction"
    WITHDRAWAL = "withdrawal"
    REMOVAL = "removal"
    EXPRESSION_OF_CONCERN = "expression_of_concern"
    CORRECTION = "correction"
    REINSTATEMENT = "reinstatement"
    NEW_VERSION = "new_version"
    OTHER = "other"


#: The finding code each kind of notice is reported as (kinds not listed are never flagged).
NOTICE_FINDING_CODES: dict[NoticeKind, str] = {
    NoticeKind.RETRACTION: "retracted",
    NoticeKind.PARTIAL_RETRACTION: "partially-retracted",
    NoticeKind.WITHDRAWAL: "withdrawn",
    NoticeKind.REMOVAL: "removed",
    NoticeKind.EXPRESSION_OF_CONCERN: "expression-of-concern",
    NoticeKind.CORRECTION: "corrected",
    NoticeKind.REINSTATEMENT: "reinstated",
}
NOTICE_HEADLINES: dict[NoticeKind, str] = {
    NoticeKind.RETRACTION: "Retracted",
    NoticeKind.PARTIAL_RETRACTION: "Partially retracted",
    NoticeKind.WITHDRAWAL: "Withdrawn",
    NoticeKind.REMOVAL: "Removed",
    NoticeKind.EXPRESSION_OF_CONCERN: "Expression of concern",
    NoticeKind.CORRECTION: "Corrected",
    NoticeKind.REINSTATEMENT: "Reinstated",
}

#: Kinds that take a paper out of the record: a cited work with one is "retracted" in
#: every output (summary counts, JSON and MCP `retracted`, `--fail-on retracted`).
WITHDRAWING_KINDS = frozenset(
    {
        NoticeKind.RETRACTION,
        NoticeKind.PARTIAL_RETRACTION,
        NoticeKind.WITHDRAWAL,
        NoticeKind.REMOVAL,
    }
)

_EXACT: dict[str, NoticeKind] = {
    "retraction": NoticeKind.RETRACTION,
    "retracted": NoticeKind.RETRACTION,
    "retracted publication": NoticeKind.RETRACTION,
    "retraction of publication": NoticeKind.RETRACTION,
    "partial retraction": NoticeKind.PARTIAL_RETRACTION,
    "withdrawal": NoticeKind.WITHDRAWAL,
    "withdrawn": NoticeKind.WITHDRAWAL,
    "removal": NoticeKind.REMOVAL,
    "removed": NoticeKind.REMOVAL,
    "expression of concern": NoticeKind.EXPRESSION_OF_CONCERN,
    "eoc": NoticeKind.EXPRESSION_OF_CONCERN,
    "correction": NoticeKind.CORRECTION,
    "erratum": NoticeKind.CORRECTION,
    "corrigendum": NoticeKind.CORRECTION,
    "published erratum": NoticeKind.CORRECTION,
    "reinstatement": NoticeKind.REINSTATEMENT,
    "new version": NoticeKind.NEW_VERSION,
    "new edition": NoticeKind.NEW_VERSION,
}

# Checked in order: "partial retraction" must win over "retraction",
# "retraction of an expression of concern" is about the concern, not the paper.
_KEYWORDS: tuple[tuple[str, NoticeKind], ...] = (
    ("reinstat", NoticeKind.REINSTATEMENT),
    ("partial retract", NoticeKind.PARTIAL_RETRACTION),
    ("concern", NoticeKind.EXPRESSION_OF_CONCERN),
    ("retract", NoticeKind.RETRACTION),
    ("withdraw", NoticeKind.WITHDRAWAL),
    ("remov", NoticeKind.REMOVAL),
    ("correct", NoticeKind.CORRECTION),
    ("errat", NoticeKind.CORRECTION),
    ("corrigend", NoticeKind.CORRECTION),
    ("new version", NoticeKind.NEW_VERSION),
    ("new edition", NoticeKind.NEW_VERSION),
)


def normalize_notice_kind(text: str | None) -> NoticeKind:
    """Map a notice type or label from any source to a `NoticeKind` (OTHER when unknown).

    >>> normalize_notice_kind("Expression-of-Concern")
    <NoticeKind.EXPRESSION_OF_CONCERN: 'expression_of_concern'>
    """
    if not text:
        return NoticeKind.OTHER
    words = re.sub(r"[\s_\-]+", " ", text).strip().lower()
    if words in _EXACT:
        return _EXACT[words]
    for keyword, kind in _KEYWORDS:
        if keyword in words:
            return kind
    return NoticeKind.OTHER
