"""`make demo` and its figures: the demo accelerator's verification on both faces, and the
README's worked example.

Runs the Makefile's demo (explore builtin:sift-10k, DSE for U55C, generate both faces, simulate
test queries on each: g++ C simulation and Verilator), passing its output through as it runs and
keeping it, and reads what it reports in `work/demo/project/report/summary.json`: per face, the
queries and keys checked against the reference model, the mismatches, the recall on those
queries, and the RTL's measured cycles per query against the performance model's prediction.
The kept output is the README's worked example (`readme_example`; `--write-readme` puts it
there), so the example is what the code printed, with the commit that printed it.

    PYTHONPATH=. python benchmarks/demo.py [--json PATH] [--write-readme]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from record import command_line, replace_block, write_result

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = ROOT / "work" / "demo" / "project" / "report" / "summary.json"
README = ROOT / "README.md"
EXAMPLE_START = "<!-- the demo's output, from benchmarks/results/demo.json (benchmarks/demo.py) -->"
EXAMPLE_END = "<!-- end of the demo's output -->"


def run_demo() -> tuple[list[str], float]:
    """`make -s demo`, its output shown as it comes and kept: the lines and the wall seconds."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    start = time.monotonic()
    proc = subprocess.Popen(
        ["make", "-s", "demo"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        lines.append(line.rstrip("\n"))
    if proc.wait():
        raise SystemExit(f"make demo failed (exit {proc.returncode})")
    return lines, time.monotonic() - start


def example_lines(output: list[str]) -> list[str]:
    """The lines of the demo's output the README shows: from the first step on (pip and make
    chatter before it, and progress bars, which a pipe prints as their final state, are dropped;
    a table's borders, drawn with the same heavy line, are kept)."""
    first = next((i for i, line in enumerate(output) if line.startswith("[1/")), 0)
    return [line for line in output[first:] if "━" not in line or any(c in line for c in "┏┡┃│")]


def readme_example(rec: dict) -> str:
    """The README's worked-example block of a recorded demo run (`results/demo.json`)."""
    figures = rec["figures"]
    m = rec["machine"]
    return "\n".join(
        [
            EXAMPLE_START,
            "```",
            *figures["output"],
            "```",
            f"(printed at {rec['commit'][:10]} on {rec['date'][:10]}: {m['cpu']}, {m['cores']} cores, load "
            f"{m['load_average_1min']}; {figures['wall_seconds']:.0f} s of wall clock for this run)",
            EXAMPLE_END,
        ]
    )


def readme_with_example(text: str, block: str) -> str:
    """The README text with its worked-example block replaced by `block`."""
    return replace_block(text, EXAMPLE_START, EXAMPLE_END, block)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    ap.add_argument(
        "--write-readme",
        action="store_true",
        help="put the recorded output into README.md's worked example (needs --json)",
    )
    args = ap.parse_args()
    if args.write_readme and not args.json:
        ap.error("--write-readme needs --json (the README quotes the recorded run)")
    output, seconds = run_demo()
    summary = json.loads(SUMMARY.read_text())
    design = summary["design"]
    figures = {
        "design": {key: design[key] for key in ("index", "nprobe", "k", "qps", "cycles_per_query", "bottleneck")},
        "faces": summary["simulation"],
        "output": example_lines(output),
        "wall_seconds": round(seconds, 1),
    }
    for face in figures["faces"]:
        print(
            f"{face['backend']} ({face['simulator']}): {face['mismatched_queries']} of {face['queries']} queries "
            f"differ ({face['checked_keys']} keys checked)"
            + (
                f"; {face['cycles_per_query']} cycles/query vs {face['predicted_cycles_per_query']} predicted"
                if "cycles_per_query" in face
                else ""
            )
        )
    write_result(args.json, "demo", command_line(), figures)
    if args.write_readme:
        README.write_text(
            readme_with_example(README.read_text(), readme_example(json.loads(Path(args.json).read_text())))
        )


def readme_row(figures: dict) -> list[tuple[str, str]]:
    """The README figures rows of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    d, faces = figures["design"], figures["faces"]
    n = {f["queries"] for f in faces}
    keys = {f["checked_keys"] // f["queries"] for f in faces}
    bad = sum(f["mismatched_queries"] for f in faces)
    recall = faces[0]["recall"]
    same = all(r["simulated"] == r["reference"] for f in faces for r in f["recall"].values())
    goals = " and ".join(f"{name} {r['simulated']:.3f}" for name, r in recall.items())
    rtl = next(f for f in faces if f["backend"] == "rtl")
    err = 100 * (rtl["cycles_per_query"] - rtl["predicted_cycles_per_query"]) / rtl["predicted_cycles_per_query"]
    return [
        (
            f"whole accelerator, both faces vs the reference model (demo design {d['index']}, nprobe {d['nprobe']}, "
            f"K {d['k']})",
            f"{'/'.join(map(str, sorted(n)))} queries × {'/'.join(map(str, sorted(keys)))} keys on each face, "
            f"{bad} mismatches; {goals} on these queries, "
            + ("equal to the reference model's" if same else "NOT equal to the reference model's"),
        ),
        (
            f"RTL cycles per query vs the performance model (demo design, {rtl['queries']} queries)",
            f"{rtl['cycles_per_query']:,} measured vs {rtl['predicted_cycles_per_query']:,} predicted ({err:+.2f} %)",
        ),
    ]


if __name__ == "__main__":
    main()
