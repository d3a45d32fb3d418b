"""DSE speed: combinations evaluated per second and the time of a full U55C sweep.

The sweep is FANNS's SIFT100M setting (N = 1e8, d = 128, m = 16, 140 MHz, 60 % cap) over 14
indexes — nlist 2^10 .. 2^16, with and without OPQ — each at an nprobe that scans the same
fraction of the lists as the published K=10 design (17 of 8192), K = 10, on synthetic
size-biased probes of 1,000 queries (`fanns.model.ivfpq.workload.synthetic_workload`). It prints,
per index, the option counts and times, then the search throughput (combinations evaluated
per second by the vectorised kernel, one core) and the whole sweep's time.

A *combination* is one candidate the search kernel (`fanns.model.ivfpq.search`) scores: its
bottleneck cycles (max over the stage groups) and its resources summed and tested against the
budget. Almost all are whole designs — one index at its nprobe with one option of each stage
group (opq, front, lut, back), the options left after each group's Pareto pruning; the count also
includes the partial opq x lut and (opq, lut) x front candidates built on the way
(`Search.evaluated`). Combinations the search skips because their bound cannot enter its pool or
front are counted apart (`Search.bounded`). The design space before pruning (every option of
every group) is printed separately; pruning never drops a design that could win.

    PYTHONPATH=. python benchmarks/dse.py [--queries N] [--board u55c] [--json PATH]
"""

from __future__ import annotations

import argparse
import math
import time

from record import command_line, write_result

from fanns.boards import load_board
from fanns.model.ivfpq import dse
from fanns.model.ivfpq.budget import Budget
from fanns.model.ivfpq.search import search
from fanns.model.ivfpq.workload import synthetic_workload


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=1000, help="sample queries per workload (default 1000)")
    ap.add_argument("--board", default="u55c", help="board (default u55c)")
    ap.add_argument("--clock", type=float, default=140.0, help="clock in MHz (default 140, as FANNS)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    board = load_board(args.board)
    budget = Budget.from_board(board, 0.6)
    t_all = time.perf_counter()
    workloads = []
    for e in range(10, 17):
        nlist = 1 << e
        nprobe = max(1, math.ceil(17 * nlist / 8192))
        for opq in (False, True):
            workloads.append(synthetic_workload(10**8, 128, 16, nlist, nprobe, 10, opq, queries=args.queries, seed=e))
    t_work = time.perf_counter() - t_all
    spaces = []
    print(f"{'index':<22} {'nprobe':>6} {'opq':>5} {'front':>6} {'lut':>5} {'back':>6}  {'options s':>9}")
    t_opts = time.perf_counter()
    for key, w in enumerate(workloads):
        t = time.perf_counter()
        space, counts = dse.build_space(key, w, dse.context(w, board, args.clock), budget)
        spaces.append(space)
        kept = [counts[g]["kept"] for g in ("opq", "front", "lut", "back")]
        print(
            f"{w.index:<22} {w.nprobe:>6} {kept[0]:>5} {kept[1]:>6} "
            f"{kept[2]:>5} {kept[3]:>6}  {time.perf_counter() - t:>9.2f}"
        )
    t_opts = time.perf_counter() - t_opts
    result = search(spaces, budget.vector(), pool=64)
    rate = result.evaluated / result.seconds
    t_total = time.perf_counter() - t_all
    print(
        "\ndesign space (all stage options, before pruning): "
        f"{result.raw:.3e} combinations over {len(workloads)} indexes"
    )
    print(
        f"search: {result.evaluated:,} combinations evaluated in "
        f"{result.seconds:.2f} s = {rate:,.0f} combinations/s (one core); {result.bounded:,} more skipped by "
        "their bound"
    )
    print(f"option enumeration (PE timing and resources per stage option): {t_opts:.1f} s; workloads: {t_work:.1f} s")
    print(f"full sweep ({args.board}, {len(workloads)} indexes, K=10): {t_total:.1f} s")
    print(
        "a combination: one candidate the kernel scores (bottleneck cycles, summed resources, budget test) — "
        "a whole design (one index, one option per stage group after pruning) or a partial opq x lut / "
        "(opq, lut) x front candidate built on the way"
    )
    if len(result.pool):
        key = int(result.pool[0, 0])
        print(
            f"best: {workloads[key].label()} at "
            f"{args.clock * 1e6 / result.pool[0, 3]:,.0f} QPS, {result.pool[0, 4]:,.0f} LUT"
        )
    figures = {
        "board": args.board,
        "indexes": len(workloads),
        "queries": args.queries,
        "raw_combinations": float(result.raw),
        "evaluated": int(result.evaluated),
        "bounded": int(result.bounded),
        "search_seconds": round(result.seconds, 3),
        "combinations_per_second": round(rate),
        "options_seconds": round(t_opts, 1),
        "workloads_seconds": round(t_work, 1),
        "total_seconds": round(t_total, 1),
    }
    write_result(args.json, "dse", command_line(), figures)


def readme_row(f: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    value = (
        f"{f['combinations_per_second']:,} combinations/s on one core "
        f"({f['evaluated']:,} in {f['search_seconds']:.2f} s"
        + (f", {f['bounded']:,} more skipped by their bound" if "bounded" in f else "")
        + "; "
        "a combination is one candidate the search kernel scores — bottleneck cycles, summed resources and the "
        "budget test — almost all whole designs: one index at its nprobe with one option per stage group after "
        "Pareto pruning); a full "
        f"{f['board'].upper()} sweep of {f['indexes']} indexes at SIFT100M scale: {f['total_seconds']:.1f} s, "
        f"of which {f['options_seconds']:.1f} s enumerate the stage options (PE timing and resources)"
    )
    return "DSE speed", value


if __name__ == "__main__":
    main()
