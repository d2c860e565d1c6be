"""`thebibliography` lists: every `\\bibitem[label]{key} text` as a free-text reference.

Both a .tex file and a BibTeX-generated .bbl hold them, so both parsers use this one.
"""

from __future__ import annotations

import re

from refaudit.models import Reference
from refaudit.parsing.freetext import parse_freetext
from refaudit.parsing.lines import LineIndex

_THEBIBLIOGRAPHY = re.compile(
    r"\\begin\s*\{thebibliography\}(?P<body>.*?)(?:\\end\s*\{thebibliography\}|$)", re.DOTALL
)
_BIBITEM = re.compile(r"\\bibitem\s*(?:\[(?:[^\[\]{}]|\{[^{}]*\})*\])?\s*\{(?P<key>[^{}]*)\}")


def parse_bibitems(text: str, *, file: str, lines: LineIndex | None = None) -> list[Reference]:
    """Every `\\bibitem[label]{key} text` inside thebibliography, as free-text references."""
    lines = lines or LineIndex(text)
    references: list[Reference] = []
    for environment in _THEBIBLIOGRAPHY.finditer(text):
        body_start = environment.start("body")
        body = environment.group("body")
        items = list(_BIBITEM.finditer(body))
        for index, item in enumerate(items):
            end = items[index + 1].start() if index + 1 < len(items) else len(body)
            line = lines.line(body_start + item.start())
            references.append(
                parse_freetext(
                    body[item.end() : end].strip(),
                    key=item.group("key").strip(),
                    file=file,
                    line=line,
                )
            )
    return references
