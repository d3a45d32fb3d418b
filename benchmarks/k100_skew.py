"""K = 100 on a skewed list distribution: a DSE-chosen U55C design, RTL cycles vs the model.

The data set is `fanns.datasets.synthetic.zipf_clustered` (128-d, Zipf-weighted clusters, the
heavy ones dense; queries from the same mixture, so hot lists are probed often). It is explored
at one index (IVF`--nlist`,PQ16), the DSE picks the best U55C design for `--goal` (K = 100),
the RTL project is generated and simulated on the compiled Verilator harness, and the script
prints the list-size skew (max/mean, share of codes in the hottest 20 % of lists, faiss's
imbalance factor), the design, and the measured steady-state cycles per query beside the
model's prediction for the same queries (`fanns.sim.ivfpq.rtl.RtlProjectSim.predicted_run`).

    PYTHONPATH=. python benchmarks/k100_skew.py [--n N] [--zipf S] [--goal G] [--queries Q] [--per-query Q]

Measured (30,000 vectors, zipf 1.0, IVF64: list sizes max/mean 4.53, the hottest 20 % of lists
hold 39.5 % of the codes, imbalance 1.57; R@100=0.8 is out of reach of IVF64,PQ16 here, best
recall 0.757, so the default goal is 0.7): nprobe 4, AHPQ SelK. History of that goal:
- the model loading each LUT into every PQDist PE at once picked 17 PEs on 3 channels: 1,052.7
  cycles/query measured, 1,102.1 predicted (-4.48 %); --per-query showed the cause, the RTL's
  32-word LUT chain FIFOs let the first PEs run ahead of a held last channel;
- with the busiest channel in the recurrence (selk.ChannelFeed) it picked 17 PEs on 4 channels:
  1,041.4 measured (64 queries), 1,102.2 predicted (-5.5 %);
- with the chain FIFOs modelled per PE (selk.chain; 2026-11-27) that design is predicted at
  1,053.0 (-1.1 %), and the DSE picks 10 PEs on 10 channels with 9 BuildLUT PEs: 48 queries
  bit-exact, 1,024.5 cycles/query measured, 1,024.5 predicted (+0.00 %), 91 s build + simulation.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from fanns.boards import load_board
from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.datasets.dataset import Dataset
from fanns.datasets.synthetic import zipf_clustered
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.flow.ivfpq_inputs import index_record, load_index
from fanns.index.goals import parse_goal
from fanns.index.ivfpq import host_vectors
from fanns.model.ivfpq import dse, report
from fanns.model.ivfpq import sequence as sequence_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.workload import workloads_from_explore
from fanns.sim.ivfpq.rtl import RtlProjectSim, Run, measured_interval


def list_skew(sizes: np.ndarray) -> dict:
    """max/mean, share of the codes in the hottest 20 % of lists, faiss's imbalance factor."""
    s = np.sort(np.asarray(sizes, dtype=np.float64))[::-1]
    hot = max(1, s.size // 5)
    return {
        "max_mean": float(s[0] / s.mean()),
        "hot20": float(s[:hot].sum() / s.sum()),
        "imbalance": float((s**2).sum() * s.size / s.sum() ** 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30_000, help="base vectors (default 30,000)")
    ap.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of the cluster weights (default 1.0)")
    ap.add_argument("--nlist", type=int, default=64, help="IVF lists (default 64)")
    ap.add_argument("--goal", default="R@100=0.7", help="recall goal (default R@100=0.7)")
    ap.add_argument("--queries", type=int, default=48, help="simulated queries (default 48)")
    ap.add_argument("--work", default="work/k100-skew", help="folder for the exploration, project and build")
    ap.add_argument("--per-query", type=int, metavar="Q", help="also print RTL vs model per query for the first Q")
    args = ap.parse_args()
    work = Path(args.work).resolve()
    base, queries = zipf_clustered(args.n, max(200, args.queries), zipf=args.zipf)
    ds = Dataset(f"zipf{args.zipf}", base, queries, "l2", work / "cache", "skewed synthetic")
    goal = parse_goal(args.goal)
    cfg = ExploreConfig(goals=[goal], nlists=[args.nlist], ms=[16], opq=(False,), qps_min_seconds=0.0)
    folder = work / "explore"
    explore = IvfPqExplorer(ds, cfg, folder).run()
    workloads, unreachable = workloads_from_explore(folder, goal)
    board = load_board("u55c")
    outcome = dse.run(workloads, board, goal.text, board.clock_mhz, 0.6, 1, unreachable)
    if outcome.best is None:
        raise SystemExit(" / ".join(outcome.explain))
    design = report.to_design(outcome.best, outcome, work / "design")
    data = load_index(folder, index_record(explore, folder, design), ds.metric)
    skew = list_skew(data.list_sizes)
    print(
        f"zipf {args.zipf}, {args.n} vectors, IVF{data.nlist}: list sizes max/mean {skew['max_mean']:.2f}, "
        f"hottest 20 % of lists hold {100 * skew['hot20']:.1f} % of the codes, imbalance {skew['imbalance']:.2f}"
    )
    st = design.stages
    print(
        f"design: nprobe {design.nprobe} K {design.k} | IVF {st.ivf_dist.pes}x{st.ivf_dist.lanes} "
        f"LUT {st.build_lut.pes}x{st.build_lut.lanes} PQ {st.pq_dist.pes} PEs on {st.pq_dist.channels} channels "
        f"SelCells {st.sel_cells.arch} SelK {st.sel_k.arch} {st.sel_k.params}"
    )
    nq = args.queries
    q = host_vectors(np.asarray(ds.queries[:nq]), ds.metric)
    project = generate_rtl(design, data, TestQueries(q, ds.groundtruth(design.k)[:nq]), work / "rtl", force=True)
    sim = RtlProjectSim(project.path, work / "builds")
    t = time.perf_counter()
    sim.build()
    run = sim.run([Run(nq=nq, nprobe=design.nprobe, k=design.k)])["runs"][0]
    model = sim.predicted_run(0, nq)
    measured = measured_interval(run)
    sizes = sim.probed_sizes(0, nq, design.nprobe)
    print(
        f"{nq} queries, {run['mismatched_queries']} differ from the reference; probed list sizes mean "
        f"{sizes.mean():.0f} (all lists {data.list_sizes.mean():.0f}), codes per query "
        f"{sizes.sum(1).min()}-{sizes.sum(1).max()}"
    )
    print(
        f"cycles/query measured {measured:,.1f}, predicted {model.interval:,.1f} ({model.bottleneck}), error "
        f"{model.error_pct(measured):+.2f} %; stages: "
        + ", ".join(f"{s} {t.interval:,.0f}" for s, t in model.timings.items())
        + f" ({time.perf_counter() - t:.0f} s build + simulation)"
    )
    if args.per_query:
        per_query(sim, design, min(args.per_query, nq))


def per_query(sim: RtlProjectSim, design, nq: int) -> None:
    """Each query's interval in RTL and in the model: RTL runs of the first 2, 3, .., `nq` queries
    (a prefix's span from the first to the last completion; later queries do not move earlier
    ones), beside the differences of the sequence model's level-2 starts for the same queries."""
    runs = sim.run([Run(nq=q, nprobe=design.nprobe, k=design.k) for q in range(2, nq + 1)])["runs"]
    rtl = np.diff([0.0] + [r["last_cycles"] - r["first_cycles"] for r in runs])
    probes = stage_model.Probes.of(sim.probed_sizes(0, nq, design.nprobe))
    model = np.diff(sequence_model.sequence_starts(sim.hw.ctx, design.stages, probes, np.arange(nq)))
    print("query  RTL  model  model-RTL  probed list sizes")
    for i in range(nq - 1):
        print(f"{i + 1:5d} {rtl[i]:5.0f} {model[i]:6.0f} {model[i] - rtl[i]:+9.0f}  {probes.sizes[i + 1].tolist()}")


if __name__ == "__main__":
    main()
