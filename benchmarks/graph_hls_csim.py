"""Generated Falcon QPPs in HLS C++ (C simulation with g++): agreement with the DST reference.

For each design (BFC units x graph channels) it writes the HLS project, compiles its kernel once,
then runs the test queries at several run-time (l, k, mg, mc) and prints, per configuration:
queries, result rows differing from the DST reference (keys and hops / visited / checks /
groups), Bloom false positives of the reference, recall R@k, hops per query and the speed of the
C simulation (a program on this host, not the accelerator).

    PYTHONPATH=. python benchmarks/graph_hls_csim.py                          # 10,000 SIFT nodes, 200 queries
    PYTHONPATH=. python benchmarks/graph_hls_csim.py --nodes 3000 --queries 50 --designs 1x1,4x4 --kind nsg
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import faiss
import numpy as np

from fanns.codegen.graph.hls import generate_graph_hls
from fanns.datasets import load_dataset
from fanns.design.graph import Runtime
from fanns.explore.graph import prepare_vectors
from fanns.images.graph import split_keys
from fanns.index.graph import build_graph, graph_format_for
from fanns.index.graph_traversal import dst
from fanns.index.recall import recall_at_k
from fanns.model.graph.pinned import pinned_graph_design
from fanns.reference.graph import STATS, reference, traversal_config
from fanns.sim.graph.csim import GraphHlsCsim

RUNTIMES = [(64, 10, 1, 1), (64, 10, 2, 1), (64, 10, 4, 2), (64, 10, 8, 4), (32, 10, 4, 4), (48, 5, 2, 3)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="builtin:sift-10k")
    ap.add_argument("--kind", default="hnsw", choices=("hnsw", "nsg"))
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--designs", default="1x1,2x2,4x4", help="UNITSxCHANNELS, comma-separated")
    ap.add_argument("--bloom", default="3,49152", metavar="H,B", help="Bloom filter per BFC unit (default 3,49152)")
    ap.add_argument("--work", help="folder for projects and builds (default: a temporary folder)")
    args = ap.parse_args()
    ds = load_dataset(args.dataset)
    base, queries = prepare_vectors(ds)
    base, queries = base[: args.nodes], queries[: args.queries]
    start = time.perf_counter()
    graph = build_graph(base, args.kind, max_degree=32, fmt=graph_format_for(base))
    print(f"{args.kind} graph of {graph.n} nodes built in {time.perf_counter() - start:.1f} s; {len(queries)} queries")
    gt = faiss.knn(np.ascontiguousarray(queries, dtype=np.float32), np.ascontiguousarray(base, dtype=np.float32), 10)[1]
    q = graph.fmt.quantize(queries)
    h, b = (int(v) for v in args.bloom.split(","))
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="graph-hls-"))
    total_bad = 0
    for spec in args.designs.split(","):
        units, channels = (int(v) for v in spec.split("x"))
        design = pinned_graph_design(
            graph, units=units, channels=channels, l_max=64, k_max=10, bloom=(h, b), limits=(8, 4)
        )
        project = work / f"p{units}x{channels}"
        generate_graph_hls(design, graph, q, project, groundtruth=gt, force=project.exists())
        start = time.perf_counter()
        sim = GraphHlsCsim(project, work / "build")
        print(
            f"design {units} BFC unit(s) x {channels} channel(s): g++ "
            f"build {time.perf_counter() - start:.1f} s (cached builds ~0)"
        )
        with sim:
            for l, k, mg, mc in RUNTIMES:
                rt = Runtime(l, k, mg, mc)
                start = time.perf_counter()
                keys, stats = sim.search(q, rt)
                ran = time.perf_counter() - start
                ref = reference(design, graph, q, rt)
                bad = (keys != ref.keys).any(1)
                for name in STATS:
                    bad |= stats[name] != ref.stats[name]
                total_bad += int(bad.sum())
                cfg = traversal_config(design, rt)
                fp = sum(dst(graph, x, cfg).bloom_fp for x in q)
                ids, _ = split_keys(keys, k)
                print(
                    f"  l {l:2d} k {k:2d} mg {mg} mc {mc}: {len(q)} queries, {int(bad.sum())} differ "
                    f"from the DST reference; R@{k} {recall_at_k(ids, gt, k):.4f}; hops/query "
                    f"{stats['hops'].mean():.1f}, groups/query {stats['groups'].mean():.1f}; Bloom "
                    f"false positives {fp}; C simulation {len(q) / ran:,.0f} queries/s"
                )
    print(f"total differing result rows: {total_bad}")


if __name__ == "__main__":
    main()
