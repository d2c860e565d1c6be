"""The registration agencies' own BibTeX (Crossref, DataCite), made fit for LaTeX."""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

from refaudit.identifiers import is_datacite_arxiv_doi
from refaudit.models import Work

#: The head of a BibTeX entry: its type and key.
BIBTEX_HEAD = re.compile(r"^\s*@\s*(\w+)\s*\{\s*([^,\s]*)\s*,")
#: Agency BibTeX fields holding identifiers or URLs, which must reach LaTeX verbatim.
_VERBATIM_FIELDS = frozenset({"url", "doi", "eprint", "isbn", "issn", "archiveprefix", "file"})
#: Characters LaTeX treats specially that agencies leave bare in plain-text values.
_BARE_SPECIAL = re.compile(r"(?<!\\)[&%#_]")
#: A value already written as LaTeX (braces, commands, math) is escaped only where bare.
_LATEX_MARKUP = re.compile(r"[{}\\$]")


@runtime_checkable
class BibtexProvider(Protocol):
    """A registration agency that serves its own BibTeX for its DOIs."""

    name: str

    async def fetch_bibtex(self, doi: str) -> str | None: ...


def agency_for(work: Work) -> str | None:
    """The registration agency whose own BibTeX to ask for, when the DOI is known to it."""
    if not work.doi:
        return None
    if is_datacite_arxiv_doi(work.doi) or "datacite" in work.found_in:
        return "datacite"
    if "crossref" in work.found_in:
        return "crossref"
    return None


def one_field_per_line(bibtex: str) -> str:
    """Lay out an agency's entry one field per line and make its values LaTeX-safe.

    Crossref and DataCite write plain text into their BibTeX (`Q&A`, `0.05%`,
    `436–444`): a `%` comments out the rest of the line and a bare `&` stops LaTeX.
    Each value is escaped and its title's acronyms braced as refaudit's own entries are;
    values already written as LaTeX keep their markup, identifiers stay untouched.
    """
    text = bibtex.strip()
    head = BIBTEX_HEAD.match(text)
    if not head or not text.endswith("}"):
        return text + "\n"
    body = text[head.end() : -1]
    fields: list[str] = []
    depth, quoted, start = 0, False, 0
    for index, char in enumerate(body):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == '"' and depth == 0:
            quoted = not quoted
        elif char == "," and depth == 0 and not quoted:
            fields.append(body[start:index])
            start = index + 1
    fields.append(body[start:])
    lines = [f"  {_latex_safe_field(part.strip())}," for part in fields if part.strip()]
    return f"@{head.group(1)}{{{head.group(2)},\n" + "\n".join(lines) + "\n}\n"


def _latex_safe_field(part: str) -> str:
    """`name = {value}` with the value escaped for LaTeX (bare macros like `month=May` kept)."""
    from refaudit.bibtex import page_range, protect_title

    name, equals, value = part.partition("=")
    delimited = value.strip()
    field_name = name.strip().lower()
    if not equals or field_name in _VERBATIM_FIELDS or len(delimited) < 2:
        return part
    opening, inner, closing = delimited[0], delimited[1:-1], delimited[-1]
    if (opening, closing) not in (("{", "}"), ('"', '"')):
        return part
    if field_name == "pages":
        inner = page_range(inner)
    if field_name == "title" and not _LATEX_MARKUP.search(inner):
        inner = protect_title(inner)
    else:
        inner = _BARE_SPECIAL.sub(lambda match: "\\" + match.group(0), inner)
    return f"{name}{equals}{value[: len(value) - len(value.lstrip())]}{opening}{inner}{closing}"
