"""L2 distance PE: reference model, RTL (cocotb + Verilator), HLS (g++ C simulation), timing, resources."""

import numpy as np
import pytest

from fanns.numerics import GraphFormat
from fanns.paths import shared_dir
from fanns.pe.l2dist import L2Dist
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim
from tests.tiers import slow_params

CONFIGS = [
    L2Dist(d=128, w=16, vec_bits=8, signed=False),
    L2Dist(d=12, w=4, vec_bits=12, signed=True),
    L2Dist(d=8, w=1, vec_bits=8, signed=True),
]


# unsigned and signed; the slow tier adds the one-lane datapath (w=1)
@pytest.fixture(
    scope="module",
    params=slow_params(
        CONFIGS,
        fast={"d128w16b8u", "d12w4b12s"},
        ids=lambda pe: f"d{pe.d}w{pe.w}b{pe.vec_bits}{'s' if pe.signed else 'u'}",
    ),
)
def rtl(request, build_root):
    pe = request.param
    sim = RtlSim.from_component(
        pe.component(), "l2dist", build_root / f"l2dist_{pe.d}_{pe.w}_{pe.vec_bits}_{pe.signed}"
    )
    return pe, sim


def test_reference_is_exact_l2():
    rng = np.random.default_rng(0)
    pe = L2Dist(d=96, w=16, vec_bits=8, signed=True)
    q = rng.integers(-128, 128, 96)
    x = rng.integers(-128, 128, (50, 96))
    fmt = GraphFormat(d=96, scale=1.0, vec_bits=8, signed=True)
    assert np.array_equal(pe.distances(q, x), fmt.l2(q, x))
    assert pe.distances(q, x).max() < 2**pe.dist_bits


def test_rtl_matches_reference_under_backpressure(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {"pe": pe.params(), "queries": 40, "max_vectors": 100, "bubble": 0.3, "backpressure": 0.3, "seed": 7},
    )
    assert out["mismatches"] == 0
    assert out["checked"] >= 1000


def test_rtl_cycles_match_timing_model(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {"pe": pe.params(), "queries": 12, "max_vectors": 50, "bubble": 0.0, "backpressure": 0.0, "seed": 3},
    )
    for n, cycles in out["spans"]:
        assert cycles == pe.cycles(n), f"N={n}: simulated {cycles}, model {pe.cycles(n)}"


@pytest.mark.parametrize("pe", CONFIGS[:2], ids=["u8", "s12"])
def test_hls_csim_matches_reference(pe, build_root):
    ctype = {(8, False): ("uint8_t", np.uint8), (12, True): ("int16_t", np.int16)}[(pe.vec_bits, pe.signed)]
    binary = compile_program(
        [shared_dir("sim") / "csim" / "tb_l2dist.cpp"],
        build_root / "csim",
        {"TB_D": pe.d, "TB_W": pe.w, "TB_ELEM": ctype[0]},
    )
    rng = np.random.default_rng(11)
    lo, hi = pe.elem_range()
    for trial in range(5):
        n = int(rng.integers(1, 500))
        q = rng.integers(lo, hi + 1, pe.d).astype(ctype[1])
        x = rng.integers(lo, hi + 1, (n, pe.d)).astype(ctype[1])
        (dist,) = run_program(binary, [q, x], [("uint64", (n,))], build_root / f"csim_run{trial}", args=[str(n)])
        assert np.array_equal(dist.astype(np.int64), pe.distances(q, x))
