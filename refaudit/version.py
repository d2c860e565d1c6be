"""Which distribution refaudit is installed as, and its version: the one place both are written.

The name `refaudit` on PyPI belongs to an unrelated project, so this one is
published as `refaudit-cli`; the command and the import name stay `refaudit`.
Hatchling reads `__version__` from this file when it builds the sdist and the wheel
(`[tool.hatch.version]` in pyproject.toml), so the package's metadata, the reports'
`tool.version` and `refaudit --version` cannot disagree.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

DISTRIBUTION = "refaudit-cli"
__version__ = "0.1.0"


def installed_version() -> str:
    """The version reports, the User-Agent and `--version` name."""
    return __version__


def checkout_commit(root: Path | None = None) -> str | None:
    """The short commit of the git checkout refaudit runs from; None when installed from a wheel.

    A bug report from a checkout is only useful with the commit: between releases
    every checkout says the same version.
    """
    root = root if root is not None else Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def version_line() -> str:
    """What `refaudit --version` prints: `refaudit 0.1.0`, plus `(git abc1234)` in a checkout."""
    commit = checkout_commit()
    return f"refaudit {__version__}" + (f" (git {commit})" if commit else "")
