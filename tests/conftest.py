"""Shared test set-up: every test runs offline, with its own cache and data folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point caches at tmp_path and drop the user's own refaudit settings and keys."""
    from refaudit.sources import registry

    secrets = {v for e in registry.SOURCES for c in e.credentials for v in c.env}
    for name in list(os.environ):
        if name.startswith("REFAUDIT_") or name in secrets:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REFAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REFAUDIT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REFAUDIT_USER_CONFIG", str(tmp_path / "user-config.toml"))
    monkeypatch.chdir(tmp_path)


def shared_path(*parts: str) -> Path:
    """A path inside ../shared; the calling test is skipped when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not available")
    return path
