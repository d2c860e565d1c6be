"""Adding entries to a .bib file without duplicating a work or a key."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from refaudit.discovery.entries import BibtexEntry, rekey
from refaudit.errors import InputError
from refaudit.identifiers import normalize_doi

_BIB_KEYS = re.compile(r"@\s*(\w+)\s*[{(]\s*([^,\s{}()]+)\s*,")
_NON_ENTRIES = frozenset({"string", "preamble", "comment"})


def bib_file_keys(text: str) -> set[str]:
    """Citation keys defined in a .bib file's text (lower case: BibTeX ignores case)."""
    return {
        key.lower() for kind, key in _BIB_KEYS.findall(text) if kind.lower() not in _NON_ENTRIES
    }


def append_to_bib(
    path: Path, entries: Sequence[BibtexEntry], *, rename: bool
) -> tuple[list[BibtexEntry], list[tuple[BibtexEntry, str]]]:
    """Append the entries that have BibTeX to `path`, separated by blank lines.

    An entry whose DOI the file already cites, or whose key the file already
    uses for the same DOI, is not written again. Another work under a key the
    file uses is refused unless `rename`, which gives it a unique key instead.
    Returns the entries as written, and those left out with the reason.

    Raises:
        InputError: the file cannot be read or written, or keys clash without `rename`.
    """
    try:
        existing = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", file=str(path)) from exc
    present = bib_file_keys(existing)
    cited = _cited_dois(existing, path)
    writable: list[BibtexEntry] = []
    skipped: list[tuple[BibtexEntry, str]] = []
    for entry in entries:
        if not entry.bibtex:
            continue
        doi = normalize_doi(entry.work.doi) if entry.work and entry.work.doi else None
        same_key = entry.key and entry.key.lower() in present and doi and cited.get(doi)
        if doi and doi in cited:
            skipped.append((entry, f"already in {path} as {cited[doi]}"))
        elif same_key:
            skipped.append((entry, f"already in {path} as {entry.key}"))
        else:
            writable.append(entry)
    clashes = [entry.key for entry in writable if entry.key and entry.key.lower() in present]
    if clashes and not rename:
        raise InputError(
            f"keys already in the file: {', '.join(clashes)}",
            file=str(path),
            hint="pass --rename to give the new entries unique keys",
        )
    if rename:
        taken = set(present)
        writable = [rekey(entry, taken) for entry in writable]
    blocks = [entry.bibtex.strip() for entry in writable if entry.bibtex]
    if not blocks:
        return [], skipped
    if not existing.strip() or existing.endswith("\n\n"):
        separator = ""
    else:
        separator = "\n" if existing.endswith("\n") else "\n\n"
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(separator + "\n\n".join(blocks) + "\n")
    except OSError as exc:
        raise InputError(f"cannot write: {exc}", file=str(path)) from exc
    return writable, skipped


def _cited_dois(text: str, path: Path) -> dict[str, str]:
    """DOI → citation key of every entry in a .bib text."""
    if not text.strip():
        return {}
    from refaudit.parsing import parse_bibtex

    bibliography = parse_bibtex(text, file=str(path))
    return {
        normalize_doi(reference.doi) or reference.doi.lower(): reference.key
        for reference in bibliography.references
        if reference.doi
    }
