"""Field-by-field comparison of a cited reference with a work a source describes.

Every function here is pure: it takes strings, numbers, `Person`s or records
and returns a small frozen result that says *what kind* of difference it saw
(a typo, a dropped subtitle, a replaced word, a missing author …) plus the
evidence a message needs. The verification engine turns kinds into findings;
this package never decides severity itself.

One module per field: `text` (normalisation), `titles`, `authors` (with
`scripts`: writing systems and romanisation), `venues` (with the table of
well-known venues in `venues.json`), `locators` (year, volume, pages) and
`scoring` (whole records). The thresholds are named
constants in each module, each with the reason for its value.
"""

from refaudit.match.authors import AuthorComparison, AuthorKind, compare_authors
from refaudit.match.locators import (
    YearComparison,
    YearKind,
    compare_pages,
    compare_volume,
    compare_years,
)
from refaudit.match.scoring import candidate_score, compare_work_title, is_same_work
from refaudit.match.text import normalize_text, title_tokens
from refaudit.match.titles import (
    TitleComparison,
    TitleKind,
    compare_titles,
    strip_notice_prefix,
    title_languages,
)
from refaudit.match.venues import (
    VenueComparison,
    VenueKind,
    compare_venues,
    is_conference_venue,
    is_preprint_venue,
)

__all__ = [
    "AuthorComparison",
    "AuthorKind",
    "TitleComparison",
    "TitleKind",
    "VenueComparison",
    "VenueKind",
    "YearComparison",
    "YearKind",
    "candidate_score",
    "compare_authors",
    "compare_pages",
    "compare_titles",
    "compare_venues",
    "compare_work_title",
    "compare_volume",
    "compare_years",
    "is_conference_venue",
    "is_preprint_venue",
    "is_same_work",
    "normalize_text",
    "strip_notice_prefix",
    "title_languages",
    "title_tokens",
]
