"""The host driver on every backend without a board, on builtin:sift-10k: one design generated as
an HLS and an RTL project (same index images), the same queries searched through `fanns.driver`
on model, c-sim (HLS) and rtl-sim (RTL, driver in the loop), with agreement, host-side speed
and, for rtl-sim, the core's own cycle registers beside the performance model.

    PYTHONPATH=. python benchmarks/driver_backends.py [--queries 200] [--rtl-queries 12]

QPS here is of the simulators and the model on this host (the driver's overhead included), not
of the accelerator; the accelerator's throughput is clock / cycles per query (printed for rtl-sim).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import fanns.driver
from fanns.codegen.ivfpq.hls import TestQueries, generate_hls
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.datasets import load_dataset
from fanns.index.ivfpq import extract, host_vectors, train_index
from fanns.index.ivfpq_format import choose_format
from fanns.index.recall import recall_at
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.rtl import RtlProjectSim, measured_interval


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=200, help="queries for model and c-sim (default 200)")
    ap.add_argument("--rtl-queries", type=int, default=12, help="queries for rtl-sim, one run (default 12)")
    ap.add_argument("--nprobe", type=int, default=4, help="the design's nprobe (default 4)")
    args = ap.parse_args()
    ds = load_dataset("builtin:sift-10k")
    base = np.asarray(ds.base)
    data = extract(train_index(base, ds.metric, 32, 16, False, base, 0), ds.metric)
    fmt = choose_format(data, base[:500], nprobe=args.nprobe)
    design = pinned_design(data, fmt, nprobe=args.nprobe, k=10, ivf=(3, 32, "bram"), lut=(2, 32, "bram"), pq=(5, 2))
    queries = host_vectors(np.asarray(ds.queries[: args.queries]), ds.metric)
    gt = ds.groundtruth(10)[: args.queries]
    expected = DesignReference(design, data).search_keys(queries)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        test = TestQueries(queries[: args.rtl_queries], gt[: args.rtl_queries])
        generate_hls(design, data, test, root / "hls")
        generate_rtl(design, data, test, root / "rtl")
        print(f"{design.index.factory} on sift-10k, nprobe {design.nprobe}, K {design.k}: HLS and RTL projects")
        for kind, backend, n in (
            ("hls", "model", args.queries),
            ("rtl", "model", args.queries),
            ("hls", "c-sim", args.queries),
            ("rtl", "rtl-sim", args.rtl_queries),
        ):
            t0 = time.perf_counter()
            with fanns.driver.open(root / kind, backend=backend, batch=max(n, 1)) as acc:
                acc.load()
                loaded = time.perf_counter() - t0
                keys = acc.search_keys(queries[:n])
                ids, _ = acc.search(queries[:n])
                st = acc.stats()
            bad = int((keys != expected[:n]).any(1).sum())
            print(
                f"  {backend:8s} ({kind}): {n} queries, {bad} differ from the reference model, R@10 "
                f"{recall_at(ids, gt[:n], 10):.4f}; open+load {loaded:.1f} s, search {st['qps']:,.1f} QPS on this host"
            )
            if st["cycles"]:
                cyc = st["cycles"]
                measured = measured_interval({"nq": n, **cyc})
                predicted = RtlProjectSim(root / "rtl", root / "build").predicted_run(0, n).interval
                print(
                    f"           core cycles: index load {cyc['load_cycles']:,}, run "
                    f"{cyc['run_cycles']:,}; steady state {measured:,.1f} cycles/query vs model "
                    f"{predicted:,.1f} ({100 * (measured - predicted) / predicted:+.2f}%), "
                    f"{design.clock_mhz * 1e6 / measured:,.0f} QPS at {design.clock_mhz:g} MHz"
                )


if __name__ == "__main__":
    main()
