"""The graph designs' CPU baseline (`fanns.explore.graph_cpu`): faiss HNSW at the smallest
efSearch reaching the design's recall, measured on one thread and all cores, the ratio's figure
chosen as for IVF-PQ."""

from __future__ import annotations

import numpy as np
import pytest

from fanns.explore.graph_cpu import EF_SEARCH, build_hnsw, ef_for_recall, hnsw_baseline
from fanns.index.recall import hits
from fanns.model.cpu_baseline import measure_qps, search_knob


@pytest.fixture(scope="module")
def data():
    """2,000 x 16 clustered vectors, 40 queries, their exact 10 nearest neighbours."""
    rng = np.random.default_rng(5)
    centres = rng.standard_normal((8, 16)) * 3
    x = (centres[rng.integers(0, 8, 2040)] + rng.standard_normal((2040, 16))).astype(np.float32)
    base, queries = x[:2000], x[2000:]
    d = ((queries[:, None, :] - base[None]) ** 2).sum(-1)
    return base, queries, np.argsort(d, 1)[:, :10]


def _recall(index, queries, gt, ef):
    index.hnsw.efSearch = ef
    return float((hits(index.search(queries, 10)[1], gt) / 10).mean())


def test_ef_search_is_the_smallest_that_reaches_the_recall(data):
    base, queries, gt = data
    index = build_hnsw(base, 8, 16)
    top = _recall(index, queries, gt, EF_SEARCH[-1])
    target = (_recall(index, queries, gt, 16) + top) / 2
    ef, recall, reached = ef_for_recall(index, queries, gt, 10, target)
    assert reached and recall >= target and ef > 16
    below = EF_SEARCH[EF_SEARCH.index(ef) - 1]
    assert _recall(index, queries, gt, below) < target
    assert ef_for_recall(index, queries, gt, 10, 1.01)[::2] == (EF_SEARCH[-1], False)


def test_baseline_record_and_the_knob_it_sets(data):
    base, queries, gt = data
    held = np.arange(20, 40)
    cpu = hnsw_baseline(base, queries, held, gt, 10, 8, 16, 0.5, min_seconds=0.02)
    assert cpu["index"] == "HNSW4,Flat" and cpu["M"] == 4 and cpu["reached"] and cpu["recall"] >= 0.5
    assert cpu["one_thread"]["threads"] == 1 and cpu["one_thread"]["clock"] == "cpu"
    assert cpu["basis"]["basis"] in ("all-cores", "one-thread", "one-thread-scaled") and cpu["qps"] > 0
    assert cpu["basis"]["text"] and cpu["spread"]["repeats"] == 7
    # the QPS measurement sets efSearch on an HNSW index (nprobe on an IVF one) and restores it
    index = build_hnsw(base, 8, 16)
    knob, name = search_knob(index)
    assert knob is not None and name == "efSearch"
    index.hnsw.efSearch = 40
    assert measure_qps(index, queries, 64, 10, repeats=2, window_seconds=0.01).samples.size == 2
    assert index.hnsw.efSearch == 40
