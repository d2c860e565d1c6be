"""Titles: a typo, a dropped subtitle or a truncation is not a different title."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from refaudit.match.scripts import script_of
from refaudit.match.text import (
    NORMALIZE_CACHE_SIZE,
    canonical_tokens,
    is_typo,
    repair_ocr,
    spelled_tokens,
    title_tokens,
)

# A typo may touch at most this many words: more than two misspelt words in one
# title is no longer a slip of the keyboard but a different title.
MAX_TYPO_WORDS = 2
# Titles with fewer words than this must agree exactly (up to minor spelling):
# a typo in a two-word title leaves too little to be sure it is the same work.
MIN_WORDS_FOR_TYPO = 4
# A cited title that is a prefix of the found one counts as truncated only when
# it keeps at least this many words or this share of the found title.
TRUNCATED_MIN_WORDS = 6
TRUNCATED_MIN_SHARE = 0.6
TRUNCATED_ABSOLUTE_MIN_WORDS = 3
# A title part on one side of a subtitle separator must have this many words
# before "same main title, subtitle dropped" is believable.
SUBTITLE_MIN_MAIN_WORDS = 2
# Scores given to accepted title kinds, so that candidate ranking prefers
# exact over cosmetic over structural agreement.
TITLE_KIND_SCORE = {
    "exact": 1.0,
    "minor": 0.98,
    "word_form": 0.96,
    "typo": 0.95,
    "subtitle": 0.9,
    "truncated": 0.85,
}

TitleKind = Literal["exact", "minor", "word_form", "typo", "subtitle", "truncated", "different"]


@dataclass(frozen=True)
class TitleComparison:
    """How a cited title relates to a found one; `changed_words` is (cited, found)."""

    kind: TitleKind
    score: float
    changed_words: tuple[tuple[str, str], ...] = ()


_SUBTITLE_SEPARATOR = re.compile(r"\s*(?::|\uff1a|\s[-\u2013\u2014]+\s|[.?!]\s)\s*")


_DERIVATIONAL_SUFFIXES = (
    "",
    "able",
    "ible",
    "al",
    "ial",
    "ical",
    "ic",
    "ive",
    "ion",
    "ation",
    "ing",
    "ed",
    "er",
    "or",
    "ly",
    "ment",
    "ness",
    "ity",
    "ism",
    "ist",
    "ize",
    "ous",
    "ful",
    "less",
    "ent",
    "ence",
    "ance",
    "ant",
)
MIN_DERIVATION_STEM = 5


def _stems(word: str) -> set[str]:
    return {
        word[: len(word) - len(suffix)]
        for suffix in _DERIVATIONAL_SUFFIXES
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_DERIVATION_STEM
    }


def _is_derivation(cited: str, found: str) -> bool:
    """Another word of the same stem, not a slip of the keyboard.

    "Differentiable" for "Differential" or "Computation" for "Computational" is a
    changed word even though few letters differ; "Recogntion" is a typo because
    no ending turns one into the other.
    """
    return cited != found and bool(_stems(cited) & _stems(found))


def _word_changes(cited: Sequence[str], found: Sequence[str]) -> list[tuple[str, str]]:
    """The (cited, found) word pairs an edit script needs; "" marks an absent word."""
    changes: list[tuple[str, str]] = []
    for step in Levenshtein.opcodes(cited, found):
        if step.tag == "equal":
            continue
        cited_part = list(cited[step.src_start : step.src_end])
        found_part = list(found[step.dest_start : step.dest_end])
        width = max(len(cited_part), len(found_part))
        cited_part += [""] * (width - len(cited_part))
        found_part += [""] * (width - len(found_part))
        changes.extend(zip(cited_part, found_part, strict=True))
    return changes


def _compounds_joined(cited: list[str], found: list[str]) -> tuple[list[str], list[str]]:
    """Both titles with two adjacent words joined where the other writes them as one.

    A compound cut at a line end loses its hyphen in print ("Shape-" "conditioned"
    comes out "Shapeconditioned"): that alone changes no word, and a slip elsewhere
    in the title stays a slip.
    """

    def joined(words: list[str], other: list[str]) -> list[str]:
        whole, out = set(other), list[str]()
        for word in words:
            if out and out[-1] + word in whole:
                out[-1] += word
            else:
                out.append(word)
        return out

    return joined(cited, found), joined(found, cited)


def _compare_words(cited: list[str], found: list[str]) -> tuple[TitleKind, list[tuple[str, str]]]:
    """Classify two word sequences as exact, minor, word_form, typo or different.

    "minor" is spelling only (British/American, "pre-training"/"pretraining");
    "word_form" changes a word's number or drops an article ("Model" → "Models"):
    the same work, but not the title it was published under.
    """
    if cited == found:
        return "exact", []
    if "".join(cited) == "".join(found):
        return "minor", []
    cited, found = _compounds_joined(cited, found)
    cited_spelled, found_spelled = spelled_tokens(cited), spelled_tokens(found)
    if cited_spelled == found_spelled or "".join(cited_spelled) == "".join(found_spelled):
        return "minor", _word_changes(cited, found)
    cited_canon, found_canon = canonical_tokens(cited), canonical_tokens(found)
    if cited_canon == found_canon or "".join(cited_canon) == "".join(found_canon):
        return "word_form", _word_changes(cited, found)
    changes = _word_changes(cited_canon, found_canon)
    if changes and all(c and f and _is_derivation(c, f) for c, f in changes):
        return "word_form", _word_changes(cited, found)
    only_typos = (
        len(cited_canon) >= MIN_WORDS_FOR_TYPO
        and len(changes) <= MAX_TYPO_WORDS
        and all(c and f and is_typo(c, f) for c, f in changes)
    )
    if only_typos:
        return "typo", _word_changes(cited, found) or changes
    return "different", _word_changes(cited, found)


def _split_subtitle(raw: str) -> tuple[list[str], list[str]] | None:
    """(main, subtitle) tokens when the raw title has a subtitle separator."""
    parts = _SUBTITLE_SEPARATOR.split(raw, maxsplit=1)
    if len(parts) != 2:
        return None
    main, rest = title_tokens(parts[0]), title_tokens(parts[1])
    if len(main) < SUBTITLE_MIN_MAIN_WORDS or not rest:
        return None
    return main, rest


def _is_accepted(kind: TitleKind) -> bool:
    return kind in ("exact", "minor", "word_form", "typo")


_NOTICE_PREFIX = re.compile(
    r"^\s*(?:retracted|withdrawn|removed)(?:\s+article)?\s*[:.\-–]\s*", re.IGNORECASE
)
# "Retraction: …" names a notice as often as a work retracted in place (Taylor & Francis
# relabels the article itself): stripped only from a record known to be retracted.
_IN_PLACE_PREFIX = re.compile(
    r"^\s*(?:retraction|retracted|withdrawn|removed)(?:\s+(?:article|note))?\s*[:.\-–]\s*",
    re.IGNORECASE,
)


def strip_notice_prefix(title: str, *, retracted: bool = False) -> str:
    """Publishers rename retracted works ("RETRACTED: …", "RETRACTED ARTICLE: …").

    `retracted`: the record is itself under a notice, so "Retraction: " is its label too.
    """
    return (_IN_PLACE_PREFIX if retracted else _NOTICE_PREFIX).sub("", title)


# Old journals number their articles in the title: Crossref's "I.—COMPUTING MACHINERY …".
_SECTION_NUMBER = re.compile(r"^\s*[IVXLC]+\.\s*[\u2014\u2013]+\s*")


def _title_words(title: str) -> list[str]:
    return title_tokens(_SECTION_NUMBER.sub("", strip_notice_prefix(title)))


# "原题 [English title]", "Заглавие = English title", "English (原题)": a title given in
# two languages, the second in brackets or after " = " (ISO 690, GOST 7.0.5).
_BILINGUAL = re.compile(
    r"^(?P<first>.+?)\s*(?:[\[(\uff08\u3010](?P<bracketed>[^\[\]()\uff08\uff09\u3010\u3011]+)"
    r"[\])\uff09\u3011]\.?|\s=\s(?P<after>.+))\s*$",
    re.DOTALL,
)


def title_languages(title: str) -> tuple[str, ...]:
    """The title, or its two halves when it is written in two scripts."""
    parts = _BILINGUAL.match(title)
    if parts is None:
        return (title,)
    first, second = parts.group("first"), parts.group("bracketed") or parts.group("after")
    if script_of(first) == script_of(second) or not title_tokens(first):
        return (title,)
    return (first, second)


# One citation meets the same record in identification, scoring and findings.
@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def compare_titles(cited: str, found: str, found_subtitle: str | None = None) -> TitleComparison:
    """Compare a cited title with a found one (and its separate subtitle, if any).

    A misspelt word is a "typo" (the reference is still valid); a replaced,
    added or removed word is "different". Dropped or added subtitles and clear
    truncations are named as such so the engine can decide how loud to be. A
    title given in two languages (one in brackets, or after " = ") agrees when
    either language agrees: a non-English work is cited by its original title,
    its translation or both, and a record may hold either.
    """
    cited_forms, found_forms = title_languages(cited), title_languages(found)
    if len(cited_forms) == 1 and len(found_forms) == 1:
        return _compare_one(cited, found, found_subtitle)
    return max(
        (_compare_one(c, f, found_subtitle) for c in cited_forms for f in found_forms),
        key=lambda comparison: comparison.score,
    )


def _compare_one(cited: str, found: str, found_subtitle: str | None) -> TitleComparison:
    """`compare_titles` for a title in one language."""
    cited_words = _title_words(cited)
    found_words = _title_words(found)
    if not cited_words or not found_words:
        return TitleComparison("different", 0.0)
    repaired = repair_ocr(cited, found, found_subtitle or "")
    if repaired != cited:
        # Misread letters ("tbe", "ModeIs"): if they are all that differs, it is a slip.
        comparison = _compare_one(repaired, found, found_subtitle)
        if comparison.kind != "different":
            slips = tuple(_word_changes(cited_words, _title_words(repaired)))
            kind: TitleKind = "typo" if comparison.kind in ("exact", "minor") else comparison.kind
            return TitleComparison(kind, TITLE_KIND_SCORE["typo"], slips)
    similarity = fuzz.ratio(" ".join(cited_words), " ".join(found_words)) / 100

    def result(kind: TitleKind, changes: Sequence[tuple[str, str]] = ()) -> TitleComparison:
        score = TITLE_KIND_SCORE.get(kind, similarity)
        return TitleComparison(kind, max(score, similarity), tuple(changes))

    found_full = found_words
    if found_subtitle and title_tokens(found_subtitle):
        found_full = found_words + title_tokens(found_subtitle)
        kind, changes = _compare_words(cited_words, found_full)
        if _is_accepted(kind):
            return result(kind, changes)
    kind, changes = _compare_words(cited_words, found_words)
    if _is_accepted(kind):
        return result(kind, changes)
    if found_subtitle and found_full is not found_words:
        changes = _word_changes(cited_words, found_full)

    cited_split, found_split = _split_subtitle(cited), _split_subtitle(found)
    subtitle_pairs: list[tuple[list[str], list[str]]] = []
    if found_split:
        subtitle_pairs.append((cited_words, found_split[0]))
    if cited_split:
        subtitle_pairs.append((cited_split[0], found_words))
    if found_subtitle and len(found_words) >= SUBTITLE_MIN_MAIN_WORDS:
        subtitle_pairs.append((cited_words, found_words))
    for cited_main, found_main in subtitle_pairs:
        main_kind, main_changes = _compare_words(cited_main, found_main)
        if _is_accepted(main_kind):
            return result("subtitle", main_changes)

    cited_canon, found_canon = canonical_tokens(cited_words), canonical_tokens(found_full)
    prefix_long_enough = len(cited_canon) >= TRUNCATED_MIN_WORDS or (
        len(cited_canon) >= TRUNCATED_MIN_SHARE * len(found_canon)
    )
    if (
        len(cited_canon) >= TRUNCATED_ABSOLUTE_MIN_WORDS
        and len(cited_canon) < len(found_canon)
        and found_canon[: len(cited_canon)] == cited_canon
        and prefix_long_enough
    ):
        return result("truncated")
    return TitleComparison("different", similarity, tuple(changes))
