"""Exact fields from the markup some .bst styles wrap around each part of an entry.

ACM-Reference-Format and REVTeX's apsrev4-2 print a `thebibliography` list whose
parts are tagged: `\\bibinfo{person}{Masahiro Abo}`, `\\bibinfo {author}
{\\bibfnamefont {J.}~\\bibnamefont {Lim}}`, `\\showarticletitle{…}`, `\\bibinfo
{title} {…}`, `\\bibinfo{journal}{…}`, `\\bibinfo {year} {2021}`. Those are the
entry's fields, so they are read as such instead of being guessed from the text.
"""

from __future__ import annotations

import re

from refaudit.braces import latex_closing
from refaudit.models import Person, Reference
from refaudit.names import parse_person
from refaudit.text import latex_to_text

_TAG = re.compile(r"\\(?:bibinfo\s*\{(?P<name>[a-z]+)\}|(?P<title>showarticletitle))\s*(?=\{)")
_VENUES = ("journal", "booktitle", "series", "howpublished", "school", "institution")
_NUMBERS = {"volume": "volume", "number": "number", "pages": "pages"}


def tagged_fields(body: str) -> dict[str, list[str]]:
    """Every tagged part of one item, by tag name ("person" and "author" are names)."""
    found: dict[str, list[str]] = {}
    for tag in _TAG.finditer(body):
        close = latex_closing(body, tag.end())
        if close is None:
            continue
        value = " ".join(latex_to_text(body[tag.end() + 1 : close]).split())
        name = "title" if tag.group("title") else tag.group("name")
        if value:
            found.setdefault(name, []).append(value)
    return found


def apply_tagged(reference: Reference, body: str) -> Reference:
    """`reference` with the fields its markup states exactly put in place of the guesses."""
    fields = tagged_fields(body)
    if not fields:
        return reference
    names = fields.get("person") or fields.get("author")
    if names:
        people = [_person(name) for name in names]
        reference.authors = [person for person in people if person.family]
        reference.authors_truncated = bool(re.search(r"et\s*~?\s*al", body[:200]))
    if fields.get("title"):
        reference.title = fields["title"][0].rstrip(" .,")
    years = [int(y) for y in fields.get("year", []) if re.fullmatch(r"\d{4}", y)]
    if years:
        reference.year = years[0]
    venue = next((fields[name][0] for name in _VENUES if fields.get(name)), None)
    if venue:
        reference.venue = venue.rstrip(" .,")
    for name, attribute in _NUMBERS.items():
        if fields.get(name):
            setattr(reference, attribute, fields[name][0].replace("--", "–"))
    return reference


def _person(name: str) -> Person:
    """ "J. Lim", "Masahiro Abo", "van der Schaar": written as spoken."""
    return parse_person(name.replace("\u00a0", " "))
