"""A throwaway PostgreSQL cluster in a temporary folder, for tests and benches.

Debian keeps `initdb` and `pg_ctl` in /usr/lib/postgresql/<version>/bin, not on
PATH. PostgreSQL refuses to run as root, so as root the cluster runs as the
`postgres` system user (`runuser -u postgres --`). It listens only on a Unix
socket inside its folder.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


def binaries() -> Path | None:
    """The newest installed PostgreSQL bin folder with initdb, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _version(path: str) -> int:
    part = Path(path).parts[-3]
    return int(part) if part.isdigit() else 0


def why_unavailable() -> str | None:
    """Why a cluster cannot be started here (None: it can)."""
    if binaries() is None:
        return "PostgreSQL binaries (initdb, pg_ctl) not installed"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no `postgres` user to run PostgreSQL as"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return 'psycopg not installed (pip install "refaudit-cli[postgres]")'
    return None


@contextlib.contextmanager
def throwaway_cluster(*, settings: tuple[str, ...] = ()) -> Iterator[str]:
    """Start a cluster; yield its connection URL; stop and delete it afterwards."""
    bin_dir = binaries()
    assert bin_dir is not None
    folder = Path(tempfile.mkdtemp(prefix="refaudit-pg-"))
    data = folder / "data"
    as_user: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    options = " ".join(
        ["-c listen_addresses=''", f"-c unix_socket_directories={folder}", "-c fsync=off"]
        + [f"-c {setting}" for setting in settings]
    )
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "check": True}
    try:
        subprocess.run(
            [*as_user, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
            **quiet,  # type: ignore[arg-type]
        )
        subprocess.run(
            [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w",
             "-l", str(folder / "log"), "start"],
            **quiet,  # type: ignore[arg-type]
        )  # fmt: skip
        yield f"postgresql://postgres@/postgres?host={folder}"
    finally:
        subprocess.run(
            [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        shutil.rmtree(folder, ignore_errors=True)
