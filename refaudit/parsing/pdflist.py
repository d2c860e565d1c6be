"""A PDF's reference list from its text lines: where it is, in reading order, cut into entries.

The lines come from `pdftext` with their positions. This module puts them in reading
order (columns left to right, each top to bottom), drops running headers, footers and
page numbers, finds the list (after its heading, or as the longest run of numbered
entries when there is none), ends it at the next section (appendix, biographies,
supplementary material), and cuts it into entries: at each printed label ("[12]",
"12.", "[Smi20]") in sequence, or, for author-year lists printed without labels, at
each hanging indent or paragraph gap. Each entry keeps its label and the page it
starts on; its lines are joined undoing line-end hyphenation.
"""

from __future__ import annotations

import math
import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from refaudit.parsing.listparts import LIST_END, LIST_HEADING
from refaudit.parsing.pdftext import TextLine


@dataclass(frozen=True, slots=True)
class PrintedReference:
    """One entry of the list: its text as printed (label left out), label and page."""

    text: str
    label: str | None
    page: int


@dataclass(slots=True)
class _Line:
    """A line in reading order, with the column it sits in."""

    page: int
    column: int
    x0: float
    x1: float
    y: float
    size: float
    text: str
    left: float = 0.0  # the column's left edge, once known
    right: float = 0.0


_BRACKET = re.compile(r"^\[(?P<label>[^\[\]]{1,60})\]\s*")
_NUMBER_DOT = re.compile(r"^(?P<label>\d{1,4})\.\s+")
_PARENTHESIS = re.compile(r"^\((?P<label>\d{1,4})\)\s*")
_LABELS = (_BRACKET, _NUMBER_DOT, _PARENTHESIS)
_LIGATURES = str.maketrans(
    {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st", "\u00ad": ""}
)
# TeX's fonts set an accent as its own glyph before the letter ("Fran¸cois").
_SPACING_ACCENTS = {
    "¨": "\u0308",
    "´": "\u0301",
    "`": "\u0300",
    "ˆ": "\u0302",
    "˜": "\u0303",
    "¸": "\u0327",
    "ˇ": "\u030c",
    "˘": "\u0306",
    "˙": "\u0307",
    "˚": "\u030a",
    "˝": "\u030b",
    "¯": "\u0304",
}
# Computer Modern's circumflex and tilde accents come out as "^" and "~": only between
# letters ("J´er^ome") are they accents.
_ACCENTED = re.compile(
    f"([{''.join(_SPACING_ACCENTS)}]) ?([A-Za-zıȷ])|(?<=[^\\W\\d_])([\\^~])([aeiouAEIOUnN])"
)
_CID = re.compile(r"\(cid:\d+\)")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?\d{1,4}(?:\s*(?:/|of)\s*\d{1,4})?$|^[ivxlc]{1,6}$", re.I)
_LETTERS = re.compile(r"[^\W\d_]")
# Words that end at a hyphen in compounds far more often than TeX breaks a word there.
_COMPOUND_HEADS = {"self-", "cross-", "semi-", "anti-", "non-"}
_URL_TAIL = re.compile(r"(?:https?:|www\.|doi\.org|\b10\.\d{4,9}/)\S*$")
# A line that is only the rest of a link cut after a bracket ("10.1016/0006-8993(93)" and
# "90762-c."): a digit, and pieces joined by hyphens or dots, as no word or year is.
_LINK_PIECE = re.compile(r"(?=\S*\d)[\w()/;]+(?:[\-.][\w()/;]+)+[.,]?")
# A link or DOI that ends the entry, followed by short pieces the font set apart: TeX's
# Computer Modern draws "_" as a rule, not a character ("10.4103/ijo.IJO 644 22").
_RULED_UNDERSCORES = re.compile(
    r"(?P<link>(?:https?://|\b10\.\d{4,9}/)\S*[\w/])(?P<pieces>(?:\s[\w.\-]{1,12}){1,4})\.?$"
)


def reference_list(lines: Sequence[TextLine]) -> list[PrintedReference]:
    """The entries of the document's reference list, in list order (empty if none)."""
    ordered = _without_repeated(_reading_order(lines))
    start = _heading(ordered)
    if start is None:
        start = _numbered_run(ordered)
        if start is None:
            return []
    else:
        start += 1
    body = _list_lines(ordered, start)
    if not body:
        return []
    return _segment(body, _document_words(ordered))


def normalise(text: str) -> str:
    """Ligatures undone, TeX's separate accents joined to their letters, unmapped glyphs gone."""
    text = _CID.sub("", text.translate(_LIGATURES)).replace("\u00a0", " ")
    if _ACCENTED.search(text):
        text = _ACCENTED.sub(_accented, text)
    return " ".join(text.split())


def _accented(match: re.Match[str]) -> str:
    accent, letter = match.group(1) or match.group(3), match.group(2) or match.group(4)
    mark = _SPACING_ACCENTS.get(accent) or {"^": "\u0302", "~": "\u0303"}[accent]
    return unicodedata.normalize("NFC", letter.replace("ı", "i").replace("ȷ", "j") + mark)


# --- reading order -------------------------------------------------------------


def _reading_order(lines: Iterable[TextLine]) -> list[_Line]:
    pages: dict[int, list[TextLine]] = {}
    for line in lines:
        pages.setdefault(line.page, []).append(line)
    gutters = {number: _gutter(page) for number, page in pages.items()}
    common = Counter(round(x) for x in gutters.values() if x is not None).most_common(1)
    ordered: list[_Line] = []
    for number in sorted(pages):
        gutter = gutters[number]
        if gutter is None and common and _fits(pages[number], common[0][0]):
            # The last page of a list may fill only part of a column: the other pages say
            # where the columns are.
            gutter = common[0][0]
        ordered += _page_order(pages[number], gutter)
    return ordered


def _fits(lines: list[TextLine], gutter: float) -> bool:
    """The page's lines keep to the two columns either side of `gutter`."""
    crossing = sum(1 for line in lines if line.x0 < gutter < line.x1)
    return crossing <= 0.1 * len(lines) and any(line.x0 >= gutter for line in lines)


def _gutter(lines: list[TextLine]) -> float | None:
    """The x of the gap between two columns, or None for a one-column page.

    It is the x in the page's middle third that the fewest lines cross, when few
    do and both sides hold a good share of the text.
    """
    width = lines[0].width
    low, high = int(width * 0.3), int(width * 0.7)
    if high <= low:
        return None
    # How many lines cross each whole x, from a difference array: linear in the lines.
    change = [0] * (high - low + 2)
    for line in lines:
        first, last = max(low, math.floor(line.x0) + 1), min(high, math.ceil(line.x1) - 1)
        if first <= last:
            change[first - low] += 1
            change[last - low + 1] -= 1
    crossing, best_x, running = len(lines) + 1, float(low), 0
    for offset in range(high - low):
        running += change[offset]
        if running < crossing:
            crossing, best_x = running, float(low + offset)
    x = best_x
    # The middle of the empty stretch around x.
    right_edge = min((line.x0 for line in lines if line.x0 >= x), default=x)
    left_edge = max((line.x1 for line in lines if line.x1 <= x), default=x)
    x = (left_edge + right_edge) / 2 if left_edge <= right_edge else x
    left = sum(len(line.text) for line in lines if line.x1 <= x)
    right = sum(len(line.text) for line in lines if line.x0 >= x)
    total = sum(len(line.text) for line in lines)
    if crossing > 0.25 * len(lines) or min(left, right) < 0.15 * total or min(left, right) < 200:
        return None
    return x


def _merged(lines: list[TextLine], gutter: float | None) -> list[TextLine]:
    """Pieces of one printed line that the layout analysis cut apart, joined again
    (never across the gap between two columns).

    Pieces of one line may sit a fraction of a point apart (an italic venue after the
    title's last words, "the 3rd ACM" after a wide space): they are one row, read left
    to right, and share its baseline so that sorting by height keeps that order."""
    rows: list[list[TextLine]] = []
    for line in sorted(lines, key=lambda line: -line.y):
        if rows and rows[-1][0].y - line.y < 0.35 * line.size:
            rows[-1].append(line)
        else:
            rows.append([line])
    pieces = [
        replace(piece, y=row[0].y) for row in rows for piece in sorted(row, key=lambda p: p.x0)
    ]
    merged: list[TextLine] = []
    for piece in pieces:
        for index in range(len(merged) - 1, max(-1, len(merged) - 6), -1):
            other = merged[index]
            gap = piece.x0 - other.x1
            split = gutter is not None and other.x1 <= gutter <= piece.x0
            if (
                not split
                and abs(other.y - piece.y) < 0.35 * piece.size
                and -1.0 < gap < 1.2 * piece.size
            ):
                merged[index] = TextLine(
                    other.page,
                    other.x0,
                    piece.x1,
                    other.y,
                    other.size,
                    f"{other.text} {piece.text}",
                    other.width,
                    other.height,
                )
                break
        else:
            merged.append(piece)
    return merged


def _page_order(pieces: list[TextLine], middle: float | None) -> list[_Line]:
    """Columns left to right, each top to bottom; full-width lines above and below them."""
    if not pieces:
        return []
    lines = _without_running_heads(_merged(pieces, middle))
    if middle is None:
        return [_as_line(line, 0) for line in sorted(lines, key=lambda line: -line.y)]
    # Bands: runs of full-width lines, and two-column stretches that no gap common to
    # both columns interrupts (a list set below the text in both columns starts a band).
    bands: list[list[TextLine]] = []
    bottom = 0.0
    for line in sorted(lines, key=lambda line: -line.y):
        full = line.x0 < middle < line.x1
        if (
            not bands
            or full != (bands[-1][0].x0 < middle < bands[-1][0].x1)
            or bottom - (line.y + line.size) > 1.8 * line.size
        ):
            bands.append([])
            bottom = line.y
        bands[-1].append(line)
        bottom = min(bottom, line.y)
    ordered: list[_Line] = []
    for number, band in enumerate(bands):
        for side in (0, 1):
            ordered += [
                _as_line(line, number * 2 + side)
                for line in band
                if (line.x0 >= middle) == bool(side)
            ]
    return ordered


def _as_line(line: TextLine, column: int) -> _Line:
    return _Line(line.page, column, line.x0, line.x1, line.y, line.size, normalise(line.text))


def _without_running_heads(lines: list[TextLine]) -> list[TextLine]:
    """The page without its page number and running head or foot: the top and bottom
    lines, set apart by a gap, of which one is a number or set in another size than
    the text."""
    if len(lines) < 3:
        return lines
    sizes: Counter[float] = Counter()
    for line in lines:
        sizes[round(line.size, 1)] += len(line.text)
    body = sizes.most_common(1)[0][0]
    dropped: list[TextLine] = []
    for sign in (1, -1):
        edge = max(sign * line.y for line in lines)
        group = [line for line in lines if abs(sign * line.y - edge) < 1.5]
        rest = [sign * line.y for line in lines if abs(sign * line.y - edge) >= 1.5]
        if not rest:
            continue
        size = max(line.size for line in group)
        apart = edge - max(rest) > 1.6 * size
        if apart and any(
            _PAGE_NUMBER.match(normalise(line.text)) or abs(line.size - body) > 0.4
            for line in group
        ):
            dropped += group
    return [line for line in lines if all(line is not other for other in dropped)]


def _without_repeated(lines: list[_Line]) -> list[_Line]:
    """Drop running heads and feet set in the text's own size: a page's top or bottom
    line, set apart from the text by a gap, whose words (digits aside) are the top or
    bottom line of a third of the pages (at least two)."""
    by_page: dict[int, list[_Line]] = {}
    for line in lines:
        by_page.setdefault(line.page, []).append(line)
    edges: set[int] = set()
    for page in by_page.values():
        ys = sorted({round(line.y, 1) for line in page}, reverse=True)
        if len(ys) < 3:
            continue
        for edge, neighbour in ((ys[0], ys[1]), (ys[-1], ys[-2])):
            group = [line for line in page if abs(line.y - edge) < 0.2]
            if abs(edge - neighbour) > 1.5 * max(line.size for line in group):
                edges |= {id(line) for line in group}

    def shape(line: _Line) -> str:
        return re.sub(r"\d+", "0", line.text.casefold())

    pages_of: dict[str, set[int]] = {}
    for line in lines:
        if id(line) in edges and len(_LETTERS.findall(line.text)) >= 3:
            pages_of.setdefault(shape(line), set()).add(line.page)
    enough = max(2, len(by_page) // 3)
    return [
        line
        for line in lines
        if not (id(line) in edges and len(pages_of.get(shape(line), ())) >= enough)
    ]


# --- where the list is -------------------------------------------------------


def _heading(lines: list[_Line]) -> int | None:
    """The index of the last line that is the list's heading alone."""
    found = None
    for index, line in enumerate(lines):
        if len(line.text) > 40:
            continue
        if LIST_HEADING.match(" ".join(line.text.split())) and index + 1 < len(lines):
            found = index
    return found


def _numbered_run(lines: list[_Line]) -> int | None:
    """Without a heading: where the longest run of entries numbered 1, 2, 3, … starts."""
    best: tuple[int, int] | None = None
    for index, line in enumerate(lines):
        label = _label(line.text)
        if label is None or label[1] != 1:
            continue
        run, last = 1, index
        for position in range(index + 1, min(len(lines), index + 20_000)):
            if position - last > 40:
                break  # entries are a few lines long: a later "2" is another list's
            found = _label(lines[position].text)
            if found and found[0] is label[0] and found[1] == run + 1:
                run, last = run + 1, position
        # A citation "[1]" opening a line of text may start a short run; the list starts later.
        if run >= 3 and (best is None or run >= best[1]):
            best = (index, run)
    return best[0] if best else None


def _label(text: str) -> tuple[re.Pattern[str], int | None, str] | None:
    """(the label's pattern, its number or None, the label as printed) of a line's start."""
    for pattern in _LABELS:
        match = pattern.match(text)
        if match:
            value = match.group("label")
            number = int(value) if value.isdigit() else None
            return pattern, number, match.group(0).strip()
    return None


def _list_lines(lines: list[_Line], start: int) -> list[_Line]:
    """The lines of the list: from `start` to the next section or the end."""
    sample = lines[start : start + 20]
    if not sample:
        return []
    size = statistics.median(line.size for line in sample)
    body: list[_Line] = []
    for line in lines[start:]:
        short = len(line.text) < 60
        if short and LIST_END.match(line.text) and (line.size > size + 0.5 or _titled(line.text)):
            break
        if short and line.size > size + 1.5 and not _label(line.text):
            break
        if abs(line.size - size) > 2.5:
            continue  # footnote marks, figure text: not the list
        body.append(line)
    _column_edges(body)
    return body


def _titled(text: str) -> bool:
    """A heading's words start with capitals ("Appendix A", "Supplementary Material")."""
    words = [word for word in re.findall(r"[^\W\d_]+", text) if len(word) > 3]
    return bool(words) and all(word[0].isupper() for word in words) and len(words) <= 6


def _column_edges(lines: list[_Line]) -> None:
    """Each line's column edges: the leftmost start and rightmost end in its column."""
    edges: dict[tuple[int, int], tuple[float, float]] = {}
    for line in lines:
        left, right = edges.get((line.page, line.column), (line.x0, line.x1))
        edges[(line.page, line.column)] = (min(left, line.x0), max(right, line.x1))
    for line in lines:
        line.left, line.right = edges[(line.page, line.column)]


# --- cutting it into entries -------------------------------------------------


@dataclass(slots=True)
class _Entry:
    label: str | None
    page: int
    lines: list[_Line] = field(default_factory=list)


def _segment(lines: list[_Line], words: set[str]) -> list[PrintedReference]:
    first = _label(lines[0].text)
    entries = _by_labels(lines, first) if first else _by_layout(lines)
    out = []
    for entry in entries:
        text = _joined(entry.lines, words)
        if entry.label:
            text = text[len(entry.label) :].strip() if text.startswith(entry.label) else text
        if len(text) >= 10:
            out.append(PrintedReference(text=text, label=entry.label, page=entry.page))
    return out


def _by_labels(lines: list[_Line], first: tuple[re.Pattern[str], int | None, str]) -> list[_Entry]:
    """Entries start at a label of the list's kind: numbers in sequence, other labels
    where the first label stood (a continuation line is indented past it)."""
    pattern, number, _ = first
    label_indent = lines[0].x0 - lines[0].left
    entries: list[_Entry] = []
    expected = number
    pitch = _pitch(lines)
    for index, line in enumerate(lines):
        found = _label(line.text)
        starts = False
        if found and found[0] is pattern:
            indent = line.x0 - line.left
            if expected is not None and found[1] is not None:
                starts = expected <= found[1] <= expected + 2 and indent <= label_indent + 12
            else:
                starts = indent <= label_indent + 2
        if starts and found:
            entries.append(_Entry(found[2], line.page, [line]))
            expected = found[1] + 1 if found[1] is not None else None
        elif entries and not _list_over(lines, index, entries[-1], pitch):
            entries[-1].lines.append(line)
        elif entries:
            break
    return entries


def _list_over(lines: list[_Line], index: int, entry: _Entry, pitch: float) -> bool:
    """After the last label, text that is no longer part of an entry (a gap, a long run)."""
    line, previous = lines[index], lines[index - 1]
    same_column = (line.page, line.column) == (previous.page, previous.column)
    if same_column and previous.y - line.y > 2.5 * pitch:
        return True
    return len(entry.lines) >= 25


def _by_layout(lines: list[_Line]) -> list[_Entry]:
    """Author-year lists: an entry starts at the column's edge when the rest are
    indented (a hanging indent), else after a gap wider than the line spacing."""
    hanging = sum(1 for line in lines if line.x0 - line.left > 3) >= len(lines) / 4
    pitch = _pitch(lines)
    entries: list[_Entry] = []
    for index, line in enumerate(lines):
        previous = lines[index - 1] if index else None
        if previous is None:
            starts = True
        elif hanging:
            starts = line.x0 - line.left <= 1.5
        elif (line.page, line.column) == (previous.page, previous.column):
            starts = previous.y - line.y > 1.25 * pitch
        else:
            starts = previous.x1 < previous.right - 2 * previous.size and previous.text.endswith(
                "."
            )
        if starts:
            entries.append(_Entry(None, line.page, [line]))
        else:
            entries[-1].lines.append(line)
    return entries


def _pitch(lines: list[_Line]) -> float:
    """The usual distance between the baselines of two lines of one entry."""
    steps = [
        previous.y - line.y
        for previous, line in zip(lines, lines[1:], strict=False)
        if (line.page, line.column) == (previous.page, previous.column) and previous.y > line.y
    ]
    return _mode(steps) if steps else lines[0].size * 1.2


def _mode(values: list[float]) -> float:
    counted = Counter(round(value, 0) for value in values)
    common = counted.most_common(1)[0][0]
    return min((value for value in values if round(value, 0) == common), default=common)


def _joined(lines: list[_Line], words: set[str]) -> str:
    """The entry's lines as one string: a word hyphenated at a line end is joined again
    (kept hyphenated when the document prints it so elsewhere), a URL cut at a line end too."""
    text = ""
    for line in lines:
        part = line.text
        if not text:
            text = part
            continue
        tail = text.rsplit(" ", 1)[-1]
        head = part.split(" ", 1)[0]
        if _URL_TAIL.search(tail) and (
            tail.endswith(("/", ".", "-", "_", ":"))
            or head[:1].islower()
            or (part == head and _LINK_PIECE.fullmatch(head))
        ):
            text += part
        elif re.search(r"\d[–-]$", tail) and head[:1].isdigit():
            text += part  # a page range cut after its dash
        elif re.search(r"[^\W\d_]-$", tail) and head[:1].isalpha():
            whole = (tail + head).strip(".,;:“”\"'()").casefold()
            joined = whole.replace("-", "", 1)
            stem = tail.strip("“\"'(")
            keep = (
                head[:1].isupper()
                or (whole in words and joined not in words)
                or stem.casefold() in _COMPOUND_HEADS
                # TeX breaks a word no nearer its start than two letters, and a word
                # holding a hyphen only there: "k-polytope", "goodness-of-fit".
                or len(stem) < 3
                or "-" in stem[:-1] + head.rstrip(".,;:”\"')")
            )
            text = text + part if keep else text[:-1] + part
        else:
            text += " " + part
    return _underscores_restored(text)


def _underscores_restored(text: str) -> str:
    ruled = _RULED_UNDERSCORES.search(text)
    if ruled is None or not any(char.isdigit() for char in ruled.group("pieces")):
        return text
    return text[: ruled.start()] + "_".join([ruled.group("link"), *ruled.group("pieces").split()])


def _document_words(lines: list[_Line]) -> set[str]:
    """Every word of the document as printed (hyphenated compounds kept whole)."""
    found: set[str] = set()
    for line in lines:
        for word in line.text.split():
            found.add(word.strip(".,;:()[]“”\"'").casefold())
    return found
