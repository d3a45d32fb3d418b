"""Across-query accelerators (P Falcon QPPs sharing the memory channels) in RTL simulation.

For each P it builds the generated top level (`fanns.arch.graph.across`) with Verilator, its
masters on a simulated memory of one bank per graph channel that moves one beat per cycle per
channel among all masters, runs P x `--per-qpp` queries (QPP p takes block p), and prints: result
rows differing from the DST reference (keys and statistics), the batch's measured cycles (first
ap_start to last interrupt) and queries per kilocycle against the across-query cycle model
(`fanns.model.graph.across`), and measured against modelled latency per query.

    PYTHONPATH=. python benchmarks/graph_across_rtl.py                      # P = 2 and 4, 2,000 SIFT nodes
    PYTHONPATH=. python benchmarks/graph_across_rtl.py --pipelines 2 --per-qpp 8 --latency 100
    PYTHONPATH=. python benchmarks/graph_across_rtl.py --json PATH         # also record the figures
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from record import command_line, write_result

from fanns.datasets import load_dataset
from fanns.design.graph import Runtime
from fanns.explore.graph import prepare_vectors
from fanns.images.graph import pack
from fanns.index.graph import build_graph, graph_format_for
from fanns.model.graph.across import across_batch_cycles
from fanns.model.graph.pinned import pinned_graph_design
from fanns.model.graph.qpp import QppConfig, simulate
from fanns.reference.graph import STATS, reference
from fanns.sim.graph.across_rtl import FalconAcrossRtl, bank_words, split_queries


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="builtin:sift-10k")
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--pipelines", default="2,4", help="P values, comma-separated")
    ap.add_argument("--channels", type=int, default=2)
    ap.add_argument("--per-qpp", type=int, default=4, help="queries per QPP")
    ap.add_argument("--latency", type=int, default=40, help="memory latency in cycles after the AR handshake")
    ap.add_argument("--runtime", default="64,10,4,1", metavar="L,K,MG,MC")
    ap.add_argument("--build-root", type=Path, help="Verilator build folder (default: a temporary one)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    figures = {"dataset": args.dataset, "nodes": args.nodes, "channels": args.channels, "per_qpp": args.per_qpp}
    figures |= {"latency": args.latency, "runtime": args.runtime, "designs": []}

    ds = load_dataset(args.dataset)
    base, queries = prepare_vectors(ds)
    base = base[: args.nodes]
    graph = build_graph(base, "hnsw", max_degree=32, fmt=graph_format_for(base))
    rt = Runtime(*(int(v) for v in args.runtime.split(",")))
    root = args.build_root or Path(tempfile.mkdtemp(prefix="fanns-across-"))
    for pipes in (int(v) for v in args.pipelines.split(",")):
        design = pinned_graph_design(
            graph,
            mode="across",
            pipelines=pipes,
            units=1,
            channels=args.channels,
            l_max=64,
            k_max=10,
            bloom=(3, 3 * 2**14),
            limits=(8, 4),
            runtime=(rt.l, rt.k, rt.mg, rt.mc),
        )
        nq = pipes * args.per_qpp
        q = graph.fmt.quantize(queries[:nq])
        images = pack(design, graph)
        rtl = FalconAcrossRtl(design, (root / f"across-p{pipes}").resolve(), bank_words(images, nq))
        t0 = time.perf_counter()
        rtl.build()
        built = time.perf_counter() - t0
        t0 = time.perf_counter()
        run = rtl.run(images, q, rt, latency=args.latency)
        ran = time.perf_counter() - t0
        ref = reference(design, graph, q, rt)
        (root / f"across-p{pipes}-run.json").write_text(
            json.dumps(
                {
                    "latency": args.latency,
                    "runtime": list(args.runtime.split(",")),
                    "sim_cycles": run.sim_cycles,
                    "run_cycles": run.run_cycles,
                    "cycles": run.stats["cycles"].tolist(),
                }
            )
        )
        bad = (run.keys != ref.keys).any(1)
        for name in STATS:
            bad |= run.stats[name] != ref.stats[name]
        cfg = QppConfig.of_design(design, args.latency, rt)
        blocks = split_queries(nq, pipes)
        model = across_batch_cycles(ref.traces, cfg, blocks, design.channels)
        free = np.array([simulate(t, cfg).latency for t in ref.traces])
        cycles = run.stats["cycles"]
        print(
            f"P={pipes} QPPs on {design.channels} channels, {nq} queries, l {rt.l} "
            f"mg {rt.mg} mc {rt.mc}, latency {args.latency}: build {built:.0f} s, "
            f"simulation {ran:.0f} s; status {run.status}, timed out {run.timed_out}"
        )
        print(f"  {int(bad.sum())} of {nq} result rows differ from the DST reference")
        print(
            f"  batch: measured {run.sim_cycles:,} cycles (QPP run counters {run.run_cycles}), model {model.batch:,} "
            f"({100 * (model.batch - run.sim_cycles) / run.sim_cycles:+.2f}%); "
            f"{1000 * nq / run.sim_cycles:.3f} vs {1000 * nq / model.batch:.3f} queries per kilocycle"
        )
        err = (model.latency - cycles) / cycles
        figures["designs"].append(
            {
                "pipelines": pipes,
                "queries": nq,
                "differ": int(bad.sum()),
                "measured_cycles": int(run.sim_cycles),
                "model_cycles": int(model.batch),
                "latency_max_error": round(float(np.abs(err).max()), 4),
            }
        )
        print(
            f"  latency per query: measured mean {cycles.mean():,.0f}, model {model.latency.mean():,.0f} "
            f"(max error {100 * np.abs(err).max():.2f}%), without sharing {free.mean():,.0f}; "
            f"channel utilisation {np.round(model.utilisation, 3).tolist()}"
        )

    write_result(args.json, "graph_across_rtl", command_line(), figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    figure = (
        f"across-query RTL ({figures['nodes']:,}-node SIFT HNSW, {figures['channels']} channels shared one beat per "
        f"cycle, {figures['per_qpp']} queries per QPP, memory latency {figures['latency']} cycles)"
    )
    parts = []
    for d in figures["designs"]:
        err = 100 * (d["model_cycles"] - d["measured_cycles"]) / d["measured_cycles"]
        parts.append(
            f"P = {d['pipelines']}: {d['differ']} of {d['queries']} rows differ, batch "
            f"{d['measured_cycles']:,} cycles vs model {d['model_cycles']:,} ({err:+.1f} %)"
        )
    return figure, "; ".join(parts)


if __name__ == "__main__":
    main()
