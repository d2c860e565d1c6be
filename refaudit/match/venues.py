"""Venues: the same journal or conference under its full name, abbreviation or acronym."""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Literal

from refaudit.match.abbreviations import (
    AcronymFit,
    acronym_fit,
    acronym_letters,
    acronym_skips,
    contracts,
    iso4_key,
    same_iso4,
)
from refaudit.match.text import (
    NORMALIZE_CACHE_SIZE,
    canonical_word,
    is_typo,
    normalize_text,
    repair_ocr,
)

# "Nature" vs "Nature Communications": one or two extra distinctive words name
# another journal of the same family. Longer additions are usually a
# descriptive subtitle of the same venue, so they are not called different.
VENUE_MAX_QUALIFIER_WORDS = 2
# Venues sharing at least this share of distinctive words, each with words of
# its own, are too close to call different; at one half, a single differing
# word decides ("Physical Review B" vs "Physical Review D").
VENUE_MIN_OVERLAP = 0.6

VenueKind = Literal[
    "same",
    "abbreviation",
    "acronym",
    "preprint",
    "compatible",
    "unconfirmed",
    "different",
    "unknown",
]


@dataclass(frozen=True)
class VenueComparison:
    """How two venue names relate; the preprint flags say which side is a preprint server."""

    kind: VenueKind
    score: float
    cited_preprint: bool = False
    found_preprint: bool = False


_PREPRINT_WORDS = frozenset(
    {"arxiv", "corr", "biorxiv", "medrxiv", "chemrxiv", "ssrn", "preprint", "preprints", "eprint"}
)
_PREPRINT_PHRASES = (
    ("social", "science", "research", "network"),
    ("research", "square"),
    ("authorea",),
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
    "ceur workshop proceedings",
    "ceur ws",
    "proceedings of machine learning research",
    "springer",
    "elsevier",
)
_VENUE_PREFIXES = frozenset({"in", "proceeding", "proc", "of", "the"})
_PUNCT_SPLIT = re.compile(r"[\s.]+")
_PARENTHESES = re.compile(r"\(([^()]*)\)")
_YEARISH = re.compile(r"^(?:1[89]|20)\d\d$|^\d+(?:st|nd|rd|th)?$|^'\d\d$")


def _load_venue_table() -> tuple[dict[str, str], dict[str, str], frozenset[str]]:
    """(acronym → venue, normalised full name → venue, journals) from venues.json.

    The table names well-known venues whose acronym no algorithm can derive
    from their name ("NeurIPS", "KDD"); names are matched after the same
    boilerplate stripping as cited venues.
    """
    table = json.loads(resources.files(__package__).joinpath("venues.json").read_text("utf-8"))
    acronyms: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for canonical, entry in table.items():
        for acronym in entry["acronyms"]:
            acronyms[acronym] = canonical
        for full in entry["names"]:
            aliases[normalize_text(full)] = canonical
    journals = frozenset(name for name, entry in table.items() if entry["kind"] == "journal")
    return acronyms, aliases, journals


_ACRONYMS, _ALIASES, _JOURNAL_VENUES = _load_venue_table()


#: Venue strings recur across a bibliography and its records, and the planner asks
#: of one reference's venue several times: the two venue-kind tests are cached.
VENUE_CACHE_SIZE = 8192


def _venue_words(text: str) -> list[str]:
    """Venue words without years, ordinals and edition numbers."""
    return [word for word in normalize_text(text).split() if not _YEARISH.match(word)]


@functools.lru_cache(maxsize=VENUE_CACHE_SIZE)
def is_preprint_venue(text: str | None) -> bool:
    """Whether a venue string names a preprint server (arXiv, CoRR, bioRxiv, SSRN …).

    Every "…rXiv" server counts (PsyArXiv, SocArXiv, EarthArXiv, TechRxiv, engrXiv),
    and so do the servers named by a phrase (Semantic Scholar's "Social Science
    Research Network" for SSRN, Research Square, Authorea).
    """
    normalized = normalize_text(text or "")
    words = set(normalized.split())
    if words & _PREPRINT_WORDS or any(word.endswith("rxiv") for word in words):
        return True
    return any(_spells(normalized.split(), phrase) for phrase in _PREPRINT_PHRASES)


def _spells(words: list[str], phrase: tuple[str, ...]) -> bool:
    """Whether `words` hold the phrase in a row, each word whole or contracted as ISO 4
    does ("Social Sci. Res. Network"); a contraction keeps three letters at least, so an
    article or an initial is not read as a word of the phrase."""
    size = len(phrase)
    return any(
        all(
            word == full or (len(word) >= 3 and contracts(word, full))
            for word, full in zip(words[i : i + size], phrase, strict=True)
        )
        for i in range(len(words) - size + 1)
    )


@functools.lru_cache(maxsize=VENUE_CACHE_SIZE)
def _venue_identities(text: str) -> frozenset[str]:
    """Known venues this string names, by acronym or by full name (cached: a record's
    venue is compared with every citation of it, each time against the whole table)."""
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
    return frozenset(found)


def _iso4_identities(text: str) -> set[str]:
    """Known venues whose full name has this ISO 4 form ("Adv. Neural Inf. Process. Syst.")."""
    key = iso4_key(text)
    return {canonical for alias, canonical in _ALIASES.items() if iso4_key(alias) == key}


_CONFERENCE_WORDS = re.compile(
    r"\b(?:conference|conf|symposium|workshop|workshops)\b|\b\d+(?:st|nd|rd|th) annual\b"
)


@functools.lru_cache(maxsize=VENUE_CACHE_SIZE)
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
    return {canonical_word(word) for word in words if word not in _VENUE_BOILERPLATE}


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
    return all(contracts(s, f) for s, f in zip(short_words, full_words, strict=True))


def _venue_core(text: str) -> str:
    """The name without years and without a leading "Proceedings of the" / "In" / "The"."""
    words = [canonical_word(word) for word in _venue_words(text)]
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


def _acronym_relation(cited: list[str], found: list[str]) -> AcronymFit | None:
    """How the best acronym on one side fits a name on the other; None when neither is one.

    An acronym that is a word of the other name ("ISBI" in "… Imaging (ISBI)")
    fits strictly; so does one spelt by the name's words (see `acronym_fit`). The
    record's acronym does not vouch for a cited name with a content word it
    leaves unused when the record's own full names lack that word: "ICML" spells
    "International Conference on Quantum Machine Learning" but the record's
    "International Conference on Machine Learning" has no "Quantum".
    """
    found_words = {
        word for name in found if not acronym_letters(name) for word in normalize_text(name).split()
    }
    fits: list[AcronymFit] = []
    for shorts, names in ((cited, found), (found, cited)):
        for short in shorts:
            letters = acronym_letters(short)
            if not letters:
                continue
            for name in names:
                if acronym_letters(name):
                    continue
                if letters in normalize_text(name).split():
                    return "strict"
                skipped = acronym_skips(letters, name)
                if names is cited and skipped and found_words:
                    if not all(_has_word(found_words, word) for word in skipped):
                        continue
                fits.append(acronym_fit(skipped))
    if not fits:
        return None
    return "strict" if "strict" in fits else "loose" if "loose" in fits else "none"


def _has_word(words: set[str], word: str) -> bool:
    """Whether `word`, or a misspelling or an abbreviation of it, is among `words`."""
    return any(contracts(other, word) or is_typo(word, other) for other in words)


def _partial_abbreviation(cited: str, found: str) -> bool:
    """An abbreviation whose words all shorten words of the name, in order, but not all of them.

    "J. R. Stat. Soc." for "J. R. Stat. Soc. C (Appl. Stat.)": the family is right,
    the series is not said. Neither confirmed nor refuted.
    """
    if "." not in cited:
        return False
    cited_key, found_key = iso4_key(cited), iso4_key(found)
    if not cited_key or len(cited_key) >= len(found_key):
        return False
    remaining = iter(found_key)
    in_order = all(any(contracts(word, f) for f in remaining) for word in cited_key)
    extra = len(found_key) - len(cited_key)
    # One extra letter or number is a series: "Phys. Rev." is not "Phys. Rev. E".
    series_only = extra == 1 and len(found_key[-1]) <= 2
    return in_order and not series_only


def compare_venues(
    cited: str | None,
    found: str | None,
    *,
    found_short: str | None = None,
    found_type: str | None = None,
    found_aliases: Sequence[str] = (),
) -> VenueComparison:
    """Compare venue names; "different" only when they clearly name other venues.

    `found_short` and `found_aliases` are the record's other names for its venue
    (Crossref's short container title, Semantic Scholar's alternate names, …):
    agreeing with any of them is agreeing. When unsure the answer is
    "compatible" (no finding) or, where the cited form could be the venue but
    nothing confirms it, "unconfirmed" (a warning, never an error).
    """
    return _compare_venues(cited, found, found_short, found_type, tuple(found_aliases))


# One citation meets the same record in identification, scoring and findings.
@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def _compare_venues(
    cited: str | None,
    found: str | None,
    found_short: str | None,
    found_type: str | None,
    found_aliases: tuple[str, ...],
) -> VenueComparison:
    if not cited or not normalize_text(cited):
        return VenueComparison("unknown", 0.5)
    cited_preprint = is_preprint_venue(cited)
    found_names = [
        name for name in (found, found_short, *found_aliases) if name and normalize_text(name)
    ]
    found_preprint = (found_type or "").lower() in _PREPRINT_TYPES or any(
        is_preprint_venue(name) for name in found_names[:2]
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

    found_ids = frozenset().union(*(_venue_identities(name) for name in found_names))
    # A misread letter is repaired against every name of the found venue, the
    # acronyms the venue table knows it by included ("NcurIPS" for NeurIPS).
    known_acronyms = [acronym for acronym, known in _ACRONYMS.items() if known in found_ids]
    cited = repair_ocr(cited, *found_names, *known_acronyms)
    cited_variants = _venue_variants(cited)
    found_variants = [variant for name in found_names for variant in _venue_variants(name)]
    cited_cores = {_venue_core(variant) for variant in cited_variants}
    if any(_venue_core(variant) in cited_cores for variant in found_variants):
        return verdict("same", 1.0)

    cited_ids = _venue_identities(cited)
    if cited_ids and found_ids:
        return verdict("acronym", 0.95) if cited_ids & found_ids else verdict("different", 0.0)

    cited_words = _distinctive_words(cited)
    if cited_words and any(_distinctive_words(f) == cited_words for f in found_variants):
        return verdict("same", 1.0)
    for c in cited_variants:
        for f in found_variants:
            if _abbreviates(c, f) or _abbreviates(f, c) or same_iso4(c, f):
                return verdict("abbreviation", 0.95)
    if found_ids and _iso4_identities(cited) & found_ids:
        return verdict("abbreviation", 0.95)
    acronym = _acronym_relation(cited_variants, found_variants)
    if acronym == "strict":
        return verdict("acronym", 0.95)

    if _is_series(cited) or any(_is_series(name) for name in found_names):
        return verdict("compatible", 0.6)
    if acronym == "loose":
        return verdict("unconfirmed", 0.5)
    if acronym == "none":
        return verdict("different", 0.1)
    kinds = [_compare_distinctive(cited_words, _distinctive_words(f)) for f in found_variants]
    if "compatible" in kinds:
        return verdict("compatible", 0.6)
    if any(_partial_abbreviation(c, f) for c in cited_variants for f in found_variants):
        return verdict("unconfirmed", 0.5)
    return verdict("different", 0.1)


def _compare_distinctive(cited: set[str], found: set[str]) -> VenueKind:
    """Judge two venues by the words that say which venue they are."""
    if not cited or not found:
        return "compatible"
    if cited == found:
        return "same"
    # Misspelt words count as shared ("Behavioural"/"Behaviorual"), letters do not.
    cited = {next((f for f in found if is_typo(c, f)), c) for c in cited}
    if cited == found:
        return "compatible"
    if cited < found or found < cited:
        qualifiers = len(cited ^ found)
        return "different" if qualifiers <= VENUE_MAX_QUALIFIER_WORDS else "compatible"
    overlap = len(cited & found) / len(cited | found)
    return "compatible" if overlap >= VENUE_MIN_OVERLAP else "different"
