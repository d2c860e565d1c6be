"""What a user typed: a DOI, arXiv id, PMID, Semantic Scholar or OpenAlex id, or a title."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from refaudit.identifiers import normalize_doi, parse_arxiv_id

IdentifierKind = Literal["doi", "arxiv", "pmid", "s2", "openalex", "title"]

_DOI_FORM = re.compile(r"(?:doi:\s*|(?:https?://)?(?:dx\.)?doi\.org/)?10\.\S+", re.IGNORECASE)
_ARXIV_FORM = re.compile(
    r"arxiv:\s*\S+|(?:https?://)?(?:export\.)?arxiv\.org/(?:abs|pdf)/\S+", re.IGNORECASE
)
_BARE_ARXIV = re.compile(r"\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?")
_PMID_FORM = re.compile(r"(?:pmid:?\s*)?(\d{1,9})", re.IGNORECASE)
_S2_HEX = re.compile(r"[0-9a-f]{40}", re.IGNORECASE)
_CORPUS_ID = re.compile(r"corpusid:\s*(\d+)", re.IGNORECASE)
_OPENALEX_ID = re.compile(r"(?:https?://)?(?:openalex\.org/)?(W\d+)", re.IGNORECASE)
_PREFIXED = re.compile(r"(doi|arxiv|pmid|corpusid)\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class Identifier:
    """What a user's identifier-or-title turned out to be, in canonical form."""

    kind: IdentifierKind
    value: str


def parse_identifier(text: str) -> Identifier | None:
    """Classify `text` as DOI, arXiv id, PMID, S2 id, OpenAlex id or title; None if unusable.

    A string that announces an identifier (`doi:`, `arXiv:`, `PMID:`, `CorpusId:`)
    but does not hold a valid one is unusable rather than a title.
    """
    value = " ".join(text.split())
    if not value:
        return None
    if _DOI_FORM.fullmatch(value):
        doi = normalize_doi(value)
        return Identifier("doi", doi) if doi else None
    if _ARXIV_FORM.fullmatch(value) or _BARE_ARXIV.fullmatch(value):
        parsed = parse_arxiv_id(re.sub(r"\.pdf$", "", value, flags=re.IGNORECASE))
        return Identifier("arxiv", parsed[0]) if parsed else None
    pmid = _PMID_FORM.fullmatch(value)
    if pmid:
        return Identifier("pmid", pmid.group(1))
    if _S2_HEX.fullmatch(value):
        return Identifier("s2", value.lower())
    corpus = _CORPUS_ID.fullmatch(value)
    if corpus:
        return Identifier("s2", f"CorpusId:{corpus.group(1)}")
    openalex = _OPENALEX_ID.fullmatch(value)
    if openalex:
        return Identifier("openalex", openalex.group(1).upper())
    if _PREFIXED.match(value) or not any(char.isalpha() for char in value):
        return None
    return Identifier("title", value)
