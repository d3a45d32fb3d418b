"""The design-level reference model (`DesignReference`): equal to the whole-accelerator reference for exact
selection (HPQ, HSMPQG), and for AHPQ never better than exact, equal to it when the level-1
queues are long enough, different for some queries when they are cut short."""

import numpy as np
import pytest

from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq import IvfPqReference
from fanns.reference.ivfpq_streams import DesignReference


@pytest.fixture(scope="module")
def setup():
    data = random_index(nlist=12, n=1500, d=32, m=8, opq=True, seed=4)
    fmt = random_format(32, 8)
    queries = np.random.default_rng(4).standard_normal((60, 32)).astype(np.float32)
    return data, fmt, queries, IvfPqReference(data, fmt)


# (sel_cells, sel_k), (IVFDist PEs, PQDist PEs); HSMPQG needs s < z (nprobe = 4, K = 6)
@pytest.mark.parametrize(
    "sel,pes",
    [
        (("hpq", "hpq"), (3, 5)),
        (("hpq", "hpq"), (7, 11)),
        (("hsmpqg", "hsmpqg"), (7, 11)),
        (("hpq", "hsmpqg"), (2, 9)),
    ],
)
def test_exact_selection_equals_reference(setup, sel, pes):
    data, fmt, queries, ref = setup
    design = pinned_design(
        data, fmt, nprobe=4, k=6, ivf=(pes[0], 8, "bram"), pq=(pes[1], 2), sel_cells=sel[0], sel_k=sel[1]
    )
    assert np.array_equal(DesignReference(design, ref).search_keys(queries), ref.search_keys(queries, 4, 6))


def test_ahpq_truncation(setup):
    data, fmt, queries, ref = setup
    exact = ref.search_keys(queries, 5, 20)
    short = pinned_design(data, fmt, nprobe=5, k=20, pq=(8, 2), sel_k="ahpq", sel_params={"ahpq": {"target": 0.05}})
    assert short.stages.sel_k.s1 < 20
    got = DesignReference(short, ref).search_keys(queries)
    assert np.array_equal(DesignReference(short, data).search_keys(queries), got)  # built from the index data
    assert (got >= exact).all()  # the i-th kept key is never smaller than the i-th smallest
    assert 0 < (got != exact).any(1).sum() < len(queries)
    full = pinned_design(data, fmt, nprobe=5, k=20, pq=(8, 2), sel_k="ahpq", sel_params={"ahpq": {"target": 1.0}})
    assert short.stages.sel_k.s1 < full.stages.sel_k.s1  # long enough that no query loses a key
    assert np.array_equal(DesignReference(full, ref).search_keys(queries), exact)


def test_run_time_nprobe_and_k(setup):
    """Fewer probes and results at run time: exact designs give the reference's keys for them."""
    data, fmt, queries, ref = setup
    design = pinned_design(data, fmt, nprobe=6, k=10, ivf=(3, 8, "bram"), pq=(5, 2))
    got = DesignReference(design, ref).search_keys(queries, nprobe=2, k=4)
    assert got.shape == (len(queries), 4)
    assert np.array_equal(got, ref.search_keys(queries, 2, 4))
