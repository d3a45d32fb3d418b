"""Simulation speed of whole accelerators: simulated clock cycles per second, cocotb vs fast (compiled) harness.

IVF-PQ (random index data, so nothing is explored or downloaded): a small design (K = 10, one
PQ channel), a K = 100 design (the tests' random-k100: three PQ channels) and a many-channel
design (eight PQ channels), each generated as an RTL project and simulated on the same queries by
the cocotb harness (`sim/tb_ivfpq.py`: cocotbext-axi memory models in Python) and the fast harness
(`fanns.sim.ivfpq.fast`: the project's Verilog with its memories in RTL, compiled with its clock
loop in C++ by `fanns.tools.vmodel`, no cocotb). A graph design (Falcon QPP, HNSW over 2,000 SIFT
vectors, memory in RTL) runs on its bench under cocotb (`sim/tb_falcon.py`) and compiled
(`fanns.sim.graph.bench`). Columns: the build (timed apart), the whole call (`RtlProjectSim.run` /
`FalconRtl.run`: simulator start, memory loading and the runs) and its rate, and the rate while the
runs go, per wall second and per processor second of the simulating process. The machine is shared,
so the per-processor-second rate is the one to compare; a long run approaches it on an idle core.
The keys and the accelerator's cycle registers of both harnesses are compared.

    PYTHONPATH=. python benchmarks/sim_speed.py [--queries N] [--design NAME ...] [--no-graph] [--json PATH]

Measured 2026-11-26 11:00-11:31 UTC (--queries 12 --graph-queries 3; AMD EPYC VM, 2 logical cores,
load average 13-22 from other jobs, so the wall-clock rates are polluted), in-run cycles per
processor second, cocotb -> fast: small-k10 2,866 -> 277,290, random-k100 1,328 -> 149,478,
channels-8 978 -> 158,947, graph 121,500 -> 198,962 (the graph's cocotb bench had its memory in RTL
already); keys and cycle registers equal on all four (benchmarks/results/sim_speed.json).
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from record import cpu_model, write_result

from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.datasets import load_dataset
from fanns.design.graph import Runtime
from fanns.images.graph import pack
from fanns.index.graph import build_graph, graph_format_for
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.graph.pinned import pinned_graph_design
from fanns.model.ivfpq.pinned import pinned_design
from fanns.sim.graph.rtl import FalconRtl, memory_words
from fanns.sim.ivfpq.rtl import RtlProjectSim, Run

# name: (nlist, n, nprobe, K, ivf (PEs, lanes, storage), lut (PEs, lanes, storage), pq (PEs, channels))
DESIGNS = {
    "small-k10": (12, 900, 3, 10, (2, 16, "bram"), (2, 16, "bram"), (2, 1)),
    "random-k100": (12, 900, 3, 100, (3, 16, "bram"), (2, 16, "bram"), (5, 3)),
    "channels-8": (16, 4000, 4, 10, (2, 16, "bram"), (2, 16, "bram"), (8, 8)),
}
REGISTERS = ("cycles", "load_cycles", "first_cycles", "last_cycles")
HARNESSES = ("cocotb", "fast")


def machine() -> str:
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    return f"{platform.node()}: {cpu_model()}, {os.cpu_count()} logical cores, load average {load}"


def row(name: str, harness: str, built: float, cycles: int, wall: float, run_wall: float, run_cpu: float) -> dict:
    """One measurement, printed as a table line and kept for --json."""
    out = {
        "design": name,
        "harness": harness,
        "build_seconds": round(built, 1),
        "cycles": cycles,
        "call_seconds": round(wall, 2),
        "call_cycles_per_second": round(cycles / wall),
        "run_cycles_per_second": round(cycles / run_wall),
        "run_cycles_per_cpu_second": round(cycles / run_cpu),
    }
    print(
        f"{name:14} {harness:7} {built:8.0f} {cycles:10,} {wall:8.1f} {out['call_cycles_per_second']:12,} "
        f"{out['run_cycles_per_second']:12,} {out['run_cycles_per_cpu_second']:12,}",
        flush=True,
    )
    return out


def ivfpq_project(name: str, queries: int, folder: Path) -> Path:
    nlist, n, nprobe, k, ivf, lut, pq = DESIGNS[name]
    data = random_index(nlist=nlist, n=n, d=32, m=8, empty=2)
    q = np.random.default_rng(5).standard_normal((queries, 32)).astype(np.float32)
    design = pinned_design(data, random_format(32, 8), nprobe=nprobe, k=k, ivf=ivf, lut=lut, pq=pq)
    test = TestQueries(q, np.zeros((queries, max(k, 10)), dtype=np.int64))
    return generate_rtl(design, data, test, folder / name, force=True).path


def measure_ivfpq(name: str, queries: int, folder: Path) -> list[dict]:
    project = ivfpq_project(name, queries, folder)
    runs, rows = {}, []
    for harness in HARNESSES:
        sim = RtlProjectSim(project, folder / "build", harness=harness)
        t0 = time.perf_counter()
        sim.build()
        built = time.perf_counter() - t0
        d = sim.design
        t0 = time.perf_counter()
        out = sim.run([Run(nq=queries, nprobe=d.nprobe, k=d.k)])
        wall = time.perf_counter() - t0
        runs[harness] = out["runs"][0]
        cycles = out["run_cycles"]
        rows.append(row(name, harness, built, cycles, wall, out["run_seconds"], out["run_cpu_seconds"]))
    old, new = runs["cocotb"], runs["fast"]
    same = np.array_equal(old["keys"], new["keys"]) and all(old[r] == new[r] for r in REGISTERS)
    regs = ", ".join(f"{r} {old[r]:,}/{new[r]:,}" for r in REGISTERS)
    print(f"{'':14} keys and cycle registers equal: {same}; registers cocotb/fast: {regs}", flush=True)
    for r in rows:
        r["equal"] = same
    return rows


def measure_graph(folder: Path, queries: int) -> list[dict]:
    ds = load_dataset("builtin:sift-10k")
    base = np.asarray(ds.base[:2000], dtype=np.float32)
    graph = build_graph(base, "hnsw", max_degree=32, fmt=graph_format_for(base))
    design = pinned_graph_design(graph, units=2, channels=2, l_max=64, k_max=10, bloom=(3, 3 * 2**14), limits=(8, 4))
    images = pack(design, graph)
    q = graph.fmt.quantize(np.asarray(ds.queries[:queries], dtype=np.float32))
    runs, rows = {}, []
    for harness in HARNESSES:
        rtl = FalconRtl(design, folder / f"falcon-{harness}", memory_words(images, queries), harness=harness)
        t0 = time.perf_counter()
        rtl.build()
        built = time.perf_counter() - t0
        t0 = time.perf_counter()
        run = runs[harness] = rtl.run(images, q, Runtime(l=64, k=10, mg=4, mc=2), latency=100)
        wall = time.perf_counter() - t0
        rows.append(row("graph-hnsw2k", harness, built, run.sim_cycles, wall, run.seconds, run.cpu_seconds))
    old, new = runs["cocotb"], runs["fast"]
    same = np.array_equal(old.keys, new.keys) and old.cycles == new.cycles
    print(f"{'':14} keys and cycle register equal: {same}; cycles cocotb/fast {old.cycles:,}/{new.cycles:,}")
    for r in rows:
        r["equal"] = same
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=4, help="queries per IVF-PQ design (default 4)")
    parser.add_argument("--design", nargs="+", choices=sorted(DESIGNS), help="IVF-PQ designs (default: all)")
    parser.add_argument("--graph-queries", type=int, default=3, help="queries of the graph design (default 3)")
    parser.add_argument("--no-graph", action="store_true", help="skip the graph design")
    parser.add_argument("--work", help="folder for projects and builds (default: a temporary folder)")
    parser.add_argument("--json", help="also write the rows to this JSON file (benchmarks/record.py)")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(
        f"{'design':14} {'harness':7} {'build s':>8} {'cycles':>10} {'call s':>8} {'call cyc/s':>12} "
        f"{'run cyc/s':>12} {'run cyc/cpu-s':>12}",
        flush=True,
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="fanns_simspeed_") as tmp:
        folder = Path(args.work or tmp)
        for name in args.design or DESIGNS:
            rows += measure_ivfpq(name, args.queries, folder)
        if not args.no_graph:
            rows += measure_graph(folder, args.graph_queries)
    shown = [f"--queries {args.queries}"] + (["--design", *args.design] if args.design else [])
    shown += [f"--graph-queries {args.graph_queries}"] if not args.no_graph else ["--no-graph"]
    shown += ["--json", args.json] if args.json else []
    command = "python benchmarks/sim_speed.py " + " ".join(shown)  # where the build files went is not part of it
    write_result(args.json, "sim_speed", command, {"queries": args.queries, "rows": rows})


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`):
    per design, the in-run rate per processor second (the machine is shared, so wall-clock rates say
    more about the load)."""
    by_design: dict[str, dict] = {}
    for r in figures["rows"]:
        by_design.setdefault(r["design"], {})[r["harness"]] = r
    parts = []
    for design, h in by_design.items():
        old, new = h["cocotb"], h["fast"]
        speedup = new["run_cycles_per_cpu_second"] / old["run_cycles_per_cpu_second"]
        parts.append(
            f"{design} {old['run_cycles_per_cpu_second']:,} → {new['run_cycles_per_cpu_second']:,} "
            f"({speedup:,.0f}×, {'equal' if new['equal'] else 'DIFFERENT'} keys and cycle registers)"
        )
    value = "simulated cycles per processor second while the runs go, cocotb harness → fast (compiled) harness: "
    return "whole-accelerator RTL simulation speed", value + "; ".join(parts)


if __name__ == "__main__":
    main()
