"""Start ../shared/scholarsim on the benchmark world for the bench scripts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared"
WORLD = SHARED / "bench" / "world.jsonl.gz"
#: The world plus the field-trap overlay (synthetic records the traps set cites).
TRAPS_WORLD = SHARED / "bench" / "world-traps.jsonl.gz"

#: scholarsim serves each API below its root at /<source name>, except the hosts here,
#: whose prefix keeps the real path after it (its README: "path prefix" mode).
_HOST_PREFIXES = {
    "api.semanticscholar.org": "/s2",
    "api.elsevier.com": "/elsevier",
    "api.labs.crossref.org": "/labs",
}


def simulator_env(url: str) -> dict[str, str]:
    """`REFAUDIT_<SOURCE>_URL` for every upstream, pointed at scholarsim at `url`."""
    from urllib.parse import urlsplit

    from refaudit.sources import registry

    root = url.rstrip("/")
    env = {}
    for entry in registry.UPSTREAMS:
        parts = urlsplit(entry.base_url)
        prefix = _HOST_PREFIXES.get(parts.hostname or "")
        path = prefix + parts.path.rstrip("/") if prefix else f"/{entry.name}"
        env[entry.url_env] = root + path
    return env


def start_simulator(
    config: str, log: Path | None = None, world: Path = WORLD
) -> tuple[subprocess.Popen[str], str]:
    """Run scholarsim on `world` (config: a name in scholarsim/configs or a path).

    Returns the process and its URL.
    """
    config_path = Path(config)
    if not config_path.is_file():
        config_path = SHARED / "scholarsim" / "configs" / f"{config}.json"
    command = [
        sys.executable,
        str(SHARED / "scholarsim" / "serve.py"),
        "--corpus",
        str(world),
        "--port",
        "0",
        "--config",
        str(config_path),
    ]
    if log is not None:
        command += ["--log", str(log)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise SystemExit(f"scholarsim did not start: {line!r}")
    return process, line.rsplit(" ", 1)[-1].strip()


def refaudit_settings(url: str, folder: str, config: str) -> object:
    """refaudit's settings pointed at the simulator, with its cache and data in `folder`."""
    os.environ.update(
        simulator_env(url),
        REFAUDIT_CACHE_DIR=folder,
        REFAUDIT_DATA_DIR=folder,
        REFAUDIT_MAILTO="bench@refaudit.invalid",
    )
    from refaudit.config import load_settings

    settings = load_settings()
    if config == "no-limits":
        # The simulator enforces nothing here; measure accuracy, not politeness.
        settings.rate_limits = {name: 500.0 for name in [*settings.sources, "doi"]}
    return settings


def audit_text(filename: str, text: str | bytes, config: str) -> list[Any]:
    """Audit one bibliography, given as text (or a document's bytes), through the real
    pipeline on a fresh simulator."""
    from refaudit.audit import audit_paths

    process, url = start_simulator(config, None)
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / filename
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(text, encoding="utf-8")
            settings = refaudit_settings(url, folder, config)
            report = asyncio.run(audit_paths([path], settings, all_entries=True))  # type: ignore[arg-type]
    finally:
        process.terminate()
        process.wait(timeout=10)
    return report.results
