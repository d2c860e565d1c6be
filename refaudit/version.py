"""Which distribution refaudit is installed as, and its version.

The name `refaudit` on PyPI belongs to an unrelated project, so this one is
published as `refaudit-cli`; the command and the import name stay `refaudit`.
"""

from __future__ import annotations

DISTRIBUTION = "refaudit-cli"


def installed_version() -> str:
    """The installed version, or "0+unknown" when the source tree is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"
