"""Graph search benchmark: DST vs BFS recall and modelled speedup, and reference traversal speed.

For each built-in set and graph kind (HNSW base layer, NSG; max degree 64 as Falcon 7.5.1) this
prints the Falcon Fig. 7.9 tables of the (mg, mc) sweep in both parallel modes, the best (mg, mc)
per mode, every configuration whose recall is below BFS's, and the recall cost of the Bloom filter
against an exact visited set. Then it measures how fast the reference traversal runs: queries per
second of the compiled reference (BFS and DST) on the 100k-node graphs with 10,000 queries, the
time a full 8 x 4 sweep of 10,000 queries takes, and the Python reference for comparison.

The memory latency is the board file's (the U250's DDR4 idle row-miss latency measured by Shuhai,
in cycles of the model's clock: `MemorySystem.from_board`) unless --mem-latency overrides it. The
sweep grows mg / mc past the 8 x 4 grid while the best point sits on its far edge (--grow-to), so
an optimum at the edge is not mistaken for the optimum. --json records the best (mg, mc) per set,
graph kind and mode beside Falcon's published Fig. 7.9 (Deep10M, the only set it sweeps).

    PYTHONPATH=. python benchmarks/graph.py                 # all built-in sets (graph builds are cached)
    PYTHONPATH=. python benchmarks/graph.py --sets sift-10k --kinds hnsw
    PYTHONPATH=. python benchmarks/graph.py --sets sift-10k,deep-10k,deep --no-speed --queries 1000 --json PATH
    PYTHONPATH=. python benchmarks/graph.py --sets deep-1m --kinds hnsw --no-speed --queries 1000   # 1M nodes
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from record import command_line, write_result

from fanns.boards import load_board
from fanns.datasets import load_dataset
from fanns.explore.graph import load_or_build, prepare_vectors
from fanns.explore.graph_sweep import MODES, SweepSetup, format_tables, sweep
from fanns.index.graph_traversal import TraversalConfig, dst
from fanns.model.graph import published
from fanns.model.graph.fast import search_batch
from fanns.model.graph.qpp import MemorySystem


def explore(name: str, kind: str, setup: SweepSetup, max_degree: int, nq: int = 0) -> dict:
    """Sweep one set and graph kind, print its tables, and return the best point per mode."""
    ds = load_dataset(f"builtin:{name}")
    graph = load_or_build(ds, kind, max_degree, 64, 8)
    _, queries = prepare_vectors(ds)
    gt = ds.groundtruth(setup.k)
    if nq:
        queries, gt = queries[:nq], gt[:nq]
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
    print(f"{title} — sweep of {len(result.cells)} cells over {len(queries)} queries took {took:.1f} s\n")
    best = {}
    for mode in MODES:
        mg, mc = result.best(mode)
        best[mode] = {
            "best": [mg, mc],
            "speedup": result.speedup(mode, mg, mc),
            "recall": result.cells[mode, mg, mc].recall,
            "bfs_recall": result.cells[mode, 1, 1].recall,
            "grid": [max(result.setup.mg), max(result.setup.mc)],
        }
    return {"set": name, "kind": kind, "nodes": int(graph.n), "queries": int(len(queries)), **best}


def speed(name: str, kind: str, setup: SweepSetup, max_degree: int, nq: int) -> dict:
    """Time the compiled and the Python reference on one set's graph; print and return the figures."""
    ds = load_dataset(f"builtin:{name}")
    graph = load_or_build(ds, kind, max_degree, 64, 8)
    _, queries = prepare_vectors(ds)
    q_fx = graph.fmt.quantize(np.resize(queries, (nq, queries.shape[1])))
    qpps = [setup.qpp(graph, mode) for mode in MODES]
    search_batch(graph, q_fx[:10], setup.traversal(1, 1, "intra"), qpps)  # compile outside the timing
    cpu_per_query, runs_out = [], []
    for threads in (1, 2):
        for mg, mc in ((1, 1), (4, 2), (8, 4)):
            cfg = setup.traversal(mg, mc, "intra")
            t0, c0 = time.perf_counter(), time.process_time()
            search_batch(graph, q_fx, cfg, qpps, threads=threads)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            cpu_per_query.append(cpu / nq)
            runs_out.append({"threads": threads, "mg": mg, "mc": mc, "wall_qps": nq / wall, "cpu_qps": nq / cpu})
            print(
                f"{name} {kind.upper()} ({graph.n} nodes), compiled reference, {threads} thread(s), mg={mg} mc={mc}: "
                f"{nq / wall:,.0f} queries/s wall clock, {nq / cpu:,.0f} queries per CPU second "
                f"(traversal + cycle model of both modes)"
            )
    cells = len(setup.mg) * len(setup.mc)
    runs = 2 * cells * nq  # with a Bloom filter each mode needs its own traversal (per-unit filters)
    sweep_cpu_minutes = runs * float(np.mean(cpu_per_query)) / 60
    print(
        f"{name} {kind.upper()}: a full sweep ({cells} configurations x {nq} queries x 2 modes) costs about "
        f"{sweep_cpu_minutes:.1f} CPU minutes"
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
    python_qps = few / (time.perf_counter() - t0)
    print(f"{name} {kind.upper()}: Python reference (numpy per hop), mg=4 mc=2: {python_qps:,.1f} queries/s\n")
    return {
        "set": name,
        "kind": kind,
        "nodes": int(graph.n),
        "queries": nq,
        "runs": runs_out,
        "sweep_grid": [max(setup.mg), max(setup.mc)],
        "sweep_cpu_minutes": sweep_cpu_minutes,
        "python_qps": python_qps,
    }


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
    parser.add_argument(
        "--mem-latency", type=int, help="memory latency in cycles (default: the board file's, see the docstring)"
    )
    parser.add_argument("--queries", type=int, default=0, help="queries per sweep (default 0: all of the set's)")
    parser.add_argument("--grow-to", type=int, default=12, help="grow mg / mc past the grid up to this (default 12)")
    parser.add_argument("--no-sweep", action="store_true", help="only measure the traversal speed")
    parser.add_argument("--no-speed", action="store_true", help="only run the sweeps")
    parser.add_argument(
        "--json", metavar="PATH", help="also write the sweeps' best points as JSON (benchmarks/record.py)"
    )
    args = parser.parse_args()
    board = load_board(args.board)
    memory = MemorySystem.from_board(board, freq_mhz=args.freq_mhz, latency_cycles=args.mem_latency)
    setup = SweepSetup(memory=memory, grow_to=args.grow_to)
    print(
        f"memory model: {memory}\nBloom filter: {setup.bloom}; queues l = candidates = {setup.l}; "
        f"intra-query: {setup.bfc_units} BFC units; across-query: {setup.pipelines} pipelines\n"
    )
    sets = [s for s in args.sets.split(",") if s]
    kinds = [k for k in args.kinds.split(",") if k]
    rows = [
        explore(name, kind, setup, args.max_degree, args.queries)
        for name in (sets if not args.no_sweep else [])
        for kind in kinds
    ]
    figures = {
        "board": board.name,
        "freq_mhz": args.freq_mhz,
        "latency_cycles": memory.latency_cycles,
        "latency_source": memory.source,
        "rows": rows,
    }
    figures["speed"] = [
        speed(name, kind, setup, args.max_degree, args.speed_queries)
        for name in (([s for s in sets if not s.endswith("-10k")] or sets[:1]) if not args.no_speed else [])
        for kind in kinds
    ]
    write_result(args.json, "graph", command_line(), figures)


def readme_row(f: dict) -> list[tuple[str, str]]:
    """The README figures rows of this benchmark's recorded sweeps and speed measurements
    (`benchmarks/readme_figures.py`)."""
    return ([sweep_row(f)] if f["rows"] else []) + [speed_row(s) for s in f.get("speed", [])]


def speed_row(s: dict) -> tuple[str, str]:
    """The row of one set's reference traversal speed."""
    one = [r for r in s["runs"] if r["threads"] == 1]
    two = [r for r in s["runs"] if r["threads"] == 2]
    figure = (
        f"compiled DST reference speed, builtin:{s['set']} {s['kind'].upper()} ({s['nodes']:,} nodes, "
        f"{s['queries']:,} queries, traversal + cycle model of both modes)"
    )
    value = (
        " / ".join(f"{r['cpu_qps']:,.0f}" for r in one)
        + " queries per CPU second for (mg, mc) = "
        + " / ".join(f"({r['mg']},{r['mc']})" for r in one)
        + " on 1 thread ("
        + " / ".join(f"{r['wall_qps']:,.0f}" for r in two)
        + f" queries/s wall clock on 2 threads); a full {s['sweep_grid'][0]} × {s['sweep_grid'][1]} sweep of "
        f"{s['queries']:,} queries in both modes ≈ {s['sweep_cpu_minutes']:.1f} CPU minutes; "
        f"the Python reference {s['python_qps']:.1f} queries/s"
    )
    return figure, value


def sweep_row(f: dict) -> tuple[str, str]:
    """The row of the recorded sweeps' best points beside Falcon's."""
    pub = ", ".join(
        f"{mode} {published.published(mode).max():.2f}× at mg={published.best(mode)[0]}, mc={published.best(mode)[1]}"
        for mode in MODES
    )
    parts = []
    for r in f["rows"]:
        modes = ", ".join(
            f"{mode} {r[mode]['speedup']:.2f}× at mg={r[mode]['best'][0]}, mc={r[mode]['best'][1]} "
            f"(R@10 {r[mode]['recall']:.3f} vs BFS {r[mode]['bfs_recall']:.3f})"
            for mode in MODES
        )
        parts.append(f"{r['set']} {r['kind'].upper()} ({r['nodes']:,} nodes, {r['queries']} queries): {modes}")
    grid = (
        max(max(r[m]["grid"][0] for m in MODES) for r in f["rows"]),
        max(max(r[m]["grid"][1] for m in MODES) for r in f["rows"]),
    )
    sets = ", ".join(dict.fromkeys(f"builtin:{r['set']}" for r in f["rows"]))
    figure = (
        f"DST speedup over BFS per dataset ({sets}), the Falcon cycle model at the sourced memory latency "
        f"({f['latency_cycles']} cycles of {f['freq_mhz']:g} MHz: the {f['board'].upper()}'s DDR4 idle row-miss "
        "latency measured by Shuhai; Falcon's settings: degree 64, queues 64, 4 BFC units / 4 pipelines, "
        f"mg/mc grown past the grid while the optimum is on its edge, up to {grid[0]} x {grid[1]})"
    )
    value = f"Falcon Fig. 7.9 (Deep10M, the only set it sweeps): {pub}. Model: " + "; ".join(parts)
    return figure, value


if __name__ == "__main__":
    main()
