"""A citation string decoded for reading: LaTeX to text, its emphasis and blocks marked.

Italics (`\\emph`, `\\textit`) and BibTeX's `\\newblock` are the strongest signs of
where a title or a venue starts; decoding keeps them as private-use characters,
and `clean` removes them from whatever span a reader takes.
"""

from __future__ import annotations

import html
import re

from refaudit.braces import latex_closing
from refaudit.text import latex_to_text

# Private-use characters mark where \emph{…}/\textit{…} spans were, through LaTeX decoding.
EMPH_OPEN = "\ue000"
EMPH_CLOSE = "\ue001"
NEWBLOCK = "\ue002"
_EMPH_COMMAND = re.compile(r"\\(?:emph|textit|textsl|it|em)\s*\{")
_OLD_EMPH = re.compile(r"\{\\(?:em|it|sl)\s+")
LETTER = re.compile(r"[^\W\d_]")
#: A year of publication as a citation prints it: the pattern every style reader uses.
YEAR = r"(?:1[5-9]\d\d|20\d\d)"


_HYPHENS = str.maketrans({"\u2010": "-", "\u2011": "-"})
# OCR drops the space after a full stop: "Veness J.Gaussian Gated …", "et al.Composite …"
# end the names there as surely as with the space.
_GLUED_AFTER_NAMES = re.compile(r"(?:(?<=\s[A-Z]\.)(?=[A-Z][a-z]{2})|(?<=\set al\.)(?=[A-Z]))")


def decode(text: str) -> str:
    """LaTeX → Unicode, keeping \\emph spans as EMPH_OPEN…EMPH_CLOSE.

    Citations pasted from web pages bring HTML entities ("Ch&apos;ng") along, and
    publishers' typographic hyphens ("Alix‐Panabières", U+2010) read as the ASCII one;
    a space OCR dropped after the names' full stop is put back.
    """
    marked = _mark_emphasis(html.unescape(text).translate(_HYPHENS))
    marked = re.sub(r"\\newblock\b\s*", NEWBLOCK, marked.replace("\\\\", " "))
    decoded = latex_to_text(marked).replace("``", "“").replace("''", "”")
    return _GLUED_AFTER_NAMES.sub(" ", decoded)


def _mark_emphasis(text: str) -> str:
    out: list[str] = []
    index = 0
    for match in list(_EMPH_COMMAND.finditer(text)) + list(_OLD_EMPH.finditer(text)):
        if match.start() < index:
            continue
        close = latex_closing(
            text, match.end() - 1 if text[match.end() - 1] == "{" else match.start()
        )
        if close is None:
            continue
        out.append(text[index : match.start()])
        out.append(EMPH_OPEN + "{" + text[match.end() : close] + "}" + EMPH_CLOSE)
        index = close + 1
    out.append(text[index:])
    return "".join(out)


def clean(value: str) -> str:
    text = value.replace(EMPH_OPEN, "").replace(EMPH_CLOSE, "").replace(NEWBLOCK, " ")
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" ,;:").removesuffix(".").strip() if text else ""


def clean_venue(value: str) -> str | None:
    """Like `clean`, but an abbreviated last word ("Eng.", "Proc.") keeps its period."""
    text = re.sub(r"\s+", " ", value.replace(EMPH_OPEN, "").replace(EMPH_CLOSE, "")).strip(" ,;:")
    if text.endswith(".") and len(text.rsplit(" ", 1)[-1]) > 6:
        text = text[:-1]
    # A year or a page number where the venue would be is not a venue.
    if not LETTER.search(text):
        return None
    return text or None
