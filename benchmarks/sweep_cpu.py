"""Predicted FPGA QPS beside faiss-cpu measured here: `fanns sweep` on builtin:sift-10k.

Runs the sweep a user runs (`fanns sweep builtin:sift-10k --boards u55c,zcu104 ...`) with a fresh
exploration (`--explore-dir` under --work, so the CPU is measured in this run, not read from a
cached exploration) and records from its `report.json`, for the first recall goal and each board:
the best design's predicted QPS, clock and bottleneck; faiss-cpu at the design's own index and
nprobe, on one thread (thread CPU clock) and on all cores (wall clock), medians with their IQR; and
the best CPU point for the goal (chosen by its one-thread figure, which load does not move) on all
cores.

    PYTHONPATH=. python benchmarks/sweep_cpu.py [--work DIR] [--json PATH]
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from record import command_line, work_parser, write_result

from fanns.cli import main as fanns

DATASET = "builtin:sift-10k"
ARGS = ["--boards", "u55c,zcu104", "--recall", "1-R@10=0.8,R@10=0.6", "--nlist", "32,64", "--queries", "200"]


def cpu(point: dict | None) -> dict | None:
    """A CPU point of the report: index, nprobe, all-cores median and IQR, one-thread median and IQR,
    and the basis of the report's ratio (`fanns.model.cpu_baseline.cpu_basis`)."""
    if point is None:
        return None
    one = point.get("one_thread") or {}
    return {
        "index": point["index"],
        "nprobe": point["nprobe"],
        "qps": point["spread"]["qps"],
        "basis": point["basis"]["basis"],
        "iqr": [point["spread"]["q1"], point["spread"]["q3"]],
        "threads": point["spread"]["threads"],
        "one_thread": {"qps": one["qps"], "iqr": [one["q1"], one["q3"]]} if one else None,
    }


def main() -> None:
    ap = work_parser(__doc__, "work/bench-sweep", "folder for the exploration and the report")
    args = ap.parse_args()
    work = Path(args.work).resolve()
    shutil.rmtree(work / "explore", ignore_errors=True)  # measure the CPU in this run
    out = work / "report"
    argv = ["sweep", DATASET, *ARGS, "--explore-dir", str(work / "explore"), "--out", str(out)]
    if fanns([*argv, "--force"] if out.exists() else argv):
        sys.exit("fanns sweep failed")
    data = json.loads((out / "report.json").read_text())
    goal = data["settings"]["goals"][0]
    boards = [
        {
            "board": s["board"],
            "clock_mhz": data["settings"]["clock_mhz"][s["board"]],
            "index": s["design"]["index"],
            "nprobe": s["design"]["nprobe"],
            "qps": s["design"]["qps"],
            "bottleneck": s["design"]["bottleneck"],
            "cpu_same": cpu(s["cpu_same"]),
            "cpu_best": cpu(s["cpu"]),
        }
        for s in data["summary"]
        if s["goal"] == goal and s["design"]
    ]
    figures = {
        "dataset": DATASET,
        "goal": goal,
        "command": "fanns sweep " + " ".join([DATASET, *ARGS]),
        "boards": boards,
    }
    print(json.dumps(figures, indent=1))
    write_result(args.json, "sweep_cpu", command_line(), figures)


def _cpu_text(c: dict, boards: list[dict], one_thread: bool) -> str:
    m = c["one_thread"] if one_thread else c
    ratios = " / ".join(f"{b['qps'] / m['qps']:.1f}× ({b['board'].upper()})" for b in boards)
    return f"{m['qps']:,.0f} QPS (IQR {m['iqr'][0]:,.0f}–{m['iqr'][1]:,.0f}) -> {ratios}"


def readme_row(f: dict) -> tuple[str, str]:
    """The README figures row of the recorded sweep (`benchmarks/readme_figures.py`)."""
    boards = f["boards"]
    figure = (
        f"predicted QPS vs faiss-cpu measured here, {f['dataset']}, {f['goal']} (CPU: medians of the "
        f"exploration's windows; one thread on the thread CPU clock, all cores on the wall clock; `{f['command']}`)"
    )
    designs = ", ".join(
        f"{b['board'].upper()} {b['qps']:,.0f} QPS ({b['clock_mhz']:g} MHz, {b['index']} nprobe {b['nprobe']}, "
        f"bottleneck {b['bottleneck']})"
        for b in boards
    )
    parts = [designs]
    same = boards[0]["cpu_same"]
    if same:
        parts.append(
            f"At the {boards[0]['board'].upper()} design's index {same['index']} nprobe {same['nprobe']}: "
            f"1 thread {_cpu_text(same, boards, True)}; {same['threads']} threads {_cpu_text(same, boards, False)}"
        )
    best = boards[0]["cpu_best"]
    if best:
        parts.append(
            f"Best CPU point {'by its 1-thread median' if 'basis' in best else 'on the all-cores median'}: "
            f"{best['index']} nprobe {best['nprobe']}, "
            f"{_cpu_text(best, boards, False)}"
            + (f"; one thread there {_cpu_text(best, boards, True)}" if best["one_thread"] else "")
        )
    return figure, ". ".join(parts)


if __name__ == "__main__":
    main()
