"""Fail when a built wheel lacks a file of the package: a module, venues.json, the schema.

    python .ci/wheel_contents.py dist/refaudit_cli-*.whl

Every file git tracks under refaudit/ must be in the wheel, and the wheel must hold
nothing of refaudit/ that git does not track, so a build-configuration mistake cannot
ship a package that imports but fails on its first venue comparison or JSON report.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(wheel: Path) -> int:
    tracked = set(
        subprocess.run(
            ["git", "ls-files", "refaudit"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    )
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("refaudit/")}
    missing, extra = sorted(tracked - shipped), sorted(shipped - tracked)
    for name in missing:
        print(f"{wheel.name}: missing {name}", file=sys.stderr)
    for name in extra:
        print(f"{wheel.name}: not in the repository: {name}", file=sys.stderr)
    if not tracked:
        print("git lists no file under refaudit/", file=sys.stderr)
        return 1
    if missing or extra:
        return 1
    print(f"{wheel.name}: all {len(tracked)} files of refaudit/ present")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
