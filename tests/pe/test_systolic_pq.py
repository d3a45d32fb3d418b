"""Replace-only systolic priority queue: schedule proof, reference and cycle models, RTL, HLS, timing."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fanns.engines.systolic import settle_cycles, zero_one_check
from fanns.errors import FannsError
from fanns.numerics import sentinel, smallest_keys
from fanns.paths import shared_dir
from fanns.pe.systolic_pq import SystolicPQ
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim
from tests.tiers import slow_params

CONFIGS = [SystolicPQ(s=7, key_bits=64), SystolicPQ(s=1, key_bits=3)]


# the slow tier adds the one-cell queue
@pytest.fixture(scope="module", params=slow_params(CONFIGS, fast={"s7k64"}, ids=lambda pe: f"s{pe.s}k{pe.key_bits}"))
def rtl(request, build_root):
    pe = request.param
    sim = RtlSim.from_component(pe.component(), "systolic_pq", build_root / f"systolic_pq_{pe.s}_{pe.key_bits}")
    return pe, sim


@pytest.mark.parametrize("s", range(1, 15))
def test_schedule_is_exact_for_all_zero_one_inputs(s):
    """0-1 principle: exhaustive over every reachable state and arrival pattern (see fanns.engines.systolic)."""
    found = zero_one_check(s, with_pops=True)
    assert found["settle"] == settle_cycles(s) == max(s - 1, 0)


@settings(max_examples=300, deadline=None)
@given(
    s=st.integers(1, 40),
    key_bits=st.sampled_from([3, 20, 52, 64]),
    data=st.data(),
)
def test_cycle_model_yields_exact_smallest(s, key_bits, data):
    pe = SystolicPQ(s=s, key_bits=key_bits)
    n = data.draw(st.integers(1, 3 * s + 5))
    keys = data.draw(st.lists(st.integers(0, sentinel(key_bits)), min_size=n, max_size=n))
    gaps = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    out, _ = pe.run_schedule(keys, gaps)
    assert out == [int(k) for k in smallest_keys(np.array(keys, dtype=np.uint64), s, fill_bits=key_bits)]
    _, cycles = pe.run_schedule(keys)
    assert cycles == pe.cycles(n)


def test_reference_is_numerics_smallest_keys():
    rng = np.random.default_rng(1)
    pe = SystolicPQ(s=16, key_bits=64)
    for n in (1, 5, 16, 17, 1000):
        keys = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
        expected = (sorted(int(k) for k in keys) + [2**64 - 1] * 16)[:16]
        assert [int(k) for k in pe.select(keys)] == expected


def test_bad_parameters_raise_fanns_error():
    with pytest.raises(FannsError):
        SystolicPQ(s=0, key_bits=64)
    with pytest.raises(FannsError):
        SystolicPQ(s=4, key_bits=65)


def test_rtl_matches_reference_under_backpressure(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {"pe": pe.params(), "queries": 40, "max_items": 2 * pe.s + 50, "bubble": 0.3, "backpressure": 0.4, "seed": 5},
    )
    assert out["mismatches"] == 0
    assert out["inputs"] >= 1000


def test_rtl_cycles_match_timing_model(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {"pe": pe.params(), "queries": 12, "max_items": 3 * pe.s + 20, "bubble": 0.0, "backpressure": 0.0, "seed": 3},
    )
    for n, cycles in out["spans"]:
        assert cycles == pe.cycles(n), f"N={n}: simulated {cycles}, model {pe.cycles(n)}"


def test_rtl_back_to_back_queries_cost_cycles_each(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {
            "pe": pe.params(),
            "queries": 8,
            "n": 2 * pe.s + 3,
            "max_items": 0,
            "bubble": 0.0,
            "backpressure": 0.0,
            "seed": 4,
            "pipelined": True,
        },
    )
    assert out["mismatches"] == 0
    ((_, cycles),) = out["spans"]
    assert cycles == 8 * pe.cycles(2 * pe.s + 3)


@pytest.mark.parametrize(
    "pe",
    [SystolicPQ(s=10, key_bits=52), SystolicPQ(s=1, key_bits=64), SystolicPQ(s=33, key_bits=64)],
    ids=lambda pe: f"s{pe.s}k{pe.key_bits}",
)
def test_hls_csim_matches_reference(pe, build_root):
    binary = compile_program(
        [shared_dir("sim") / "csim" / "tb_systolic_pq.cpp"],
        build_root / "csim",
        {"TB_S": pe.s, "TB_KEY_BITS": pe.key_bits},
    )
    rng = np.random.default_rng(12)
    sizes = rng.integers(1, 5 * pe.s + 50, 40)
    keys = np.concatenate([rng.integers(0, sentinel(pe.key_bits), n, dtype=np.uint64, endpoint=True) for n in sizes])
    keys[::7] = sentinel(pe.key_bits) - rng.integers(0, 2, len(keys[::7])).astype(np.uint64)
    (out,) = run_program(
        binary,
        [sizes.astype(np.uint32), keys],
        [("uint64", (len(sizes), pe.s))],
        build_root / f"csim_spq_{pe.s}",
        args=[str(len(sizes))],
    )
    start = np.concatenate([[0], np.cumsum(sizes)])
    for q in range(len(sizes)):
        assert np.array_equal(out[q], pe.select(keys[start[q] : start[q + 1]])), f"query {q}"


@pytest.mark.slow  # a fresh yosys synthesis (test_calibration keeps one in the fast tier)
def test_fresh_synthesis_matches_calibrated_model():
    """A size not among the calibration points, synthesised now, against the committed fit."""
    from fanns.tools.yosys import synthesize

    pe = SystolicPQ(s=6, key_bits=36)
    measured, _ = synthesize(pe.verilog("top"), "top")
    predicted = pe.resources()
    assert measured.lut == pytest.approx(predicted.lut, rel=0.1)
    assert measured.ff == pytest.approx(predicted.ff, rel=0.05)
    assert measured.dsp == predicted.dsp == 0 and measured.bram18 == predicted.bram18 == 0
