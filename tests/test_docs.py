"""Docs stay honest: the finding-code table is the registry's, and every emitted code is in it."""

from __future__ import annotations

import re
from pathlib import Path

from refaudit.findings import FINDING_CODES, INTEGRITY_CODES

ROOT = Path(__file__).resolve().parents[1]
EMITTERS = ["refaudit/verify.py", "refaudit/compare.py", "refaudit/policy.py"]


def _emitted_codes() -> set[str]:
    codes: set[str] = set()
    for name in EMITTERS:
        text = (ROOT / name).read_text(encoding="utf-8")
        codes |= set(re.findall(r'Finding\.of\(\s*"([a-z-]+)"', text))
        codes |= set(re.findall(r'"([a-z]+-[a-z-]+)" if via', text))
    return codes


def _verdicts_table() -> list[list[str]]:
    text = (ROOT / "docs" / "verdicts.md").read_text(encoding="utf-8")
    section = text.split("## Finding codes", 1)[1]
    lines = [line for line in section.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


def test_every_emitted_finding_code_is_registered() -> None:
    emitted = _emitted_codes()
    assert len(emitted) > 15
    assert emitted <= set(FINDING_CODES)


def test_the_verdicts_table_is_the_finding_code_registry() -> None:
    def yes_no(flag: bool) -> str:
        return "yes" if flag else "no"

    expected = [
        [
            f"`{e.code}`",
            e.severity,
            ", ".join(e.fields) or "–",
            yes_no(e.mismatch),
            yes_no(e.fixable),
            e.when,
        ]
        for e in FINDING_CODES.values()
        if e.severity is not None
    ]
    assert _verdicts_table() == expected


def test_every_integrity_code_is_documented() -> None:
    documented = (ROOT / "docs" / "retractions.md").read_text(encoding="utf-8")
    missing = [code for code in sorted(INTEGRITY_CODES) if f"`{code}`" not in documented]
    assert not missing, f"undocumented integrity codes: {missing}"
