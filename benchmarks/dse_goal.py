"""The DSE of one recall goal on one board, on real explorations: its time, peak memory and result.

Issue 47's goal: the DSE of one goal on one board within 60 s on a 390k x 50 angular set, a
60k x 784 set and text-384, with the chosen design unchanged. Per set (an exploration folder
written by `fanns explore`, reused as is, or `synthetic:SHAPE`: the indexes of `SYNTHETIC` on
size-biased synthetic probes, `fanns.model.ivfpq.workload.synthetic_workload`) this runs
`fanns.model.ivfpq.dse.run` as `fanns dse` and `fanns generate` do (board's clock, 60 % cap,
top 5) in a subprocess of its own, so each set's peak resident memory is its own, and prints:

- CPU seconds (user + system of every thread: the SelK recurrence runs on every core) and wall
  seconds, with the machine's 1-minute load average before and after (the machine is shared:
  CPU time is the figure to compare);
- the peak resident set size (`ru_maxrss`: the process, Python and the exploration's arrays
  included);
- the best design (index, nprobe, stages, predicted QPS) and a fingerprint of the whole outcome
  (the ranked top designs with their cycles and resources, the Pareto front, the option counts):
  two runs with equal fingerprints chose the same designs.

With `--fanns PATH` the sets run against another checkout's `fanns` package (e.g. the code
before a change), for before/after figures of one change on the same sets.

    PYTHONPATH=. python benchmarks/dse_goal.py --set NAME=EXPLORE_DIR|synthetic:SHAPE ... [--goal R@10=0.8]
        [--board u55c] [--fanns PATH] [--json PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from record import command_line, write_result

import fanns
from fanns.boards import load_board  # in the child, the `--fanns` checkout's package (PYTHONPATH)
from fanns.index.goals import parse_goal
from fanns.model.ivfpq import dse
from fanns.model.ivfpq.workload import synthetic_workload, workloads_from_explore

HERE = Path(__file__).resolve().parent

SYNTHETIC = {
    "390k-50": (390_000, 50, (256, 512, 1024, 2048), {10: 1 / 16}),
    "60k-784": (60_000, 784, (64, 128, 256, 512), {16: 1 / 4, 98: 1 / 32}),
    "105k-384": (104_698, 384, (128, 256, 512, 1024), {16: 1 / 4, 48: 1 / 32}),
}
"""Shapes of the issue's large sets: (N, d, nlists, {m: nprobe / nlist}). The nlists and m are
`fanns explore`'s default grid for N and d (`default_nlists`, `default_ms`); each index comes with
and without OPQ at the given fraction of its lists probed (assumed, not explored: coarse codes
need many probes, e.g. builtin:text-384's OPQ16 about 300 at R@10=0.6, fine ones few), 1,000
queries, K = 10."""


def synthetic_workloads(shape: str) -> list:
    """The workloads of one `SYNTHETIC` shape."""
    n, d, nlists, ms = SYNTHETIC[shape]
    return [
        synthetic_workload(n, d, m, nlist, max(1, round(nlist * part)), 10, opq, queries=1000, seed=nlist + m)
        for nlist in nlists
        for m, part in ms.items()
        for opq in (False, True)
    ]


def outcome_record(outcome) -> dict:
    """What the DSE chose, as plain data: the top designs and the Pareto front (each: index,
    nprobe, stages, cycles, LUTs, channels) and the option counts."""

    def design(p) -> dict:
        return {
            "index": p.workload.label(),
            "dsub_hw": p.ctx.fmt.dsub_hw,
            "lut_words": p.ctx.lut_words,
            "stages": repr(p.stages),
            "cycles": p.cycles,
            "lut": p.resources.lut,
            "resources": list(p.resources.as_tuple()),
            "channels": p.channels,
        }

    return {
        "top": [design(p) for p in outcome.top],
        "pareto": [design(p) for p in outcome.pareto],
        "option_counts": outcome.option_counts,
    }


def run_one(explore_dir: str, goal_text: str, board_name: str) -> dict:
    """One DSE in this process (the child's side of `measure`)."""
    goal = parse_goal(goal_text)
    board = load_board(board_name)
    if explore_dir.startswith("synthetic:"):
        workloads, unreachable = synthetic_workloads(explore_dir.removeprefix("synthetic:")), []
    else:
        workloads, unreachable = workloads_from_explore(Path(explore_dir), goal)
    load_before = os.getloadavg()[0]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    outcome = dse.run(workloads, board, goal.text, board.clock_mhz, 0.6, 5, unreachable)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    rec = outcome_record(outcome)
    best = outcome.best
    return {
        "cpu_s": round(cpu, 1),
        "wall_s": round(wall, 1),
        "load_1min": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "fanns": str(Path(fanns.__file__).parent),
        "workloads": [w.label() for w in workloads],
        "queries": workloads[0].queries if workloads else 0,
        "best": None if best is None else {"index": best.workload.label(), "qps": round(best.qps, 1), **rec["top"][0]},
        "fingerprint": hashlib.sha256(json.dumps(rec, sort_keys=True).encode()).hexdigest()[:16],
        "outcome": rec,
    }


def measure(explore_dir: str, goal: str, board: str, fanns: str | None) -> dict:
    """`run_one` in a fresh interpreter (its own peak memory), against `fanns` when given."""
    env = dict(os.environ, FANNS_NO_PROGRESS="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (fanns or "", str(HERE.parent), env.get("PYTHONPATH", "")) if p)
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import dse_goal; "
        "print(json.dumps(dse_goal.run_one(*sys.argv[2:])))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(HERE), explore_dir, goal, board],
        env=env,
        cwd=HERE,  # not a checkout: `python -c` puts the working folder first on the path
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        raise SystemExit(f"{explore_dir}: the DSE failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", action="append", required=True, metavar="NAME=DIR", help="a set and its exploration")
    ap.add_argument("--goal", default="R@10=0.8", help="recall goal (default R@10=0.8)")
    ap.add_argument("--board", default="u55c", help="board (default u55c)")
    ap.add_argument("--fanns", metavar="PATH", help="run against the fanns package of this checkout")
    ap.add_argument("--outcomes", metavar="PATH", help="also write each set's whole outcome record here (JSON)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    rows, outcomes = [], {}
    for item in args.set:
        name, _, folder = item.partition("=")
        r = measure(folder, args.goal, args.board, args.fanns)
        outcomes[name] = r.pop("outcome")
        best = r["best"]
        print(
            f"{name}: {r['cpu_s']:.1f} CPU-s, {r['wall_s']:.1f} s wall (load {r['load_1min'][0]} -> "
            f"{r['load_1min'][1]}), peak {r['peak_rss_mb']:,} MB; {len(r['workloads'])} workloads x "
            f"{r['queries']} queries; best {best['index'] if best else None} "
            f"{best['qps'] if best else 0:,.0f} QPS; fingerprint {r['fingerprint']} ({r['fanns']})",
            flush=True,
        )
        rows.append({"set": name, "explore_dir": folder, **r})
    if args.outcomes:
        Path(args.outcomes).write_text(json.dumps(outcomes, indent=1, sort_keys=True))
    figures = {"goal": args.goal, "board": args.board, "fanns": args.fanns or "this checkout", "rows": rows}
    write_result(args.json, "dse_goal", command_line(), figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README row of a recorded run (`benchmarks/readme_figures.py`)."""
    sets = "; ".join(
        f"{r['set']}: {r['cpu_s']:.0f} CPU-s, peak {r['peak_rss_mb'] / 1000:.1f} GB, {len(r['workloads'])} indexes"
        for r in figures["rows"]
    )
    what = f"DSE of one goal ({figures['goal']}, {figures['board']}) on the shapes of the large sets"
    return what, f"{sets} (synthetic workloads of each shape's default grid; the goal is 60 s)"


if __name__ == "__main__":
    main()
