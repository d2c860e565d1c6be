"""Docs stay honest: every finding code the engine emits is known and documented."""

from __future__ import annotations

import re
from pathlib import Path

from refaudit.policy import FINDING_CODES

ROOT = Path(__file__).resolve().parents[1]
EMITTERS = ["refaudit/verify.py", "refaudit/retractions/screen.py"]


def _emitted_codes() -> set[str]:
    codes: set[str] = set()
    for name in EMITTERS:
        text = (ROOT / name).read_text(encoding="utf-8")
        codes |= set(re.findall(r'Finding\(\s*"([a-z-]+)"', text))
    return codes


def test_every_emitted_finding_code_is_a_known_policy_code() -> None:
    emitted = _emitted_codes()
    assert len(emitted) > 15
    assert emitted <= FINDING_CODES


def test_every_finding_code_is_documented() -> None:
    documented = (ROOT / "docs" / "verdicts.md").read_text(encoding="utf-8") + (
        ROOT / "docs" / "retractions.md"
    ).read_text(encoding="utf-8")
    missing = [code for code in sorted(FINDING_CODES) if f"`{code}`" not in documented]
    assert not missing, f"undocumented finding codes: {missing}"
