"""The step-wise schedules and their check (`fanns.sim.ivfpq.stepwise`), on the reference model
alone: every query's own cells are scanned once in steps, and a face that drops the kept keys
between steps is caught."""

import numpy as np

from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.stepwise import run_schedules, schedules
from tests.codegen.test_hls_project import small_case


def _case():
    design, data, test = small_case("onchip-opq")
    dref = DesignReference(design, data)
    q_host = dref.ref.quantize_queries(test.queries[:6])
    return design, data, dref, q_host


def _run(face, dref, design, data, q_host, seed=3):
    rng = np.random.default_rng(seed)
    plans = schedules(dref.probe(dref.ref.rotate(q_host), design.nprobe), design.nprobe, rng, True, data.nlist)
    assert all(sorted(np.concatenate(p).tolist()) == sorted(set(np.concatenate(p).tolist())) for p in plans)
    ref = dref.search_keys_cells_fx
    return run_schedules(face, ref, q_host, plans, design, rng)


def test_the_reference_against_itself_ends_at_the_normal_search():
    design, data, dref, q_host = _case()
    check = _run(dref.search_keys_cells_fx, dref, design, data, q_host)
    assert check.mismatched_queries == 0 and check.first_mismatch == ""
    assert check.calls >= 2
    assert np.array_equal(check.keys, dref.search_keys_fx(q_host))


def test_a_face_that_forgets_the_kept_keys_is_caught():
    design, data, dref, q_host = _case()

    def forgetful(q, cells, seeds):
        return dref.search_keys_cells_fx(q, cells, None)

    check = _run(forgetful, dref, design, data, q_host)
    assert check.mismatched_queries > 0 and check.first_mismatch.startswith("call ")
