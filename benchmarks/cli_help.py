"""How long `fanns --help` and every `fanns CMD --help` take, in wall time and in CPU time.

Why: the help is the first thing a user runs, and it used to import every command's
implementation (amaranth, faiss, scipy, cocotb, ...) just to print the options (issue 47: 7 s).
Each command line runs in a fresh interpreter (`python -m fanns.cli ARGV` in the source tree
measured, which is also its PYTHONPATH), `--repeats` times; a cell is the median with its range.
CPU time is the child's user + system time (`resource.getrusage(RUSAGE_CHILDREN)`), which other
work on the machine moves much less than the wall time. `--before REV` measures the source tree of
another commit (extracted with `git archive` into a temporary folder; or a folder holding a
checkout) the same way, for the before/after table.

    PYTHONPATH=. python benchmarks/cli_help.py [--repeats 5] [--before a69aae7] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from record import command_line, write_result

ROOT = Path(__file__).resolve().parents[1]
LIST_COMMANDS = """\
import argparse, fanns.cli

def walk(parser, prefix):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                print(" ".join([*prefix, name]))
                walk(sub, [*prefix, name])

walk(fanns.cli.build_parser(), [])
"""
"""Prints every command and subcommand of the tree's parser, one per line."""


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "FANNS_NO_PROGRESS": "1"}


def commands(tree: Path) -> list[list[str]]:
    """Every command line whose --help is measured: the bare `fanns`, then each (sub)command."""
    out = subprocess.run(
        [sys.executable, "-c", LIST_COMMANDS], env=_env(tree), cwd=tree, capture_output=True, text=True, check=True
    ).stdout
    return [[]] + [line.split() for line in out.splitlines() if line.strip()]


def measure(tree: Path, argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `python -m fanns.cli ARGV --help` in a fresh interpreter."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "fanns.cli", *argv, "--help"], env=_env(tree), cwd=tree, capture_output=True, check=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def source_tree(rev: str, into: Path) -> Path:
    """The files of commit `rev` of this repository, extracted into the folder `into`."""
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, capture_output=True, check=True)
    with tempfile.TemporaryFile() as tar:
        tar.write(archive.stdout)
        tar.seek(0)
        tarfile.open(fileobj=tar).extractall(into, filter="data")
    return into


def spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def measure_tree(tree: Path, repeats: int) -> dict[str, dict]:
    """Per command line ('fanns generate --help', ...): wall and CPU seconds over the repeats."""
    cells = {}
    for argv in commands(tree):
        runs = [measure(tree, argv) for _ in range(repeats)]
        key = " ".join(["fanns", *argv, "--help"])
        cells[key] = {"wall_s": spread([w for w, _ in runs]), "cpu_s": spread([c for _, c in runs])}
        print(
            f"{key:45s} wall {cells[key]['wall_s']['median']:6.2f} s   CPU {cells[key]['cpu_s']['median']:6.2f} s",
            flush=True,
        )
    return cells


def _range(cells: dict, key: str) -> str:
    values = [c[key]["median"] for c in cells.values()]
    return f"{min(values):.2f}-{max(values):.2f} s"


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    after = figures["after"]["cells"]
    figure = (
        f"`fanns --help` and every `fanns CMD --help` ({len(after)} command lines, each in a fresh interpreter, "
        f"median of {figures['repeats']}; goal: under 1 s)"
    )
    value = f"CPU (user + system) {_range(after, 'cpu_s')}, wall {_range(after, 'wall_s')}"
    if "before" in figures:
        before = figures["before"]["cells"]
        value += (
            f"; before, at {figures['before']['tree']} (every command's implementation imported): "
            f"CPU {_range(before, 'cpu_s')}, wall {_range(before, 'wall_s')}"
        )
    return figure, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3, help="runs per command line (default 3)")
    ap.add_argument(
        "--before", metavar="REV", help="also measure this commit's source tree (or a folder holding a checkout)"
    )
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    figures = {"repeats": args.repeats, "load_average_1min_start": round(os.getloadavg()[0], 1)}
    if args.before:
        print(f"before: {args.before}")
        with tempfile.TemporaryDirectory(prefix="fanns-before-") as tmp:
            tree = Path(args.before) if Path(args.before).is_dir() else source_tree(args.before, Path(tmp))
            figures["before"] = {"tree": args.before, "cells": measure_tree(tree, args.repeats)}
    print(f"after: {ROOT}")
    figures["after"] = {"tree": ".", "cells": measure_tree(ROOT, args.repeats)}
    worst = max(figures["after"]["cells"].values(), key=lambda c: c["cpu_s"]["median"])
    figures["after"]["worst_cpu_s"] = worst["cpu_s"]["median"]
    figures["after"]["worst_wall_s"] = max(c["wall_s"]["median"] for c in figures["after"]["cells"].values())
    print(f"slowest help: CPU {worst['cpu_s']['median']:.2f} s, wall {figures['after']['worst_wall_s']:.2f} s")
    write_result(args.json, "cli_help", command_line(), figures)


if __name__ == "__main__":
    main()
