"""Input parsing: .bib, .tex and .bbl files and free-text citations → `Reference`s.

    parse_file(path)         dispatch on the extension; unusable input raises InputError
    parse_bibtex(text)       BibTeX/biblatex text → Bibliography; a bad entry never stops the rest
    parse_freetext(text)     one citation string (APA, Chicago, IEEE, Vancouver, …) → Reference
    parse_names(value)       a BibTeX author list → Persons, and whether "and others" cut it short
    latex_to_text(value)     LaTeX markup → Unicode

Problems that do not stop the audit are returned in `Bibliography.problems`
with kebab-case codes (docs/inputs.md lists them).
"""

from __future__ import annotations

from refaudit.names import parse_names
from refaudit.parsing.bibtex import parse_bibtex
from refaudit.parsing.files import SUPPORTED_SUFFIXES, parse_file
from refaudit.parsing.freetext import parse_freetext
from refaudit.text import latex_to_text

__all__ = [
    "SUPPORTED_SUFFIXES",
    "latex_to_text",
    "parse_bibtex",
    "parse_file",
    "parse_freetext",
    "parse_names",
]
