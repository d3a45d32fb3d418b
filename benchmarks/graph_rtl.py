"""Generated Falcon QPPs in RTL simulation: agreement with the DST reference and the cycle model.

For each design (BFC units x graph channels) it builds the QPP once with Verilator, then runs the
test queries at several run-time (l, k, mg, mc) and prints, per configuration: queries, result
rows differing from the DST reference (keys and statistics), measured and modelled cycles per
query with the largest per-query model error, recall R@k, and simulation speed.

    PYTHONPATH=. python benchmarks/graph_rtl.py                          # 3,000 SIFT nodes, 20 queries
    PYTHONPATH=. python benchmarks/graph_rtl.py --nodes 5000 --queries 50 --designs 1x1,2x2,4x4 --kind nsg
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import faiss
import numpy as np

from fanns.datasets import load_dataset
from fanns.design.graph import Runtime
from fanns.explore.graph import prepare_vectors
from fanns.images.graph import pack, split_keys
from fanns.index.graph import build_graph, graph_format_for
from fanns.index.recall import recall_at_k
from fanns.model.graph.pinned import pinned_graph_design
from fanns.reference.graph import STATS, reference
from fanns.sim.graph.rtl import FalconRtl, memory_words

RUNTIMES = [(64, 10, 1, 1), (64, 10, 2, 1), (64, 10, 4, 2), (64, 10, 8, 4), (32, 10, 4, 4)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="builtin:sift-10k")
    ap.add_argument("--kind", default="hnsw", choices=("hnsw", "nsg"))
    ap.add_argument("--nodes", type=int, default=3000)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--designs", default="1x1,2x2", help="UNITSxCHANNELS, comma-separated")
    ap.add_argument("--latency", type=int, default=100, help="memory latency of the simulated memory, cycles")
    ap.add_argument("--build-dir", help="Verilator builds (default: a temporary folder)")
    args = ap.parse_args()

    ds = load_dataset(args.dataset)
    base, queries = prepare_vectors(ds)
    base, queries = base[: args.nodes], queries[: args.queries]
    graph = build_graph(base, args.kind, max_degree=32, fmt=graph_format_for(base))
    q = graph.fmt.quantize(queries)
    gt = faiss.knn(np.ascontiguousarray(queries), np.ascontiguousarray(base), 10)[1]
    root = Path(args.build_dir or tempfile.mkdtemp(prefix="graph_rtl_"))
    print(
        f"{args.dataset} {args.kind}: {graph.n} nodes, max degree "
        f"{graph.max_degree}, {len(q)} queries, memory latency {args.latency}"
    )
    for spec in args.designs.split(","):
        units, channels = (int(v) for v in spec.split("x"))
        design = pinned_graph_design(
            graph, units=units, channels=channels, l_max=64, k_max=10, bloom=(3, 3 * 2**14), limits=(8, 4)
        )
        images = pack(design, graph)
        rtl = FalconRtl(design, root / f"u{units}c{channels}", memory_words(images, len(q)))
        t0 = time.perf_counter()
        rtl.build()
        print(f"\n{units} BFC unit(s), {channels} channel(s): Verilator build {time.perf_counter() - t0:.0f} s")
        print(
            f"{'l,k,mg,mc':>11} {'queries':>7} {'differ':>6} {'cycles':>8} "
            f"{'model':>8} {'max err':>8} {'R@10':>6} {'sim cyc/s':>10}"
        )
        for rt_tuple in RUNTIMES:
            rt = Runtime(*rt_tuple)
            t0 = time.perf_counter()
            run = rtl.run(images, q, rt, latency=args.latency)
            wall = time.perf_counter() - t0
            ref = reference(design, graph, q, rt)
            bad = (run.keys != ref.keys).any(1)
            for name in STATS:
                bad |= run.stats[name] != ref.stats[name]
            cycles = run.stats["cycles"]
            model = ref.predicted_cycles(design, args.latency, rt)
            err = np.abs(model - cycles) / cycles
            ids, _ = split_keys(run.keys, rt.k)
            print(
                f"{','.join(map(str, rt_tuple)):>11} {len(q):7d} {int(bad.sum()) + int(run.timed_out):6d} "
                f"{cycles.mean():8.0f} {model.mean():8.0f} {100 * err.max():7.2f}% "
                f"{recall_at_k(ids, gt, rt.k):6.3f} {run.sim_cycles / wall:10,.0f}"
            )


if __name__ == "__main__":
    main()
