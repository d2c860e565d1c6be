"""The package's public names resolve, and importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys

import refaudit


def test_every_public_name_resolves() -> None:
    for name in refaudit.__all__:
        assert getattr(refaudit, name) is not None


def test_importing_the_cli_loads_no_network_or_parsing_library() -> None:
    probe = (
        "import sys, refaudit.cli; "
        "print(','.join(m for m in ('httpx', 'mcp', 'rapidfuzz', 'bibtexparser') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_all_lists_exactly_the_lazy_exports() -> None:
    assert sorted(refaudit.__all__) == sorted(refaudit._EXPORTS)
