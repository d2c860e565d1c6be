"""Hostile inputs: how parse time and memory grow with the input, and a long fuzz run.

Each case is parsed at two sizes; a ratio near 2 for twice the input is linear, near 4
is quadratic. The 100k-entry bibliography is audited offline (nothing cached, so every
reference is `unverified`) in a child process whose peak RSS is reported.

    python bench/hostile_inputs.py              # scaling table + 100k-entry run
    python bench/hostile_inputs.py --fuzz       # also the long fuzz profile (minutes)
"""

from __future__ import annotations

import argparse
import os
import resource
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
    with path.open("w", encoding="utf-8") as out:
        for i in range(entries):
            out.write(
                f"@article{{key{i},\n  author = {{Author{i}, A. and Other, B.}},\n"
                f"  title = {{A study of synthetic topic number {i}}},\n"
                f"  journal = {{Journal of Tests}},\n  year = {{{1990 + i % 30}}},\n"
                f"  doi = {{10.5555/test.{i}}},\n}}\n\n"
            )


def hundred_thousand(entries: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        bib = Path(folder) / "big.bib"
        big_bibliography(bib, entries)
        env = {**os.environ, "REFAUDIT_CACHE_DIR": folder + "/cache", "REFAUDIT_DATA_DIR": folder}
        command = [
            sys.executable,
            "-m",
            "refaudit",
            "check",
            str(bib),
            "--offline",
            "-q",
            "--format",
            "json",
            "-o",
            folder + "/report.json",
            "--allow-unverified",
        ]
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(
            f"{entries:,}-entry .bib ({bib.stat().st_size / 1e6:.1f} MB), check --offline: "
            f"exit {done.returncode}, {wall:.1f} s, peak RSS {peak_mb:,.0f} MB"
        )
        if done.returncode not in (0, 1, 3):
            print(done.stderr[-2000:])


def fuzz() -> None:
    env = {**os.environ, "REFAUDIT_FUZZ_PROFILE": "long"}
    target = REPO / "tests" / "adversarial" / "test_fuzz_parsers.py"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", str(target)], env=env)
    print(f"long fuzz profile: exit {done.returncode} in {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--fuzz", action="store_true", help="also run the long fuzz profile")
    args = parser.parse_args()
    scaling()
    hundred_thousand(args.entries)
    if args.fuzz:
        fuzz()


if __name__ == "__main__":
    main()
