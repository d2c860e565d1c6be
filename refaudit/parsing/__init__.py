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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from refaudit.names import parse_names
    from refaudit.parsing.bibtex import parse_bibtex
    from refaudit.parsing.files import SUPPORTED_SUFFIXES, parse_file
    from refaudit.parsing.freetext import parse_freetext
    from refaudit.text import latex_to_text

#: Where each name lives: imported when first asked for, so that reading a `.bib` does
#: not compile the free-text reader's styles (a twentieth of a second) first.
_HOMES = {
    "SUPPORTED_SUFFIXES": "refaudit.parsing.files",
    "latex_to_text": "refaudit.text",
    "parse_bibtex": "refaudit.parsing.bibtex",
    "parse_file": "refaudit.parsing.files",
    "parse_freetext": "refaudit.parsing.freetext",
    "parse_names": "refaudit.names",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)


__all__ = [
    "SUPPORTED_SUFFIXES",
    "latex_to_text",
    "parse_bibtex",
    "parse_file",
    "parse_freetext",
    "parse_names",
]
