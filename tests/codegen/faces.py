"""The two checks every shape test runs on a case of `fanns.sim.ivfpq.faces`: HLS C simulation
bit-exact, and RTL (fast harness) bit-exact with its cycles within the model's tolerance."""

import numpy as np

from fanns.sim.ivfpq.faces import QUERIES, hls_csim_keys, rtl_fast_run
from tests.codegen.test_rtl import CYCLE_TOLERANCE


def check_hls_csim(case: dict, tmp_path, build_root) -> None:
    assert np.array_equal(hls_csim_keys(case, tmp_path, build_root), case["keys"])


def check_rtl_fast(case: dict, tmp_path, build_root) -> None:
    design = case["design"]
    run, model, measured = rtl_fast_run(case, tmp_path, build_root)
    assert run["mismatched_keys"] == 0 and run["checked_keys"] == QUERIES * design.k, run.get("first_bad")
    assert np.array_equal(run["keys"], case["keys"])
    assert abs(measured - model.interval) <= CYCLE_TOLERANCE * model.interval, (measured, model)
