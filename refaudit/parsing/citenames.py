"""The names at the head of a citation string, read as its style writes them.

Styles invert every name ("Family, I."), only the first (Chicago), none (IEEE),
or write family name and initials with no comma at all (Vancouver, "Hinton G");
lists are cut short by "et al." or an ellipsis, and a group author is one name.
"""

from __future__ import annotations

import re

from refaudit.models import Person
from refaudit.names import PARTICLES, is_organisation_name, parse_person
from refaudit.parsing.marks import EMPH_CLOSE, EMPH_OPEN, LETTER

# Capitals an initial can be: "É." in "Bruera, É." is as much an initial as "E.".
CAP = "A-ZÀ-ÖØ-Þ\u0100-\u024f\u1e00-\u1eff\u0391-\u03a9\u0410-\u042f"
# Undotted initials; a particle keeps its lower-case letter among them or, after two or
# more, last ("Castro FAdS", "Cruz JMd" for Juan Miguel dela Cruz; "Omar El" is a name).
_PACKED_INITIALS = rf"[{CAP}](?:[{CAP}]|[a-z](?=[{CAP}])){{0,3}}(?:(?<=[{CAP}]{{2}})[dlv](?!\w))?"
# Dotted initials first, so "Muller K. R." keeps its "R." instead of starting the title.
VANCOUVER_NAME = (
    rf"[^\W\d_][\w'’\-]*(?:\s[^\W\d_][\w'’\-]*)?\s(?:(?:[{CAP}]\.\s?){{1,3}}|{_PACKED_INITIALS})"
)
# Names are separated by commas, or (in some reference managers' output) by spaces only;
# then each family name must be written in capitalised letters, so that an upper-case
# title ("THE EFFECT OF …") is not read as more names (unless every name is in capitals).
# A family name may follow or hold particles ("van Enk S", "d’Amato C", "Palmero da
# Cruz J") and any hyphen ("Kris‐Etherton PM"); initials may keep a particle's
# lower-case letter, as in `_PACKED_INITIALS`.
_PARTICLE = "|".join(sorted(PARTICLES, key=len, reverse=True))
_SPACED_FAMILY_WORD = rf"(?:[dl][’'])?[{CAP}][^\W\d_]*[a-zß-ÿ][^\W\d_'’\-‐]*(?:[\-‐'’][^\W\d_]+)*"
SPACED_NAME = (
    rf"(?:(?:{_PARTICLE})\s)*{_SPACED_FAMILY_WORD}(?:\s(?:(?:{_PARTICLE})\s)?{_SPACED_FAMILY_WORD})?"
    rf"\s{_PACKED_INITIALS}"
)
# Some exports write every family name in capitals ("GAUTHIER M BELLEMARE R", a former
# name in brackets: "YOSHIZAKI(OBANA) Y"): read so only when the whole list is, so that
# a capitalised title stays a title.
_UPPER_FAMILY = rf"[{CAP}]{{2,}}(?:[\-‐'’][{CAP}]+)*(?:\([{CAP}]{{2,}}\))?"
UPPER_NAME = rf"{_UPPER_FAMILY}(?:\s{_UPPER_FAMILY})?\s[{CAP}]{{1,3}}"
_VANCOUVER_PERSONS = (
    re.compile(rf"{SPACED_NAME}(?=[\s,;]|$)"),
    re.compile(rf"{UPPER_NAME}(?=\s|$)"),
)
# A particle keeps its lower-case initial among the others, first or after ("Almeida,
# R. R. d." for Renata Rodrigues de Almeida, "Montes, d. O. M." for M. Montes de Oca).
_INITIALS = re.compile(
    rf"^(?:[a-z]\.\s?)?[{CAP}][a-z]?\.?[\s-]?(?:(?:[{CAP}][a-z]?\.?|[a-z]\.)[\s-]?){{0,5}}$"
    rf"|^[{CAP}]{{1,3}}$"
    # One letter of a script without capitals and a full stop: "本田, 博.".
    r"|^[^\W\d_]\.$"
)
# "et aI": OCR reads the l of "al" as a capital I or a one.
ET_AL = re.compile(r"(?:,\s*|\s+)et\.?\s*a[lI1]\.?\s*$", re.IGNORECASE)
_ARTICLE_BEFORE = re.compile(r"(?:^|(?<=[\s,;]))the\s+$")
_ELLIPSIS = re.compile(r"(?:,\s*)?(?:…|\.\s?\.\s?\.)\s*(?:,\s*)?")


def read_authors(text: str, style: str, whole: tuple[str, ...] = ()) -> tuple[list[Person], bool]:
    """Names in the order the style writes them; "et al." marks a truncated list.

    Each of `whole` (names a record writes in one field) found in `text` is one
    name, whatever commas or initials it holds: "National Association of
    Regulatory Utility Commissioners, Washington, DC (United States)".
    """
    text = re.sub(r"\s+", " ", text.replace(EMPH_OPEN, "").replace(EMPH_CLOSE, "")).strip(" ,;")
    truncated = bool(ET_AL.search(text))
    text = ET_AL.sub("", text).strip(" ,")
    spans = whole_names(text, whole)
    if spans:
        return _around_whole_names(text, style, spans), truncated
    # APA 7 lists the first nineteen names, an ellipsis and the last: a cut, not a name.
    if _ELLIPSIS.search(text):
        truncated = True
        text = _ELLIPSIS.sub(", ", text).strip(" ,")
    text = re.sub(r"(?<=[^\W\d_]{2})\.$", "", text)
    # An initial glued to its family name ("A.Brown", a dropped space) is still an
    # initial, also when OCR read the name's "l" as "I" ("N.AIdridge").
    text = re.sub(rf"\b([{CAP}]\.)(?=[{CAP}]I?[a-z])", r"\1 ", text)
    if not text or any(char.isdigit() for char in text):
        return [], truncated
    if style == "vancouver":
        names = re.split(r",\s*", text) if "," in text else _space_separated(text)
        found = [_vancouver_person(name) for name in names if name.strip()]
        return [person for person in found if person], truncated
    if style == "family-first" and "," not in text and " " in text and not _has_initials(text):
        # "World Health Organization. (2020)." — a group author, not given + family names.
        return [Person(family=text, is_organisation=True)], truncated
    # "&" and "and" end a name: "OpenAI, & Wijayagunawardhana, W. A. H. N." is two names.
    chunks: list[str] = []
    after_and: set[int] = set()
    for group in re.split(r"\s*(?:&|\band\b)\s*", text):
        after_and.add(len(chunks))
        chunks += [chunk.strip() for chunk in re.split(r",\s*", group) if chunk.strip()]
    if style == "natural":
        return [person for name in chunks for person in _natural_people(name)], truncated
    people: list[Person] = []
    index = 0
    while index < len(chunks):
        # APA and listings invert every name ("Family, I."); Chicago only the first one.
        inverted = style in ("family-first", "pairs") or not people
        partner = chunks[index + 1] if index + 1 < len(chunks) else None
        partner = None if index + 1 in after_and else partner
        if inverted and partner and (style == "pairs" or not people or _INITIALS.match(partner)):
            people.append(parse_person(f"{chunks[index]}, {partner}"))
            index += 2
        else:
            people.append(parse_person(chunks[index]))
            index += 1
    return [p for p in people if p.family], truncated


def _around_whole_names(text: str, style: str, spans: list[tuple[int, int, str]]) -> list[Person]:
    """Each name of `spans` as one person, the text between them read as the style says."""
    people: list[Person] = []
    index = 0
    for begin, end, name in [*spans, (len(text), len(text), "")]:
        if LETTER.search(text[index:begin]):
            people += read_authors(text[index:begin], style)[0]
        if name:
            people.append(Person(family=name, is_organisation=True))
        index = end
    return people


def whole_names(text: str, whole: tuple[str, ...]) -> list[tuple[int, int, str]]:
    """(start, end, name) of each of `whole` written in `text`, in order, not overlapping."""
    folded = text.casefold()
    spans: list[tuple[int, int, str]] = []
    for name in sorted(whole, key=len, reverse=True):
        needle = " ".join(name.split()).casefold()
        at = folded.find(needle)
        if at >= 0 and all(at >= end or at + len(needle) <= begin for begin, end, _ in spans):
            # "The ATLAS Collaboration" cited, "ATLAS Collaboration" recorded: one name.
            article = _ARTICLE_BEFORE.search(folded, 0, at)
            begin = article.start() if article else at
            spans.append((begin, at + len(needle), text[begin : at + len(needle)]))
    return sorted(spans)


def _natural_people(chunk: str) -> list[Person]:
    """One name, or several run together without commas ("Goldenberg C McEvoy A"): a
    Vancouver list the style was not read from, as after a group author."""
    run_together = _space_separated(chunk)
    if len(run_together) > 1:
        return [person for name in run_together if (person := _vancouver_person(name))]
    return [_natural_person(chunk)]


def _natural_person(name: str) -> Person:
    """ "ATLAS Collaboration" is a group author, not Mr Collaboration."""
    if is_organisation_name(name):
        return Person(family=name, is_organisation=True)
    return parse_person(name)


def _has_initials(text: str) -> bool:
    return bool(re.search(rf"\b[{CAP}]\.", text))


def _space_separated(text: str) -> list[str]:
    """ "Ali MM Balash DG Kanich C": each family name ends where its initials do."""
    for pattern in _VANCOUVER_PERSONS:
        names = [match.group(0) for match in pattern.finditer(text)]
        if "".join(names).replace(" ", "") == text.replace(" ", ""):
            return names
    return [text]


def _vancouver_person(name: str) -> Person | None:
    """ "Hinton G", "Hinton G." or "Ångström AJ" → Person(family, initials).

    Not `names.display_name_to_person(medline_order=True)`, which reads PubMed's API
    names: those always have undotted ASCII capitals for initials, while a Vancouver
    list typed into a paper dots them or not and starts names in any alphabet (`CAP`),
    and the list was already cut into names here by the same pattern. The family name
    keeps its particle ("van der Berg"), as the style writes it.
    """
    match = re.match(
        rf"^(?P<family>.+?)\s+(?P<initials>{_PACKED_INITIALS}|(?:[{CAP}]\.\s?){{1,3}})$",
        name.strip(),
    )
    if not match:
        return Person(family=name.strip()) if name.strip() else None
    initials = match.group("initials").strip()
    # "Hinton G" and "Hinton G." are the same person; keep bare initials.
    if re.fullmatch(rf"[{CAP}]\.", initials):
        initials = initials[0]
    return Person(family=match.group("family"), given=initials)
