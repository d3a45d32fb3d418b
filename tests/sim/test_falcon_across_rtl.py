"""The generated across-query accelerator (two QPPs behind one control port) on a real graph.

One build (P = 2 QPPs of one BFC unit, two graph channels, HNSW of the first 2,000 SIFT vectors):
the QPPs run different queries at once on a simulated memory whose channels each move one beat
per cycle among all masters. Every result row must equal the DST reference bit for bit, and the
batch's measured cycles and each query's latency must agree with the across-query cycle model
(`fanns.model.graph.across`) within 10 % (issue 7's bound).
"""

import numpy as np
import pytest

from fanns.datasets import load_dataset
from fanns.design.graph import Runtime
from fanns.images.graph import pack
from fanns.index.graph import build_graph, graph_format_for
from fanns.model.graph.across import across_batch_cycles
from fanns.model.graph.pinned import pinned_graph_design
from fanns.model.graph.qpp import QppConfig
from fanns.reference.graph import STATS, reference
from fanns.sim.graph.across_rtl import FalconAcrossRtl, bank_words, split_queries

NODES, PIPES, PER_QPP, LATENCY = 2000, 2, 3, 40


@pytest.fixture(scope="module")
def bench(build_root):
    ds = load_dataset("builtin:sift-10k")
    base = np.asarray(ds.base[:NODES], dtype=np.float32)
    graph = build_graph(base, "hnsw", max_degree=32, fmt=graph_format_for(base))
    design = pinned_graph_design(
        graph,
        mode="across",
        pipelines=PIPES,
        units=1,
        channels=2,
        l_max=64,
        k_max=10,
        bloom=(3, 3 * 2**14),
        limits=(8, 4),
    )
    images = pack(design, graph)
    nq = PIPES * PER_QPP
    queries = graph.fmt.quantize(np.asarray(ds.queries[:nq], dtype=np.float32))
    rtl = FalconAcrossRtl(design, build_root / "falcon_across", bank_words(images, nq))
    rtl.build()
    return {"rtl": rtl, "design": design, "graph": graph, "images": images, "queries": queries}


def run_batch(bench, runtime: Runtime, shared: bool = True):
    design, graph, q = bench["design"], bench["graph"], bench["queries"]
    run = bench["rtl"].run(bench["images"], q, runtime, latency=LATENCY, shared=shared)
    assert not run.timed_out and run.status == [0] * PIPES
    ref = reference(design, graph, q, runtime)
    assert np.array_equal(run.keys, ref.keys), "result keys differ from the DST reference"
    for name in STATS:
        assert np.array_equal(run.stats[name], ref.stats[name]), name
    assert np.array_equal(run.qpp, np.repeat(np.arange(PIPES), PER_QPP))
    return run, ref


@pytest.mark.slow
@pytest.mark.long  # one more graph pipeline of a kind CI simulates
@pytest.mark.parametrize("l,k,mg,mc", [(64, 10, 1, 1), (64, 10, 4, 2)], ids=["bfs", "dst-4x2"])
def test_results_equal_reference_and_batch_matches_model(bench, l, k, mg, mc):
    rt = Runtime(l=l, k=k, mg=mg, mc=mc)
    run, ref = run_batch(bench, rt)
    design = bench["design"]
    model = across_batch_cycles(
        ref.traces, QppConfig.of_design(design, LATENCY, rt), split_queries(len(ref.traces), PIPES), design.channels
    )
    assert abs(model.batch - run.sim_cycles) <= 0.10 * run.sim_cycles, (model.batch, run.sim_cycles)
    cycles = run.stats["cycles"]
    assert np.all(np.abs(model.latency - cycles) <= 0.10 * cycles), (model.latency, cycles)
    assert max(run.run_cycles) <= run.sim_cycles


@pytest.mark.slow
@pytest.mark.long  # one more graph pipeline of a kind CI simulates
def test_channel_sharing_costs_cycles(bench):
    """With every master on its own full-rate port the same batch is faster: the channels' beats
    are really shared (results are the same either way)."""
    rt = Runtime(l=64, k=10, mg=4, mc=2)
    shared, _ = run_batch(bench, rt)
    alone, _ = run_batch(bench, rt, shared=False)
    assert shared.stats["cycles"].sum() > alone.stats["cycles"].sum()
