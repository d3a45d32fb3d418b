"""K = 100 on a skewed list distribution: the DSE's U55C design, RTL cycles within 5 % of the model.

Issue 20 ("K = 100 on real data"): on real SIFT descriptors a DSE-chosen K = 100 design measured
9.5 % fewer cycles per query than the model predicted. There is no real SIFT here; the set is
`zipf_clustered` (Zipf-weighted dense clusters: k-means lists with max/mean 4.5 and the hottest
20 % of lists holding 40 % of the codes at IVF64), and the queries come from the same mixture,
so the big lists are probed often. benchmarks/k100_skew.py prints the same comparison.
"""

from __future__ import annotations

import faiss
import numpy as np
import pytest

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
from fanns.model.ivfpq.workload import workloads_from_explore
from fanns.sim.ivfpq.rtl import RtlProjectSim, Run, measured_interval
from fanns.tools.vmodel import QUICK_BUILD

N, NLIST, GOAL, QUERIES = 30_000, 64, "R@100=0.7", 64


def _kmeans_sizes(x: np.ndarray, nlist: int) -> np.ndarray:
    km = faiss.Kmeans(x.shape[1], nlist, niter=20, seed=1)
    km.train(x)
    return np.bincount(km.index.search(x, 1)[1].ravel(), minlength=nlist)


def test_zipf_clustered_is_deterministic_and_its_lists_are_skewed():
    base, queries = zipf_clustered(6_000, 50)
    again, _ = zipf_clustered(6_000, 50)
    assert base.shape == (6_000, 128) and queries.shape == (50, 128) and base.dtype == np.float32
    assert np.array_equal(base, again)
    assert np.allclose(np.linalg.norm(base, axis=1), 1.0, atol=1e-5)
    sizes = np.sort(_kmeans_sizes(base, 32))[::-1]
    flat = np.sort(_kmeans_sizes(np.random.default_rng(0).standard_normal((6_000, 128)).astype(np.float32), 32))
    # k-means balances an unclustered set (max/mean about 1.5); the Zipf mixture's lists are not
    assert sizes[0] / sizes.mean() > 2.5 > flat[-1] / flat.mean()
    assert sizes[: 32 // 5].sum() / sizes.sum() > 0.3


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_dse_k100_design_on_skewed_lists_is_within_5_percent_of_the_model(tmp_path, build_root):
    base, queries = zipf_clustered(N, 200)
    ds = Dataset("zipf", base, queries, "l2", tmp_path / "cache", "skewed synthetic")
    goal = parse_goal(GOAL)
    folder = tmp_path / "explore"
    cfg = ExploreConfig(goals=[goal], nlists=[NLIST], ms=[16], opq=(False,), qps_min_seconds=0.0)
    explore = IvfPqExplorer(ds, cfg, folder).run()
    workloads, unreachable = workloads_from_explore(folder, goal)
    board = load_board("u55c")
    outcome = dse.run(workloads, board, goal.text, board.clock_mhz, 0.6, 1, unreachable)
    design = report.to_design(outcome.best, outcome, tmp_path / "design")
    assert design.k == 100 and design.nprobe > 1
    data = load_index(folder, index_record(explore, folder, design), ds.metric)
    sizes = np.sort(data.list_sizes)[::-1]
    assert sizes[0] / sizes.mean() > 3.0  # the skew this test is about
    test = TestQueries(host_vectors(queries[:QUERIES], "l2"), ds.groundtruth(100)[:QUERIES])
    project = generate_rtl(design, data, test, tmp_path / "rtl").path
    sim = RtlProjectSim(project, build_root, options=QUICK_BUILD)  # 64 short queries: g++ -O0 builds fast
    sim.build()
    run = sim.run([Run(nq=QUERIES, nprobe=design.nprobe, k=100)])["runs"][0]
    assert run["mismatched_queries"] == 0, run.get("first_bad")
    probed = sim.probed_sizes(0, QUERIES, design.nprobe)
    assert probed.max() > 3 * data.list_sizes.mean()  # the big lists are among the simulated probes
    model = sim.predicted_run(0, QUERIES)
    error = model.error_pct(measured_interval(run))
    assert abs(error) <= 5.0, f"RTL {error:+.2f} % vs the model ({model.interval:.1f} cycles a query)"
