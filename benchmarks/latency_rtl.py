"""Per-query latency: the model (`fanns.model.ivfpq.latency`) against RTL simulation, query by query.

Two generated accelerators on skewed random lists (one list holds ~45 % of the codes) run every
test query alone (batch 1) in cocotb + Verilator; the cycles from ap_start to ap_done are
compared with the model's prediction for the same query's probed cells. Prints per design the
per-query error (mean, max), the measured and predicted P50/P95/P99/max and their errors.

    PYTHONPATH=. python benchmarks/latency_rtl.py [--queries N] [--build DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.sim.ivfpq.rtl import RtlProjectSim

DESIGNS = {
    "nprobe5-lut1-pq3x1": {"nprobe": 5, "k": 5, "ivf": (3, 16, "bram"), "lut": (1, 32, "bram"), "pq": (3, 1)},
    "nprobe3-lut2-pq4x2": {"nprobe": 3, "k": 10, "ivf": (2, 16, "bram"), "lut": (2, 16, "bram"), "pq": (4, 2)},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=40, help="test queries per design (default 40)")
    ap.add_argument("--build", help="build folder for the Verilated models (default: a temporary folder)")
    args = ap.parse_args()
    data = random_index(nlist=16, n=3000, d=32, m=8, empty=1, seed=3)
    queries = np.random.default_rng(5).standard_normal((args.queries, 32)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        build = Path(args.build or tmp)
        for name, cfg in DESIGNS.items():
            design = pinned_design(data, random_format(32, 8), **cfg)
            test = TestQueries(queries, np.zeros((args.queries, 10), np.int64))
            project = generate_rtl(design, data, test, Path(tmp) / name)
            sim = RtlProjectSim(project.path, build / "rtl")
            t = time.perf_counter()
            sim.build()
            t_build = time.perf_counter() - t
            t = time.perf_counter()
            got = sim.query_latencies(0, args.queries)
            t_sim = time.perf_counter() - t
            pred = sim.predicted_query_times(0, args.queries).alone()
            err = (pred - got) / got
            print(
                f"{name}: {args.queries} queries alone, all keys bit-exact; "
                f"build {t_build:.0f} s, simulation {t_sim:.0f} s"
            )
            print(
                f"  per-query error: mean {100 * err.mean():+.2f} %, |max| {100 * np.abs(err).max():.2f} %; "
                f"offset pred - measured {np.min(pred - got):+.0f} .. {np.max(pred - got):+.0f} cycles; "
                f"measured range {got.min():.0f} .. {got.max():.0f} cycles"
            )
            for q in (50, 95, 99, 100):
                m, p = np.percentile(got, q), np.percentile(pred, q)
                print(f"  P{q:<3} measured {m:8.1f}  predicted {p:8.1f}  error {100 * (p - m) / m:+.2f} %")


if __name__ == "__main__":
    main()
