"""Discovery: search the databases, fetch BibTeX for a work, show one work in full.

These are the functions behind `refaudit search`, `refaudit bibtex`, `refaudit show`
and the MCP tools of the same names. Everything they return comes from a database
record. One job per module:

- `identifiers`: what a user typed (DOI, arXiv id, PMID, S2 or OpenAlex id, title);
- `fusion`: search every source and merge the hits into ranked works;
- `resolve`: find every source's record of the work an identifier or title names;
- `agency`: the registration agencies' own BibTeX, made fit for LaTeX;
- `entries`: BibTeX for works, with refaudit's keys;
- `bibfile`: appending entries to a .bib file;
- `integrity`: what a work's notices say about it;
- `graph`: the citation graph;
- `details`: one work in full and where each field came from;
- `opening`: the one place the sources are opened.
"""

from refaudit.discovery.agency import BibtexProvider, one_field_per_line
from refaudit.discovery.bibfile import append_to_bib, bib_file_keys
from refaudit.discovery.details import FieldOrigin, PaperDetails, field_origins, paper_details
from refaudit.discovery.entries import (
    BibtexEntry,
    bibtex_entries,
    metadata_entry,
    rekey,
)
from refaudit.discovery.fusion import EXACT_TITLE_BONUS, RANK_OFFSET, SearchOutcome, search_works
from refaudit.discovery.graph import GRAPH_FETCH, CitationGraph, rank_by_citations
from refaudit.discovery.identifiers import Identifier, IdentifierKind, parse_identifier
from refaudit.discovery.integrity import is_withdrawn, own_notices
from refaudit.discovery.resolve import (
    CLOSEST_SHOWN,
    CONFIDENT_TITLE_KINDS,
    TITLE_CANDIDATES,
    Status,
)

__all__ = [
    "CLOSEST_SHOWN",
    "CONFIDENT_TITLE_KINDS",
    "EXACT_TITLE_BONUS",
    "GRAPH_FETCH",
    "RANK_OFFSET",
    "TITLE_CANDIDATES",
    "BibtexEntry",
    "BibtexProvider",
    "CitationGraph",
    "FieldOrigin",
    "Identifier",
    "IdentifierKind",
    "PaperDetails",
    "SearchOutcome",
    "Status",
    "append_to_bib",
    "bib_file_keys",
    "bibtex_entries",
    "field_origins",
    "is_withdrawn",
    "metadata_entry",
    "one_field_per_line",
    "own_notices",
    "paper_details",
    "parse_identifier",
    "rank_by_citations",
    "rekey",
    "search_works",
]
