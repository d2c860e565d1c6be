"""Start-up cost: `refaudit --help` must stay under 0.4 s wall on a 2-core machine.

Heavy modules (httpx, mcp, rapidfuzz, bibtexparser) are imported inside the
commands that need them; this script measures the wall time of a few help
screens, run through the installed `refaudit` console script next to this
interpreter as a user runs it, and lists any heavy module that `import
refaudit.cli` pulls in. Without that script (package not installed into this
environment) it says so and times `python -m refaudit` instead, which goes
through runpy: not the command the target is about.

    python bench/startup.py [--runs 10]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_S = 0.4
HEAVY = ("httpx", "mcp", "rapidfuzz", "bibtexparser", "pylatexenc", "pydantic", "sqlite3")
COMMANDS = (["--help"], ["check", "--help"], ["serve", "--help"], ["retractions", "--help"])
# The installed console script, as a user runs it (not `python -m`, which adds runpy);
# `which` also finds `refaudit.exe` in a Windows Scripts folder.
SCRIPT = shutil.which("refaudit", path=str(Path(sys.executable).parent))


def launcher() -> list[str]:
    """The console script's path, or `python -m refaudit` (with a warning) when it is missing."""
    if SCRIPT:
        return [SCRIPT]
    print(
        f"warning: no `refaudit` console script next to {sys.executable} "
        "(install the package into this environment: pip install -e .); "
        "timing `python -m refaudit` instead, which is not what users run",
        file=sys.stderr,
    )
    return [sys.executable, "-m", "refaudit"]


def wall_time(command: list[str], args: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([*command, *args], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return times


def heavy_imports() -> list[str]:
    probe = f"import sys, refaudit.cli; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    command = launcher()
    name = " ".join(command)
    print(f"timing {name}")
    medians = {}
    for sub in COMMANDS:
        times = wall_time(command, sub, args.runs)
        medians[" ".join(sub)] = statistics.median(times)
        print(f"refaudit {' '.join(sub):24} median {medians[' '.join(sub)]:.3f} s", end="")
        print(f"  max {max(times):.3f} s")
    loaded = heavy_imports()
    print(f"heavy modules loaded by `import refaudit.cli`: {', '.join(loaded) or 'none'}")
    top = medians["--help"]
    verdict = "OK" if top < TARGET_S and not loaded else "OVER TARGET"
    print(f"{verdict}: `{name} --help` median {top:.3f} s (target {TARGET_S} s)")


if __name__ == "__main__":
    main()
