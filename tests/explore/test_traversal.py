"""Traversal reference models: DST(1,1) is BFS, exact search at l = n, DST invariants, recall."""

from collections import deque

import faiss
import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.index.graph import build_graph
from fanns.index.graph_traversal import TraversalConfig, bfs, dst
from fanns.pe.bloom import Bloom

KINDS = ["hnsw", "nsg"]


def recall(ids: np.ndarray, gt: np.ndarray) -> float:
    return len(set(ids.tolist()) & set(gt.tolist())) / len(gt)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bloom", [None, Bloom(h=2, b=2 * 256, w=16)], ids=["exact", "tiny-bloom"])
def test_dst_with_one_group_of_one_is_bfs(synthetic, kind, bloom):
    g = synthetic["graphs"][kind]
    fp = 0
    for q in g.fmt.quantize(synthetic["queries"][:80]):
        a = dst(g, q, TraversalConfig(l=24, k=10, mg=1, mc=1, bloom=bloom))
        b = bfs(g, q, l=24, k=10, bloom=bloom)
        assert np.array_equal(a.ids, b.ids) and np.array_equal(a.dists, b.dists)
        assert (a.hops, a.visited, a.checks, a.bloom_fp) == (b.hops, b.visited, b.checks, b.bloom_fp)
        fp += a.bloom_fp
    assert (fp > 0) == (bloom is not None)


def _reachable(g) -> np.ndarray:
    seen = np.zeros(g.n, dtype=bool)
    seen[g.entry] = True
    todo = deque([g.entry])
    while todo:
        for v in g.neighbors[todo.popleft(), :]:
            if v >= 0 and not seen[v]:
                seen[v] = True
                todo.append(v)
    return np.flatnonzero(seen)


@pytest.mark.parametrize("mg,mc", [(1, 1), (3, 2), (8, 4)])
def test_unbounded_result_queue_finds_the_exact_neighbours(synthetic, mg, mc):
    """With l = n nothing is ever pruned: every reachable node is visited, results are exact."""
    g = synthetic["graphs"]["hnsw"]
    reach = _reachable(g)
    for q in g.fmt.quantize(synthetic["queries"][:3]):
        r = dst(g, q, TraversalConfig(l=g.n, k=10, mg=mg, mc=mc))
        assert r.visited == len(reach)
        d = g.fmt.l2(q, g.vectors[reach])
        order = np.lexsort((reach, d))[:10]
        assert np.array_equal(r.ids, reach[order]) and np.array_equal(r.dists, d[order])


@pytest.mark.parametrize("kind", KINDS)
def test_results_are_sorted_exact_distances(synthetic, kind):
    g = synthetic["graphs"][kind]
    for q in g.fmt.quantize(synthetic["queries"][:20]):
        r = dst(g, q, TraversalConfig(l=32, k=16, mg=4, mc=2))
        assert np.array_equal(r.dists, g.fmt.l2(q, g.vectors[r.ids]))
        keys = (r.dists << 32) | r.ids
        assert np.all(np.diff(keys) > 0)


@pytest.mark.parametrize("mg,mc", [(2, 1), (4, 2), (7, 3)])
def test_trace_respects_group_limits_and_counts(synthetic, mg, mc):
    g = synthetic["graphs"]["nsg"]
    for q in g.fmt.quantize(synthetic["queries"][:15]):
        r = dst(g, q, TraversalConfig(l=32, k=10, mg=mg, mc=mc), trace=True)
        t = r.trace
        sizes = np.diff(t.group_cands)
        assert sizes[0] == 1 and sizes.max() <= mc and sizes.min() >= 1
        parents = t.group_parent
        assert parents[0] == -1 and np.all(parents[1:] < np.arange(1, t.groups))
        assert np.all(np.diff(parents[1:]) >= 0)  # launches happen in completion order
        for done in range(t.groups):  # after each completion at most mg groups are in flight
            launched = np.flatnonzero(parents <= done)
            assert np.count_nonzero(launched > done) <= mg
        assert r.hops == len(t.cand_node) and r.checks == len(t.check_node)
        assert r.visited == int(t.check_new.sum()) == len(t.new_kept)
        assert np.array_equal(t.cand_degree, g.degree[t.cand_node])


def test_large_bloom_filter_behaves_like_the_exact_set(synthetic):
    g = synthetic["graphs"]["hnsw"]
    big = Bloom(h=3, b=3 * 2**16, w=64)
    for q in g.fmt.quantize(synthetic["queries"][:30]):
        a = dst(g, q, TraversalConfig(l=32, k=10, mg=3, mc=2))
        b = dst(g, q, TraversalConfig(l=32, k=10, mg=3, mc=2, bloom=big, bfc_units=4))
        assert b.bloom_fp == 0 and np.array_equal(a.ids, b.ids) and a.visited == b.visited


def test_recall_against_exact_ground_truth(synthetic):
    """BFS recall is high on HNSW, and DST's wider search does not lose recall on average."""
    g = synthetic["graphs"]["hnsw"]
    gt = faiss.knn(synthetic["queries"], synthetic["base"], 10)[1]
    qs = g.fmt.quantize(synthetic["queries"])
    rec = {}
    for mg, mc in [(1, 1), (4, 2), (6, 2)]:
        rec[mg, mc] = np.mean(
            [recall(dst(g, q, TraversalConfig(l=32, k=10, mg=mg, mc=mc)).ids, gt[i]) for i, q in enumerate(qs)]
        )
    assert rec[1, 1] >= 0.85
    assert rec[4, 2] >= rec[1, 1] - 0.005 and rec[6, 2] >= rec[1, 1] - 0.005, rec


def test_bad_configuration_is_reported():
    with pytest.raises(FannsError, match="k=20"):
        TraversalConfig(l=10, k=20)
    with pytest.raises(FannsError):
        TraversalConfig(mg=0)


@pytest.mark.parametrize("ef", [10, 32])
def test_bfs_on_hnsw_base_layer_equals_faiss_level0_search(ef):
    """faiss's own base-layer search from the same fixed entry (efSearch = l) returns the same
    neighbours and distances (integer data, so float32 distances are exact)."""
    rng = np.random.default_rng(5)
    centers = rng.integers(40, 200, (20, 24))
    base = np.clip(centers[rng.integers(0, 20, 2500)] + rng.integers(-30, 31, (2500, 24)), 0, 255).astype(np.float32)
    queries = np.clip(centers[rng.integers(0, 20, 150)] + rng.integers(-30, 31, (150, 24)), 0, 255).astype(np.float32)
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    index = faiss.IndexHNSWFlat(24, 8)
    index.hnsw.efConstruction = 40
    index.add(base)
    faiss.omp_set_num_threads(threads)
    g = build_graph(base, "hnsw", max_degree=16, ef_construction=40)
    index.hnsw.efSearch = ef
    entry = np.full((len(queries), 1), g.entry, dtype=np.int32)
    entry_d = ((queries - base[g.entry]) ** 2).sum(1, keepdims=True).astype(np.float32)
    dist = np.empty((len(queries), 10), dtype=np.float32)
    ids = np.empty((len(queries), 10), dtype=np.int64)
    index.search_level_0(
        len(queries),
        faiss.swig_ptr(queries),
        10,
        faiss.swig_ptr(entry),
        faiss.swig_ptr(entry_d),
        faiss.swig_ptr(dist),
        faiss.swig_ptr(ids),
        1,
        1,
    )
    for i, q in enumerate(g.fmt.quantize(queries)):
        r = bfs(g, q, l=ef, k=10)
        assert np.array_equal(r.dists, dist[i].astype(np.int64))
        assert set(r.ids.tolist()) == set(ids[i].tolist())
