"""Balanced-brace scanning, one function per convention, named after it.

BibTeX counts every brace, escaped or not (`{\\}` is a group holding a
backslash), so .bib names and `#` concatenations are scanned with the `bibtex_`
functions. (`fix` locates whole entries as bibtexparser does, which skips
escaped braces and tracks quotes: `fix._closing`.)
LaTeX skips escaped braces (`\\{` is a literal brace), so commands in .tex and
.bbl text are scanned with the `latex_` ones.
"""

from __future__ import annotations


def bibtex_closing(text: str, open_index: int) -> int | None:
    """Index of the `}` closing the `{` at `open_index`, every brace counted, or None."""
    depth = 0
    for index in range(open_index, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def bibtex_is_one_group(text: str) -> bool:
    """True for `{Name In Braces}`: one group from the first character to the last."""
    return text.startswith("{") and bibtex_closing(text, 0) == len(text) - 1


def bibtex_split(text: str, separator: str, *, quotes: bool = False) -> list[str]:
    """Split at `separator` outside braces (and, with `quotes`, outside `"…"` values)."""
    parts: list[str] = []
    depth = 0
    in_quotes = False
    start = 0
    for index, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif quotes and char == '"' and depth == 0 and (index == 0 or text[index - 1] != "\\"):
            in_quotes = not in_quotes
        elif char == separator and depth == 0 and not in_quotes:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def latex_closing(text: str, open_index: int) -> int | None:
    """Index of the `}` closing the `{` at `open_index`, escaped braces skipped, or None."""
    depth = 0
    for index in range(open_index, len(text)):
        char = text[index]
        if char == "{" and (index == 0 or text[index - 1] != "\\"):
            depth += 1
        elif char == "}" and text[index - 1] != "\\":
            depth -= 1
            if depth == 0:
                return index
    return None
