"""Every finding code refaudit emits, with what it means for the verdict, the fix and the docs.

One entry per code: its severity, the field it is about, whether it makes the
verdict `mismatch`, whether `refaudit fix` rewrites that field from the record,
and the sentence docs/verdicts.md shows (a test checks that table against this
one). Code that emits a finding builds it with `Finding.of(code, message, …)`,
so a severity is written here and nowhere else.

Two rules hold for every field-level code:

- A code makes a `mismatch` when the cited value is wrong. `author-order` cites
  the right people, so the verdict stays `verified`, yet `fix` still puts them
  in the record's order. Info notes (`title-form`, `doi-available`, …) never
  make a mismatch and never rewrite what the user chose.
- A code `fix` can correct is one where the record holds the right value:
  `future-date` is a wrong year like `year-mismatch`, so `fix` writes the
  record's year (or drops an impossible year no record can replace).

Integrity codes take their severity from the retraction policy in the
configuration; `notices.NOTICE_FINDING_CODES` says which notice kind each one reports.
`Finding.of(code, message, …)` (in models) builds a finding from its entry here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from refaudit.errors import ConfigError
from refaudit.notices import NOTICE_FINDING_CODES, WITHDRAWING_KINDS

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class FindingCode:
    """What one finding code means."""

    code: str
    #: None for integrity codes, whose severity the retraction policy sets
    severity: Severity | None
    #: the report fields a finding with this code may be about (none: the whole reference)
    fields: tuple[str, ...]
    mismatch: bool
    fixable: bool
    when: str


def _code(
    code: str,
    severity: Severity,
    fields: str | None,
    when: str,
    *,
    mismatch: bool = False,
    fixable: bool = False,
) -> FindingCode:
    return FindingCode(
        code, severity, tuple(fields.split(", ")) if fields else (), mismatch, fixable, when
    )


def _mismatch(code: str, severity: Severity, fields: str | None, when: str) -> FindingCode:
    """A cited value the record contradicts: the verdict is `mismatch`, and `fix` writes the
    record's value (every mismatch is one `fix` can correct)."""
    return _code(code, severity, fields, when, mismatch=True, fixable=True)


_VERIFICATION_CODES = (
    _code(
        "not-found",
        "error",
        None,
        "every source asked answered, none has the work, and the indexes that hold its kind "
        "searched for it (for a journal article or book chapter: Crossref, OpenAlex and one "
        "more index, unless the cited DOI does not exist)",
    ),
    _mismatch(
        "doi-not-registered",
        "error",
        "doi",
        "the cited DOI resolves in none of the sources that would hold it (Crossref, OpenAlex, "
        "DataCite, Semantic Scholar, doi.org; a publisher's index only for its own prefixes), "
        "and every source asked about it answered",
    ),
    _mismatch(
        "doi-differs",
        "error",
        "doi",
        "the cited work's publisher index (IEEE Xplore) gives it another DOI (named), and no "
        "source asked would hold the cited one: not the work's DOI, though whether it exists "
        "is not known",
    ),
    _mismatch(
        "doi-points-elsewhere",
        "error",
        "doi",
        "the cited DOI belongs to a different work than the one cited",
    ),
    _code(
        "doi-other-agency",
        "info",
        "doi",
        "neither Crossref nor DataCite holds the cited DOI, but doi.org resolves it: it is "
        "registered with another agency (CNKI, ISTIC, JaLC, KISTI, mEDRA …, named); never an "
        "error",
    ),
    _mismatch(
        "doi-of-book",
        "warning",
        "doi",
        "a chapter is cited with the DOI of its book, and the chapter has a DOI of its own "
        "(named): the right book, the wrong DOI",
    ),
    _code(
        "doi-book-only",
        "info",
        "doi",
        "a chapter is cited with the DOI of its book and has no DOI of its own",
    ),
    _mismatch(
        "arxiv-points-elsewhere",
        "error",
        "arxiv",
        "the cited arXiv id is a different work",
    ),
    _mismatch(
        "arxiv-not-found",
        "error",
        "arxiv",
        "arXiv (which answered) has no paper with the cited id",
    ),
    _mismatch(
        "title-mismatch",
        "error",
        "title",
        "a word is changed, added or dropped (chimeric and near-miss titles, including a word "
        "made plural or singular and an added or dropped article), or a subtitle no record "
        "has is added",
    ),
    _mismatch(
        "title-typo",
        "warning",
        "title",
        "one or two words misspelt; the reference is still valid",
    ),
    _code("title-form", "info", "title", "subtitle missing or title shortened"),
    _mismatch(
        "author-mismatch",
        "error",
        "authors",
        'authors replaced, or the list is incomplete without "and others"',
    ),
    _mismatch(
        "placeholder-authors",
        "error",
        "authors",
        '"John Doe", "Firstname Lastname", …',
    ),
    _mismatch(
        "author-misspelled",
        "warning",
        "authors",
        "a family name within a small edit distance",
    ),
    _code(
        "author-order",
        "warning",
        "authors",
        "same people, different order",
        fixable=True,
    ),
    _code(
        "author-list-short",
        "info",
        "authors",
        "the record lists only one or two authors, all cited first: the rest cannot be checked",
    ),
    _mismatch(
        "future-date",
        "error",
        "year",
        "a year after next year",
    ),
    _mismatch(
        "year-mismatch",
        "error",
        "year",
        "no record of the work has the cited year, and it is not one year off",
    ),
    _mismatch(
        "year-adjacent",
        "warning",
        "year",
        "one year off: often online-first vs print, so not an error, but the record's year "
        "is given",
    ),
    _mismatch(
        "venue-mismatch",
        "error",
        "venue",
        "the cited venue positively contradicts every record of the work: another venue's name "
        "or acronym, a journal for a conference paper, a published venue for a work only ever "
        "posted as a preprint (full names, ISO 4 abbreviations, acronyms, short names and every "
        "record's aliases are understood)",
    ),
    _code(
        "venue-unconfirmed",
        "warning",
        "venue",
        "the cited venue may be the record's but nothing confirms it (an acronym that fits the "
        "name only loosely, an abbreviation that leaves out part of the name); an error needs a "
        "contradiction",
    ),
    _code(
        "published-version-available",
        "warning",
        "venue",
        "a preprint is cited although a published version exists (which is named)",
    ),
    _mismatch(
        "pages-mismatch",
        "warning",
        "pages",
        "the cited pages disagree with every record",
    ),
    _mismatch(
        "volume-mismatch",
        "warning",
        "volume",
        "the cited volume disagrees with every record",
    ),
    _code("arxiv-version", "warning", "arxiv", "the cited arXiv version does not exist"),
    _code("doi-available", "info", "doi", "the entry has no DOI but the work has one"),
    _code("unverified", "warning", None, "sources failed; the message names them and why"),
    _code(
        "unconfirmed",
        "warning",
        "doi, arxiv, venue, year, authors",
        "the work was found, but this cited field could not be checked because the source "
        "that would have checked it failed or none asked would hold it (e.g. a DOI no registry "
        "could be asked about while Crossref was down), or only one source's record "
        "contradicts a venue or year while a source that could hold another version failed; "
        "the verdict is `unverified`, never `verified`",
    ),
    _code("skipped", "info", None, "nothing to check, with the reason"),
    _code(
        "url-dead",
        "warning",
        None,
        "`--check-urls`: a web resource's URL does not answer (an HTTP error, no answer in "
        "10 s, a failed connection or too many redirects)",
    ),
    _code(
        "url-title-differs",
        "info",
        None,
        "`--check-urls`: the page answers, but its title is not the cited title",
    ),
    _code(
        "url-not-checked",
        "info",
        None,
        "`--check-urls`: the URL was not requested (not http(s), or its host is a private, "
        "loopback or link-local address)",
    ),
)
#: Codes the URL check (`urlcheck.py`) adds after the verdict, not the verifier.
URL_CODES = frozenset({"url-dead", "url-title-differs", "url-not-checked"})

_INTEGRITY_CODES = tuple(
    FindingCode(code, None, (), False, False, f"the work has a {kind.value} notice")
    for kind, code in NOTICE_FINDING_CODES.items()
)

#: Every finding code, in the order docs/verdicts.md lists them.
FINDING_CODES: dict[str, FindingCode] = {
    entry.code: entry for entry in _VERIFICATION_CODES + _INTEGRITY_CODES
}
MISMATCH_CODES = frozenset(code for code, entry in FINDING_CODES.items() if entry.mismatch)
FIXABLE_CODES = frozenset(code for code, entry in FINDING_CODES.items() if entry.fixable)
INTEGRITY_CODES = frozenset(NOTICE_FINDING_CODES.values())
#: Integrity codes of notices that withdraw the work (`--fail-on retracted`).
RETRACTION_CODES = frozenset(NOTICE_FINDING_CODES[kind] for kind in WITHDRAWING_KINDS)

#: What a run fails on unless configured otherwise.
DEFAULT_FAIL_ON = ("not_found", "doi", "retracted")
FAIL_ON_CHOICES: dict[str, str] = {
    "error": "any finding of severity error",
    "warning": "any finding of severity warning or error",
    "info": "any finding at all",
    "flagged": "references refaudit flags (not found, or an error finding)",
    "not_found": "references no source knows (verdict not_found)",
    "mismatch": "references whose metadata differs from the record (verdict mismatch)",
    "unverified": "references no source could check (verdict unverified)",
    "doi": "DOI errors: doi-not-registered, doi-points-elsewhere",
    "retracted": "retracted, partially retracted, withdrawn or removed works",
    "integrity": "any integrity notice of severity warning or error (adds expressions of concern)",
    "none": "never fail on findings (exit 3 still applies to unverified references)",
}
"""Each word `--fail-on` accepts; any finding code (e.g. `year-mismatch`) is accepted too."""


def parse_fail_on(values: Iterable[str]) -> list[str]:
    """Split comma lists, lower-case, and reject unknown words with the list of choices."""
    words: list[str] = []
    for value in values:
        for word in str(value).split(","):
            word = word.strip().lower().replace("-", "_")
            if not word:
                continue
            if word not in FAIL_ON_CHOICES and word.replace("_", "-") not in FINDING_CODES:
                raise ConfigError(
                    f"unknown --fail-on value {word!r}",
                    hint=f"use one of {', '.join(FAIL_ON_CHOICES)} or a finding code",
                )
            if word not in words:
                words.append(word)
    return words
