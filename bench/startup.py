"""Start-up cost: `refaudit --help` under 0.4 s, and how soon `check` sends its first request.

Heavy modules (httpx, mcp, rapidfuzz, bibtexparser) are imported inside the
commands that need them; this script measures the wall time of a few help
screens, run through the installed `refaudit` console script next to this
interpreter as a user runs it, and lists any heavy module that `import
refaudit.cli` pulls in. Without that script (package not installed into this
environment) it says so and times `python -m refaudit` instead, which goes
through runpy: not the command the target is about.

`--first-request FILE …` times instead, on a cold cache against ../shared/scholarsim, how
long after `refaudit check FILE` starts the simulator logs its first request (then stops the
run): a long bibliography should be sent from its first entries, while the rest is parsed.
`--generated N` adds a bibliography of N entries, scale-5000's citations under new keys.

    python bench/startup.py [--runs 10]
    python bench/startup.py --first-request ../shared/bench/public/scale-5000.bib --generated 100000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
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


def first_request(command: list[str], bib: Path, url: str, log: Path) -> tuple[float, float]:
    """Seconds from starting `check bib` (cold cache) to the simulator's first logged request,
    and the CPU seconds `check` had used when it was stopped, just after (on a busy machine
    the wall time waits for a core; the CPU time does not)."""
    from simulator import simulator_env

    with tempfile.TemporaryDirectory(prefix="refaudit-first-") as folder:
        env = {**os.environ, **simulator_env(url), "REFAUDIT_CACHE_DIR": folder}
        env |= {"REFAUDIT_DATA_DIR": folder, "REFAUDIT_MAILTO": "bench@refaudit.invalid"}
        logged = log.stat().st_size if log.exists() else 0
        started = time.time()
        child = subprocess.Popen(
            [*command, "check", str(bib), "-q", "--format", "json", "-o", f"{folder}/r.json"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        try:
            while child.poll() is None and (not log.exists() or log.stat().st_size == logged):
                time.sleep(0.01)
        finally:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
            usage = os.wait4(child.pid, 0)[2]
        time.sleep(0.5)  # requests still on their way when it stopped are logged late
        with log.open(encoding="utf-8") as lines:
            lines.seek(logged)
            sent = [float(json.loads(line)["t"]) for line in lines]
    # A request of an earlier run may still have been logged after `logged`.
    return min(t for t in sent if t >= started) - started, usage.ru_utime + usage.ru_stime


def first_requests(files: list[Path], generated: list[int], config: str, runs: int) -> None:
    """`first_request` for each file, `runs` times, against one simulator."""
    import compileall

    from hostile_inputs import real_bibliography
    from simulator import start_simulator

    import refaudit

    # Timed with its bytecode written, as an installed package has it.
    compileall.compile_dir(Path(refaudit.__file__).parent, quiet=1)
    command = launcher()
    with tempfile.TemporaryDirectory(prefix="refaudit-first-") as work:
        for entries in generated:
            files.append(Path(work) / f"generated-{entries}.bib")
            real_bibliography(files[-1], entries)
        log = Path(work) / "requests.jsonl"
        process, url = start_simulator(config, log)
        try:
            for bib in files:
                timed = [first_request(command, bib, url, log) for _ in range(runs)]
                walls, cpus = zip(*timed, strict=True)
                print(
                    f"{bib.name:28} first request after median {statistics.median(walls):.2f} s"
                    f" (min {min(walls):.2f}, max {max(walls):.2f}, {runs} runs);"
                    f" CPU by then median {statistics.median(cpus):.2f} s"
                )
        finally:
            process.terminate()
            process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--first-request", type=Path, nargs="*", help="bibliographies to time")
    parser.add_argument("--generated", type=int, nargs="*", default=[], help="entries to generate")
    parser.add_argument("--config", default="no-limits", help="scholarsim config (first request)")
    args = parser.parse_args()
    if args.first_request is not None or args.generated:
        first_requests(list(args.first_request or []), args.generated, args.config, args.runs)
        return
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
