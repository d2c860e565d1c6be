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
    bibtexparser splits the entry and writes it in refaudit's own layout; text it
    cannot read as exactly one entry is returned as it came.
    """
    import bibtexparser
    from bibtexparser.library import Library
    from bibtexparser.writer import BibtexFormat

    from refaudit.parsing.bibtex import quiet_bibtexparser

    text = bibtex.strip()
    with quiet_bibtexparser():
        try:
            library = bibtexparser.parse_string(text, parse_stack=[])
        except Exception:  # noqa: BLE001 - bibtexparser raises on states it cannot split
            return text + "\n"
    if len(library.entries) != 1 or library.failed_blocks:
        return text + "\n"
    [entry] = library.entries
    for item in entry.fields:
        item.value = _latex_safe_value(item.key, item.value)
    layout = BibtexFormat()
    layout.indent = "  "
    layout.trailing_comma = True
    return bibtexparser.write_string(Library([entry]), unparse_stack=[], bibtex_format=layout)


def with_note(bibtex: str, note: str) -> str:
    """The entry with `note` (plain text) added to its `note` field, escaped for LaTeX.

    An entry bibtexparser cannot read as exactly one entry gets the field after its head.
    """
    import bibtexparser
    from bibtexparser.library import Library
    from bibtexparser.model import Field
    from bibtexparser.writer import BibtexFormat

    from refaudit.bibtex import escape_latex
    from refaudit.parsing.bibtex import quiet_bibtexparser

    text = escape_latex(note)
    with quiet_bibtexparser():
        try:
            library = bibtexparser.parse_string(bibtex.strip(), parse_stack=[])
        except Exception:  # noqa: BLE001 - bibtexparser raises on states it cannot split
            library = None
    if library is None or len(library.entries) != 1 or library.failed_blocks:
        return BIBTEX_HEAD.sub(lambda m: f"{m.group(0)}\n  note = {{{text}}},", bibtex, count=1)
    [entry] = library.entries
    present = entry.fields_dict.get("note")
    if present is not None and len(present.value) > 2:
        present.value = f"{present.value[:-1]}. {text}{present.value[-1]}"
    else:
        entry.set_field(Field("note", f"{{{text}}}"))
    layout = BibtexFormat()
    layout.indent = "  "
    layout.trailing_comma = True
    return bibtexparser.write_string(Library([entry]), unparse_stack=[], bibtex_format=layout)


def _latex_safe_value(name: str, value: str) -> str:
    """A delimited value escaped for LaTeX; bare macros (`month=May`) and identifiers kept."""
    from refaudit.bibtex import page_range, protect_title

    field_name = name.lower()
    if field_name in _VERBATIM_FIELDS or len(value) < 2:
        return value
    opening, inner, closing = value[0], value[1:-1], value[-1]
    if (opening, closing) not in (("{", "}"), ('"', '"')):
        return value
    if field_name == "pages":
        inner = page_range(inner)
    if field_name == "title" and not _LATEX_MARKUP.search(inner):
        inner = protect_title(inner)
    else:
        inner = _BARE_SPECIAL.sub(lambda match: "\\" + match.group(0), inner)
    return f"{opening}{inner}{closing}"
