"""Where references sit in an editor's document (`refaudit.integrations.locate`): the
positions a language client counts in (UTF-16 columns), entry ranges, cited keys."""

from __future__ import annotations

from pathlib import Path

from refaudit.integrations.locate import (
    Position,
    citations,
    entry_spans,
    key_at,
    offset,
    position,
)

BIB = """@article{gödel1931,
  author = {G\\"odel, Kurt and 𝔊ödel, K.},
  title  = {Über formal unentscheidbare Sätze},
  year   = {1931},
}

@book{knuth1984,
  title = {The {\\TeX}book},
  year  = {1984}
}
"""
BBL = r"""\begin{thebibliography}{2}
\bibitem[Knuth(1984)]{knuth1984}
D.~E. Knuth. \newblock The \TeX book. 1984.

\bibitem{lamport1994}
L.~Lamport. LaTeX. 1994.
\end{thebibliography}
"""


def test_columns_are_utf16_code_units_as_clients_count_them() -> None:
    line = BIB.split("\n")[1]
    cursor = BIB.index("ödel, K.")
    # 𝔊 is outside the Basic Multilingual Plane: two UTF-16 units, one Python character.
    assert position(BIB, cursor) == Position(1, line.index("ödel, K.") + 1)
    assert offset(BIB, position(BIB, cursor)) == cursor


def test_bib_entries_span_from_the_at_sign_to_the_closing_brace() -> None:
    spans = entry_spans(BIB, Path("refs.bib"))
    assert list(spans) == ["gödel1931", "knuth1984"]
    assert (spans["gödel1931"].start, spans["gödel1931"].end) == (Position(0, 0), Position(4, 1))
    assert (spans["knuth1984"].start.line, spans["knuth1984"].end.line) == (6, 9)
    assert key_at(BIB, Path("refs.bib"), Position(8, 3)) == "knuth1984"
    assert key_at(BIB, Path("refs.bib"), Position(5, 0)) is None  # between entries


def test_bbl_items_span_to_the_next_item() -> None:
    spans = entry_spans(BBL, Path("paper.bbl"))
    assert list(spans) == ["knuth1984", "lamport1994"]
    assert (spans["knuth1984"].start.line, spans["knuth1984"].end.line) == (1, 2)
    assert (spans["lamport1994"].start.line, spans["lamport1994"].end.line) == (4, 5)
    assert key_at(BBL, Path("paper.bbl"), Position(5, 4)) == "lamport1994"


def test_biber_entries_span_to_their_endentry_and_a_cut_one_to_the_next() -> None:
    biber = (Path(__file__).parent / "fixtures" / "tex" / "arxiv-source" / "paper.bbl").read_text()
    spans = entry_spans(biber, Path("paper.bbl"))
    assert list(spans) == ["he2016", "lecun2015", "vaswani2017", "waals1873", "who2020"]
    assert (spans["he2016"].start, spans["he2016"].end) == (Position(21, 4), Position(62, 13))
    # Without its \endentry, an entry runs to its last line before the next one.
    cut = biber.replace("\\endentry", "", 1)
    assert entry_spans(cut, Path("paper.bbl"))["he2016"].end == Position(61, 14)  # its \endverb
    assert entry_spans("\\refsection{0}\n\\endrefsection\n", Path("empty.bbl")) == {}


def test_the_key_under_the_cursor_in_a_citation() -> None:
    tex = "See \\citep[see][p.~4]{knuth1984, lamport1994} and \\textcite*{gödel1931}.\n"
    path = Path("paper.tex")

    def at(text: str, shift: int = 1) -> str | None:
        return key_at(tex, path, position(tex, tex.index(text) + shift))

    assert at("knuth1984") == "knuth1984"
    assert at(" lamport1994", 3) == "lamport1994"
    assert at("gödel1931", 4) == "gödel1931"
    assert at("See") is None and at("[see]") is None  # outside the keys' braces


def test_citations_are_found_on_their_keys_and_not_in_comments() -> None:
    tex = (
        "Growth of 5\\% \\citep[see][p.~3]{lecun2015, he2016}.\n"
        "% \\cite{draft2019} is gone\n"
        "Again \\textcite{he2016}.\n"
    )
    found = citations(tex)
    assert set(found) == {"lecun2015", "he2016"}
    first = tex.index("lecun2015")
    lecun = found["lecun2015"][0]
    assert (lecun.start, lecun.end) == (Position(0, first), Position(0, first + 9))
    he = [(span.start.line, span.start.character) for span in found["he2016"]]
    assert he == [(0, tex.index("he2016")), (2, tex.split("\n")[2].index("he2016"))]
