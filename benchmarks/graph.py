"""Graph search benchmark: DST vs BFS recall and modelled speedup, and reference traversal speed.

For each built-in set and graph kind (HNSW base layer, NSG; max degree 64 as Falcon 7.5.1) this
prints the Falcon Fig. 7.9 tables of the (mg, mc) sweep in both parallel modes, the best (mg, mc)
per mode, every configuration whose recall is below BFS's, and the recall cost of the Bloom filter
against an exact visited set. Then it measures how fast the reference traversal runs: queries per
second of the compiled reference (BFS and DST) on the 100k-node graphs with 10,000 queries, the
time a full 8 x 4 sweep of 10,000 queries takes, and the Python reference for comparison.

    PYTHONPATH=. python benchmarks/graph.py                 # all built-in sets (graph builds are cached)
    PYTHONPATH=. python benchmarks/graph.py --sets sift-10k --kinds hnsw
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fanns.boards import load_board
from fanns.datasets import load_dataset
from fanns.explore.graph import load_or_build, prepare_vectors
from fanns.explore.graph_sweep import MODES, SweepSetup, format_tables, sweep
from fanns.index.traversal import TraversalConfig, dst
from fanns.model.graph.fast import search_batch
from fanns.model.graph.qpp import MemorySystem


def explore(name: str, kind: str, setup: SweepSetup, max_degree: int) -> None:
    ds = load_dataset(f"builtin:{name}")
    graph = load_or_build(ds, kind, max_degree, 64, 8)
    _, queries = prepare_vectors(ds)
    gt = ds.groundtruth(setup.k)
    t0 = time.perf_counter()
    result = sweep(graph, graph.fmt.quantize(queries), gt, setup)
    took = time.perf_counter() - t0
    title = f"{name} {kind.upper()}"
    print(format_tables(result, title))
    for mode in MODES:
        base = result.cells[mode, 1, 1].recall
        worse = [(mg, mc, c.recall) for (m, mg, mc), c in sorted(result.cells.items()) if m == mode and c.recall < base]
        listed = ", ".join(f"({mg},{mc}) {r:.4f}" for mg, mc, r in worse) or "none"
        print(f"{title} — {mode}: configurations with R@{setup.k} below BFS ({base:.4f}): {listed}")
        print(
            f"{title} — {mode}: BFS R@{setup.k} with the Bloom filter {base:.4f}, with an exact visited set "
            f"{result.exact_bfs_recall[mode]:.4f}; mean Bloom false positives per BFS query "
            f"{result.cells[mode, 1, 1].bloom_fp:.3f}"
        )
    print(f"{title} — sweep of {len(result.cells)} cells over {ds.nq} queries took {took:.1f} s\n")


def speed(name: str, kind: str, setup: SweepSetup, max_degree: int, nq: int) -> None:
    ds = load_dataset(f"builtin:{name}")
    graph = load_or_build(ds, kind, max_degree, 64, 8)
    _, queries = prepare_vectors(ds)
    q_fx = graph.fmt.quantize(np.resize(queries, (nq, queries.shape[1])))
    qpps = [setup.qpp(graph, mode) for mode in MODES]
    search_batch(graph, q_fx[:10], setup.traversal(1, 1, "intra"), qpps)  # compile outside the timing
    cpu_per_query = []
    for threads in (1, 2):
        for mg, mc in ((1, 1), (4, 2), (8, 4)):
            cfg = setup.traversal(mg, mc, "intra")
            t0, c0 = time.perf_counter(), time.process_time()
            search_batch(graph, q_fx, cfg, qpps, threads=threads)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            cpu_per_query.append(cpu / nq)
            print(
                f"{name} {kind.upper()} ({graph.n} nodes), compiled reference, {threads} thread(s), mg={mg} mc={mc}: "
                f"{nq / wall:,.0f} queries/s wall clock, {nq / cpu:,.0f} queries per CPU second "
                f"(traversal + cycle model of both modes)"
            )
    cells = len(setup.mg) * len(setup.mc)
    runs = 2 * cells * nq  # with a Bloom filter each mode needs its own traversal (per-unit filters)
    print(
        f"{name} {kind.upper()}: a full sweep ({cells} configurations x {nq} queries x 2 modes) costs about "
        f"{runs * float(np.mean(cpu_per_query)) / 60:.1f} CPU minutes"
    )
    t0 = time.perf_counter()
    few = 20
    for q in q_fx[:few]:
        dst(
            graph,
            q,
            TraversalConfig(l=setup.l, k=setup.k, mg=4, mc=2, bloom=setup.bloom, bfc_units=setup.bfc_units),
            trace=True,
        )
    print(
        f"{name} {kind.upper()}: Python reference (numpy per hop), mg=4 "
        f"mc=2: {few / (time.perf_counter() - t0):,.1f} queries/s\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="sift-10k,deep-10k,sift,deep", help="built-in sets (default: all four)")
    parser.add_argument("--kinds", default="hnsw,nsg", help="graph kinds (default hnsw,nsg)")
    parser.add_argument("--max-degree", type=int, default=64, help="graph maximum degree (default 64)")
    parser.add_argument(
        "--speed-queries", type=int, default=10_000, help="queries for the speed measurement (default 10000)"
    )
    parser.add_argument("--board", default="u250", help="board of the memory model (default u250)")
    parser.add_argument("--freq-mhz", type=float, default=200.0, help="clock of the model (default 200, Falcon's)")
    parser.add_argument("--no-sweep", action="store_true", help="only measure the traversal speed")
    parser.add_argument("--no-speed", action="store_true", help="only run the sweeps")
    args = parser.parse_args()
    memory = MemorySystem.from_board(load_board(args.board), freq_mhz=args.freq_mhz)
    setup = SweepSetup(memory=memory)
    print(
        f"memory model: {memory}\nBloom filter: {setup.bloom}; queues l = candidates = {setup.l}; "
        f"intra-query: {setup.bfc_units} BFC units; across-query: {setup.pipelines} pipelines\n"
    )
    sets = [s for s in args.sets.split(",") if s]
    kinds = [k for k in args.kinds.split(",") if k]
    for name in sets if not args.no_sweep else []:
        for kind in kinds:
            explore(name, kind, setup, args.max_degree)
    for name in ([s for s in sets if not s.endswith("-10k")] or sets[:1]) if not args.no_speed else []:
        for kind in kinds:
            speed(name, kind, setup, args.max_degree, args.speed_queries)


if __name__ == "__main__":
    main()
