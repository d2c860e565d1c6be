"""Field-by-field comparison of a cited reference with a work a source describes.

Every function here is pure: it takes strings, numbers, `Person`s or records
and returns a small frozen result that says *what kind* of difference it saw
(a typo, a dropped subtitle, a replaced word, a missing author …) plus the
evidence a message needs. The verification engine turns kinds into findings;
this module never decides severity itself.

The thresholds are named constants below, each with the reason for its value.
They were calibrated on the public benchmark sets (valid references must
almost never produce a "different" kind) and are not tuned to single cases.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA, Levenshtein

from refaudit.identifiers import normalize_doi
from refaudit.models import Person, Reference, Work

# --- thresholds ------------------------------------------------------------

# A typo may touch at most this many words: more than two misspelt words in one
# title is no longer a slip of the keyboard but a different title.
MAX_TYPO_WORDS = 2
# Words shorter than this must match exactly: in short words one letter changes
# the word ("form"/"from" is tolerated at 4, "cat"/"car" is not).
MIN_TYPO_WORD_LENGTH = 4
# Letters a typo may change (OSA distance: a transposition counts once).
# One for ordinary words; two for long words, where double slips are common
# ("Regrsesion") and two edits rarely turn one real word into another.
TYPO_EDITS_SHORT_WORD = 1
TYPO_EDITS_LONG_WORD = 2
LONG_WORD_LENGTH = 8
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

# Family names within this many edits are reported as misspelt rather than as
# another person; the long-name allowance covers transliterations
# ("Schmidhuber"/"Schmidthuber").
AUTHOR_EDITS_SHORT_NAME = 1
AUTHOR_EDITS_LONG_NAME = 2
LONG_NAME_LENGTH = 7
MIN_MISSPELL_NAME_LENGTH = 4
# Organisation authors agree when their word sets are this similar (rapidfuzz
# token-set ratio): "The ATLAS Collaboration" = "ATLAS Collaboration".
ORGANISATION_SIMILARITY = 95
# Found author lists longer than this are often cited by their first authors
# only, without "et al."; omitting the tail is then a style choice, not an error.
LONG_AUTHOR_LIST = 10

# "Nature" vs "Nature Communications": one or two extra distinctive words name
# another journal of the same family. Longer additions are usually a
# descriptive subtitle of the same venue, so they are not called different.
VENUE_MAX_QUALIFIER_WORDS = 2
# Venues sharing at least this share of distinctive words, each with words of
# its own, are too close to call different; at one half, a single differing
# word decides ("Physical Review B" vs "Physical Review D").
VENUE_MIN_OVERLAP = 0.6

# Candidate-score weights: the title identifies a work far better than a year.
WEIGHT_TITLE = 0.6
WEIGHT_AUTHORS = 0.25
WEIGHT_YEAR = 0.1
WEIGHT_VENUE = 0.05

# The same titles, names and venues are compared against many candidates;
# caching their normal forms keeps ranking cheap on large bibliographies.
NORMALIZE_CACHE_SIZE = 65536

# --- result records ----------------------------------------------------------

TitleKind = Literal["exact", "minor", "word_form", "typo", "subtitle", "truncated", "different"]
AuthorKind = Literal["exact", "ok", "truncated_ok", "minor", "different", "unknown"]
YearKind = Literal["exact", "adjacent", "different", "unknown"]
VenueKind = Literal[
    "same", "abbreviation", "acronym", "preprint", "compatible", "different", "unknown"
]


@dataclass(frozen=True)
class TitleComparison:
    """How a cited title relates to a found one; `changed_words` is (cited, found)."""

    kind: TitleKind
    score: float
    changed_words: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class AuthorComparison:
    """How a cited author list relates to a found one, with the names that differ."""

    kind: AuthorKind
    score: float
    matched: int = 0
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    misspelled: tuple[tuple[str, str], ...] = ()
    order_changed: bool = False
    first_author_ok: bool = False
    placeholder: bool = False


@dataclass(frozen=True)
class YearComparison:
    """`delta` is cited minus found."""

    kind: YearKind
    delta: int | None = None


@dataclass(frozen=True)
class VenueComparison:
    """How two venue names relate; the preprint flags say which side is a preprint server."""

    kind: VenueKind
    score: float
    cited_preprint: bool = False
    found_preprint: bool = False


# --- text normalisation -------------------------------------------------------

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
# Operator names print as words ("$O(\\log n)$" reads "O(log n)" in the published title).
_MATH_OPERATORS = frozenset(
    "log ln lg exp sin cos tan sinh cosh tanh max min sup inf lim det dim ker deg gcd arg "
    "Pr".split()
)
_LATEX_LETTERS = {"ss": "ss", "o": "o", "O": "o", "l": "l", "L": "l", "ae": "ae", "AE": "ae"}
_LATEX_LETTERS |= {"oe": "oe", "OE": "oe", "aa": "a", "AA": "a", "i": "i", "j": "j"}

_MATH_ELEMENT = re.compile(r"</?(?:mml:)?math\b[^>]*>", re.IGNORECASE)
_MARKUP_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
_LATEX_SYMBOL_ACCENT = re.compile(r"\\[`'^\"~=.]\s*\{?\s*([A-Za-z])\s*\}?")
# Letter-named accents (\c{c}, \v s) must not swallow commands such as \circ or \rm.
_LATEX_LETTER_ACCENT = re.compile(
    r"\\[uvHckrdb](?:\s*\{\s*([A-Za-z])\s*\}|\s+([A-Za-z])(?![A-Za-z]))"
)
_LATEX_COMMAND = re.compile(r"\\([A-Za-z]+)\s*")
_DASHES = re.compile(r"[\-\u2010-\u2015\u2212/]+")
# Sub- and superscript marks join their operands: "K_2^0" is the word "k20".
_SCRIPT_MARKS = re.compile(r"[_^]")
_NON_WORD = re.compile(r"[^\w\s]+")


def _latex_command(match: re.Match[str]) -> str:
    name = match.group(1)
    if name in _LATEX_LETTERS:
        return _LATEX_LETTERS[name]
    if name.lower() in _GREEK_NAMES:
        return f" {name.lower().removeprefix('var')} "
    if name in _MATH_OPERATORS:
        return f" {name.lower()} "
    return " "


def _fold_character(char: str) -> str:
    if char in _GREEK:
        return f" {_GREEK[char]} "
    return char


@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def normalize_text(text: str) -> str:
    """Lower-case words without accents, markup, LaTeX or punctuation.

    Two spellings of one title (HTML from Crossref, LaTeX from BibTeX,
    precomposed or combining accents) normalise to the same string.

    >>> normalize_text("Schr\\\\\\"odinger’s <i>Cat</i> &amp; Co-operation")
    'schrodingers cat and co operation'
    """
    if not text:
        return ""
    text = html.unescape(text)
    text = _MATH_ELEMENT.sub(" ", text)
    text = _MARKUP_TAG.sub("", text)
    text = _LATEX_SYMBOL_ACCENT.sub(r"\1", text)
    text = _LATEX_LETTER_ACCENT.sub(lambda match: match.group(1) or match.group(2), text)
    # "\\/" is LaTeX's italic correction, kept by some records ("Bio\\/technology").
    text = text.replace("\\&", "&").replace("\\\\", " ").replace("\\/", "")
    text = _LATEX_COMMAND.sub(_latex_command, text)
    text = text.replace("{", "").replace("}", "")
    text = text.translate(_SPECIAL_LETTERS)
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


# --- titles --------------------------------------------------------------------

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
_SUBTITLE_SEPARATOR = re.compile(r"\s*(?::|\s[-\u2013\u2014]+\s|[.?!]\s)\s*")


@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def _spelling(word: str) -> str:
    """One spelling per word: American, digits for small numbers, Greek letters by name."""
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    if word.startswith("var") and word[3:] in _GREEK_NAMES:
        return word[3:]
    for pattern, replacement in _SPELLING_RULES:
        word = pattern.sub(replacement, word)
    return word


@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def _canonical_word(word: str) -> str:
    """The spelling of the singular: "Learnings", "learning's" and "learning" meet."""
    word = _spelling(word)
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _spelled_tokens(tokens: Sequence[str]) -> list[str]:
    return [_spelling(token) for token in tokens]


def _canonical_tokens(tokens: Sequence[str]) -> list[str]:
    """Singular words without articles: what stays of a title whatever its word forms."""
    return [_canonical_word(token) for token in tokens if token not in _ARTICLES]


def _is_typo(cited: str, found: str) -> bool:
    """A slip of the keyboard: same first letter, few edits, no digits involved."""
    if min(len(cited), len(found)) < MIN_TYPO_WORD_LENGTH or cited[0] != found[0]:
        return False
    if any(char.isdigit() for char in cited + found):
        return False
    longest = max(len(cited), len(found))
    allowed = TYPO_EDITS_LONG_WORD if longest >= LONG_WORD_LENGTH else TYPO_EDITS_SHORT_WORD
    return OSA.distance(cited, found) <= allowed


# Endings that make another word of the same stem ("differential" → "differentiable").
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
    for tag, c_start, c_end, f_start, f_end in Levenshtein.opcodes(cited, found):
        if tag == "equal":
            continue
        cited_part, found_part = list(cited[c_start:c_end]), list(found[f_start:f_end])
        width = max(len(cited_part), len(found_part))
        cited_part += [""] * (width - len(cited_part))
        found_part += [""] * (width - len(found_part))
        changes.extend(zip(cited_part, found_part, strict=True))
    return changes


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
    cited_spelled, found_spelled = _spelled_tokens(cited), _spelled_tokens(found)
    if cited_spelled == found_spelled or "".join(cited_spelled) == "".join(found_spelled):
        return "minor", _word_changes(cited, found)
    cited_canon, found_canon = _canonical_tokens(cited), _canonical_tokens(found)
    if cited_canon == found_canon or "".join(cited_canon) == "".join(found_canon):
        return "word_form", _word_changes(cited, found)
    changes = _word_changes(cited_canon, found_canon)
    if changes and all(c and f and _is_derivation(c, f) for c, f in changes):
        return "word_form", _word_changes(cited, found)
    only_typos = (
        len(cited_canon) >= MIN_WORDS_FOR_TYPO
        and len(changes) <= MAX_TYPO_WORDS
        and all(c and f and _is_typo(c, f) for c, f in changes)
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


def strip_notice_prefix(title: str) -> str:
    """Publishers rename retracted works ("RETRACTED: …", "RETRACTED ARTICLE: …")."""
    return _NOTICE_PREFIX.sub("", title)


# Old journals number their articles in the title: Crossref's "I.—COMPUTING MACHINERY …".
_SECTION_NUMBER = re.compile(r"^\s*[IVXLC]+\.\s*[\u2014\u2013]+\s*")


def _title_words(title: str) -> list[str]:
    return title_tokens(_SECTION_NUMBER.sub("", strip_notice_prefix(title)))


def compare_titles(cited: str, found: str, found_subtitle: str | None = None) -> TitleComparison:
    """Compare a cited title with a found one (and its separate subtitle, if any).

    A misspelt word is a "typo" (the reference is still valid); a replaced,
    added or removed word is "different". Dropped or added subtitles and clear
    truncations are named as such so the engine can decide how loud to be.
    """
    cited_words = _title_words(cited)
    found_words = _title_words(found)
    if not cited_words or not found_words:
        return TitleComparison("different", 0.0)
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

    cited_canon, found_canon = _canonical_tokens(cited_words), _canonical_tokens(found_full)
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


# --- authors -------------------------------------------------------------------

_PARTICLES = frozenset(
    "van von der den de del della degli dei di da dal dos das do du la le les lo ter ten "
    "te zu zur af av al el bin ibn ben st saint y".split()
)
_PLACEHOLDER_FAMILIES = frozenset(
    {"author", "authors", "anonymous", "anon", "lastname", "surname", "familyname", "nobody"}
)
_PLACEHOLDER_GIVEN = frozenset({"firstname", "first", "forename", "givenname"})
_PLACEHOLDER_FULL = frozenset({("john", "doe"), ("jane", "doe"), ("j", "doe"), ("first", "last")})

# Pairing strength, strongest first, used to choose among same-family candidates.
_MATCH_FULL = 4
_MATCH_FAMILY = 3
_MATCH_LOOSE = 2
_MATCH_MISSPELT = 1


@dataclass(frozen=True)
class _Name:
    """A person reduced to what comparisons need."""

    display: str
    family_keys: frozenset[str]
    family_words: tuple[str, ...]
    all_words: frozenset[str]
    initials: str
    given: str
    organisation: bool


_INITIAL = re.compile(r"[A-Z]\.(?:-?[A-Z]\.)*")
_FAMILY_SUFFIX = re.compile(r"(?:,\s*|\s+)(?:Jr|Sr|Jnr|Snr)\.?$|(?:,\s*|\s+)(?:II|III|IV)$")


def _split_name(person: Person) -> tuple[str, str, str]:
    """(particle, family, given), repairing records that put the whole name in one field."""
    family, given, particle = person.family.strip(), person.given.strip(), person.particle.strip()
    if not family and given:
        if "," in given:
            family, given = (part.strip() for part in given.split(",", 1))
        else:
            words = given.split()
            family, given = words[-1], " ".join(words[:-1])
    # BibTeX reads "V. d. A. Piai" as von "d." and last "A. Piai": an abbreviated
    # particle and leading initials belong to the given names.
    if particle.endswith("."):
        given, particle = f"{given} {particle}".strip(), ""
    # Crossref often keeps the generational suffix in the family name ("Powell, Jr.").
    family = _FAMILY_SUFFIX.sub("", family) or family
    words = family.split()
    while len(words) > 1 and _INITIAL.fullmatch(words[0]):
        given = f"{given} {words.pop(0)}".strip()
    return particle, " ".join(words), given


def _name(person: Person) -> _Name:
    particle, family, given = _split_name(person)
    family_words = tuple(normalize_text(f"{particle} {family}").split())
    given_words = normalize_text(given).split()
    if person.is_organisation:
        whole = "".join(family_words)
        return _Name(person.display(), frozenset({whole}), family_words, frozenset(), "", "", True)
    keys = {"".join(family_words)}
    core = list(family_words)
    while len(core) > 1 and core[0] in _PARTICLES:
        core.pop(0)
    keys.add("".join(core))
    initials = "".join(word[0] for word in given_words)
    return _Name(
        display=f"{particle} {family}".strip() or given,
        family_keys=frozenset(key for key in keys if key),
        family_words=tuple(core),
        all_words=frozenset(family_words) | frozenset(given_words),
        initials=initials,
        given="".join(given_words),
        organisation=False,
    )


def _is_placeholder(person: Person) -> bool:
    _, family, given = _split_name(person)
    family_norm = normalize_text(family).replace(" ", "")
    given_norm = normalize_text(given).replace(" ", "")
    return (
        family_norm in _PLACEHOLDER_FAMILIES
        or given_norm in _PLACEHOLDER_GIVEN
        or (given_norm, family_norm) in _PLACEHOLDER_FULL
    )


def _given_compatible(cited: _Name, found: _Name) -> bool:
    """Initials agree where both are known ("J.-P." = "Jean-Pierre")."""
    if not cited.initials or not found.initials:
        return True
    return cited.initials[0] == found.initials[0]


def _family_edits_allowed(key: str) -> int:
    if len(key) < MIN_MISSPELL_NAME_LENGTH:
        return 0
    return AUTHOR_EDITS_LONG_NAME if len(key) >= LONG_NAME_LENGTH else AUTHOR_EDITS_SHORT_NAME


def _pair_strength(cited: _Name, found: _Name) -> int:
    """How well two names agree: 0 for different people."""
    if cited.organisation or found.organisation:
        if cited.family_keys & found.family_keys:
            return _MATCH_FULL
        a, b = " ".join(cited.family_words), " ".join(found.family_words)
        return _MATCH_FAMILY if fuzz.token_set_ratio(a, b) >= ORGANISATION_SIMILARITY else 0
    if cited.family_keys & found.family_keys:
        return _MATCH_FULL if _given_compatible(cited, found) else _MATCH_FAMILY
    # Family and given swapped (common for East Asian names) or split differently
    # ("Riquelme Ruiz" vs "Ruiz"): each family's words appear in the other's full name.
    if (
        cited.family_words
        and found.family_words
        and set(cited.family_words) <= found.all_words
        and set(found.family_words) <= cited.all_words
    ):
        return _MATCH_LOOSE
    for cited_key in cited.family_keys:
        for found_key in found.family_keys:
            allowed = _family_edits_allowed(min(cited_key, found_key, key=len))
            if (
                allowed
                and cited_key[0] == found_key[0]
                and OSA.distance(cited_key, found_key) <= allowed
                and _given_compatible(cited, found)
            ):
                return _MATCH_MISSPELT
    return 0


def _pair_authors(cited: list[_Name], found: list[_Name]) -> dict[int, tuple[int, int]]:
    """cited index → (found index, strength); strongest and nearest-in-position first."""
    candidates = []
    for i, cited_name in enumerate(cited):
        for j, found_name in enumerate(found):
            strength = _pair_strength(cited_name, found_name)
            if strength:
                candidates.append((-strength, abs(i - j), i, j))
    candidates.sort()
    pairs: dict[int, tuple[int, int]] = {}
    used: set[int] = set()
    for negative_strength, _, i, j in candidates:
        if i not in pairs and j not in used:
            pairs[i] = (j, -negative_strength)
            used.add(j)
    return pairs


def compare_authors(
    cited: list[Person], found: list[Person], *, cited_truncated: bool = False
) -> AuthorComparison:
    """Compare a cited author list with a found one.

    "different" means people were replaced, added, or (without "et al.")
    dropped; "minor" covers re-ordering, misspelt names and first-authors-only
    citations of very long lists; "unknown" when either list is empty.
    """
    placeholder = any(_is_placeholder(person) for person in cited)
    if not cited or not found:
        kind: AuthorKind = "different" if placeholder else "unknown"
        return AuthorComparison(kind, 0.0, placeholder=placeholder)
    cited_names, found_names = [_name(p) for p in cited], [_name(p) for p in found]
    pairs = _pair_authors(cited_names, found_names)
    matched_found = {j for j, _ in pairs.values()}
    extra = tuple(cited_names[i].display for i in range(len(cited)) if i not in pairs)
    missing = tuple(found_names[j].display for j in range(len(found)) if j not in matched_found)
    misspelled = tuple(
        (cited_names[i].display, found_names[j].display)
        for i, (j, strength) in sorted(pairs.items())
        if strength == _MATCH_MISSPELT
    )
    found_order = [pairs[i][0] for i in sorted(pairs)]
    order_changed = found_order != sorted(found_order)
    first_author_ok = 0 in pairs and pairs[0][0] == 0
    leading_authors = sorted(matched_found) == list(range(len(matched_found)))

    weight = sum(0.8 if strength == _MATCH_MISSPELT else 1.0 for _, strength in pairs.values())
    denominator = len(cited) if cited_truncated else max(len(cited), len(found))
    score = weight / denominator * (1.0 if first_author_ok else 0.9)

    if placeholder or extra:
        kind = "different"
    elif missing and cited_truncated:
        kind = "minor" if order_changed or misspelled else "truncated_ok"
    elif missing:
        long_list_head = len(found) > LONG_AUTHOR_LIST and leading_authors
        kind = "minor" if long_list_head else "different"
    elif order_changed or misspelled:
        kind = "minor"
    elif all(
        cited_names[i].given == found_names[j].given
        and cited_names[i].family_words == found_names[j].family_words
        for i, (j, _) in pairs.items()
    ) and all(strength == _MATCH_FULL for _, strength in pairs.values()):
        kind = "exact"
    else:
        kind = "ok"
    return AuthorComparison(
        kind=kind,
        score=round(min(score, 1.0), 4),
        matched=len(pairs),
        missing=missing if not cited_truncated else (),
        extra=extra,
        misspelled=misspelled,
        order_changed=order_changed,
        first_author_ok=first_author_ok,
        placeholder=placeholder,
    )


# --- years ---------------------------------------------------------------------


def compare_years(
    cited: int | None, found: int | None, *, other_years: Sequence[int] = ()
) -> YearComparison:
    """Years one apart (online-first vs print, preprint vs published) are "adjacent"."""
    if cited is None or found is None:
        return YearComparison("unknown")
    delta = cited - found
    if delta == 0:
        return YearComparison("exact", 0)
    if abs(delta) == 1 or cited in other_years:
        return YearComparison("adjacent", delta)
    return YearComparison("different", delta)


# --- venues --------------------------------------------------------------------

# Well-known venues: canonical acronym → (other acronyms, full names). Names are
# matched after the same boilerplate stripping as cited venues.
_VENUES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "NEURIPS": (
        ("nips", "neurips"),
        (
            "advances in neural information processing systems",
            "neural information processing systems",
            "conference on neural information processing systems",
        ),
    ),
    "ICML": (("icml",), ("international conference on machine learning",)),
    "ICLR": (("iclr",), ("international conference on learning representations",)),
    "CVPR": (
        ("cvpr",),
        (
            "conference on computer vision and pattern recognition",
            "ieee conference on computer vision and pattern recognition",
            "ieee cvf conference on computer vision and pattern recognition",
            "computer vision and pattern recognition",
        ),
    ),
    "ICCV": (
        ("iccv",),
        (
            "international conference on computer vision",
            "ieee international conference on computer vision",
            "ieee cvf international conference on computer vision",
        ),
    ),
    "ECCV": (("eccv",), ("european conference on computer vision", "computer vision eccv")),
    "ACL": (
        ("acl",),
        (
            "annual meeting of the association for computational linguistics",
            "meeting of the association for computational linguistics",
            "association for computational linguistics",
        ),
    ),
    "EMNLP": (
        ("emnlp",),
        ("conference on empirical methods in natural language processing",),
    ),
    "NAACL": (
        ("naacl", "naacl hlt"),
        (
            "north american chapter of the association for computational linguistics",
            "conference of the north american chapter of the association for computational "
            "linguistics human language technologies",
        ),
    ),
    "COLING": (("coling",), ("international conference on computational linguistics",)),
    "AAAI": (
        ("aaai",),
        ("aaai conference on artificial intelligence", "conference on artificial intelligence"),
    ),
    "IJCAI": (("ijcai",), ("international joint conference on artificial intelligence",)),
    "KDD": (
        ("kdd", "sigkdd"),
        (
            "acm sigkdd international conference on knowledge discovery and data mining",
            "sigkdd conference on knowledge discovery and data mining",
            "knowledge discovery and data mining",
        ),
    ),
    "WWW": (
        ("www", "thewebconf"),
        ("the web conference", "international world wide web conference", "world wide web"),
    ),
    "SIGIR": (
        ("sigir",),
        (
            "international acm sigir conference on research and development in information "
            "retrieval",
            "research and development in information retrieval",
        ),
    ),
    "SIGMOD": (("sigmod",), ("international conference on management of data",)),
    "VLDB": (("vldb", "pvldb"), ("very large data bases", "proceedings of the vldb endowment")),
    "CHI": (("chi",), ("conference on human factors in computing systems",)),
    "UIST": (("uist",), ("symposium on user interface software and technology",)),
    "ICRA": (("icra",), ("international conference on robotics and automation",)),
    "IROS": (
        ("iros",),
        ("ieee rsj international conference on intelligent robots and systems",),
    ),
    "RSS": (("rss",), ("robotics science and systems",)),
    "CORL": (("corl",), ("conference on robot learning",)),
    "AISTATS": (
        ("aistats",),
        ("international conference on artificial intelligence and statistics",),
    ),
    "UAI": (("uai",), ("conference on uncertainty in artificial intelligence",)),
    "COLT": (("colt",), ("conference on learning theory", "annual conference on learning theory")),
    "INTERSPEECH": (("interspeech",), ()),
    "ICASSP": (
        ("icassp",),
        ("ieee international conference on acoustics speech and signal processing",),
    ),
    "MICCAI": (
        ("miccai",),
        ("medical image computing and computer assisted intervention",),
    ),
    "TACL": (("tacl",), ("transactions of the association for computational linguistics",)),
    "JMLR": (("jmlr",), ("journal of machine learning research",)),
    "TPAMI": (
        ("tpami", "pami"),
        ("ieee transactions on pattern analysis and machine intelligence",),
    ),
    "TMLR": (("tmlr",), ("transactions on machine learning research",)),
    "PNAS": (
        ("pnas",),
        (
            "proceedings of the national academy of sciences",
            "proceedings of the national academy of sciences of the united states of america",
        ),
    ),
    "WACV": (("wacv",), ("ieee cvf winter conference on applications of computer vision",)),
    "WSDM": (("wsdm",), ("international conference on web search and data mining",)),
    "ICDE": (("icde",), ("international conference on data engineering",)),
    "ICDM": (("icdm",), ("ieee international conference on data mining",)),
    "CIKM": (("cikm",), ("international conference on information and knowledge management",)),
    "RECSYS": (("recsys",), ("acm conference on recommender systems",)),
    "EACL": (
        ("eacl",),
        ("conference of the european chapter of the association for computational linguistics",),
    ),
    "ACM MM": (("acm mm", "acmmm"), ("acm international conference on multimedia",)),
}
_PREPRINT_WORDS = frozenset(
    {"arxiv", "corr", "biorxiv", "medrxiv", "chemrxiv", "ssrn", "preprint", "preprints", "eprint"}
)
_PREPRINT_TYPES = frozenset({"preprint", "posted-content"})
# Words that describe the kind of venue rather than which one it is.
_VENUE_BOILERPLATE = frozenset(
    "proceedings proc proceeding conference conf international intl int annual journal j "
    "symposium meeting ieee acm siam ieee cvf cvf the of on in and for a an at to "
    "volume vol part series edition ed eds findings workshops companion "
    "suppl supplement supplementum supplements".split()
)
# Containers that say where a work was printed but not which venue it belongs to.
_SERIES = (
    "lecture notes in computer science",
    "lecture notes in artificial intelligence",
    "lecture notes in networks and systems",
    "lecture notes in electrical engineering",
    "lncs",
    "communications in computer and information science",
    "advances in intelligent systems and computing",
    "studies in computational intelligence",
    "methods in molecular biology",
    "openreview",
    "openreview net",
    "pmlr",
    "proceedings of machine learning research",
    "springer",
    "elsevier",
)
_VENUE_PREFIXES = frozenset({"in", "proceeding", "proc", "of", "the"})
_PUNCT_SPLIT = re.compile(r"[\s.]+")
_PARENTHESES = re.compile(r"\(([^()]*)\)")
_YEARISH = re.compile(r"^(?:1[89]|20)\d\d$|^\d+(?:st|nd|rd|th)?$|^'\d\d$")
_ALIASES: dict[str, str] = {}
_ACRONYMS: dict[str, str] = {}
for _canonical, (_acronyms, _names) in _VENUES.items():
    for _acronym in _acronyms:
        _ACRONYMS[_acronym] = _canonical
    for _full in _names:
        _ALIASES[" ".join(normalize_text(_full).split())] = _canonical


def _venue_words(text: str) -> list[str]:
    """Venue words without years, ordinals and edition numbers."""
    return [word for word in normalize_text(text).split() if not _YEARISH.match(word)]


def is_preprint_venue(text: str | None) -> bool:
    """Whether a venue string names a preprint server (arXiv, CoRR, bioRxiv, SSRN …)."""
    words = set(normalize_text(text or "").split())
    return bool(words & _PREPRINT_WORDS)


def _venue_identities(text: str) -> set[str]:
    """Known venues this string names, by acronym or by full name."""
    words = _venue_words(text)
    joined = f" {' '.join(words)} "
    found: set[str] = set()
    for acronym, canonical in _ACRONYMS.items():
        if f" {acronym} " in joined:
            found.add(canonical)
    # A full name counts when only boilerplate, acronyms and years surround it, so
    # "... on Machine Learning and Applications" is not taken for ICML.
    for alias, canonical in _ALIASES.items():
        position = joined.find(f" {alias} ")
        if position < 0:
            continue
        rest = (joined[:position] + " " + joined[position + len(alias) + 2 :]).split()
        if all(word in _VENUE_BOILERPLATE or word in _ACRONYMS for word in rest):
            found.add(canonical)
    return found


_JOURNAL_VENUES = frozenset({"TACL", "JMLR", "TPAMI", "TMLR", "PNAS"})
_CONFERENCE_WORDS = re.compile(
    r"\b(?:conference|conf|symposium|workshop|workshops)\b|\b\d+(?:st|nd|rd|th) annual\b"
)


def is_conference_venue(text: str | None) -> bool:
    """Whether a venue names a conference (its words, or a known conference's name).

    "Proceedings" alone does not: Proceedings of the IEEE and of the Royal Society
    are journals. Used where a source's type says only "article".
    """
    if not text:
        return False
    identities = _venue_identities(text)
    if identities & _JOURNAL_VENUES:
        return False
    return bool(identities) or bool(_CONFERENCE_WORDS.search(normalize_text(text)))


def _distinctive_words(text: str) -> set[str]:
    words = _venue_words(_PARENTHESES.sub(" ", text)) or _venue_words(text)
    return {_canonical_word(word) for word in words if word not in _VENUE_BOILERPLATE}


def _abbreviation_tokens(text: str) -> list[str]:
    """Words of a possibly abbreviated name; "U.S.A." becomes one word."""
    tokens: list[str] = []
    run = ""
    for piece in _PUNCT_SPLIT.split(html.unescape(text).replace("&", " and ")):
        for word in normalize_text(piece).split():
            if len(word) == 1:
                run += word
                continue
            if run:
                tokens.append(run)
                run = ""
            tokens.append(word)
    if run:
        tokens.append(run)
    stop = {"of", "the", "and", "for", "in", "on", "de", "la", "et", "fur", "und", "a", "an"}
    return [token for token in tokens if token not in stop and not _YEARISH.match(token)]


_INITIALISM = re.compile(r"^[A-Za-z&]{2,10}$")
_INITIALISM_STOP = frozenset({"of", "the", "and", "for", "in", "on", "a", "an", "at", "to"})


def _is_initialism(short: str, full: str) -> bool:
    """Whether `short` spells the initials of `full` (JOSS, NEJM, CACM, JAMA).

    Capitalised acronyms inside the full name give all their letters, so
    "Communications of the ACM" spells CACM; stop words and a leading publisher
    acronym may be skipped or kept.
    """
    compact = short.strip().replace(".", "")
    if not _INITIALISM.match(compact) or not compact.isupper():
        return False
    letters = compact.replace("&", "").lower()
    words = [w for w in re.split(r"[\s\-/,:]+", html.unescape(full)) if w]
    if len(words) < 2:
        return False

    def initials(named: list[str], keep_stop: bool) -> str:
        spelled = []
        for word in named:
            bare = normalize_text(word)
            if not bare or _YEARISH.match(bare) or (not keep_stop and bare in _INITIALISM_STOP):
                continue
            spelled.append(bare if word.isupper() and len(word) <= 5 else bare[0])
        return "".join(spelled)

    # A leading publisher acronym is often dropped ("ACM Transactions on Graphics" is TOG),
    # and so are words naming the kind of venue (OSDI: "USENIX Symposium on Operating …").
    forms = [words, words[1:]] if words[0].isupper() else [words]
    forms += [[w for w in named if normalize_text(w) not in _VENUE_BOILERPLATE] for named in forms]
    return any(letters == initials(named, keep) for named in forms for keep in (False, True))


def _is_subsequence(short: str, long: str) -> bool:
    letters = iter(long)
    return all(char in letters for char in short)


def _abbreviates(short: str, full: str) -> bool:
    """ISO-4 style: every short word is a contraction of the full word at its place."""
    short_words, full_words = _abbreviation_tokens(short), _abbreviation_tokens(full)
    if not short_words or short_words == full_words:
        return False
    # Trailing place names ("U.S.A.", "(Oxford, England)") are often added to one form.
    while len(short_words) > len(full_words) and short_words[-1] in {"usa", "uk", "us"}:
        short_words.pop()
    if len(short_words) != len(full_words):
        return False
    return all(
        s == f or (s[0] == f[0] and len(s) < len(f) and _is_subsequence(s, f))
        for s, f in zip(short_words, full_words, strict=True)
    )


def _venue_core(text: str) -> str:
    """The name without years and without a leading "Proceedings of the" / "In" / "The"."""
    words = [_canonical_word(word) for word in _venue_words(text)]
    while len(words) > 1 and words[0] in _VENUE_PREFIXES:
        words.pop(0)
    return " ".join(words)


def _is_series(text: str) -> bool:
    normalised = " ".join(_venue_words(text))
    # OpenAlex files book chapters under its publisher collections ("Springer eBooks").
    return normalised.endswith("ebooks") or any(normalised.startswith(series) for series in _SERIES)


def _venue_variants(text: str) -> list[str]:
    """The name, its part before a colon, and the text inside/outside parentheses."""
    variants = [text]
    if ":" in text:
        variants.append(text.split(":", 1)[0])
    without_parentheses = _PARENTHESES.sub(" ", text).strip()
    if without_parentheses and without_parentheses != text:
        variants.append(without_parentheses)
    return variants


def compare_venues(
    cited: str | None,
    found: str | None,
    *,
    found_short: str | None = None,
    found_type: str | None = None,
) -> VenueComparison:
    """Compare venue names; "different" only when they clearly name other venues.

    When unsure the answer is "compatible", which the engine treats as no finding.
    """
    if not cited or not normalize_text(cited):
        return VenueComparison("unknown", 0.5)
    cited_preprint = is_preprint_venue(cited)
    found_names = [name for name in (found, found_short) if name and normalize_text(name)]
    found_preprint = (found_type or "").lower() in _PREPRINT_TYPES or any(
        is_preprint_venue(name) for name in found_names
    )
    # "preprint" always means the *cited* venue is a preprint server: citing the
    # arXiv version of a published work is a choice, not a wrong venue. A cited
    # journal for a preprint-only record is left to the engine ("compatible",
    # found_preprint set), which knows whether a published version exists.
    if cited_preprint:
        return VenueComparison("preprint", 0.8, cited_preprint, found_preprint)
    if not found_names:
        kind: VenueKind = "compatible" if found_preprint else "unknown"
        return VenueComparison(kind, 0.5, cited_preprint, found_preprint)

    def verdict(kind: VenueKind, score: float) -> VenueComparison:
        return VenueComparison(kind, score, cited_preprint, found_preprint)

    if found_preprint:
        return verdict("compatible", 0.5)

    cited_variants = _venue_variants(cited)
    found_variants = [variant for name in found_names for variant in _venue_variants(name)]
    cited_cores = {_venue_core(variant) for variant in cited_variants}
    if any(_venue_core(variant) in cited_cores for variant in found_variants):
        return verdict("same", 1.0)

    cited_ids = _venue_identities(cited)
    found_ids = set().union(*(_venue_identities(name) for name in found_names))
    if cited_ids and found_ids:
        return verdict("acronym", 0.95) if cited_ids & found_ids else verdict("different", 0.0)

    cited_words = _distinctive_words(cited)
    if cited_words and any(_distinctive_words(f) == cited_words for f in found_variants):
        return verdict("same", 1.0)
    for c in cited_variants:
        for f in found_variants:
            if _abbreviates(c, f) or _abbreviates(f, c):
                return verdict("abbreviation", 0.95)
            if _is_initialism(c, f) or _is_initialism(f, c):
                return verdict("acronym", 0.95)

    if _is_series(cited) or any(_is_series(name) for name in found_names):
        return verdict("compatible", 0.6)
    kinds = [_compare_distinctive(cited_words, _distinctive_words(f)) for f in found_variants]
    if "compatible" in kinds:
        return verdict("compatible", 0.6)
    return verdict("different", 0.1)


def _compare_distinctive(cited: set[str], found: set[str]) -> VenueKind:
    """Judge two venues by the words that say which venue they are."""
    if not cited or not found:
        return "compatible"
    if cited == found:
        return "same"
    # Misspelt words count as shared ("Behavioural"/"Behaviorual"), letters do not.
    cited = {next((f for f in found if _is_typo(c, f)), c) for c in cited}
    if cited == found:
        return "compatible"
    if cited < found or found < cited:
        qualifiers = len(cited ^ found)
        return "different" if qualifiers <= VENUE_MAX_QUALIFIER_WORDS else "compatible"
    overlap = len(cited & found) / len(cited | found)
    return "compatible" if overlap >= VENUE_MIN_OVERLAP else "different"


# --- pages and volume ----------------------------------------------------------

_PAGE_PREFIX = re.compile(r"^\s*(?:pp?\.?|pages?|art(?:icle)?\.?\s*(?:no\.?)?)\s*", re.IGNORECASE)
_FIRST_PAGE = re.compile(r"^[A-Za-z]{0,3}\d+[A-Za-z]?|^[ivxlcdm]+$", re.IGNORECASE)
_PAGE_RANGE = re.compile(r"\s*(?:-+|\u2013|\u2014|\u2012|\u2212|\s+to\s+)\s*")


def _first_page(pages: str | None) -> str | None:
    if not pages:
        return None
    start = _PAGE_RANGE.split(_PAGE_PREFIX.sub("", pages.strip()), maxsplit=1)[0].strip()
    match = _FIRST_PAGE.match(start)
    return match.group(0).lower().lstrip("0") or "0" if match else None


def compare_pages(cited: str | None, found: str | None) -> bool | None:
    """First pages agree ("123-130" = "123--130" = "123–30"); None when unknown."""
    cited_first, found_first = _first_page(cited), _first_page(found)
    if cited_first is None or found_first is None:
        return None
    return cited_first == found_first


def compare_volume(cited: str | None, found: str | None) -> bool | None:
    """Volumes agree on their leading number ("33" = "Vol. 33" = "33 (Suppl 1)")."""
    cited_number = re.search(r"\d+", cited or "")
    found_number = re.search(r"\d+", found or "")
    if not cited_number or not found_number:
        if cited and found:
            return normalize_text(cited) == normalize_text(found)
        return None
    return int(cited_number.group(0)) == int(found_number.group(0))


# --- whole records -------------------------------------------------------------

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
        parts.append(
            (WEIGHT_TITLE, compare_titles(reference.title, work.title, work.subtitle).score)
        )
    if reference.authors and work.authors:
        authors = compare_authors(
            reference.authors, work.authors, cited_truncated=reference.authors_truncated
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
        return _pair_strength(_name(a.authors[0]), _name(b.authors[0])) > 0
    return True
