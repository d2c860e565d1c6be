"""Decode one entry's raw BibTeX fields into a `Reference`.

The raw values stay in `Reference.fields`; the typed attributes are what the
verifier compares, so each is decoded once here: names split, LaTeX turned
into Unicode, identifiers found wherever users tend to put them.
"""

from __future__ import annotations

import re

from refaudit.identifiers import (
    arxiv_id_from_doi,
    find_arxiv_id,
    find_dois,
    find_pmcid,
    find_pmid,
    normalize_doi,
    normalize_isbn,
    parse_arxiv_id,
)
from refaudit.models import InputProblem, Reference
from refaudit.names import parse_names
from refaudit.text import latex_to_text

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january", "janvier", "januar"),
            ("feb", "february", "février", "februar"),
            ("mar", "march", "mars", "märz"),
            ("apr", "april", "avril"),
            ("may", "mai"),
            ("jun", "june", "juin", "juni"),
            ("jul", "july", "juillet", "juli"),
            ("aug", "august", "août"),
            ("sep", "sept", "september", "septembre"),
            ("oct", "october", "octobre", "oktober"),
            ("nov", "november", "novembre"),
            ("dec", "december", "décembre", "dezember"),
        ),
        start=1,
    )
    for name in names
}

_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_MONTH_WORD = re.compile(r"^[^\W\d_]+")
_ISO_MONTH = re.compile(r"^\d{4}-(\d{1,2})")
_DASHES = re.compile(r"\s*(?:--+|[–—‐‑−])\s*")
_URL_IN_TEXT = re.compile(r"https?://[^\s{}\\]+")
_BRACES = re.compile(r"[{}]")
_PROCEEDINGS_TYPES = {"proceedings", "mvproceedings"}
_ARXIV_NAMES = {"arxiv", "arxiv.org"}


def build_reference(
    key: str,
    entry_type: str,
    fields: dict[str, str],
    *,
    file: str | None,
    line: int | None,
    problems: list[InputProblem],
) -> Reference:
    """A `Reference` from one entry's expanded fields (names already lower-case)."""
    reference = Reference(key=key, entry_type=entry_type, file=file, line=line, fields=fields)
    reference.title = _title(fields)
    if "author" in fields:
        reference.authors, reference.authors_truncated = parse_names(fields["author"])
    if "editor" in fields:
        reference.editors, _ = parse_names(fields["editor"])
    reference.year = _year(fields)
    reference.month = _month(fields)
    reference.venue = _text(_venue(entry_type, fields))
    reference.publisher = _text(fields.get("publisher"))
    reference.volume = _text(fields.get("volume"))
    reference.number = _text(fields.get("number") or fields.get("issue"))
    reference.pages = normalize_pages(fields.get("pages"))
    reference.url = _url(fields)
    reference.isbn = normalize_isbn(fields.get("isbn"))
    _add_identifiers(reference, fields, problems)
    ignore = fields.get("refaudit-ignore")
    if ignore is not None:
        reference.ignore_reason = latex_to_text(ignore) or "ignored in the .bib file"
    return reference


def normalize_pages(value: str | None) -> str | None:
    """`123--130`, `123–130` and `123 - 130` all become `123-130`."""
    if not value:
        return None
    text = _DASHES.sub("-", latex_to_text(value.replace("--", "-")))
    text = re.sub(r"\s*-\s*", "-", text)
    return text or None


def _text(value: str | None) -> str | None:
    if not value:
        return None
    return latex_to_text(value) or None


def _title(fields: dict[str, str]) -> str | None:
    title = _text(fields.get("title"))
    subtitle = _text(fields.get("subtitle"))
    if title and subtitle:
        return f"{title}: {subtitle}"
    return title


def _year(fields: dict[str, str]) -> int | None:
    for name in ("year", "date", "origdate"):
        match = _YEAR.search(fields.get(name, ""))
        if match:
            return int(match.group(1))
    return None


def _month(fields: dict[str, str]) -> int | None:
    value = _BRACES.sub("", fields.get("month", "")).strip().rstrip(".").lower()
    if value.isdigit() and 1 <= int(value) <= 12:
        return int(value)
    if value in MONTHS:
        return MONTHS[value]
    # "January~15" and "jan # {~15}" name the month in their first word.
    word = _MONTH_WORD.match(value)
    if word and (month := MONTHS.get(word.group(0)) or MONTHS.get(word.group(0)[:3])):
        return month
    match = _ISO_MONTH.match(fields.get("date", "").strip())
    if match and 1 <= int(match.group(1)) <= 12:
        return int(match.group(1))
    return None


def _venue(entry_type: str, fields: dict[str, str]) -> str | None:
    for name in ("journal", "journaltitle", "booktitle"):
        if fields.get(name):
            return fields[name]
    if entry_type in _PROCEEDINGS_TYPES and fields.get("series"):
        return fields["series"]
    if entry_type == "inproceedings" and fields.get("eventtitle"):
        return fields["eventtitle"]
    return None


def _url(fields: dict[str, str]) -> str | None:
    if fields.get("url"):
        return _BRACES.sub("", latex_url(fields["url"])).strip() or None
    match = _URL_IN_TEXT.search(latex_url(fields.get("howpublished", "")))
    return match.group(0).rstrip(".,;") if match else None


def latex_url(value: str) -> str:
    """`\\url{…}` unwrapped and TeX escapes (`\\_`, `\\%`, `\\#`, `\\&`) undone."""
    text = re.sub(r"\\url\s*\{([^{}]*)\}", r"\1", value)
    return re.sub(r"\\([_%#&~$])", r"\1", text)


def _eprint_type(fields: dict[str, str]) -> str:
    return (fields.get("eprinttype") or fields.get("archiveprefix") or "").strip().lower()


def _add_identifiers(
    reference: Reference, fields: dict[str, str], problems: list[InputProblem]
) -> None:
    """DOI, arXiv, PubMed ids from their own fields first, then from url/note/howpublished."""
    eprint_type = _eprint_type(fields)
    eprint = latex_url(fields.get("eprint", "")).strip()
    doi_field = latex_url(fields.get("doi", "")).strip()
    if doi_field:
        reference.doi = normalize_doi(doi_field)
        if reference.doi is None:
            problems.append(
                InputProblem(
                    file=reference.file or "",
                    line=reference.line,
                    key=reference.key,
                    message=f"doi field {doi_field!r} is not a DOI; ignored",
                    code="invalid-doi",
                )
            )
    if reference.doi is None and eprint_type == "doi":
        reference.doi = normalize_doi(eprint)
    if reference.doi is None:
        for name in ("url", "note", "howpublished", "addendum"):
            dois = find_dois(latex_url(fields.get(name, "")))
            if dois:
                reference.doi = dois[0]
                break

    arxiv = None
    if eprint and eprint_type in _ARXIV_NAMES:
        arxiv = parse_arxiv_id(eprint)
    elif (
        eprint
        and not eprint_type
        and re.fullmatch(r"(?:arxiv:)?\d{4}\.\d{4,5}(v\d+)?", eprint, re.I)
    ):
        arxiv = parse_arxiv_id(eprint)
    if arxiv is None and fields.get("arxivid"):
        arxiv = parse_arxiv_id(fields["arxivid"])
    if arxiv is None:
        for name in (
            "journal",
            "journaltitle",
            "note",
            "url",
            "howpublished",
            "booktitle",
            "eprint",
        ):
            arxiv = find_arxiv_id(latex_url(fields.get(name, "")))
            if arxiv:
                break
    if arxiv is None and reference.doi:
        datacite_id = arxiv_id_from_doi(reference.doi)
        arxiv = parse_arxiv_id(datacite_id) if datacite_id else None
    if arxiv:
        reference.arxiv_id, reference.arxiv_version = arxiv

    note_text = " ".join(fields.get(name, "") for name in ("note", "addendum", "annote"))
    pubmed_eprint = eprint if eprint_type == "pubmed" else None
    reference.pmid = _digits(fields.get("pmid") or pubmed_eprint) or find_pmid(note_text)
    pmcid = fields.get("pmcid", "").strip()
    if pmcid:
        reference.pmcid = find_pmcid(pmcid if pmcid.upper().startswith("PMC") else f"PMC{pmcid}")
    else:
        reference.pmcid = find_pmcid(note_text)


def _digits(value: str | None) -> str | None:
    match = re.search(r"\d{1,9}", value or "")
    return match.group(0) if match else None
