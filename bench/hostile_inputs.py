"""Hostile inputs: how parse time and memory grow with the input, and a long fuzz run.

Each case is parsed at two sizes; a ratio near 2 for twice the input is linear, near 4
is quadratic. Bibliographies of 10k and 100k entries are audited by `refaudit check`
in a child process whose peak RSS is reported: synthetic entries offline (nothing
cached, so every reference is `unverified`), or with `--mirror` real citations
(scale-5000's, repeated) through an SQLite mirror of the benchmark world, so every
reference carries real evidence.

    python bench/hostile_inputs.py                          # scaling table + 10k/100k offline
    python bench/hostile_inputs.py --memory-only --mirror --entries 10000 --work /tmp/w
    python bench/hostile_inputs.py --memory-only --mirror --one-process   # no worker processes
    python bench/hostile_inputs.py --formats json table     # peak RSS per report format
    python bench/hostile_inputs.py --memory-only --bbl      # the same entries as a biber .bbl
    python bench/hostile_inputs.py --fuzz                   # also the long fuzz profile (minutes)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _bbl_verb(n: int) -> tuple[str, str]:
    return "x.bbl", "\\entry{k}{article}{}\n" + "\\verb{url}\n\\verb x\n" * n


def _bbl_entries(n: int) -> tuple[str, str]:
    return "x.bbl", "".join(
        f"\\entry{{k{i}}}{{article}}{{}}\n\\field{{title}}{{T}}\n" for i in range(n)
    )


def _tex_cites(n: int) -> tuple[str, str]:
    return "paper.tex", "\\bibliography{refs}\n\\cite{a}\n" + "\\cite[ see " * n


def _string_bomb(n: int) -> tuple[str, str]:
    lines = ['@string{s0 = "0123456789"}']
    lines += [f"@string{{s{k} = s{k - 1} # s{k - 1} # s{k - 1} # s{k - 1}}}" for k in range(1, n)]
    return "bomb.bib", "\n".join(
        lines
    ) + f"\n@misc{{bomb, note = s{n - 1}}}\n@misc{{ok, note = s2}}\n"


def _crossref_chain(n: int) -> tuple[str, str]:
    return "chain.bib", "".join(
        f"@inproceedings{{k{i}, title = {{P{i}}}, crossref = {{k{i + 1}}}}}\n" for i in range(n)
    )


CASES: dict[str, tuple[Callable[[int], tuple[str, str]], int]] = {
    ".bbl \\verb without \\endverb": (_bbl_verb, 40_000),
    ".bbl \\entry without \\endentry": (_bbl_entries, 10_000),
    ".tex with unclosed \\cite[": (_tex_cites, 70_000),
    "@string doubling bomb (levels)": (_string_bomb, 20),
    "crossref chain": (_crossref_chain, 5_000),
}


def time_parse(name: str, text: str) -> float:
    from refaudit.errors import InputError
    from refaudit.parsing import parse_file

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "refs.bib").write_text("@article{a, title = {A}}\n")
        path = Path(folder) / name
        path.write_text(text)
        started = time.perf_counter()
        try:
            parse_file(path)
        except InputError:
            pass
        return time.perf_counter() - started


def scaling() -> None:
    print(f"{'case':<34} {'size':>10} {'time':>8} {'2x size':>10} {'time':>8} {'ratio':>6}")
    for label, (build, n) in CASES.items():
        name, small = build(n)
        _, large = build(n * 2 if "levels" not in label else n + 1)
        first, second = time_parse(name, small), time_parse(name, large)
        print(
            f"{label:<34} {len(small):>10,} {first:>7.2f}s {len(large):>10,} {second:>7.2f}s "
            f"{second / max(first, 1e-6):>6.1f}"
        )


def big_bibliography(path: Path, entries: int) -> None:
    """`entries` synthetic articles no source holds (offline, every one is `unverified`)."""
    with path.open("w", encoding="utf-8") as out:
        for i in range(entries):
            out.write(
                f"@article{{key{i},\n  author = {{Author{i}, A. and Other, B.}},\n"
                f"  title = {{A study of synthetic topic number {i}}},\n"
                f"  journal = {{Journal of Tests}},\n  year = {{{1990 + i % 30}}},\n"
                f"  doi = {{10.5555/test.{i}}},\n}}\n\n"
            )


def big_bbl(path: Path, entries: int) -> None:
    """`big_bibliography`'s articles as the .bbl biber writes for them (biblatex's data)."""
    name = (
        "{{{{hash={}}}{{family={{{}}}, familyi={{{}\\bibinitperiod}}, "
        "given={{{}\\bibinitperiod}}}}}}%"
    )
    with path.open("w", encoding="utf-8") as out:
        out.write("\\refsection{0}\n  \\datalist[entry]{nty/global//global/global}\n")
        for i in range(entries):
            out.write(
                f"    \\entry{{key{i}}}{{article}}{{}}\n"
                "      \\name{author}{2}{}{%\n"
                f"        {name.format(f'a{i}', f'Author{i}', 'A', 'A')}\n"
                f"        {name.format('b', 'Other', 'O', 'B')}\n      }}\n"
                f"      \\field{{title}}{{A study of synthetic topic number {i}}}\n"
                "      \\field{journaltitle}{Journal of Tests}\n"
                f"      \\field{{year}}{{{1990 + i % 30}}}\n"
                f"      \\verb{{doi}}\n      \\verb 10.5555/test.{i}\n      \\endverb\n"
                "    \\endentry\n"
            )
        out.write("  \\enddatalist\n\\endrefsection\n")


_ENTRY_KEY = re.compile(r"^(@\w+\{)([^,\s]+),", re.MULTILINE)


def real_bibliography(path: Path, entries: int) -> None:
    """`entries` real citations: scale-5000's entries over and over, each under a new key."""
    from accuracy import PUBLIC, SETS

    text = (PUBLIC / SETS["scale-5000"]).read_text(encoding="utf-8")
    starts = [match.start() for match in _ENTRY_KEY.finditer(text)]
    blocks = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    with path.open("w", encoding="utf-8") as out:
        for i in range(entries):
            out.write(_ENTRY_KEY.sub(rf"\g<1>\g<2>-{i},", blocks[i % len(blocks)], count=1))


def peak_memory(
    bib: Path, folder: str, output_format: str, extra: list[str], *, one_process: bool = False
) -> str:
    """`refaudit check` on `bib` in a child process: exit code, wall time and peak RSS.

    A mirror-only run's workers are children of a fork server, not of `check`, so
    `wait4` does not see them: every process of the run is found under /proc while it
    runs and its own peak (the kernel's `VmHWM`) is read every 0.1 s until it exits
    (what grows in its last 0.1 s is missed). The run's footprint is reported as the
    sum of those peaks (an upper bound: they need not coincide), and each peak.
    """
    env = {**os.environ, "REFAUDIT_CACHE_DIR": folder + "/cache", "REFAUDIT_DATA_DIR": folder}
    if one_process:
        config = Path(folder) / "one-process.toml"
        config.write_text("processes = 1\n", encoding="utf-8")
        extra = [*extra, "--config", str(config)]
    command = [
        sys.executable, "-m", "refaudit", "check", str(bib), *extra, "-q", "--allow-unverified",
        "--format", output_format, "-o", f"{folder}/report.{output_format}",
    ]  # fmt: skip
    started = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True
        )
        peaks: dict[int, int] = {}  # kB, by pid, for every process of the run but `check`
        while True:
            waited, status, usage = os.wait4(child.pid, os.WNOHANG)
            if waited:
                break
            for pid in _descendants(child.pid):
                peaks[pid] = max(peaks.get(pid, 0), _peak_kb(pid))
            time.sleep(0.1)
        wall = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        line = f"exit {code}, {wall:.1f} s, peak RSS of check {usage.ru_maxrss / 1024:,.0f} MB"
        if peaks:
            others = sorted(peaks.values(), reverse=True)
            line += (
                f"; {(usage.ru_maxrss + sum(others)) / 1024:,.0f} MB summed with its "
                f"{len(others)} other processes (workers, fork server, resource tracker: "
                f"{', '.join(f'{peak / 1024:,.0f}' for peak in others)} MB)"
            )
        if code not in (0, 1, 3):
            errors.seek(0)
            line += "\n" + errors.read().decode(errors="replace")[-2000:]
    return line


def _descendants(leader: int) -> list[int]:
    """Every other live process of the session `leader` started: the fork server and its
    workers are not `check`'s children, but they stay in its session."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == leader:
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == leader:  # state ppid pgrp session …
                found.append(int(entry.name))
    return found


def _peak_kb(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def memory(
    counts: list[int],
    formats: list[str],
    mirror: Path | None,
    *,
    one_process: bool = False,
    bbl: bool = False,
) -> None:
    """Peak RSS of `check` on bibliographies of each size, offline or through a mirror only."""
    for entries in counts:
        with tempfile.TemporaryDirectory() as folder:
            bib = Path(folder) / ("big.bbl" if bbl else "big.bib")
            if bbl:
                big_bbl(bib, entries)
                extra, how = ["--offline"], ".bbl, --offline, nothing cached"
            elif mirror is None:
                big_bibliography(bib, entries)
                extra, how = ["--offline"], "--offline, nothing cached"
            else:
                real_bibliography(bib, entries)
                extra, how = ["--sources", "mirror", "--mirror", str(mirror)], "--sources mirror"
            size = bib.stat().st_size / 1e6
            for output_format in formats:
                outcome = peak_memory(bib, folder, output_format, extra, one_process=one_process)
                print(f"{entries:,} entries ({size:.1f} MB), {how}, {output_format}: {outcome}")


def world_mirror(work: Path) -> Path:
    """An SQLite mirror of the benchmark world (bench/mirror.py's export; reused in `work`)."""
    from mirror import build, export

    location = work / "world.sqlite3"
    if not location.is_file():
        build(export("world", work / "world"), str(location))
    return location


def fuzz() -> None:
    env = {**os.environ, "REFAUDIT_FUZZ_PROFILE": "long"}
    target = REPO / "tests" / "adversarial" / "test_fuzz_parsers.py"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", str(target)], env=env)
    print(f"long fuzz profile: exit {done.returncode} in {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--formats", nargs="*", default=["json"], help="report formats to write")
    parser.add_argument(
        "--mirror", action="store_true", help="real citations through a world mirror, no network"
    )
    parser.add_argument("--work", type=Path, help="keep the world export and mirror here")
    parser.add_argument(
        "--one-process", action="store_true", help="no worker processes for a mirror-only audit"
    )
    parser.add_argument(
        "--bbl", action="store_true", help="the synthetic entries as a biber .bbl (offline)"
    )
    parser.add_argument("--memory-only", action="store_true", help="skip the scaling table")
    parser.add_argument("--fuzz", action="store_true", help="also run the long fuzz profile")
    args = parser.parse_args()
    if not args.memory_only:
        scaling()
    if args.mirror:
        with contextlib.ExitStack() as stack:
            work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory()))
            memory(args.entries, args.formats, world_mirror(work), one_process=args.one_process)
    else:
        memory(args.entries, args.formats, None, bbl=args.bbl)
    if args.fuzz:
        fuzz()


if __name__ == "__main__":
    main()
