"""Author lists: who was added, dropped, misspelt or re-ordered."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from refaudit.match.scripts import (
    UNSPACED_SCRIPTS,
    Script,
    consonant_skeleton,
    is_unspaced_name,
    latin_key,
    script_of,
    transliteration_decides,
)
from refaudit.match.text import NORMALIZE_CACHE_SIZE, normalize_text, ocr_form
from refaudit.models import Person
from refaudit.names import PARTICLES

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

AuthorKind = Literal["exact", "ok", "truncated_ok", "minor", "different", "unknown"]


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
    #: the family name (particle apart) and the given names as written, and the family
    #: name's normalised words joined, particle included: what the properties below
    #: read. Those are needed only for names that share no family key, so most names
    #: in a list cited as recorded never work them out.
    written_family: str = ""
    written_given: str = ""
    whole_family: str = ""

    @functools.cached_property
    def ocr_long(self) -> frozenset[str]:
        """OCR forms of the family keys longer than one letter: two different keys OCR
        reads alike are a slip (`is_ocr_slip`, precomputed)."""
        if self.organisation:
            return frozenset()
        return frozenset(ocr_form(key) for key in self.family_keys if len(key) > 1)

    @functools.cached_property
    def ocr_all(self) -> frozenset[str]:
        """OCR forms of all the family keys."""
        if self.organisation:
            return frozenset()
        return frozenset(ocr_form(key) for key in self.family_keys)

    @functools.cached_property
    def script(self) -> Script:
        """The script the name is written in."""
        if self.organisation:
            return "latin"
        return script_of(f"{self.written_family} {self.written_given}")

    @functools.cached_property
    def latin_family(self) -> str:
        """The family name romanised ("박" → "bag")."""
        return latin_key(self.written_family) if not self.organisation else ""

    @functools.cached_property
    def latin_given(self) -> str:
        """The given names romanised."""
        return latin_key(self.written_given) if not self.organisation else ""

    @functools.cached_property
    def wholes(self) -> frozenset[str]:
        """For a name written without a space (박은지, 罗浩然), the whole name both ways."""
        if self.script not in UNSPACED_SCRIPTS:
            return frozenset()
        family, given = self.whole_family, self.given
        return frozenset({family + given, given + family})


#: a person's fields (family, given, particle, suffix, is an organisation): a cache key
_PersonKey = tuple[str, str, str, str, bool]

#: the most capitals a Vancouver list writes for one person's initials ("Bartosh LFK")
_MAX_PACKED_INITIALS = 3
_INITIAL = re.compile(r"[A-Z]\.(?:-?[A-Z]\.)*")
_LOWER_INITIALS = re.compile(r"(?:[^\W\d_]\.\s*)+")
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
    # particle and leading initials belong to the given names. So does a lower-case
    # initial, which BibTeX reads as von ("q. al tashi": given "q.", particle "al").
    if particle.endswith("."):
        given, particle = f"{given} {particle}".strip(), ""
    elif initial := _LOWER_INITIALS.match(particle):
        given, particle = f"{given} {initial.group(0).strip()}".strip(), particle[initial.end() :]
    # Crossref often keeps the generational suffix in the family name ("Powell, Jr.").
    family = _FAMILY_SUFFIX.sub("", family) or family
    words = family.split()
    while len(words) > 1 and _INITIAL.fullmatch(words[0]):
        given = f"{given} {words.pop(0)}".strip()
    return particle, " ".join(words), given


def _name(person: Person) -> _Name:
    return _reduced(
        person.family, person.given, person.particle, person.suffix, person.is_organisation
    )


@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def _reduced(family: str, given: str, particle: str, suffix: str, organisation: bool) -> _Name:
    """`_name` of the person with these fields: long author lists recur across records."""
    # A braced "{박은지}" is one person whose name has no space in it, not an organisation.
    if organisation and not given and is_unspaced_name(family):
        organisation = False
    person = Person(family, given, particle, suffix, organisation)
    particle, family, given = _split_name(person)
    family_words = tuple(normalize_text(f"{particle} {family}").split())
    given_words = normalize_text(given).split()
    if person.is_organisation:
        whole = "".join(family_words)
        return _Name(person.display(), frozenset({whole}), family_words, frozenset(), "", "", True)
    keys = {"".join(family_words)}
    core = list(family_words)
    while len(core) > 1 and core[0] in PARTICLES:
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
        written_family=family,
        written_given=given,
        whole_family="".join(family_words),
    )


@functools.lru_cache(maxsize=NORMALIZE_CACHE_SIZE)
def _is_placeholder(person: _PersonKey) -> bool:
    """ "Doe, John", "Lastname, Firstname": a template's name, not an author's (by the
    person's fields, cached: each cited list meets every record found for it)."""
    _, family, given = _split_name(Person(*person))
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
    # 박은지 against family 박, given 은지 (or the reverse order, as OpenAlex splits 山田 智子).
    if cited.wholes & found.wholes:
        return _MATCH_FULL
    if cited.script != found.script:
        return _MATCH_LOOSE if _same_romanised(cited, found) else 0
    if _read_reversed(cited, found) or _read_reversed(found, cited):
        return _MATCH_FULL
    # Family and given swapped (common for East Asian names) or split differently
    # ("Riquelme Ruiz" vs "Ruiz"): each family's words appear in the other's full name.
    if (
        cited.family_words
        and found.family_words
        and set(cited.family_words) <= found.all_words
        and set(found.family_words) <= cited.all_words
    ):
        return _MATCH_LOOSE
    # No key is shared here, so equal OCR forms are of different keys: an OCR slip.
    if cited.ocr_long & found.ocr_all:
        return _MATCH_MISSPELT if _given_compatible(cited, found) else 0
    for cited_key in cited.family_keys:
        for found_key in found.family_keys:
            # Cheap rejects first: OSA counts at least the difference in length.
            if cited_key[0] != found_key[0] or (
                abs(len(cited_key) - len(found_key)) > AUTHOR_EDITS_LONG_NAME
            ):
                continue
            allowed = _family_edits_allowed(min(cited_key, found_key, key=len))
            if (
                allowed
                and OSA.distance(cited_key, found_key) <= allowed
                and _given_compatible(cited, found)
            ):
                return _MATCH_MISSPELT
    return 0


def _read_reversed(a: _Name, b: _Name) -> bool:
    """ "Bartosh LF" read the natural way round (given "Bartosh", family "LF"), as a
    Vancouver list after a group author is: `a`'s family is `b`'s initials in capitals
    and `a`'s given name is `b`'s family name."""
    family = a.written_family
    return (
        bool(b.initials)
        and len(family) <= _MAX_PACKED_INITIALS
        and family.isalpha()
        and family.isupper()
        and family.lower() == b.initials
        and normalize_text(a.written_given).replace(" ", "") in b.family_keys
    )


def _same_romanised(a: _Name, b: _Name) -> bool:
    """Two spellings of one name in different scripts, compared in Latin letters.

    Chinese names romanise whole ("罗浩然" = "Luo Haoran" = "Haoran Luo"); Cyrillic
    within the schemes' variants ("Grigor'eva" = "Grigorieva"); a Korean given name
    romanises reliably while the family name has customary spellings (박 = Park), so
    for Hangul the given name decides.
    """
    a_forms = {a.latin_family + a.latin_given, a.latin_given + a.latin_family}
    b_forms = {b.latin_family + b.latin_given, b.latin_given + b.latin_family}
    if a_forms & b_forms - {""}:
        return True
    if "hangul" in (a.script, b.script):
        native, roman = (a, b) if a.script == "hangul" else (b, a)
        given = consonant_skeleton(roman.latin_given)
        whole = consonant_skeleton(native.latin_family + native.latin_given)
        return len(given) > 1 and whole.endswith(given)
    if not a.latin_family or not b.latin_family or a.latin_family[0] != b.latin_family[0]:
        return False
    allowed = _family_edits_allowed(min(a.latin_family, b.latin_family, key=len))
    initials_agree = not a.latin_given or not b.latin_given or a.latin_given[0] == b.latin_given[0]
    return initials_agree and OSA.distance(a.latin_family, b.latin_family) <= allowed


def _pair_authors(cited: list[_Name], found: list[_Name]) -> dict[int, tuple[int, int]]:
    """cited index → (found index, strength); strongest and nearest-in-position first.

    A full match in the same position is the first choice any ordering makes, so those
    are paired at once and only the names left over are tried against each other: a
    list cited as recorded costs one comparison a name, not one a pair.
    """
    pairs: dict[int, tuple[int, int]] = {}
    used: set[int] = set()
    for i, (cited_name, found_name) in enumerate(zip(cited, found, strict=False)):
        if _pair_strength(cited_name, found_name) == _MATCH_FULL:
            pairs[i] = (i, _MATCH_FULL)
            used.add(i)
    candidates = []
    for i, cited_name in enumerate(cited):
        if i in pairs:
            continue
        for j, found_name in enumerate(found):
            if j in used:
                continue
            strength = _pair_strength(cited_name, found_name)
            if strength:
                candidates.append((-strength, abs(i - j), i, j))
    candidates.sort()
    for negative_strength, _, i, j in candidates:
        if i not in pairs and j not in used:
            pairs[i] = (j, -negative_strength)
            used.add(j)
    return pairs


def compare_authors(
    cited: list[Person],
    found: list[Person],
    *,
    cited_truncated: bool = False,
    found_partial: bool = False,
) -> AuthorComparison:
    """Compare a cited author list with a found one.

    "different" means people were replaced, added, or (without "et al.")
    dropped; "minor" covers re-ordering, misspelt names and first-authors-only
    citations of very long lists; "unknown" when either list is empty.
    `found_partial`: the record lists only some authors (Scopus names the first),
    so cited authors it does not list are unknown rather than added, and only the
    listed ones count in the score.
    """
    return _compare(_keys(cited), _keys(found), cited_truncated, found_partial)


def _keys(people: Sequence[Person]) -> tuple[_PersonKey, ...]:
    return tuple((p.family, p.given, p.particle, p.suffix, p.is_organisation) for p in people)


@functools.lru_cache(maxsize=4096)
def _compare(
    cited: tuple[_PersonKey, ...],
    found: tuple[_PersonKey, ...],
    cited_truncated: bool,
    found_partial: bool,
) -> AuthorComparison:
    """`compare_authors` on the people's fields: one citation meets one record many times."""
    placeholder = any(_is_placeholder(person) for person in cited)
    if not cited or not found:
        kind: AuthorKind = "different" if placeholder else "unknown"
        return AuthorComparison(kind, 0.0, placeholder=placeholder)
    cited_names, found_names = [_reduced(*p) for p in cited], [_reduced(*p) for p in found]
    if len(cited) == 1 and not cited_truncated and _is_mononym(cited_names[0]):
        # "Meta. The Llama 3 herd of models": one name alone, with no given name, is
        # read as the organisation that issued the work, not as a person.
        cited_names = [_reduced(cited[0][0], "", "", "", True)]
    pairs = _pair_authors(cited_names, found_names)
    matched_found = {j for j, _ in pairs.values()}
    extra = tuple(
        cited_names[i].display for i in range(len(cited)) if i not in pairs and not found_partial
    )
    missing = tuple(found_names[j].display for j in range(len(found)) if j not in matched_found)
    misspelled = tuple(
        (cited_names[i].display, found_names[j].display)
        for i, (j, strength) in sorted(pairs.items())
        if strength == _MATCH_MISSPELT
    )
    found_order = [pairs[i][0] for i in sorted(pairs)]
    order_changed = found_order != sorted(found_order)
    first_author_ok = 0 in pairs and pairs[0][0] == 0
    # A partial record names the first author: cited elsewhere in the list, it moved.
    order_changed = order_changed or (found_partial and bool(pairs) and not first_author_ok)
    leading_authors = sorted(matched_found) == list(range(len(matched_found)))

    if extra and _scripts_undecided(cited_names, found_names):
        # Romanised against native script where romanisation is not the name's own.
        return AuthorComparison("unknown", 0.0)
    if all(n.organisation for n in cited_names) and not all(n.organisation for n in found_names):
        # An organisation cited for its members ("ATLAS Collaboration", a WHO report):
        # the record's individual authors are not missing; when the record does not
        # name the organisation at all, it can neither confirm nor contradict it.
        if not extra:
            missing = ()
        elif not any(n.organisation for n in found_names):
            return AuthorComparison("unknown", 0.0)
    weight = sum(0.8 if strength == _MATCH_MISSPELT else 1.0 for _, strength in pairs.values())
    if found_partial:
        denominator = len(found)
    elif cited_truncated or not missing:
        denominator = len(cited)
    else:
        denominator = max(len(cited), len(found))
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


def _is_mononym(name: _Name) -> bool:
    """One Latin-script word and no given name ("Meta", "Anthropic"), not initials."""
    return (
        not name.organisation
        and not name.given
        and name.script == "latin"
        and len(name.family_words) == 1
        and len(name.family_words[0]) > 2
    )


def _scripts_undecided(cited: list[_Name], found: list[_Name]) -> bool:
    """The lists are in different scripts whose transliteration cannot tell people apart."""
    cited_scripts = {n.script for n in cited if not n.organisation}
    found_scripts = {n.script for n in found if not n.organisation}
    if not cited_scripts or not found_scripts or cited_scripts & found_scripts:
        return False
    return not all(transliteration_decides(s) for s in (cited_scripts | found_scripts) - {"latin"})


def first_authors_agree(a: Sequence[Person], b: Sequence[Person]) -> bool:
    """Whether two records' first authors are one person (spelling aside)."""
    return _pair_strength(_name(a[0]), _name(b[0])) > 0
