"""Recording a benchmark's figures as JSON with where they came from (commit, date, machine).

Why: the README's "Figures measured so far" table is rendered from these files
(`benchmarks/readme_figures.py`), so every figure it quotes names the commit and machine that
measured it and cannot silently go stale.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name as the kernel reports it (Linux), else the platform's processor."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def commit() -> str:
    """The checked-out commit, with "+dirty" when the working tree has changes."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=here, capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def machine() -> dict:
    """CPU model, logical cores and the 1-minute load average when the figure was measured."""
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "load_average_1min": round(os.getloadavg()[0], 1)}


STARTED_AT = commit()
"""The commit checked out when the benchmark started: the code that ran, even if the checkout
moves on while a long benchmark runs."""


def command_line() -> str:
    """The command this benchmark runs as, quoted so that it can be pasted back into a shell
    (an empty argument stays ``''``)."""
    return shlex.join(["python", f"benchmarks/{Path(sys.argv[0]).name}", *sys.argv[1:]])


def write_result(path: str | Path | None, benchmark: str, command: str, figures: dict) -> None:
    """Write `figures` to `path` (nothing when None) with the commit the run started from, the UTC
    date and the machine."""
    if path is None:
        return
    record = {
        "benchmark": benchmark,
        "command": command,
        "commit": STARTED_AT,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "figures": figures,
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def work_parser(doc: str, default_work: str, work_help: str) -> argparse.ArgumentParser:
    """The argument parser of a benchmark that builds in a work folder: its description (the
    docstring's first paragraph), `--work` and `--json`, the options such benchmarks share."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--work", default=default_work, help=work_help)
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    return ap


def replace_block(text: str, start: str, end: str, block: str) -> str:
    """`text` (the README) with the block from the line `start` to the line `end` replaced by
    `block` (which begins and ends with those lines): a figure the README quotes stays the one the
    benchmark recorded."""
    first, last = text.index(start), text.index(end) + len(end)
    return text[:first] + block + text[last:]
