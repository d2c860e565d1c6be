"""Hostile PDFs are read in a child process with bounded pages, memory and time, and
refused with one clear line naming the file: never a traceback, a hang or a swap storm.

The PDFs are made here, small on disk (tests/pdfbytes.py); the bounds are lowered so
each case ends in seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from refaudit.errors import InputError
from refaudit.parsing.pdftext import PdfLimits, read_lines
from tests import pdfbytes
from tests.adversarial.helpers import finishes_within

TIGHT = PdfLimits(pages=500, seconds=20, memory_bytes=512 << 20)


def _refused(path: Path) -> str:
    with finishes_within(60), pytest.raises(InputError) as caught:
        read_lines(path, TIGHT)
    assert str(caught.value).startswith(str(path))
    return str(caught.value)


def test_a_page_tree_of_100000_pages_is_refused_before_any_page_is_read(tmp_path: Path) -> None:
    path = tmp_path / "pages.pdf"
    path.write_bytes(pdfbytes.many_pages(100_000))
    assert "100000 pages, more than 500; not read" in _refused(path)


def test_a_deflate_bomb_is_refused_by_the_memory_bound(tmp_path: Path) -> None:
    path = tmp_path / "bomb.pdf"
    path.write_bytes(pdfbytes.deflate_bomb(700))
    assert path.stat().st_size < 2_000_000
    assert "more than 0.5 GB of memory; not read" in _refused(path)


def test_objects_nested_thousands_deep_end_in_a_refusal(tmp_path: Path) -> None:
    path = tmp_path / "nested.pdf"
    path.write_bytes(pdfbytes.deeply_nested(50_000))
    _refused(path)


def test_a_broken_cross_reference_table_is_read_around(tmp_path: Path) -> None:
    path = tmp_path / "xref.pdf"
    path.write_bytes(pdfbytes.broken_xref(["References", "[1] A. Author, 2020."]))
    with finishes_within(60):
        lines = read_lines(path, TIGHT)
    assert [line.text for line in lines] == ["References", "[1] A. Author, 2020."]


def test_a_reading_that_outlasts_its_budget_is_stopped(tmp_path: Path) -> None:
    path = tmp_path / "slow.pdf"
    # Large enough that no machine reads it inside the budget (200 MB was read in 1 s).
    path.write_bytes(pdfbytes.deflate_bomb(600))
    with finishes_within(30), pytest.raises(InputError) as caught:
        read_lines(path, PdfLimits(seconds=1))
    assert "took longer than 1 s" in str(caught.value) or "s of CPU" in str(caught.value)


def test_a_file_larger_than_the_cap_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from refaudit.parsing import pdftext

    monkeypatch.setattr(pdftext, "MAX_PDF_BYTES", 1 << 20)
    path = tmp_path / "big.pdf"
    path.write_bytes(pdfbytes.text_page(["References"]) + b"%" + b"x" * (2 << 20))
    assert "larger than 1 MB; not read" in _refused(path)
