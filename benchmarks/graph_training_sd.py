"""How much does a graph design's recall move when the graph is built again?

The graph recall promise (`fanns.explore.graph_promise`) adds a build spread in quadrature to
the selection queries' standard error, as the IVF-PQ promise adds its training spread
(`fanns.index.holdout.TRAINING_SD`). A graph built again differs in its insertion order (faiss
HNSW's level draws follow the order; NSG's kNN graph and pruning too), so the dataset's rows are
inserted in `--seeds` seeded orders, each graph is searched by the DST reference at fixed
traversal settings on every query of the set (so only the build varies), and the standard
deviation of R@k over the builds is printed per l.

    PYTHONPATH=. python benchmarks/graph_training_sd.py [--set sift-10k] [--graph hnsw]
        [--seeds 4] [--degree 64] [--ls 32,64] [--json PATH]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from record import command_line, write_result

from fanns.datasets import load_dataset
from fanns.explore.graph import prepare_vectors
from fanns.index.graph import build_graph, graph_format_for
from fanns.index.graph_traversal import TraversalConfig
from fanns.index.recall import hits
from fanns.model.graph.fast import search_batch
from fanns.pe.bloom import Bloom


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="sift-10k")
    ap.add_argument("--graph", default="hnsw")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--degree", type=int, default=64)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--ls", default="32,64")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    ds = load_dataset(f"builtin:{a.set}")
    base, queries = prepare_vectors(ds)
    gt = ds.groundtruth(a.k)[:, : a.k]
    fmt = graph_format_for(base, 8)
    q_fx = fmt.quantize(queries)
    ls = [int(v) for v in a.ls.split(",")]
    recalls = {l: [] for l in ls}
    for seed in range(a.seeds):
        t0 = time.process_time()
        order = np.random.default_rng(seed).permutation(ds.n)
        graph = build_graph(base[order], a.graph, max_degree=a.degree, ef_construction=64, fmt=fmt)
        for l in ls:
            cfg = TraversalConfig(l=l, k=a.k, cand_size=l, bloom=Bloom(h=3, b=3 * 2**14, w=64))
            ids = search_batch(graph, q_fx, cfg).ids[:, : a.k]
            found = np.where(ids >= 0, order[np.clip(ids, 0, ds.n - 1)], -1)
            recalls[l].append(float((hits(found, gt) / a.k).mean()))
        print(
            f"seed {seed}: "
            + ", ".join(f"l {l} R@{a.k} {recalls[l][-1]:.4f}" for l in ls)
            + f" ({time.process_time() - t0:.1f} s CPU)",
            flush=True,
        )
    rows = []
    for l in ls:
        r = np.array(recalls[l])
        rows.append(
            {
                "l": l,
                "recalls": [round(v, 4) for v in r],
                "mean": round(float(r.mean()), 4),
                "sd": round(float(r.std(ddof=1)), 4),
            }
        )
        print(
            f"{a.set} {a.graph} degree {a.degree}, l {l}: R@{a.k} mean {r.mean():.4f}, sd {r.std(ddof=1):.4f} "
            f"over {a.seeds} insertion orders, all {ds.nq} queries"
        )
    if a.json:
        figures = {"set": a.set, "graph": a.graph, "degree": a.degree, "k": a.k, "builds": a.seeds, "rows": rows}
        write_result(a.json, "graph_training_sd", command_line(), figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    f = figures
    figure = (
        f"Graph recall spread between builds ({f['set']}, {f['graph'].upper()} degree {f['degree']}, "
        f"{f['builds']} insertion orders, every query; the graph promise's build spread)"
    )
    rows = "; ".join(
        f"l {r['l']}: R@{f['k']} {r['mean']:.3f}, sd {r['sd']:.4f} "
        f"(sd / sqrt(1 - R) {r['sd'] / (1 - r['mean']) ** 0.5:.3f})"
        for r in f["rows"]
    )
    return figure, rows


if __name__ == "__main__":
    main()
