"""Work shared across the grid: the OPQ index of an nlist takes the plain index's coarse
quantizer and cells, one OPQ rotation serves every nlist, and the cost model drops that work."""

import json

import faiss
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from fanns.datasets import load_dataset
from fanns.datasets.synthetic import clustered
from fanns.errors import FannsError
from fanns.explore import ivfpq_estimate
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.index.goals import RecallGoal
from fanns.index.ivfpq import apply_pretransform, extract, train_index
from fanns.index.ivfpq_shared import coarse_of, rotated, train_rotation, train_shared_index
from fanns.index.recall import recall_at


@pytest.fixture(scope="module")
def plain():
    base, queries = clustered(6000, 40, 32, seed=4)
    index = train_index(base, "l2", 24, 8, False, base, 0)
    return base, queries, index


def test_opq_index_takes_the_plain_cells_and_rotated_centroids(plain):
    base, queries, index = plain
    coarse = coarse_of(index)
    assert coarse.assign.shape == (6000,) and coarse.assign.min() >= 0
    rotation = train_rotation(base, 8)
    assert np.allclose(rotation @ rotation.T, np.eye(32), atol=1e-4)  # orthogonal: distances kept
    phases = []
    opq = train_shared_index(base, "l2", 24, 8, rotation, base, 0, coarse, lambda p, n: phases.append(p))
    assert phases[0] == "train" and set(phases[1:]) == {"add"}
    a, b = extract(index, "l2"), extract(opq, "l2")
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.ids, b.ids)  # the same cells
    assert np.allclose(b.centroids, a.centroids @ rotation.T, atol=1e-5)
    assert np.allclose(b.opq_matrix, rotation)
    assert opq.ntotal == 6000
    # searching through the rotation finds the plain index's nearest cells
    _, cells_plain = index.quantizer.search(queries, 3)
    ivf = faiss.extract_index_ivf(opq)
    _, cells_opq = ivf.quantizer.search(apply_pretransform(opq, queries), 3)
    assert (cells_plain[:, 0] == cells_opq[:, 0]).mean() > 0.95


def test_shared_and_own_coarse_quantizers_reach_like_recall(plain):
    base, queries, index = plain
    rotation = train_rotation(base, 8)
    shared = train_shared_index(base, "l2", 24, 8, rotation, base, 0, coarse_of(index))
    own = train_shared_index(base, "l2", 24, 8, rotation, base, 0)
    d2 = ((queries[:, None, :] - base[None, :, :]) ** 2).sum(-1)
    gt = np.argsort(d2, axis=1)[:, :10]
    found = {}
    for name, ix in (("shared", shared), ("own", own)):
        faiss.extract_index_ivf(ix).nprobe = 4
        found[name] = recall_at(ix.search(queries, 10)[1], gt, 10)
    assert found["shared"] > 0.5 and abs(found["shared"] - found["own"]) < 0.1


def test_plain_index_of_another_m_on_the_shared_coarse_quantizer_equals_its_own_training(plain):
    """k-means and the coarse assignment do not depend on m: a plain PQ16 index on the coarse
    quantizer and cells of the PQ8 one has the bytes of the PQ16 index trained on its own."""
    base, _, index = plain
    shared = train_shared_index(base, "l2", 24, 16, None, base, 0, coarse_of(index))
    own = train_index(base, "l2", 24, 16, False, base, 0)
    assert np.array_equal(faiss.serialize_index(shared), faiss.serialize_index(own))
    with pytest.raises(FannsError, match="shares nothing"):
        train_shared_index(base, "l2", 24, 16, None, base, 0)


def test_rotated_centroids_have_the_same_bits_on_one_and_two_blas_threads():
    # a Dask worker runs BLAS on one thread; the float32 product splits its sums differently there
    rng = np.random.default_rng(0)
    centroids = rng.standard_normal((256, 384)).astype(np.float32)
    rotation = np.linalg.qr(rng.standard_normal((384, 384)))[0].astype(np.float32)
    here = rotated(centroids, rotation)
    with threadpool_limits(1):
        one = rotated(centroids, rotation)
    assert here.dtype == np.float32 and np.array_equal(here, one)
    assert np.allclose(here, centroids @ rotation.T, atol=1e-5)


def test_mismatched_coarse_is_refused(plain):
    base, _, index = plain
    with pytest.raises(FannsError, match="shared coarse quantizer"):
        train_shared_index(base, "l2", 32, 8, train_rotation(base, 8), base, 0, coarse_of(index))


def test_cost_model_drops_the_shared_work():
    args = (10**6, 768, 1000, 1024, 16, True, 65536, 16384)
    own = ivfpq_estimate.index_cost(*args)
    shared = ivfpq_estimate.index_cost(*args, coarse_shared=True, rotation_shared=True)
    plain = ivfpq_estimate.index_cost(*args[:5], False, *args[6:])
    assert shared["sweep"] == own["sweep"]
    assert shared["add"]["madds"] == pytest.approx(own["add"]["madds"] - plain["add"]["madds"])
    assert shared["add"]["encoded"] == own["add"]["encoded"]
    assert shared["train"]["madds"] < own["train"]["madds"] and shared["train"]["pq_rounds"] < own["train"]["pq_rounds"]


def test_an_exploration_shares_each_nlists_coarse_quantizer_across_m_and_opq(tmp_path):
    """The grid runs nlist by nlist; every other index of an nlist takes the coarse quantizer of
    its first plain index, and a plain index of the second m has the bytes it has trained alone
    (on a 3,000-vector training sample: what is shared does not depend on its size)."""
    ds = load_dataset("builtin:sift-10k")
    goals = [RecallGoal(10, 0.5)]
    cfg = ExploreConfig(goals=goals, nlists=[16, 32], ms=[8, 16], train_size=3000, max_queries=50, qps_min_seconds=0.0)
    explorer = IvfPqExplorer(ds, cfg, tmp_path / "both")
    assert explorer.grid()[:4] == [(16, 8, False), (16, 8, True), (16, 16, False), (16, 16, True)]
    assert [explorer.coarse_source(16, m, o) for _, m, o in explorer.grid()[:4]] == [None, *["IVF16,PQ8"] * 3]
    result = explorer.run()
    assert [r["index"] for r in result["indexes"]][:4] == [
        "IVF16,PQ8",
        "OPQ8,IVF16,PQ8",
        "IVF16,PQ16",
        "OPQ16,IVF16,PQ16",
    ]
    meta = json.loads((tmp_path / "both" / "indexes" / "IVF32_PQ16.meta.json").read_text())
    assert meta["coarse"] == "IVF32,PQ8"
    alone = ExploreConfig(
        goals=goals, nlists=[32], ms=[16], opq=(False,), train_size=3000, max_queries=50, qps_min_seconds=0.0
    )
    IvfPqExplorer(ds, alone, tmp_path / "alone").run()
    name = "indexes/IVF32_PQ16.faissindex"
    assert (tmp_path / "both" / name).read_bytes() == (tmp_path / "alone" / name).read_bytes()
