"""Both faces of designs whose PQ codes are wider than one memory beat, or narrower than 4 bytes
(issue 16: 768-d embeddings with m = 48..96; d < 4). A code of m bytes wider than a beat takes
ceil(8m / port_bits) consecutive beats of its own, zero padded (`fanns.pe.channel_feeder`); a
beat of codes with m < 4 holds no more codes than it holds 32-bit ids. The HLS kernel in C
simulation (fast) and the RTL in the fast harness (slow: a Verilator build each) must equal the
reference model bit for bit; the RTL's cycles per query must agree with the model, which prices
a code at its beats.

* d = 768, m = 48 on u55c (256-bit HBM ports): 384-bit codes, 2 beats each.
* d = 768, m = 96 on u55c: 768-bit codes, 3 beats each.
* d = 768, m = 32 on zcu104 (128-bit HP ports): 256-bit codes, 2 beats each.
* d = 2, m = 2 and d = 3, m = 3 on u55c and zcu104: 8 and 4 codes to a beat (the ids' count).
"""

import numpy as np
import pytest

from fanns.codegen.ivfpq.hls import TestQueries, generate_hls
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.images.ivfpq import pq_layouts
from fanns.model.ivfpq.pinned import pinned_design
from fanns.reference.ivfpq import IvfPqReference
from fanns.reference.ivfpq_streams import DesignReference
from fanns.sim.ivfpq.csim import HlsCsim
from fanns.sim.ivfpq.rtl import RtlProjectSim, Run, measured_interval
from tests.codegen.helpers import random_format, random_index
from tests.codegen.test_rtl import CYCLE_TOLERANCE

QUERIES = 6
# name: board, d, m, ivf (PEs, lanes), lut (PEs, lanes), pq (PEs, channels), (codes per unit, beats per unit)
CASES = {
    "d768-m48-u55c": ("u55c", 768, 48, (2, 16), (2, 16), (3, 2), (1, 2)),
    "d768-m96-u55c": ("u55c", 768, 96, (1, 16), (2, 8), (2, 1), (1, 3)),
    "d768-m32-zcu104": ("zcu104", 768, 32, (1, 8), (2, 8), (3, 2), (1, 2)),
    "d2-m2-u55c": ("u55c", 2, 2, (1, 1), (2, 1), (3, 2), (8, 1)),
    "d3-m3-zcu104": ("zcu104", 3, 3, (1, 1), (2, 1), (2, 1), (4, 1)),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    board, d, m, ivf, lut, pq, unit = CASES[request.param]
    data = random_index(nlist=16, n=1500, d=d, m=m, empty=1, seed=d + m)
    fmt = random_format(d, m)
    design = pinned_design(
        data, fmt, board=board, nprobe=3, k=10, ivf=(*ivf, "bram"), lut=(*lut, "bram"), pq=pq, opq_lanes=ivf[1]
    )
    assert {(lay.codes_per_unit, lay.beats_per_unit) for _, lay in pq_layouts(design)} == {unit}
    queries = np.random.default_rng(7).standard_normal((QUERIES, d)).astype(np.float32)
    expected = DesignReference(design, IvfPqReference(data, fmt)).search_keys(queries)
    test = TestQueries(queries, np.zeros((QUERIES, design.k), dtype=np.int64))
    return {"name": request.param, "data": data, "design": design, "queries": queries, "test": test, "keys": expected}


def test_hls_csim_is_bit_exact(case, tmp_path, build_root):
    generate_hls(case["design"], case["data"], case["test"], tmp_path / "hls")
    with HlsCsim(tmp_path / "hls", build_root / f"hls_{case['name']}") as sim:
        assert np.array_equal(sim.search_keys(case["queries"]), case["keys"])


@pytest.mark.slow
def test_rtl_is_bit_exact_and_cycles_agree_with_the_model(case, tmp_path, build_root):
    design = case["design"]
    project = generate_rtl(design, case["data"], case["test"], tmp_path / "rtl")
    sim = RtlProjectSim(project.path, build_root / f"rtl_{case['name']}", harness="fast")
    sim.build()
    run = sim.run([Run(nq=QUERIES, nprobe=design.nprobe, k=design.k)])["runs"][0]
    assert run["mismatched_keys"] == 0 and run["checked_keys"] == QUERIES * design.k, run.get("first_bad")
    assert np.array_equal(run["keys"], case["keys"])
    model = sim.predicted_run(0, QUERIES)
    measured = measured_interval(run)
    assert abs(measured - model.interval) <= CYCLE_TOLERANCE * model.interval, (measured, model)
