"""Year, volume and pages: where the cited work sits in its venue."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from refaudit.match.text import normalize_text

YearKind = Literal["exact", "adjacent", "different", "unknown"]


@dataclass(frozen=True)
class YearComparison:
    """`delta` is cited minus found."""

    kind: YearKind
    delta: int | None = None


def compare_years(
    cited: int | None, found: int | None, *, other_years: Sequence[int] = ()
) -> YearComparison:
    """Years one apart (online-first vs print, preprint vs published) are "adjacent"."""
    if cited is None or found is None:
        return YearComparison("unknown")
    delta = cited - found
    if delta == 0:
        return YearComparison("exact", 0)
    if abs(delta) == 1 or cited in other_years:
        return YearComparison("adjacent", delta)
    return YearComparison("different", delta)


_PAGE_PREFIX = re.compile(r"^\s*(?:pp?\.?|pages?|art(?:icle)?\.?\s*(?:no\.?)?)\s*", re.IGNORECASE)
_FIRST_PAGE = re.compile(r"^[A-Za-z]{0,3}\d+[A-Za-z]?|^[ivxlcdm]+$", re.IGNORECASE)
_PAGE_RANGE = re.compile(r"\s*(?:-+|\u2013|\u2014|\u2012|\u2212|\s+to\s+)\s*")


def _first_page(pages: str | None) -> str | None:
    if not pages:
        return None
    start = _PAGE_RANGE.split(_PAGE_PREFIX.sub("", pages.strip()), maxsplit=1)[0].strip()
    match = _FIRST_PAGE.match(start)
    return match.group(0).lower().lstrip("0") or "0" if match else None


def compare_pages(cited: str | None, found: str | None) -> bool | None:
    """First pages agree ("123-130" = "123--130" = "123–30"); None when unknown."""
    cited_first, found_first = _first_page(cited), _first_page(found)
    if cited_first is None or found_first is None:
        return None
    return cited_first == found_first


def compare_volume(cited: str | None, found: str | None) -> bool | None:
    """Volumes agree on their leading number ("33" = "Vol. 33" = "33 (Suppl 1)")."""
    cited_number = re.search(r"\d+", cited or "")
    found_number = re.search(r"\d+", found or "")
    if not cited_number or not found_number:
        if cited and found:
            return normalize_text(cited) == normalize_text(found)
        return None
    return int(cited_number.group(0)) == int(found_number.group(0))
