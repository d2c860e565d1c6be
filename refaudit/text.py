"""Text cleaning shared by every stage: LaTeX and markup → readable Unicode.

Titles and names in .bib files are full of `{\\"u}`, `{B}ayesian` and
`$\\alpha$`; upstream titles carry JATS, HTML and MathML tags and entities.
`latex_to_text` (pylatexenc does the real work; plain strings skip it because
it costs about a millisecond per call) and `strip_markup` turn both into plain
Unicode for display and comparison; `MARKUP_TAG` is the one tag pattern, also
used by `match.normalize_text` and the Retraction Watch title keys.
"""

from __future__ import annotations

import functools
import html
import re

from refaudit.braces import latex_closing

#: An HTML/XML/JATS/MathML tag: the one tag pattern every cleaner uses.
MARKUP_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
# After unescaping only well-known markup counts as a tag, so "x &lt; y and z &gt; w" survives.
_ESCAPED_TAG = re.compile(
    r"</?(?:jats:|mml:)?(?:title|i|b|em|strong|sup|sub|sc|scp|p|span|u|tt|br|italic|bold"
    r"|inline-formula|math|mi|mn|mo|mrow|msub|msup|mfrac|mtext)(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
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
            text = _pylatexenc_text(text)
        except Exception:  # noqa: BLE001 - pylatexenc fails on some malformed markup
            text = re.sub(r"\\[a-zA-Z]+\*?|\\(.)", r"\1", text)
    text = _BRACES.sub("", text)
    return _SPACES.sub(" ", text.replace("\xa0", " ")).strip()


# One accented or special letter, as names and titles write them: `{\'e}`, `{\"{o}}`,
# `{\c{c}}`, `{\c c}`, `{\ss}`, `{\'\i}`, `\'e`, `\"{o}`; and `\&`, `\%`, `\$`, `\#`, `\_`.
_LETTER_ARGUMENT = r"(?:[A-Za-z]|\\[ij](?![A-Za-z]))"
_LETTER = re.compile(
    r"(\{\\(?:[`'^\"~=.](?:\s*" + _LETTER_ARGUMENT + r"|\{" + _LETTER_ARGUMENT + r"\})"
    r"|[A-Za-z]+(?:\s*\{" + _LETTER_ARGUMENT + r"?\}|\s+[A-Za-z])?)\}"
    r"|\\[`'^\"~=.](?:[A-Za-z]|\{" + _LETTER_ARGUMENT + r"\})"
    r"|\\[&%$#_])"
)
# What pylatexenc reads as more than its own characters, outside those letters.
_LATEX_SPECIAL = re.compile(r"[\\$~%#^_`&]|--|''")


def _pylatexenc_text(text: str) -> str:
    """pylatexenc's reading of `text` (a millisecond a call), braces aside.

    Where the LaTeX in it is only letters such as `{\'e}` between plain words, each
    letter is read alone and remembered: a group or a control symbol cannot change the
    words around it, so the text is the same once `latex_to_text` drops the braces.
    """
    pieces = _LETTER.split(text)
    if any(_LATEX_SPECIAL.search(plain) for plain in pieces[::2]):
        return _converter().latex_to_text(text)  # type: ignore[attr-defined]
    return "".join(piece if n % 2 == 0 else _letter(piece) for n, piece in enumerate(pieces))


@functools.lru_cache(maxsize=4096)
def _letter(markup: str) -> str:
    return _converter().latex_to_text(markup)  # type: ignore[attr-defined]


def unwrap_href(text: str, *, keep_url: bool = False) -> str:
    """`\\href{url}{text}` → `text` (or `text url`), even when the text holds braces.

    pylatexenc crashes on \\href, and physics styles wrap whole citations in one:
    `\\href{https://doi.org/…}{\\emph{Phys. Rev.} \\textbf{13} (1964) 508}`.
    """
    out: list[str] = []
    index = 0
    while match := _HREF.search(text, index):
        close = latex_closing(text, match.end() - 1)
        if close is None:
            break
        out.append(text[index : match.start()])
        out.append(text[match.end() : close])
        if keep_url:
            out.append(f" {match.group(1)} ")
        index = close + 1
    out.append(text[index:])
    return "".join(out)


def strip_comments(text: str) -> str:
    """Drop `%` comments line by line (keeping `\\%` and line numbers)."""
    return "\n".join(_COMMENT.sub(r"\1", line) for line in text.split("\n"))


def strip_markup(text: str | None) -> str | None:
    """Plain text of a title that may carry JATS, HTML or MathML tags and entities."""
    if not text:
        return None
    # Tags come raw or entity-escaped ("&lt;title&gt;…"), so strip, unescape, strip again.
    plain = _ESCAPED_TAG.sub(" ", html.unescape(MARKUP_TAG.sub(" ", text)))
    plain = _SPACES.sub(" ", plain).strip()
    # Removing inline tags leaves a space before punctuation: "x <i>y</i>." → "x y ."
    plain = re.sub(r"\s+([,.;:!?)\]])", r"\1", plain)
    plain = re.sub(r"([(\[])\s+", r"\1", plain)
    return plain or None
