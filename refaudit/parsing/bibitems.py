"""`thebibliography` lists: every `\\bibitem[label]{key} text` as a free-text reference.

Both a .tex file and a BibTeX-generated .bbl hold them, so both parsers use this one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from refaudit.models import Reference
from refaudit.parsing.bibinfo import apply_tagged
from refaudit.parsing.lines import LineIndex

_THEBIBLIOGRAPHY = re.compile(
    r"\\begin\s*\{thebibliography\}(?P<body>.*?)(?:\\end\s*\{thebibliography\}|$)", re.DOTALL
)
# `\bibitem[label]{key}` in all its spellings: a space before the bracket (REVTeX), braces
# nested three deep in the label, a `%` line end between label and key (ACM).
_LABEL = r"\[(?:[^\[\]{}]|\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\})*\]"
_BIBITEM = re.compile(
    rf"\\bibitem\s*(?:{_LABEL})?\s*(?:%[^\n]*\n\s*)?\{{(?P<key>[^{{}}]*)\}}(?:%[^\n]*)?"
)
# REVTeX's bookkeeping around each item prints nothing.
_REVTEX_MARKS = re.compile(r"\\BibitemOpen\b|\\BibitemShut\s*\{[^{}]*\}|\\EOS\b")


def parse_bibitems(text: str, *, file: str, lines: LineIndex | None = None) -> list[Reference]:
    """Every `\\bibitem[label]{key} text` inside thebibliography, as free-text references."""
    return list(iter_bibitems(text, file=file, lines=lines))


def iter_bibitems(text: str, *, file: str, lines: LineIndex | None = None) -> Iterator[Reference]:
    """`parse_bibitems`, one reference at a time (each item is parsed when it is reached)."""
    # Imported here: a `.tex` citing a `.bib` needs no free-text reader, nor its compiled styles.
    from refaudit.parsing.freetext import parse_freetext

    lines = lines or LineIndex(text)
    for body_start, body, items in _items(text):
        for index, item in enumerate(items):
            end = items[index + 1].start() if index + 1 < len(items) else len(body)
            text = _REVTEX_MARKS.sub("", body[item.end() : end]).strip()
            reference = parse_freetext(
                text,
                key=item.group("key").strip(),
                file=file,
                line=lines.line(body_start + item.start()),
            )
            yield apply_tagged(reference, text)


def bibitem_keys(text: str) -> Iterator[str]:
    """The key of each item `iter_bibitems` gives, without parsing the items."""
    for _, _, items in _items(text):
        yield from (item.group("key").strip() for item in items)


def _items(text: str) -> Iterator[tuple[int, str, list[re.Match[str]]]]:
    """(where its body starts, the body, its \\bibitem heads) of each environment."""
    for environment in _THEBIBLIOGRAPHY.finditer(text):
        body = environment.group("body")
        yield environment.start("body"), body, list(_BIBITEM.finditer(body))
