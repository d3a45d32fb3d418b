"""Whole generated IVF-PQ accelerators in RTL simulation: correctness and cycles vs the model.

For each design (built-in sift-10k, explored once into WORK/explore; more queries than the CI
tests), generate the RTL project, build it with Verilator, run the queries through cocotb with
memory models of the model's latency, and print: queries and result keys checked, mismatches
against the design reference model, R@10 beside the reference model's, the measured
steady-state cycles per query beside the performance model's prediction for the same queries
(and the error), and the simulation speed.

    PYTHONPATH=. python benchmarks/rtl_sim.py [--design NAME ...] [--queries N] [--work DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from record import command_line, write_result

from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.datasets.loader import load_dataset
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.flow.ivfpq_inputs import load_index
from fanns.flow.sim_cli import recall
from fanns.index.goals import parse_goal
from fanns.index.ivfpq import host_vectors
from fanns.model.ivfpq.pinned import pinned_design
from fanns.numerics import IvfPqFormat
from fanns.sim.ivfpq.rtl import RtlProjectSim, Run, measured_interval

GOAL = "R@10=0.6"
# name: (opq, nprobe, K, ivf (PEs, lanes, storage), lut (PEs, lanes, store), pq (PEs, channels), sel_cells, sel_k)
DESIGNS = {
    "opq-k10": (True, 4, 10, (2, 32, "bram"), (4, 64, "bram"), (3, 1), "hpq", "hpq"),
    "k100": (False, 4, 100, (2, 32, "uram"), (4, 32, "uram"), (2, 1), "hpq", "hpq"),
    "k1-hsmpqg": (False, 4, 1, (5, 32, "uram"), (2, 32, "uram"), (4, 2), "hsmpqg", "hsmpqg"),
    "k10-ahpq": (False, 4, 10, (3, 32, "bram"), (4, 32, "bram"), (6, 3), "hpq", "ahpq"),
    "pq-bound": (False, 8, 10, (4, 64, "bram"), (8, 64, "bram"), (1, 1), "hpq", "hpq"),
    # one cell per query, BuildLUT balanced against PQDist + SelK with two LUTs of buffer between
    "lut-buffer": (False, 1, 10, (2, 32, "bram"), (1, 64, "bram"), (2, 1), "hpq", "hpq"),
}


def explore(work: Path, queries: int) -> dict:
    ds = load_dataset("builtin:sift-10k")
    cfg = ExploreConfig(
        goals=[parse_goal(GOAL)], nlists=[32], ms=[16], opq=(False, True), max_queries=queries, qps_min_seconds=0.0
    )
    result = IvfPqExplorer(ds, cfg, work / "explore").run()
    out = {}
    for rec in result["indexes"]:
        out[rec["opq"]] = (load_index(work / "explore", rec, ds.metric), IvfPqFormat.from_dict(rec["format"]))
    q = host_vectors(np.asarray(ds.queries[:queries]), ds.metric)
    return {"indexes": out, "queries": q, "gt": ds.groundtruth(100)[:queries]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", action="append", choices=sorted(DESIGNS), help="designs (default: all)")
    ap.add_argument("--queries", type=int, default=48, help="queries per design (default 48)")
    ap.add_argument("--work", default="work/bench-rtl", help="folder for the exploration, projects and builds")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    figures = {"dataset": "builtin:sift-10k", "goal": GOAL, "queries": args.queries, "designs": []}
    work = Path(args.work).resolve()  # the cocotb bench runs in its build folder
    ex = explore(work, args.queries)
    for name in args.design or sorted(DESIGNS):
        opq, nprobe, k, ivf, lut, pq, sel_cells, sel_k = DESIGNS[name]
        data, fmt = ex["indexes"][opq]
        design = pinned_design(data, fmt, nprobe=nprobe, k=k, ivf=ivf, lut=lut, pq=pq, sel_cells=sel_cells, sel_k=sel_k)
        nq = ex["queries"].shape[0]
        project = generate_rtl(
            design, data, TestQueries(ex["queries"], ex["gt"][:, : max(k, 10)]), work / name, force=True
        )
        sim = RtlProjectSim(project.path, work / "builds")
        start = time.perf_counter()
        sim.build()
        built = time.perf_counter() - start
        start = time.perf_counter()
        run = sim.run([Run(nq=nq, nprobe=nprobe, k=k)])["runs"][0]
        ran = time.perf_counter() - start
        model = sim.predicted_run(0, nq)
        timings = model.timings
        measured = measured_interval(run)
        ref = np.fromfile(project.path / "data" / "reference_keys.bin", dtype="<u8").reshape(nq, k)
        gt = ex["gt"][:, :k]
        print(
            f"{name}: {design.index.factory} nprobe {nprobe} K {k} | IVF "
            f"{ivf} LUT {lut} PQ {pq} SelCells {sel_cells} SelK {sel_k}"
        )
        print(
            f"  {nq} queries, {run['checked_keys']} keys checked, {run['mismatched_queries']} queries differ "
            f"from the reference; R@{k} {recall(run['keys'], gt):.4f} (reference {recall(ref, gt):.4f})"
        )
        print(
            f"  cycles/query measured {measured:,.1f}, predicted {model.interval:,.1f} ({model.bottleneck}), "
            f"error {model.error_pct(measured):+.2f}% (slowest stage alone {model.stage_interval:,.1f}: "
            f"{100 * (measured - model.stage_interval) / model.stage_interval:+.2f}%); stages: "
            + ", ".join(f"{s} {t.interval:,.0f}" for s, t in timings.items())
        )
        figures["designs"].append(
            {
                "design": name,
                "index": design.index.factory,
                "nprobe": nprobe,
                "k": k,
                "queries": nq,
                "differ": run["mismatched_queries"],
                "measured": round(measured, 1),
                "predicted": round(model.interval, 1),
                "slowest_stage": round(model.stage_interval, 1),
                "bottleneck": model.bottleneck,
            }
        )
        print(
            f"  build {built:.0f} s, simulation {ran:.0f} s for "
            f"{run['sim_cycles']:,} cycles ({run['sim_cycles'] / ran:,.0f} cycles/s)"
        )

    write_result(args.json, "rtl_sim", command_line(), figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    designs = figures["designs"]
    figure = (
        f"RTL cycles per query vs the performance model, pinned designs on {figures['dataset']} "
        f"({figures['queries']} queries each; lut-buffer: one cell per query, BuildLUT balanced against the back "
        "end with two LUTs of buffer — the finite-buffer sequence model, docs/ivfpq_architecture.md)"
    )

    def err(measured: float, model: float) -> str:
        return f"{100 * (measured - model) / model:+.2f} %"

    parts = [
        f"{d['design']} ({d['index']}, nprobe {d['nprobe']}, K {d['k']}): {d['differ']} of {d['queries']} queries "
        f"differ; {d['measured']:,.1f} measured vs {d['predicted']:,.1f} predicted "
        f"({err(d['measured'], d['predicted'])}; the slowest stage alone {d['slowest_stage']:,.1f}: "
        f"{err(d['measured'], d['slowest_stage'])})"
        for d in designs
    ]
    return figure, "; ".join(parts)


if __name__ == "__main__":
    main()
