"""Why NSG recall is low on the clustered built-in sets: one entry node vs faiss's random seeds.

The Falcon pipeline (and our DST reference) starts every query from one entry node: the entry
goes into the result queue and its neighbour list is the first group. faiss's own NSG search
(`IndexNSGFlat.search`, `nsg.search_L = L`) seeds its pool of L candidates with the navigating
node's neighbours and, when they are fewer than L, with random nodes. On a set of well-separated
clusters (builtin:sift-10k is one) greedy search from one node rarely leaves the clusters near
it, because NSG's edge pruning keeps few edges between clusters; the random seeds of faiss land
in every cluster. So faiss's recall jumps once L exceeds the entry's degree, ours does not.

This prints, per set, for our compiled BFS on the exported NSG (exact visited set) and for
faiss's NSG search on an NSG faiss builds with the same R: R@10 at several queue lengths, and
the degree of the entry node (faiss adds random seeds only beyond it). HNSW's base layer, built
by insertion, keeps long links and is shown for comparison.

    PYTHONPATH=. python benchmarks/nsg_entry.py [--sets sift-10k,deep-10k] [--queries 200] [--json PATH]
"""

from __future__ import annotations

import argparse

import faiss
import numpy as np
from record import command_line, write_result

from fanns.datasets import load_dataset
from fanns.explore.graph import load_or_build, prepare_vectors
from fanns.index.graph_traversal import TraversalConfig
from fanns.model.graph.fast import search_batch

LENGTHS = (16, 32, 64, 128)
MAX_DEGREE = 64


def recall(ids: np.ndarray, gt: np.ndarray) -> float:
    return float(np.mean([len(set(a[:10].tolist()) & set(b[:10].tolist())) / 10 for a, b in zip(ids, gt)]))


def ours(graph, queries_fx: np.ndarray, gt: np.ndarray) -> list[float]:
    out = []
    for length in LENGTHS:
        cfg = TraversalConfig(l=length, k=10, mg=1, mc=1, cand_size=max(64, length), bloom=None, bfc_units=1)
        out.append(recall(search_batch(graph, queries_fx, cfg).ids, gt))
    return out


def faiss_nsg(base: np.ndarray, queries: np.ndarray, gt: np.ndarray) -> list[float]:
    faiss.omp_set_num_threads(1)
    index = faiss.IndexNSGFlat(base.shape[1], MAX_DEGREE)
    index.add(base)
    out = []
    for length in LENGTHS:
        index.nsg.search_L = length
        out.append(recall(index.search(queries, 10)[1], gt))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="sift-10k,deep-10k", help="built-in sets, comma-separated")
    ap.add_argument("--queries", type=int, default=200, help="queries per set (default 200)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    sets = {}
    print("R@10 at queue length l (our BFS: l = result queue; faiss: search_L = candidate pool)")
    print(f"{'set':10} {'graph':22} {'entry degree':>12} " + " ".join(f"{'l=' + str(x):>7}" for x in LENGTHS))
    for name in args.sets.split(","):
        ds = load_dataset(f"builtin:{name}")
        base, queries = prepare_vectors(ds)
        queries, gt = queries[: args.queries], ds.groundtruth(10)[: args.queries]
        found = sets[name] = {}
        for kind in ("hnsw", "nsg"):
            graph = load_or_build(ds, kind, MAX_DEGREE, 64, 8)
            row = found[kind] = ours(graph, graph.fmt.quantize(queries), gt)
            print(
                f"{name:10} {kind.upper() + ' (ours, 1 entry)':22} {int(graph.degree[graph.entry]):12d} "
                + " ".join(f"{r:7.3f}" for r in row)
            )
        row = found["faiss_nsg"] = faiss_nsg(
            np.ascontiguousarray(base, dtype=np.float32), np.ascontiguousarray(queries, dtype=np.float32), gt
        )
        print(f"{name:10} {'NSG (faiss search)':22} {'':12} " + " ".join(f"{r:7.3f}" for r in row))

    figures = {"lengths": list(LENGTHS), "queries": args.queries, "recall_at_10": sets}
    write_result(args.json, "nsg_entry", command_line(), figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`):
    R@10 at the shortest and the longest queue."""
    ends = (0, len(figures["lengths"]) - 1)

    def pair(values: list[float]) -> str:
        return " / ".join(f"{values[i]:.3f}" for i in ends)

    parts = [
        f"{name} HNSW {pair(r['hnsw'])}, NSG {pair(r['nsg'])} (faiss's NSG search, seeded with random nodes: "
        f"{pair(r['faiss_nsg'])})"
        for name, r in figures["recall_at_10"].items()
    ]
    lengths = " / ".join(str(figures["lengths"][i]) for i in ends)
    figure = f"NSG vs HNSW with one entry node (R@10, l = {lengths}, {figures['queries']} queries)"
    return figure, "; ".join(parts) + " — see docs/graph_architecture.md"


if __name__ == "__main__":
    main()
