"""LaTeX markup → readable Unicode, and LaTeX comment stripping.

Titles and names in .bib files are full of `{\\"u}`, `{B}ayesian` and
`$\\alpha$`; the verifier compares them with plain Unicode from the APIs, so
everything goes through `latex_to_text`. pylatexenc does the real work; plain
strings skip it because it costs about a millisecond per call.
"""

from __future__ import annotations

import functools
import re

_NEEDS_LATEX = re.compile(r"[\\$~`]|--|''")
_BRACES = re.compile(r"[{}]")
_SPACES = re.compile(r"\s+")
_HREF = re.compile(r"\\href\s*\{([^{}]*)\}\s*\{")
_URL = re.compile(r"\\url\s*\{([^{}]*)\}")
_KEEP_CONTENT = re.compile(r"\\(?:mbox|hbox|text|textup|textnormal|ensuremath)\s*\{")
_BARE_SPECIAL = re.compile(r"(?<!\\)([&%])")
_LOGOS = re.compile(r"\\(TeX|LaTeX|LaTeXe|BibTeX|XeTeX|LuaTeX|ConTeXt)\b\s?(?:\{\})?")
_PENALTY = re.compile(r"\\penalty\s*-?\d+\s*")
_NEWBLOCK = re.compile(r"\\newblock\b")
# A `%` not preceded by a backslash (an odd number of backslashes escapes it).
_COMMENT = re.compile(r"(?<!\\)((?:\\\\)*)%.*")


@functools.lru_cache(maxsize=1)
def _converter() -> object:
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text", strict_latex_spaces=True)


@functools.lru_cache(maxsize=16384)
def latex_to_text(value: str) -> str:
    """LaTeX markup to plain Unicode on one line: `M{\\"u}ller` → `Müller`, `$\\alpha$` → `α`."""
    if not value:
        return ""
    text = value
    if _NEEDS_LATEX.search(text):
        text = unwrap_href(text)
        text = _URL.sub(lambda match: match.group(1).replace("%", r"\%"), text)
        text = _KEEP_CONTENT.sub("{", text)
        text = _NEWBLOCK.sub(" ", text)
        text = _LOGOS.sub(lambda match: match.group(1), text)
        text = _PENALTY.sub("", text)
        # Users mean a bare & or % literally; LaTeX would drop it (alignment tab, comment).
        text = _BARE_SPECIAL.sub(r"\\\1", text)
        try:
            text = _converter().latex_to_text(text)  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - pylatexenc fails on some malformed markup
            text = re.sub(r"\\[a-zA-Z]+\*?|\\(.)", r"\1", text)
    text = _BRACES.sub("", text)
    return _SPACES.sub(" ", text.replace("\xa0", " ")).strip()


def unwrap_href(text: str, *, keep_url: bool = False) -> str:
    """`\\href{url}{text}` → `text` (or `text url`), even when the text holds braces.

    pylatexenc crashes on \\href, and physics styles wrap whole citations in one:
    `\\href{https://doi.org/…}{\\emph{Phys. Rev.} \\textbf{13} (1964) 508}`.
    """
    out: list[str] = []
    index = 0
    while match := _HREF.search(text, index):
        close = matching_brace(text, match.end() - 1)
        if close is None:
            break
        out.append(text[index : match.start()])
        out.append(text[match.end() : close])
        if keep_url:
            out.append(f" {match.group(1)} ")
        index = close + 1
    out.append(text[index:])
    return "".join(out)


def matching_brace(text: str, open_index: int) -> int | None:
    """Index of the `}` closing the `{` at `open_index` (escaped braces skipped), or None."""
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


def strip_comments(text: str) -> str:
    """Drop `%` comments line by line (keeping `\\%` and line numbers)."""
    return "\n".join(_COMMENT.sub(r"\1", line) for line in text.split("\n"))
