"""Text normalisation shared by every field comparison.

Two spellings of one name (HTML from Crossref, LaTeX from BibTeX, British or
American, singular or plural) reduce to the same words here, so the field
modules compare meaning rather than markup.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections.abc import Sequence

from rapidfuzz.distance import OSA

from refaudit.text import MARKUP_TAG, latex_to_text

# Words shorter than this must match exactly: in short words one letter changes
# the word ("form"/"from" is tolerated at 4, "cat"/"car" is not).
MIN_TYPO_WORD_LENGTH = 4
# Letters a typo may change (OSA distance: a transposition counts once).
# One for ordinary words; two for long words, where double slips are common
# ("Regrsesion") and two edits rarely turn one real word into another.
TYPO_EDITS_SHORT_WORD = 1
TYPO_EDITS_LONG_WORD = 2
LONG_WORD_LENGTH = 8

# The same titles, names and venues are compared against many candidates;
# caching their normal forms keeps ranking cheap on large bibliographies.
NORMALIZE_CACHE_SIZE = 65536

_SPECIAL_LETTERS = str.maketrans(
    {
        "ß": "ss",
        "ø": "o",
        "Ø": "O",
        "ł": "l",
        "Ł": "L",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "đ": "d",
        "Đ": "D",
        "ð": "d",
        "Ð": "D",
        "þ": "th",
        "Þ": "Th",
        "ı": "i",
        "ħ": "h",
        "ŋ": "ng",
    }
)
_GREEK = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "ε": "epsilon",
    "ϵ": "epsilon",
    "ζ": "zeta",
    "η": "eta",
    "θ": "theta",
    "ι": "iota",
    "κ": "kappa",
    "λ": "lambda",
    "μ": "mu",
    "µ": "mu",
    "ν": "nu",
    "ξ": "xi",
    "π": "pi",
    "ρ": "rho",
    "σ": "sigma",
    "ς": "sigma",
    "τ": "tau",
    "υ": "upsilon",
    "φ": "phi",
    "ϕ": "phi",
    "χ": "chi",
    "ψ": "psi",
    "ω": "omega",
}
_GREEK_NAMES = frozenset(_GREEK.values()) | {"varepsilon", "vartheta", "varphi", "varpi"}

_MATH_ELEMENT = re.compile(r"</?(?:mml:)?math\b[^>]*>", re.IGNORECASE)
_DASHES = re.compile(r"[\-\u2010-\u2015\u2212/]+")
# Sub- and superscript marks join their operands: "K_2^0" is the word "k20".
_SCRIPT_MARKS = re.compile(r"[_^]")
_NON_WORD = re.compile(r"[^\w\s]+")


def _fold_character(char: str) -> str:
    if char in _GREEK:
        return f" {_GREEK[char]} "
    return char


@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def normalize_text(text: str) -> str:
    """Lower-case words without accents, markup, LaTeX or punctuation.

    Two spellings of one title (HTML from Crossref, LaTeX from BibTeX,
    precomposed or combining accents) normalise to the same string. LaTeX is read
    by `text.latex_to_text`, the one converter the parsers use too, so a title and
    the record it is compared with go through the same reading.

    >>> normalize_text("Schr\\\\\\"odinger’s <i>Cat</i> &amp; Co-operation")
    'schrodingers cat and co operation'
    """
    if not text:
        return ""
    # Some records escape twice ("&amp;#39;"); unescape until nothing changes.
    for _ in range(3):
        unescaped = html.unescape(text)
        if unescaped == text:
            break
        text = unescaped
    text = _MATH_ELEMENT.sub(" ", text)
    text = MARKUP_TAG.sub("", text)
    text = latex_to_text(text)
    text = text.translate(_SPECIAL_LETTERS)
    if text.isascii():
        # Nothing to decompose, fold or drop: most titles and names skip the per-letter pass.
        text = text.lower()
    else:
        text = unicodedata.normalize("NFKD", text).lower()
        text = "".join(_fold_character(char) for char in text if not unicodedata.combining(char))
    text = text.replace("&", " and ")
    text = _DASHES.sub(" ", text)
    text = _SCRIPT_MARKS.sub("", text)
    text = text.replace("'", "").replace("\u2019", "")
    text = _NON_WORD.sub(" ", text)
    return " ".join(text.split())


def title_tokens(text: str) -> list[str]:
    """The words of a normalised title."""
    return normalize_text(text).split()


# Words whose presence or absence changes a title's wording but not which work it
# names. Prepositions are deliberately *not* here: "towards" → "for" is a classic
# near-miss title.
_ARTICLES = frozenset({"a", "an", "the"})
_NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "first": "1st",
    "second": "2nd",
    "third": "3rd",
    "i": "1",
    "ii": "2",
    "iii": "3",
    "iv": "4",
}
# British → American endings, applied to both sides so only spelling variants meet.
_SPELLING_RULES = (
    (re.compile(r"is(ation|ations|e|ed|es|ing|er|ers)$"), r"iz\1"),
    (re.compile(r"ys(e|ed|es|ing|er|ers)$"), r"yz\1"),
    (re.compile(r"(?<=\w{3})our(s|ed|ing|ite|ites|able|al|ally)?$"), r"or\1"),
    (re.compile(r"(?<=\w{2})tre(s)?$"), r"ter\1"),
    (re.compile(r"(?<=[aeiou][lnr])l(ed|ing|er|ers)$"), r"\1"),
    (re.compile(r"ogue(s)?$"), r"og\1"),
    (re.compile(r"^(h|an|p)ae"), r"\1e"),
    (re.compile(r"^(o|f|man|di)oe"), r"\1e"),
)


@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def spelling(word: str) -> str:
    """One spelling per word: American, digits for small numbers, Greek letters by name."""
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    if word.startswith("var") and word[3:] in _GREEK_NAMES:
        return word[3:]
    for pattern, replacement in _SPELLING_RULES:
        word = pattern.sub(replacement, word)
    return word


@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def canonical_word(word: str) -> str:
    """The spelling of the singular: "Learnings", "learning's" and "learning" meet."""
    word = spelling(word)
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def spelled_tokens(tokens: Sequence[str]) -> list[str]:
    return [spelling(token) for token in tokens]


def canonical_tokens(tokens: Sequence[str]) -> list[str]:
    """Singular words without articles: what stays of a title whatever its word forms."""
    return [canonical_word(token) for token in tokens if token not in _ARTICLES]


# Letters OCR takes for one another in printed reference lists ("tbe", "Joumal",
# "ModeIs"): read alike, one word misread is a slip, not another word.
_OCR_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"))
_OCR_LETTERS = str.maketrans({"i": "l", "1": "l", "c": "e", "b": "h", "0": "o"})


@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def ocr_form(word: str) -> str:
    """`word` with letters OCR confuses merged: "tbe" and "the" share one form."""
    for pair, letter in _OCR_PAIRS:
        word = word.replace(pair, letter)
    return word.translate(_OCR_LETTERS)


def is_ocr_slip(cited: str, found: str) -> bool:
    """Two different words that OCR could have read one for the other.

    Letters are also compared alone: a misread "e" next to an "l" ("Intclligence")
    makes a pair ("cl") that the merged forms no longer share.
    """
    if cited == found or len(cited) <= 1:
        return False
    letters = cited.translate(_OCR_LETTERS) == found.translate(_OCR_LETTERS)
    return letters or ocr_form(cited) == ocr_form(found)


_RAW_WORD = re.compile(r"[^\W_]+")


def repair_ocr(cited: str, *found: str) -> str:
    """`cited` with each word OCR misread replaced by the found word it stands for."""
    found_words = {word for text in found for word in normalize_text(text).split()}

    def repaired(match: re.Match[str]) -> str:
        word = normalize_text(match.group(0))
        if not word or word in found_words:
            return match.group(0)
        return next((f for f in found_words if is_ocr_slip(word, f)), match.group(0))

    return _RAW_WORD.sub(repaired, cited)


def is_typo(cited: str, found: str) -> bool:
    """A slip of the keyboard or of OCR: same first letter, few edits, no digits involved."""
    if is_ocr_slip(cited, found):
        return True
    if min(len(cited), len(found)) < MIN_TYPO_WORD_LENGTH or cited[0] != found[0]:
        return False
    if any(char.isdigit() for char in cited + found):
        return False
    longest = max(len(cited), len(found))
    allowed = TYPO_EDITS_LONG_WORD if longest >= LONG_WORD_LENGTH else TYPO_EDITS_SHORT_WORD
    return OSA.distance(cited, found) <= allowed
