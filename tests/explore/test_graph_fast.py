"""The compiled graph search equals the Python reference traversal and cycle model, query by query."""

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.index.graph_traversal import TraversalConfig, dst
from fanns.model.graph.fast import search_batch
from fanns.model.graph.qpp import MemorySystem, QppConfig, simulate
from fanns.pe.bloom import Bloom

CONFIGS = [
    TraversalConfig(l=24, k=10, mg=1, mc=1),
    TraversalConfig(l=32, k=10, mg=4, mc=2),
    TraversalConfig(l=32, k=5, mg=8, mc=4, cand_size=16),
    TraversalConfig(l=16, k=10, mg=3, mc=3, bloom=Bloom(h=2, b=2 * 512, w=16, seed=9), bfc_units=4),
    TraversalConfig(l=32, k=10, mg=2, mc=1, bloom=Bloom(h=3, b=3 * 256, w=8), bfc_units=1),
]


@pytest.mark.parametrize("kind", ["hnsw", "nsg"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"mg{c.mg}mc{c.mc}{'b' if c.bloom else ''}")
def test_compiled_search_equals_reference(synthetic, kind, cfg):
    g = synthetic["graphs"][kind]
    qs = g.fmt.quantize(synthetic["queries"][:60])
    qpps = [
        QppConfig(
            d=g.fmt.d, elem_bytes=1, l=cfg.l, k=cfg.k, cand_size=cfg.cand_capacity, bfc_units=4, max_degree=g.max_degree
        ),
        QppConfig(
            d=g.fmt.d,
            elem_bytes=1,
            l=cfg.l,
            k=cfg.k,
            cand_size=cfg.cand_capacity,
            pipelines=8,
            l_max=cfg.l + 8,
            max_degree=g.max_degree,
            memory=MemorySystem(latency_cycles=37, outstanding=5),
        ),
    ]
    fast = search_batch(g, qs, cfg, qpps, threads=2)
    for i, q in enumerate(qs):
        ref = dst(g, q, cfg, trace=True)
        assert np.array_equal(fast.ids[i], ref.ids) and np.array_equal(fast.dists[i], ref.dists)
        got = (fast.hops[i], fast.visited[i], fast.checks[i], fast.bloom_fp[i], fast.groups[i])
        assert got == (ref.hops, ref.visited, ref.checks, ref.bloom_fp, ref.trace.groups)
        for j, qc in enumerate(qpps):
            timing = simulate(ref.trace, qc)
            assert (fast.latency[i, j], fast.occupancy[i, j]) == (timing.latency, timing.occupancy)


def test_threads_do_not_change_results(synthetic):
    g = synthetic["graphs"]["hnsw"]
    qs = g.fmt.quantize(synthetic["queries"])
    cfg = TraversalConfig(l=32, k=10, mg=4, mc=2, bloom=Bloom(h=3, b=3 * 1024, w=32), bfc_units=2)
    qc = [QppConfig(d=g.fmt.d, elem_bytes=1, l=32, k=10, cand_size=32, bfc_units=2, max_degree=g.max_degree)]
    a, b = search_batch(g, qs, cfg, qc, threads=1), search_batch(g, qs, cfg, qc, threads=2)
    assert (
        np.array_equal(a.ids, b.ids) and np.array_equal(a.latency, b.latency) and np.array_equal(a.bloom_fp, b.bloom_fp)
    )


def test_wrong_query_shape_is_reported(synthetic):
    g = synthetic["graphs"]["hnsw"]
    with pytest.raises(FannsError, match="queries"):
        search_batch(g, np.zeros((3, g.fmt.d + 1), dtype=np.int64), TraversalConfig())
