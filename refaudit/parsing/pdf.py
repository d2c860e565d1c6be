"""A born-digital PDF's reference list as `Reference`s, read by the same free-text reader
that `\\bibitem`s use.

    read_pdf(path) -> list[Reference]     every entry of the list, in list order

Each reference keeps the entry as printed (`text`), its printed label (`label`) and
the page it starts on (`page`), so a finding can say "[12], page 9". Its key is the
label when that is a citation key ("[Smi20]" → Smi20), else ref1, ref2, … by position.
"""

from __future__ import annotations

import re
from pathlib import Path

from refaudit.errors import InputError
from refaudit.models import Bibliography, Reference
from refaudit.parsing.freetext import parse_freetext

_KEY_LABEL = re.compile(r"^\[?(?P<key>[A-Za-z][\w+:-]{0,40})\]?$")


def read_pdf(path: Path) -> list[Reference]:
    """The references of the PDF's reference list, in list order.

    Raises:
        InputError: the file is not a readable PDF (see `pdftext.read_lines`), or no
            reference list was found in it.
    """
    from refaudit.parsing.pdflist import reference_list
    from refaudit.parsing.pdftext import read_lines

    path = Path(path)
    printed = reference_list(read_lines(path))
    if not printed:
        raise InputError(
            "no reference list found",
            file=str(path),
            hint='the list is found under a heading such as "References" or "Bibliography", '
            "or as entries numbered [1], [2], …",
        )
    references: list[Reference] = []
    keys: set[str] = set()
    for index, entry in enumerate(printed, 1):
        key = _key(entry.label, index, keys)
        reference = parse_freetext(entry.text, key=key, file=str(path))
        reference.text, reference.label, reference.page = entry.text, entry.label, entry.page
        references.append(reference)
    return references


def parse_pdf(path: Path) -> Bibliography:
    """`read_pdf` as a `Bibliography` (the shape `parse_file` returns)."""
    return Bibliography(references=read_pdf(path), problems=[], files=[str(path)])


def _key(label: str | None, index: int, taken: set[str]) -> str:
    """The label when it reads as a citation key, else ref<position>; each key once."""
    found = _KEY_LABEL.match(label or "")
    key = found.group("key") if found else f"ref{index}"
    if key in taken:
        key = f"{key}-{index}"
    taken.add(key)
    return key
