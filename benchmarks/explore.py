"""Explorer time on the 100k SIFT-like built-in over the default grid (nlist 128..1024, m 16,
with and without OPQ), with a cold index cache and then a warm one (indexes reused).

    PYTHONPATH=. python benchmarks/explore.py [--queries N] [--threads T]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import faiss

from fanns.datasets import load_dataset
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.index.goals import parse_goal


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=None, help="queries used (default: all 1,000)")
    ap.add_argument("--threads", type=int, default=None, help="faiss threads (default: all cores)")
    args = ap.parse_args()
    if args.threads:
        faiss.omp_set_num_threads(args.threads)
    t0 = time.perf_counter()
    ds = load_dataset("builtin:sift")
    ds.groundtruth(100)
    t_data = time.perf_counter() - t0
    goals = [parse_goal(g) for g in ("R@1=0.3", "R@10=0.6", "R@100=0.7")]
    cfg = ExploreConfig(goals=goals, max_queries=args.queries)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        runs = []
        for label in ("cold", "warm"):
            t = time.perf_counter()
            result = IvfPqExplorer(ds, cfg, out).run()
            runs.append((label, time.perf_counter() - t))
    print(
        f"dataset builtin:sift ({ds.n} x {ds.d}, {result['dataset']['queries_used']} "
        f"queries), faiss threads {faiss.omp_get_max_threads()}"
    )
    print(f"dataset generation + ground truth: {t_data:.1f} s")
    for label, secs in runs:
        print(f"explore over {len(result['indexes'])} indexes ({label} index cache): {secs:.1f} s")
    for rec in result["indexes"]:
        cells = []
        for g in goals:
            r = rec["goals"][g.text]
            cells.append(
                f"{g.text}: nprobe {r['nprobe']} hw {r['hw_recall']:.3f}"
                if r["reached"]
                else f"{g.text}: best {r['best_recall']:.3f}"
            )
        print(f"  {rec['index']:<20} " + "; ".join(cells))


if __name__ == "__main__":
    main()
