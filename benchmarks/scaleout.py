"""Scale-out: P99 of a distributed query over N = 1 .. 1024 accelerators, against a CPU baseline.

1. The FANNS setting at SIFT100M scale (N = 1e8, d 128, IVF8192,PQ16, nprobe 17, K 10, synthetic
   size-biased probes of 2,000 queries): the DSE's best design on each board, its per-query
   latency distribution alone (`fanns.model.ivfpq.latency`), and the P50/P99 curves with each
   accelerator holding its own 1e8-vector partition (`fanns.model.ivfpq.scaleout`, LogGP tree from the
   seed). Boards run in parallel (`fanns.tools.parallel`, a local process pool by default).
2. The same model against a CPU measured here: builtin:sift (1e5 x 128) explored for `--goal`
   (IVF1024,PQ16), the best U55C design for it, and faiss's per-query latency on one thread for
   the same index and nprobe, both extrapolated to N accelerators / CPU servers. Split-by-vector
   (one index over N accelerators) is printed for the FPGA as well. The CPU is timed on two
   clocks (`fanns.model.cpu_baseline`): wall clock, and the thread's CPU clock, whose tail does
   not include the preemption a shared machine adds.

    PYTHONPATH=. python benchmarks/scaleout.py [--backend process|dask|ray] [--boards u55c,u280] [--json PATH]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import faiss
import numpy as np
from record import command_line, write_result

from fanns.boards import load_board
from fanns.datasets import load_dataset
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.index.goals import parse_goal
from fanns.index.ivfpq import host_vectors
from fanns.model import cpu_baseline
from fanns.model.ivfpq import dse
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import scaleout as scaleout_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.workload import synthetic_workload, workloads_from_explore
from fanns.tools.parallel import map_jobs

SHOW = (1, 16, 1024)


def fanns_setting(board: str) -> dict:
    w = synthetic_workload(10**8, 128, 16, 8192, 17, 10, False, queries=2000, seed=0)
    p = dse.run([w], load_board(board), "SIFT100M R@10", 140.0, top=1).best
    us = latency_model.query_times(p.ctx, p.stages, stage_model.Probes.of(w.probed)).alone() / p.clock_mhz
    return {
        "board": board,
        "qps": p.qps,
        "curve": scaleout_model.partition_curve(f"FPGA {board}", us, *scaleout_model.message_bytes(128, 10)).as_dict(),
    }


def line(c: dict) -> str:
    idx = [c["counts"].index(n) for n in SHOW]
    return "  ".join(f"N={n}: P50 {c['p50_us'][i]:8.1f} P99 {c['p99_us'][i]:8.1f} us" for n, i in zip(SHOW, idx))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--backend", default="process", help="parallel backend for the board sweep (default: process)")
    ap.add_argument("--boards", default="u55c,u280,u250", help="boards of part 1 (default u55c,u280,u250)")
    ap.add_argument(
        "--cluster", metavar="ADDRESS", help="an existing Dask (tcp://HOST:PORT) or Ray (ray://...) cluster"
    )
    ap.add_argument("--goal", default="R@10=0.5", help="recall goal of part 2 (default R@10=0.5)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    print("LogGP (FANNS 6.6.3.2): L = 6.0 us, o = 4.7 us, G = 0.73 ns/B, merge 1.0 us; binary-tree broadcast + reduce")
    print("1. SIFT100M-scale partitions (IVF8192,PQ16, nprobe 17, K 10; model, 140 MHz):")
    for r in map_jobs(fanns_setting, args.boards.split(","), backend=args.backend, cluster=args.cluster):
        print(f"  {r['board']:6s} {r['qps']:9,.0f} QPS  {line(r['curve'])}")

    goal = parse_goal(args.goal)
    print(f"2. builtin:sift (1e5 x 128), {goal.text}, FPGA model vs CPU measured with faiss (1 thread, batch 1):")
    ds = load_dataset("builtin:sift")
    with tempfile.TemporaryDirectory() as tmp:
        cfg = ExploreConfig(goals=[goal], nlists=[1024], ms=[16], opq=(False,), max_queries=1000)
        IvfPqExplorer(ds, cfg, Path(tmp)).run()
        workloads, unreachable = workloads_from_explore(Path(tmp), goal)
        if not workloads:
            raise SystemExit(f"IVF1024,PQ16 does not reach {goal.text} on held-out queries: {unreachable}")
        (w,) = workloads
        u55c = load_board("u55c")
        p = dse.run([w], u55c, goal.text, u55c.clock_mhz, top=1).best
        fpga = latency_model.query_times(p.ctx, p.stages, stage_model.Probes.of(w.probed)).alone() / p.clock_mhz
        index = faiss.read_index(str(w.index_path))
        queries = host_vectors(np.asarray(ds.queries[: w.queries]), ds.metric)
        cpu = cpu_baseline.measure(index, queries, w.nprobe, w.k, repeat=3, label=w.index)
    qb, rb = scaleout_model.message_bytes(ds.d, w.k)
    print(
        f"  {w.label()}: FPGA (U55C, {p.clock_mhz:g} MHz, {p.qps:,.0f} QPS) alone P50 "
        f"{np.percentile(fpga, 50):.1f} / P99 {np.percentile(fpga, 99):.1f} us; CPU "
        f"wall clock {cpu.percentiles()}, thread CPU clock {cpu.percentiles('cpu')}"
    )
    curves = [
        scaleout_model.partition_curve("FPGA partition", fpga, qb, rb).as_dict(),
        scaleout_model.split_curve("FPGA split by vector", p.ctx, p.stages, w.list_sizes, w.cells, qb, rb).as_dict(),
        scaleout_model.partition_curve("CPU partition (wall)", cpu.times("wall"), qb, rb).as_dict(),
        scaleout_model.partition_curve("CPU partition (CPU)", cpu.times("cpu"), qb, rb).as_dict(),
    ]
    for c in curves:
        print(f"  {c['label']:22s} {line(c)}")
    f = curves[0]
    for c in curves[2:]:
        for n in SHOW:
            i = f["counts"].index(n)
            print(f"  P99 speedup FPGA over {c['label']} at N={n}: {c['p99_us'][i] / f['p99_us'][i]:.2f}x")
    p99 = {c["label"]: [round(c["p99_us"][c["counts"].index(n)], 1) for n in SHOW] for c in curves}
    figures = {"index": w.label(), "goal": goal.text, "board": "u55c", "shards": list(SHOW), "p99_us": p99}
    write_result(args.json, "scaleout", command_line(), figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    p99, n = figures["p99_us"], " / ".join(str(v) for v in figures["shards"])

    def us(label: str) -> str:
        return " / ".join(f"{v:,.1f}" for v in p99[label]) + " µs"

    figure = (
        f"scale-out P99, builtin:sift {figures['index']} ({figures['goal']}), {figures['board'].upper()} design "
        "(model) vs faiss on 1 thread (measured on the thread's CPU clock)"
    )
    value = (
        f"FPGA {us('FPGA partition')} vs CPU {us('CPU partition (CPU)')} at N = {n} shards (the wall clock of the "
        f"same CPU run: {us('CPU partition (wall)')} — on a shared machine the wall clock adds preemption)"
    )
    return figure, value


if __name__ == "__main__":
    main()
