"""`builtin:sift-photos`: real SIFT descriptors of scikit-image's photos, the held-out queries and
the pinned versions. The whole set builds in seconds, so the fast tier builds it."""

import hashlib

import numpy as np
import pytest

from fanns.datasets import load_dataset, siftset
from fanns.datasets.builtins import BUILTINS
from fanns.errors import FannsError


def test_descriptors_of_one_photo_are_sift_bytes_and_repeat():
    first = siftset.descriptors(("text.png",))
    assert first.dtype == np.uint8 and first.shape[1] == 128 and first.shape[0] > 1000
    # Lowe's descriptor as OpenCV scales it: unit norm after the clip at 0.2, times 512, then
    # saturated to a byte (which only shortens a row).
    norms = np.linalg.norm(first.astype(np.float64), axis=1)
    assert abs(np.median(norms) - 512) < 1 and np.all((norms > 0.85 * 512) & (norms < 1.01 * 512))
    assert np.array_equal(first, siftset.descriptors(("text.png",)))


def test_queries_are_distinct_held_out_and_the_base_has_no_repeat():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, size=(400, 2), dtype=np.uint8)  # 16 distinct rows, many repeats
    x = np.concatenate([x, np.arange(200, dtype=np.uint8).reshape(100, 2)])
    base, queries = siftset.make_sift_set(x, 20, seed=3)
    rows = [r.tobytes() for r in np.concatenate([base, queries])]
    assert len(queries) == 20 and len(set(rows)) == len(rows) == len({r.tobytes() for r in x})
    again = siftset.make_sift_set(x, 20, seed=3)
    assert np.array_equal(again[0], base) and np.array_equal(again[1], queries)
    with pytest.raises(FannsError, match="too few"):
        siftset.make_sift_set(x[:30], 20, seed=3)


def test_another_opencv_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(siftset.VERSIONS, "opencv-python-headless", "0.0.1")
    with pytest.raises(FannsError, match=r"opencv-python-headless==0.0.1.*found 5") as err:
        siftset.descriptors(("text.png",))
    assert "fanns[sift]" in err.value.hint


def test_the_built_in_set_is_whole_and_identical_to_the_recorded_build(tmp_path, monkeypatch):
    monkeypatch.setenv("FANNS_CACHE", str(tmp_path))
    ds = load_dataset("builtin:sift-photos")
    spec = BUILTINS["sift-photos"]
    assert ds.base.shape == (spec.n, 128) and ds.queries.shape == (spec.nq, 128) and ds.metric == "l2"
    assert hashlib.sha256(np.ascontiguousarray(ds.base).tobytes()).hexdigest()[:12] == "9570102b0dab"
    assert hashlib.sha256(np.ascontiguousarray(ds.queries).tobytes()).hexdigest()[:12] == "497f987b26cb"
