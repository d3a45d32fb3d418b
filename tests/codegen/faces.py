"""Both faces of one pinned IVF-PQ design against the reference model: the case a test module's
fixture builds (`face_case`) and the two checks every shape test runs on it — HLS C simulation
bit-exact, and RTL (fast harness, its model built at g++ -O0: six queries run, the build is the
cost) bit-exact with its cycles within the model's tolerance."""

import numpy as np

from fanns.codegen.ivfpq.hls import TestQueries, generate_hls
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.reference.ivfpq import IvfPqReference
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.csim import HlsCsim
from fanns.sim.ivfpq.rtl import RtlProjectSim, Run, measured_interval
from fanns.tools.vmodel import QUICK_BUILD
from tests.codegen.test_rtl import CYCLE_TOLERANCE

QUERIES = 6


def face_case(name: str, data, fmt, design) -> dict:
    """`design` with `QUERIES` random queries and the keys the reference model returns for them."""
    queries = np.random.default_rng(7).standard_normal((QUERIES, data.d)).astype(np.float32)
    expected = DesignReference(design, IvfPqReference(data, fmt)).search_keys(queries)
    test = TestQueries(queries, np.zeros((QUERIES, design.k), dtype=np.int64))
    return {"name": name, "data": data, "design": design, "queries": queries, "test": test, "keys": expected}


def hls_csim_keys(case: dict, tmp_path, build_root) -> np.ndarray:
    """The keys the case's generated HLS kernel returns in C simulation."""
    generate_hls(case["design"], case["data"], case["test"], tmp_path / "hls")
    with HlsCsim(tmp_path / "hls", build_root / f"hls_{case['name']}") as sim:
        return sim.search_keys(case["queries"])


def rtl_fast_run(case: dict, tmp_path, build_root) -> tuple[dict, object, float]:
    """The case's generated RTL run in the fast harness: the run, the model's prediction for it
    and the measured cycles per query."""
    design = case["design"]
    project = generate_rtl(design, case["data"], case["test"], tmp_path / "rtl")
    sim = RtlProjectSim(project.path, build_root / f"rtl_{case['name']}", harness="fast", options=QUICK_BUILD)
    sim.build()
    run = sim.run([Run(nq=QUERIES, nprobe=design.nprobe, k=design.k)])["runs"][0]
    return run, sim.predicted_run(0, QUERIES), measured_interval(run)


def check_hls_csim(case: dict, tmp_path, build_root) -> None:
    assert np.array_equal(hls_csim_keys(case, tmp_path, build_root), case["keys"])


def check_rtl_fast(case: dict, tmp_path, build_root) -> None:
    design = case["design"]
    run, model, measured = rtl_fast_run(case, tmp_path, build_root)
    assert run["mismatched_keys"] == 0 and run["checked_keys"] == QUERIES * design.k, run.get("first_bad")
    assert np.array_equal(run["keys"], case["keys"])
    assert abs(measured - model.interval) <= CYCLE_TOLERANCE * model.interval, (measured, model)
