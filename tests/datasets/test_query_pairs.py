"""Draft/final query pairs (issue 49, fanns.datasets.query_pairs): deterministic, unit rows, the
draft mixes in another query (never itself), and the calibrated mix gives the target cell
coverage on clustered data; coverage falls as the mix grows."""

import numpy as np
import pytest

from fanns.datasets import query_pairs as qp
from fanns.errors import FannsError


@pytest.fixture(scope="module")
def clustered():
    """Queries around 256 centroids on the 64-d sphere (queries follow the data, as in an IVF index)."""
    rng = np.random.default_rng(0)
    centroids = rng.standard_normal((256, 64))
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    finals = centroids[rng.integers(0, 256, 300)] + 0.6 * rng.standard_normal((300, 64)) / 8
    return finals.astype(np.float32), centroids


def test_drafts_are_deterministic_unit_rows(clustered):
    finals, _ = clustered
    a = qp.draft_queries(finals, 0.3, 0.1, seed=4)
    assert a.dtype == np.float32 and a.shape == finals.shape
    assert np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-5)
    assert a.tobytes() == qp.draft_queries(finals, 0.3, 0.1, seed=4).tobytes()
    assert not np.array_equal(a, qp.draft_queries(finals, 0.3, 0.1, seed=5))
    unit = finals / np.linalg.norm(finals, axis=1, keepdims=True)
    assert np.allclose(qp.draft_queries(finals, 0.0, 0.0), unit, atol=1e-6)
    perm = qp.derangement(50, np.random.default_rng(1))
    assert sorted(perm.tolist()) == list(range(50)) and not np.any(perm == np.arange(50))
    with pytest.raises(FannsError):
        qp.draft_queries(finals, 1.5, 0.0)


def test_calibrated_mix_gives_the_target_coverage(clustered):
    finals, centroids = clustered
    mix, cov = qp.calibrate_mix(finals, centroids, nprobe=8, target=0.79, steps=12)
    assert 0 < mix < 1 and cov == pytest.approx(0.79, abs=0.02)
    drafts = qp.draft_queries(finals, mix, qp.TEXT_NOISE)
    final_cells = qp.nearest_cells(finals / np.linalg.norm(finals, axis=1, keepdims=True), centroids, 8)
    assert qp.coverage(qp.nearest_cells(drafts, centroids, 8), final_cells).mean() == pytest.approx(cov)
    means = [
        qp.coverage(qp.nearest_cells(qp.draft_queries(finals, x, 0.0), centroids, 8), final_cells).mean()
        for x in (0.0, 0.2, 0.5, 0.9)
    ]
    assert means[0] == 1.0 and means == sorted(means, reverse=True) and means[-1] < 0.3
