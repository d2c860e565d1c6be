"""Real-world .bib files from ../shared: never crash, and account for every entry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from refaudit.parsing import parse_file
from tests.conftest import shared_path

_ENTRY = re.compile(r"^[ \t]*@[ \t]*(\w+)[ \t]*[{(]", re.MULTILINE)
_NOT_ENTRIES = {"string", "comment", "preamble"}


def _sample_files() -> list[Path]:
    return sorted(shared_path("upstream-samples", "bib").glob("*.bib"))


@pytest.mark.shared
def test_every_entry_of_every_sample_is_a_record_or_a_reported_failure() -> None:
    files = _sample_files()
    assert files
    for path in files:
        bibliography = parse_file(path)
        text = path.read_text(encoding="utf-8", errors="replace")
        accounted = {r.line for r in bibliography.references}
        accounted |= {p.line for p in bibliography.problems if p.code == "parse-error"}
        for match in _ENTRY.finditer(text):
            if match.group(1).lower() in _NOT_ENTRIES:
                continue
            line = text.count("\n", 0, match.start()) + 1
            assert line in accounted, f"{path.name}:{line} neither parsed nor reported"
        for reference in bibliography.references:
            assert reference.key and reference.file == str(path)
