"""Access skew of IVF lists and the predicted effect of tiered list placement.

1. Measured skew: builtin:sift (1e5 x 128) explored at nlist 256 and 1024 (R@10=0.6, 1,000
   queries): the share of work (codes scanned) and of accesses in the hottest 20 % of lists.
2. Tiered vs untiered (model; a generated tiered design against RTL simulation:
   benchmarks/tiers_rtl.py), synthetic
   size-biased workloads of increasing list imbalance:
   a. U55C, 1e6 vectors: the DSE's best design with its PQ channels cut to a quarter (shared
      HBM channels bind), hot lists in 8 UltraRAMs per PQDist PE;
   b. U280, 1e9 vectors (20 GB: larger than HBM): the DSE's best design on DDR4, hot lists on HBM;
   c. U55C, the same 1e9 vectors (larger than its 16 GB HBM): the PQ stage of design (b) with cold
      lists in host memory over PCIe (board file `host` figures) and hot lists on HBM.

    PYTHONPATH=. python benchmarks/skew.py
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from pathlib import Path

from fanns.boards import load_board
from fanns.datasets import load_dataset
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.index.goals import parse_goal
from fanns.model.ivfpq import dse
from fanns.model.ivfpq import skew as skew_model
from fanns.model.ivfpq.workload import synthetic_workload, workloads_from_explore


def show(cmp: dict) -> None:
    base, tiered = cmp["designs"]
    print(f"    hot lists {cmp['hot_lists']}, hit rate {100 * cmp['hit_rate']:.1f} %")
    for d in (base, tiered):
        print(
            f"    {d['name']:22s} {d['qps']:10,.0f} QPS  P50 {d['p50_us']:9.1f}  "
            f"P99 {d['p99_us']:9.1f} us  batch-16 P99 {d['batch16_p99_us']:10.1f} us"
        )
    print(
        f"    predicted speedup {tiered['qps'] / base['qps']:.2f}x, P99 {base['p99_us'] / tiered['p99_us']:.2f}x lower"
    )


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    print("1. measured skew, builtin:sift, R@10=0.6:")
    ds = load_dataset("builtin:sift")
    with tempfile.TemporaryDirectory() as tmp:
        cfg = ExploreConfig(goals=[parse_goal("R@10=0.6")], nlists=[256, 1024], ms=[16], opq=(False,), max_queries=1000)
        IvfPqExplorer(ds, cfg, Path(tmp)).run()
        workloads, _ = workloads_from_explore(Path(tmp), parse_goal("R@10=0.6"))
    for w in workloads:
        p = skew_model.profile(w)
        print(
            f"  {w.label():28s} hottest 20 % of lists: {100 * p['hot20_work_share']:.1f} "
            f"% of work, {100 * p['hot20_access_share']:.1f} % of accesses"
        )
    print("2. tiered vs untiered (model):")
    for imbalance in (1.2, 3.0, 8.0):
        w = synthetic_workload(10**6, 128, 16, 1024, 16, 10, False, queries=1000, imbalance=imbalance, seed=1)
        board = load_board("u55c")
        p = dse.run([w], board, "synthetic", 200.0, top=1).best
        st = dataclasses.replace(p.stages.pq_dist, channels=max(1, p.stages.pq_dist.channels // 4))
        stages = dataclasses.replace(p.stages, pq_dist=st)
        slow = skew_model.memory_tier(board, st.memory, 200.0, st.pes, st.channels, st.port_bits)
        print(
            f"  a. U55C, imbalance {imbalance}: hottest 20 % = {100 * skew_model.profile(w)['hot20_work_share']:.1f} "
            f"% of work; {st.pes} PQDist PEs on {st.channels} HBM channels"
        )
        show(skew_model.compare(w, p.ctx, stages, skew_model.uram_tier(8 * st.pes, st.pes), slow))
    for imbalance in (1.2, 3.0, 8.0):
        w = synthetic_workload(10**9, 128, 16, 4096, 16, 10, False, queries=1000, imbalance=imbalance, seed=1)
        board = load_board("u280")
        p = dse.run([w], board, "synthetic", 200.0, top=1).best
        st = p.stages.pq_dist
        print(
            f"  b. U280 1e9, imbalance {imbalance}: hottest 20 % = "
            f"{100 * skew_model.profile(w)['hot20_work_share']:.1f} % of work; {st.pes} "
            f"PQDist PEs on {st.channels} {st.memory} channels, hot tier {st.pes} HBM channels"
        )
        show(
            skew_model.compare(
                w,
                p.ctx,
                p.stages,
                skew_model.memory_tier(board, "hbm", 200.0, st.pes, min(32, st.pes), st.port_bits),
                skew_model.memory_tier(board, st.memory, 200.0, st.pes, st.channels, st.port_bits),
            )
        )
        u55c = load_board("u55c")
        print(
            f"  c. U55C 1e9, imbalance {imbalance}: cold lists in host "
            f"memory over PCIe, hot on {min(32, st.pes)} HBM channels"
        )
        show(
            skew_model.compare(
                w,
                p.ctx,
                p.stages,
                skew_model.memory_tier(u55c, "hbm", 200.0, st.pes, min(32, st.pes), st.port_bits),
                skew_model.host_tier(u55c, 200.0, st.pes, st.channels, st.port_bits),
            )
        )


if __name__ == "__main__":
    main()
