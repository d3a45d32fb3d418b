"""HPQ: reference model (= exact s smallest), RTL (cocotb + Verilator), HLS C simulation, timing."""

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.numerics import sentinel, smallest_keys
from fanns.paths import shared_dir
from fanns.pe.hpq import Hpq
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim
from tests.tiers import slow_params

CONFIGS = [Hpq(z=3, s=5, key_bits=52), Hpq(z=2, s=1, key_bits=64)]


# the slow tier adds the one-item queues (s=1)
@pytest.fixture(
    scope="module", params=slow_params(CONFIGS, fast={"z3s5k52"}, ids=lambda pe: f"z{pe.z}s{pe.s}k{pe.key_bits}")
)
def rtl(request, build_root):
    pe = request.param
    sim = RtlSim.from_component(pe.component(), "hpq", build_root / f"hpq_{pe.z}_{pe.s}_{pe.key_bits}")
    return pe, sim


def tb_params(pe, **kw):
    return {"pe_name": pe.name, "pe": pe.params(), "bubble": 0.0, "backpressure": 0.0, "seed": 1} | kw


def test_reference_is_exact_smallest_of_all_streams():
    rng = np.random.default_rng(2)
    for pe in (Hpq(z=4, s=10, key_bits=64), Hpq(z=1, s=3, key_bits=20), Hpq(z=5, s=1, key_bits=52)):
        for _ in range(200):
            streams = [
                rng.integers(0, sentinel(pe.key_bits), int(n), dtype=np.uint64, endpoint=True)
                for n in rng.integers(1, 40, pe.z)
            ]
            assert np.array_equal(
                pe.select(streams), smallest_keys(np.concatenate(streams), pe.s, fill_bits=pe.key_bits)
            )


def test_level1_split_follows_item_parity():
    pe = Hpq(z=2, s=4, key_bits=64)
    parts = pe.level1_inputs([[1, 2, 3, 4, 5], [6]])
    assert [list(map(int, p)) for p in parts] == [[1, 3, 5], [2, 4], [6], []]


def test_bad_parameters_raise_fanns_error():
    with pytest.raises(FannsError):
        Hpq(z=0, s=4)
    with pytest.raises(FannsError):
        Hpq(z=2, s=4).select([[1, 2]])


def test_rtl_matches_reference_under_backpressure(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench, tb_params(pe, queries=25, max_items=3 * pe.s + 60, bubble=0.3, backpressure=0.4, seed=5)
    )
    assert out["mismatches"] == 0
    assert out["inputs"] >= 1000


def test_rtl_cycles_match_timing_model(rtl):
    pe, sim = rtl
    sizes = [1, 2, 7, 2 * pe.s + 3, 2 * pe.s + 4]
    out = sim.run(pe.testbench, tb_params(pe, queries=len(sizes), sizes=sizes, max_items=0))
    assert [n for n, _ in out["spans"]] == sizes
    for n, cycles in out["spans"]:
        assert cycles == pe.cycles(n), f"N={n}: simulated {cycles}, model {pe.cycles(n)}"


@pytest.mark.parametrize("bound", ["streams", "level2"])
def test_rtl_back_to_back_queries_match_interval_model(rtl, bound):
    pe, sim = rtl
    n = 4 * pe.z * pe.s1 + pe.s + 10 if bound == "streams" else 3  # which term of interval() dominates
    out = sim.run(pe.testbench, tb_params(pe, queries=5, sizes=[n] * 5, max_items=0, pipelined=True))
    assert out["mismatches"] == 0
    ((_, cycles),) = out["spans"]
    assert cycles == pe.cycles(n) + 4 * pe.interval(n)
    assert pe.interval(n) <= pe.cycles(n)
    assert (pe.interval(n) > pe.interval(1)) == (bound == "streams")


@pytest.mark.parametrize("pe", [Hpq(z=3, s=10, key_bits=52), Hpq(z=4, s=1, key_bits=64)], ids=["z3s10", "z4s1"])
def test_hls_csim_matches_reference(pe, build_root):
    csim_matches_reference(pe, build_root)


def csim_matches_reference(pe, build_root, queries=30, skew=False):
    """Run hls/hpq.h (with the PE's s1) on random queries; shared with the AHPQ tests."""
    binary = compile_program(
        [shared_dir("sim") / "csim" / "tb_hpq.cpp"],
        build_root / "csim",
        {"TB_Z": pe.z, "TB_S": pe.s, "TB_S1": pe.s1, "TB_KEY_BITS": pe.key_bits},
    )
    rng = np.random.default_rng(13)
    sizes = rng.integers(1, 4 * pe.s + 20, (queries, pe.z)).astype(np.uint32)
    streams = [
        [rng.integers(0, sentinel(pe.key_bits), int(n), dtype=np.uint64, endpoint=True) for n in row] for row in sizes
    ]
    if skew:
        for q in streams[::2]:
            q[0][0::2] = rng.integers(0, 16, len(q[0][0::2]), dtype=np.uint64)
    keys = np.concatenate([k for q in streams for k in q])
    (out,) = run_program(
        binary,
        [sizes, keys],
        [("uint64", (queries, pe.s))],
        build_root / f"csim_{pe.name}_{pe.z}_{pe.s}",
        args=[str(queries)],
    )
    for q in range(queries):
        assert np.array_equal(out[q], pe.select(streams[q])), f"query {q}"
