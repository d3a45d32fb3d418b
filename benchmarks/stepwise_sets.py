"""Step-wise search on real sets (docs/stepwise.md, issue 48): the built-in SIFT-like set and the
384-d sentence-embedding set put through the design fuzz's checks (`fanns.flow.design_fuzz.run_case`
with the real set instead of a synthetic one): explore the set's one index, the DSE's design for
the goal on the board, both faces generated, and simulated against the reference model — the
normal search on each face, and the step-wise mode (each query's own probed cells cut into steps
of random sizes, run in calls of random subsets of the queries, resumed after others ran) with
every call's keys compared, on each face that has the mode.

    PYTHONPATH=. python benchmarks/stepwise_sets.py [--sets sift-10k,text-384] [--queries 16]
        [--work DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from record import command_line, write_result

from fanns.boards import load_board
from fanns.datasets.loader import load_dataset
from fanns.flow.design_fuzz import FuzzCase, records, run_case, table
from fanns.index.goals import parse_goal

SETS = {
    "sift-10k": ("builtin:sift-10k", 128, 16, 64, "1-R@10=0.8"),
    "text-384": ("builtin:text-384", 384, 48, 512, "R@10=0.6"),
}
"""name -> (dataset, d, m, nlist, goal): the index and goal of `make demo` (sift-10k) and of the
README's text-384 row (benchmarks/results/datasets_text384.json)."""
BOARD = "u55c"
UTIL = 0.6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    ap.add_argument("--queries", type=int, default=16, help="test queries simulated on each face (default 16)")
    ap.add_argument("--work", default="/tmp/fanns-stepwise-sets", help="work folder (explorations, projects, builds)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    work = Path(args.work).resolve()
    board = load_board(BOARD)
    outcomes = []
    for name in args.sets.split(","):
        spec, d, m, nlist, goal = SETS[name]
        k = parse_goal(goal).k
        case = FuzzCase(0, BOARD, d, m, nlist, k, goal, board.clock_mhz, UTIL, False)
        print(f"{name}: {spec}, IVF{nlist},PQ{m}, {goal} on {BOARD}", flush=True)
        outcome = run_case(
            case, work / name, work / "builds", runners_up=0, sim_queries=args.queries, dataset=load_dataset(spec)
        )
        print("\n".join(table([outcome])), flush=True)
        outcomes.append((name, outcome))
    figures = {
        "board": BOARD,
        "sets": {name: records([o])[0] for name, o in outcomes},
    }
    write_result(args.json, "stepwise_sets", command_line(), figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README row of a recorded run (`benchmarks/readme_figures.py`)."""
    parts = []
    for name, rec in figures["sets"].items():
        faces = [f for f in rec["faces"] if f["face"].endswith("-steps")]
        what = ", ".join(f"{f['face']}: {f['detail']}" for f in faces) or rec["reason"]
        parts.append(f"{name} ({rec['designs'][0].split(':')[0] if rec['designs'] else 'no design'}): {what}")
    return (
        f"step-wise search on real sets: the DSE's design for each on the {figures['board'].upper()}, "
        "each query's own cells in steps of random sizes, calls of random subsets resumed after others ran",
        "; ".join(parts),
    )


if __name__ == "__main__":
    main()
