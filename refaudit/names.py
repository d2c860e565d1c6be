"""Person names → `Person`s: one parser per way names are written, one particle list.

BibTeX name lists follow BibTeX's own rules ("van der Waals, J. D.", "Johannes
van der Waals", "King, Jr., Martin Luther", "{World Health Organization}");
the APIs and Retraction Watch write display names ("Maria dos Santos",
"Vaswani, Ashish", PubMed's "Wakefield AJ", "ATLAS Collaboration"). The
verifier compares family names, so the particle and suffix must not end up in
them, and "Maria dos Santos" must come out the same from a .bib and from an API.
"""

from __future__ import annotations

import re

from refaudit.braces import bibtex_is_one_group, bibtex_split
from refaudit.models import Person
from refaudit.text import latex_to_text

#: Lower-case name particles ("dos" in "Maria dos Santos"), kept out of family-name keys.
PARTICLES = frozenset(
    "van von der den de del della degli dei di da dal dos das do du la le les lo ter ten "
    "te zu zur af av al el bin ibn ben st saint y".split()
)
#: Generational suffixes written after a display name ("Martin Luther King Jr").
SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
#: Words that make a name an organisation ("ATLAS Collaboration", "Microsoft Research").
ORGANISATION_WORDS = frozenset(
    {
        "agency",
        "alliance",
        "association",
        "board",
        "collaboration",
        "commission",
        "committee",
        "consortium",
        "corporation",
        "council",
        "foundation",
        "group",
        "initiative",
        "institute",
        "investigators",
        "laboratories",
        "laboratory",
        "labs",
        "ministry",
        "network",
        "organisation",
        "organization",
        "panel",
        "project",
        "research",
        "society",
        "team",
        "university",
    }
)
#: A capital inside a word after three or more letters is a company's spelling
#: ("DeepMind", "OpenAI", "EleutherAI"); after these it is a family name's ("MacKay",
#: "FitzGerald", "VanderPlas"), and after one or two letters too ("LeCun", "McDonald").
#: An "I" between lower-case letters is a misread "l" ("KoehIer", "PapadopouIos"), which
#: OCR makes of printed names far more often than a company is so spelt.
_INNER_CAPITAL = re.compile(r"^([A-Z][a-z]{2,})(?!I[a-z])[A-Z]")
_CAPITALISED_PREFIXES = frozenset(
    {"mac", "fitz", "van", "vander", "von", "del", "della", "ben", "bin", "abu", "ibn"}
)
_SPACE = re.compile(r"\s+")
_INITIALS = re.compile(r"[A-Z]{1,3}|[A-Z]-[A-Z]")

_TRUNCATION = re.compile(r"^(?:others|et\.?\s*al\.?|and\s+others)$", re.IGNORECASE)
_SPACES_AROUND_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_TRAILING_ET_AL = re.compile(r",?\s+et\.?\s*al\.?$", re.IGNORECASE)
_BIBTEX_SUFFIX = re.compile(r"^(?:jr|sr|jnr|snr|ii|iii|iv|v)\.?$", re.IGNORECASE)


def is_organisation_name(name: str) -> bool:
    """Whether a name written uninverted is a group's: "ATLAS Collaboration", "The CMS
    Collaboration", "Google DeepMind", "Meta AI".

    Reports and large collaborations are cited by their organisation, often without the
    braces BibTeX needs to keep it whole; read as a person ("Mr Collaboration"), the
    organisation would be an author the record does not list.
    """
    words = [word.strip(".,;:()") for word in name.split()]
    words = [word for word in words if word]
    if not words:
        return False
    if len(words) > 1 and words[0].lower() == "the":
        return True
    for word in words:
        if word.lower() in ORGANISATION_WORDS or word == "AI":
            return True
        inner = _INNER_CAPITAL.match(word)
        if inner and inner.group(1).lower() not in _CAPITALISED_PREFIXES:
            return True
    return False


def parse_names(value: str) -> tuple[list[Person], bool]:
    """Split a BibTeX `author`/`editor` value; the flag says "and others" cut the list short."""
    from bibtexparser.middlewares.names import split_multiple_persons_names

    people: list[Person] = []
    truncated = False
    text = _SPACES_AROUND_AND.sub(" and ", value.strip())
    if not text:
        return [], False
    for raw_name in split_multiple_persons_names(text):
        name = raw_name.strip().rstrip(",").strip()
        if not name:
            continue
        tail = _TRAILING_ET_AL.search(name)
        if tail:
            truncated = True
            name = name[: tail.start()].strip().rstrip(",")
            if not name:
                continue
        if _TRUNCATION.match(name):
            truncated = True
            continue
        person = parse_person(name)
        if person.family:
            people.append(person)
    return people, truncated


def parse_person(name: str) -> Person:
    """One BibTeX name ("First von Last", "von Last, First" or "von Last, Jr, First")."""
    from bibtexparser.middlewares.names import InvalidNameError, parse_single_name_into_parts

    if bibtex_is_one_group(name):
        return Person(family=latex_to_text(name[1:-1]), is_organisation=True)
    suffix = ""
    parts = bibtex_split(name, ",")
    if len(parts) == 1 and is_organisation_name(latex_to_text(name)):
        return Person(family=latex_to_text(name), is_organisation=True)
    if len(parts) == 2 and is_organisation_name(parts[0]) and " " not in parts[1].strip():
        # Google Scholar inverts a group's name as if it were a person's: "Team, Gemini".
        return Person(family=latex_to_text(f"{parts[1].strip()} {parts[0]}"), is_organisation=True)
    if len(parts) == 2 and _BIBTEX_SUFFIX.match(parts[1].strip()):
        # "Martin Luther King, Jr." — BibTeX would read "Jr." as the given name.
        name, suffix = parts[0], parts[1].strip()
    try:
        split = parse_single_name_into_parts(name, strict=False)
    except InvalidNameError:
        return Person(family=latex_to_text(name))
    family = latex_to_text(" ".join(split.last))
    given = latex_to_text(" ".join(split.first))
    if not family and given:
        family, given = given, ""
    return Person(
        family=family,
        given=given,
        particle=latex_to_text(" ".join(split.von)),
        suffix=suffix or latex_to_text(" ".join(split.jr)),
    )


def display_name_to_person(name: str, *, medline_order: bool = False) -> Person:
    """A display name → Person; organisations ("… Collaboration") keep their whole name.

    `medline_order` reads "Wakefield AJ" as family name then initials. Only PubMed
    writes names that way; elsewhere "Koushik MV" is a given name and a family name.
    """
    text = " ".join(name.split()).strip(" ,")
    if any(word.lower() in ORGANISATION_WORDS for word in text.split()):
        # Not `is_organisation_name`: the sources write people's names whole, and a
        # family name spelt "VanDerWerf" in a record is still a person's.
        return Person(family=text, is_organisation=True)
    words = text.split()
    if (
        medline_order
        and len(words) >= 2
        and _INITIALS.fullmatch(words[-1])
        and not _INITIALS.fullmatch(words[0])
    ):
        person = person_from_name("X " + " ".join(words[:-1]))
        person.given = spaced_initials(words[-1])
        return person
    if len(words) > 2 and words[-1].lower() in SUFFIXES:
        person = person_from_name(" ".join(words[:-1]))
        person.suffix = words[-1]
        return person
    return person_from_name(text)


def spaced_initials(letters: str) -> str:
    """ "AJ" → "A. J."; "J-P" → "J.-P." """
    return " ".join(
        "-".join(f"{part}." for part in chunk.split("-"))
        for chunk in re.findall(r"[A-Z](?:-[A-Z])?", letters)
    )


def person_from_name(name: str) -> Person:
    """Split a whole personal name: "Family, Given" or "Given [particle] Family"."""
    name = _SPACE.sub(" ", name).strip()
    if "," in name:
        family, given = (part.strip() for part in name.split(",", 1))
        return _with_particle(family, given)
    parts = name.split(" ")
    if len(parts) == 1:
        return Person(family=name)
    start = len(parts) - 1
    while start > 1 and parts[start - 1].lower() in PARTICLES:
        start -= 1
    return Person(
        family=parts[-1],
        given=" ".join(parts[:start]),
        particle=" ".join(parts[start:-1]),
    )


def _with_particle(family: str, given: str) -> Person:
    words = family.split(" ")
    particles = []
    while len(words) > 1 and words[0].lower() in PARTICLES:
        particles.append(words.pop(0))
    return Person(family=" ".join(words), given=given, particle=" ".join(particles))
