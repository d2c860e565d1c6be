"""Canonical forms of scholarly identifiers and how to find them in free text.

Users write DOIs as URLs, with `doi:` prefixes, percent-encoded slashes and
trailing punctuation; arXiv ids come new-style (`1706.03762v5`) and old-style
(`hep-th/9901001`). Everything that compares or looks up an identifier goes
through these functions so that one spelling means one key.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import unquote

DATACITE_ARXIV_PREFIX = "10.48550/"

# SICI-style DOIs contain <, > and ; (10.1002/(SICI)1097-4636(199603)31:3<293::AID-JBM1>3.0.CO;2-M).
# A link run on after a comma ("…12241v1,http://arxiv.org/abs/…", as LNCS prints a DOI
# and a URL) is not part of the DOI.
_DOI_CORE = r"10\.\d{4,9}/(?:(?!,(?:https?:|www\.))[^\s\"'{}])+"
_DOI_IN_TEXT = re.compile(_DOI_CORE, re.IGNORECASE)
_DOI_PREFIXES = re.compile(
    r"^(?:https?://)?(?:dx\.)?(?:www\.)?doi\.org/|^doi:\s*|^https?://doi\.org/", re.IGNORECASE
)
_NEW_ARXIV = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v(\d+))?(?![\d])")
_OLD_ARXIV = re.compile(
    r"(?<![\w-])([a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7})(?:v(\d+))?(?!\d)", re.IGNORECASE
)
_SUBJECT_CLASS = re.compile(r"\.[A-Z]{2}/", re.IGNORECASE)
_ARXIV_HINT = re.compile(r"arxiv|eprint|abs/|pdf/", re.IGNORECASE)
_PMID = re.compile(r"\bPMID:?\s*(\d{1,9})\b", re.IGNORECASE)
_PMCID = re.compile(r"\b(PMC\d{4,9})\b", re.IGNORECASE)
_TRAILING = ".,;:)]}>/"
_URL_TAIL = re.compile(r"[?#].*$")
# Zero-width characters and the BOM arrive with DOIs copied from web pages and PDFs.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_PAIRS = {")": "(", "]": "[", ">": "<"}


@functools.lru_cache(maxsize=4096)
def normalize_doi(value: str | None) -> str | None:
    """Canonical lower-case DOI, or None when `value` holds no DOI.

    >>> normalize_doi("https://doi.org/10.1038/NATURE14539.")
    '10.1038/nature14539'

    Cached: a run canonicalises each record's and citation's DOI a dozen times, close
    together (a small cache, so that a million-entry run's memory does not grow with it).
    """
    if not value:
        return None
    text = unquote(value.translate(_INVISIBLE).strip())
    if _DOI_PREFIXES.match(text) and text.lower().startswith("http"):
        # A resolver URL's query string and fragment are the browser's, not the DOI's.
        text = _URL_TAIL.sub("", text)
    text = _DOI_PREFIXES.sub("", text).strip()
    match = _DOI_IN_TEXT.search(text)
    if not match:
        return None
    doi = match.group(0)
    while doi and doi[-1] in _TRAILING:
        # Keep a closing bracket matched inside the DOI: 10.1016/S0140-6736(97)11096-0.
        closing = doi[-1]
        if closing in _PAIRS and doi.count(_PAIRS[closing]) >= doi.count(closing):
            break
        doi = doi[:-1]
    return doi.lower() or None


def find_dois(text: str | None) -> list[str]:
    """Every distinct DOI mentioned in `text`, canonicalised, in order."""
    if not text:
        return []
    seen: list[str] = []
    for match in _DOI_IN_TEXT.finditer(unquote(text)):
        doi = normalize_doi(match.group(0))
        if doi and doi not in seen:
            seen.append(doi)
    return seen


def is_datacite_arxiv_doi(doi: str | None) -> bool:
    """arXiv's own DOIs (10.48550/arXiv.*) are registered with DataCite, not Crossref."""
    return bool(doi and doi.lower().startswith(DATACITE_ARXIV_PREFIX))


def arxiv_id_from_doi(doi: str | None) -> str | None:
    """`10.48550/arXiv.1706.03762` → `1706.03762`."""
    if doi is None or not is_datacite_arxiv_doi(doi):
        return None
    parsed = parse_arxiv_id(doi.split("/", 1)[1].removeprefix("arxiv.").removeprefix("arXiv."))
    return parsed[0] if parsed else None


def parse_arxiv_id(value: str | None) -> tuple[str, int | None] | None:
    """Split an arXiv identifier into (id without version, version or None).

    Accepts `arXiv:1706.03762v5`, `https://arxiv.org/abs/hep-th/9901001`, `1706.03762`,
    and old ids with their subject class (`math.CO/0211346` → `math/0211346`).
    """
    if not value:
        return None
    text = value.strip()
    text = re.sub(r"^arxiv:\s*", "", text, flags=re.IGNORECASE)
    match = _NEW_ARXIV.search(text) or _OLD_ARXIV.search(text)
    if not match:
        return None
    version = int(match.group(2)) if match.group(2) else None
    # "math.CO/0211346" names its subject class; arXiv's id is "math/0211346".
    return _SUBJECT_CLASS.sub("/", match.group(1)), version


def find_arxiv_id(text: str | None, *, require_hint: bool = True) -> tuple[str, int | None] | None:
    """An arXiv id mentioned in free text (`arXiv:…`, arxiv.org URLs).

    With `require_hint` the text must mention arXiv, so page numbers such as
    "1234.5678" in an ordinary citation are not mistaken for an id.
    """
    if not text or (require_hint and not _ARXIV_HINT.search(text)):
        return None
    for pattern in (
        re.compile(r"arxiv[:\s./]*(?:abs/|pdf/)?\s*([^\s,;{}]+)", re.IGNORECASE),
        re.compile(r"(?:abs|pdf)/([^\s,;{}]+)", re.IGNORECASE),
    ):
        for match in pattern.finditer(text):
            parsed = parse_arxiv_id(match.group(1).removesuffix(".pdf"))
            if parsed:
                return parsed
    return parse_arxiv_id(text) if not require_hint else None


def find_pmid(text: str | None) -> str | None:
    match = _PMID.search(text or "")
    return match.group(1) if match else None


def find_pmcid(text: str | None) -> str | None:
    match = _PMCID.search(text or "")
    return match.group(1).upper() if match else None


def normalize_isbn(value: str | None) -> str | None:
    """Digits (and a final X) of the first ISBN-10/13 in `value`."""
    if not value:
        return None
    for chunk in re.split(r"[,;]|\s{2,}", value):
        digits = re.sub(r"[^0-9Xx]", "", chunk).upper()
        if len(digits) in (10, 13):
            return digits
    return None
