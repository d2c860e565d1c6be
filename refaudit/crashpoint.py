"""Named points where the crash-safety tests kill the process, and what a kill leaves behind.

`REFAUDIT_CRASH_AT=<point>` (or `<point>:<n>` for its n-th pass) makes the process
SIGKILL itself when it reaches `crash_point(<point>)`: no cleanup runs, exactly as
with `kill -9` or a power cut, and the tests then check that the previous mirror,
snapshot, bibliography and cache are intact and that the next run says what was
interrupted. Unset, which is always the case outside those tests, a point costs one
environment look-up.

A file written on its way to replacing another carries the writer's process id in
its name (`pid_tag`), so a later run can tell one a killed process left
(`left_behind`) from one a running process is still writing.
"""

from __future__ import annotations

import os
import re
import signal
from collections import Counter
from pathlib import Path

#: The environment variable naming the point to die at.
CRASH_AT = "REFAUDIT_CRASH_AT"

_passes: Counter[str] = Counter()


def crash_point(name: str) -> None:
    """Die here, at once and without cleanup, when `REFAUDIT_CRASH_AT` names this point."""
    wanted = os.environ.get(CRASH_AT)
    if not wanted:
        return
    point, _, nth = wanted.partition(":")
    if point != name:
        return
    _passes[name] += 1
    if _passes[name] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def pid_tag() -> str:
    """The marker a temporary file's name carries: `pid<process id>`."""
    return f"pid{os.getpid()}"


def left_behind(folder: Path, prefix: str) -> list[Path]:
    """Files in `folder` named `<prefix>pid<N>…` whose process `N` is no longer running."""
    found = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    for entry in entries:
        tag = re.match(r"pid(\d+)", entry.name.removeprefix(prefix))
        if entry.name.startswith(prefix) and tag and not _running(int(tag.group(1))):
            found.append(entry)
    return sorted(found)


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
