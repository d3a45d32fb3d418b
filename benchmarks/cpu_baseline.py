"""The CPU baseline, repeated: faiss-cpu QPS as the median of several measurement windows, on one
thread (the thread's CPU clock) and on all cores (wall clock), at the FPGA design's own index and
nprobe and at the best CPU index for the goal; the FPGA / CPU ratio against the median, with the
spread. The same measurement is run `--runs` times to show how much the median still moves (a
single window, the old figure, is shown beside it).

    PYTHONPATH=. python benchmarks/cpu_baseline.py [--dataset builtin:sift-10k] [--runs 5] [--json PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NamedTuple

import faiss
import numpy as np
from record import command_line, cpu_model, write_result

from fanns.boards import Board, load_board
from fanns.datasets.loader import Dataset, load_dataset
from fanns.explore.ivfpq import ExploreConfig
from fanns.explore.ivfpq_reuse import ensure_exploration, index_names
from fanns.index.goals import RecallGoal, parse_goal
from fanns.index.ivfpq import host_vectors
from fanns.model.cpu_baseline import QPS_REPEATS, all_threads, measure_qps, spread_text
from fanns.model.ivfpq import dse
from fanns.model.ivfpq.workload import workloads_from_explore


def measure(index, queries: np.ndarray, nprobe: int, k: int, threads: int, runs: int, window: float) -> list:
    return [measure_qps(index, queries, nprobe, k, threads=threads, window_seconds=window) for _ in range(runs)]


def summary(results: list) -> dict:
    """The first measurement (median, quartiles, range of its windows) and how far the median of
    the repeated measurements and the single windows still move."""
    medians = np.array([r.median for r in results])
    windows = np.concatenate([r.samples for r in results])
    return {
        **results[0].as_dict(),
        "repeated_medians": [round(float(medians.min()), 1), round(float(medians.max()), 1)],
        "windows": [round(float(windows.min()), 1), round(float(windows.max()), 1)],
        "runs": len(results),
    }


def report(label: str, fpga_qps: float, s: dict) -> None:
    (lo, hi), (wlo, whi) = s["repeated_medians"], s["windows"]
    print(f"  {label}: {spread_text(s)}")
    print(
        f"    the median over {s['runs']} repeated measurements: {lo:,.0f}-{hi:,.0f} ({hi / lo:.2f}x); "
        f"single windows: {wlo:,.0f}-{whi:,.0f} ({whi / wlo:.2f}x)"
    )
    iqr = f"{fpga_qps / s['q3']:.1f}-{fpga_qps / s['q1']:.1f}x"
    print(f"    FPGA / CPU = {fpga_qps / s['qps']:.1f}x against the median (IQR {iqr})")


def add_demo_options(ap: argparse.ArgumentParser) -> None:
    """The options naming the demo's case (dataset, goal, grid, queries, board, exploration folder),
    shared with `cpu_load.py`."""
    ap.add_argument("--dataset", default="builtin:sift-10k", help="dataset (default builtin:sift-10k, the demo's)")
    ap.add_argument("--recall", default="1-R@10=0.8", help="recall goal (default the demo's 1-R@10=0.8)")
    ap.add_argument("--nlist", default="32,64", help="nlists explored (default the demo's 32,64)")
    ap.add_argument("--queries", type=int, default=200, help="queries (default the demo's 200)")
    ap.add_argument("--board", default="u55c", help="board of the FPGA design (default u55c)")
    ap.add_argument("--explore-dir", default="work/bench-cpu/explore", help="exploration folder to reuse or fill")


class DemoCase(NamedTuple):
    """The case `add_demo_options` names, explored, with the FPGA design the DSE chooses for it."""

    ds: Dataset
    goal: RecallGoal
    board: Board
    folder: Path
    explore: dict
    best: dse.DesignPoint


def demo_case(args: argparse.Namespace) -> DemoCase:
    """Explore (or reuse) the case of `args` and choose its best FPGA design, as `fanns generate` does."""
    goal = parse_goal(args.recall)
    ds = load_dataset(args.dataset)
    cfg = ExploreConfig(goals=[goal], nlists=[int(v) for v in args.nlist.split(",")], max_queries=args.queries)
    folder, explore, _ = ensure_exploration(ds, cfg, Path(args.explore_dir))
    board = load_board(args.board)
    workloads, unreachable = workloads_from_explore(folder, goal, index_names(explore))
    best = dse.run(workloads, board, goal.text, board.clock_mhz, 0.6, 1, unreachable).best
    if best is None:
        raise SystemExit(f"no FPGA design on {board.name} for {goal.text}")
    return DemoCase(ds, goal, board, folder, explore, best)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    add_demo_options(ap)
    ap.add_argument("--runs", type=int, default=5, help="repeated measurements of each figure (default 5)")
    ap.add_argument("--window", type=float, default=0.05, help="seconds per measurement window (default 0.05)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    ds, goal, board, folder, explore, best = demo_case(args)
    fpga_qps = best.qps
    queries = host_vectors(np.asarray(ds.queries[: args.queries]), ds.metric)
    reached = {
        r["index"]: (r, r["goals"][goal.text]["nprobe"]) for r in explore["indexes"] if r["goals"][goal.text]["reached"]
    }
    indexes = {name: faiss.read_index(str(folder / rec["path"])) for name, (rec, _) in reached.items()}
    design_index = best.workload.index
    print(
        f"{ds.name}, {goal.text}, {args.queries} queries, K {goal.k}; CPU: {cpu_model()}, {all_threads()} core(s) "
        f"available; each figure: median of {QPS_REPEATS} windows of >= {args.window} s"
    )
    print(f"FPGA design ({board.name}, model): {design_index} nprobe {best.workload.nprobe}, {fpga_qps:,.0f} QPS")
    figures = {
        "dataset": ds.name,
        "goal": goal.text,
        "queries": args.queries,
        "window_seconds": args.window,
        "fpga": {"board": board.name, "index": design_index, "nprobe": best.workload.nprobe, "qps": fpga_qps},
        "threads": {},
    }
    for threads in (1, all_threads()):
        clock = "thread CPU clock" if threads == 1 else "wall clock"
        print(f"\n{threads} thread(s), {clock}:")
        per_index = {
            name: summary(measure(indexes[name], queries, p, goal.k, threads, args.runs, args.window))
            for name, (_, p) in sorted(reached.items())
        }
        same = per_index[design_index]
        report(f"same index as the FPGA design, {design_index} nprobe {reached[design_index][1]}", fpga_qps, same)
        best_cpu = max(per_index, key=lambda n: per_index[n]["qps"])
        report(f"best CPU index for the goal, {best_cpu} nprobe {reached[best_cpu][1]}", fpga_qps, per_index[best_cpu])
        figures["threads"][str(threads)] = {
            "same_index": same,
            "best_index": {"index": best_cpu, "nprobe": reached[best_cpu][1], **per_index[best_cpu]},
        }
    write_result(args.json, "cpu_baseline", command_line(), figures)


def readme_row(f: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    fpga = f["fpga"]
    parts = []
    for threads, t in f["threads"].items():
        clock = "thread CPU clock" if threads == "1" else "wall clock"
        s, b = t["same_index"], t["best_index"]
        (lo, hi), (wlo, whi) = s["repeated_medians"], s["windows"]
        text = (
            f"{threads} thread(s) ({clock}): at the design's index median {s['qps']:,.0f} QPS (IQR {s['q1']:,.0f}–"
            f"{s['q3']:,.0f}, {s['repeats']} windows); {s['runs']} repeated medians {lo:,.0f}–{hi:,.0f} "
            f"({hi / lo:.2f}×; single windows {wlo:,.0f}–{whi:,.0f}) -> FPGA / CPU {fpga['qps'] / s['qps']:.1f}× "
            f"(IQR {fpga['qps'] / s['q3']:.1f}–{fpga['qps'] / s['q1']:.1f}×)"
        )
        if b["index"] != fpga["index"]:
            ratio = fpga["qps"] / b["qps"]
            text += f"; best CPU index {b['index']} nprobe {b['nprobe']}: {b['qps']:,.0f} -> {ratio:.1f}×"
        else:
            text += "; the design's index is also the best CPU index"
        parts.append(text)
    figure = (
        f"CPU baseline, repeated ({f['dataset']}, {f['goal']}, {f['queries']} queries; FPGA: the "
        f"{fpga['board'].upper()} design, model, {fpga['index']} nprobe {fpga['nprobe']}, {fpga['qps']:,.0f} QPS; "
        "one thread is timed on its own CPU clock, which other load does not move; all threads on the wall "
        "clock, which a loaded machine does — read the one-thread ratio there)"
    )
    return figure, ". ".join(parts)


if __name__ == "__main__":
    main()
