"""`make demo` and its figures: the demo accelerator's verification on both faces.

Runs the Makefile's demo (explore builtin:sift-10k, DSE for U55C, generate both faces, simulate
test queries on each: g++ C simulation and Verilator) and reads what it reports in
`work/demo/project/report/summary.json`: per face, the queries and keys checked against the
reference model, the mismatches, the recall on those queries, and the RTL's measured cycles per
query against the performance model's prediction.

    PYTHONPATH=. python benchmarks/demo.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from record import command_line, write_result

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = ROOT / "work" / "demo" / "project" / "report" / "summary.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    subprocess.run(["make", "-s", "demo"], cwd=ROOT, check=True)
    summary = json.loads(SUMMARY.read_text())
    design = summary["design"]
    figures = {
        "design": {key: design[key] for key in ("index", "nprobe", "k", "qps", "cycles_per_query", "bottleneck")},
        "faces": summary["simulation"],
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
