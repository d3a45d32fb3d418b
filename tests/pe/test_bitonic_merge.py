"""Bitonic partial merger: network proof (0-1 principle), reference model, RTL, timing, HLS."""

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.numerics import smallest_keys
from fanns.paths import shared_dir
from fanns.pe.bitonic_merge import BitonicMerge
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim
from fanns.tools.yosys import synthesize
from tests.tiers import slow_params

CONFIGS = [
    BitonicMerge(l=8, key_bits=52),
    BitonicMerge(l=2, key_bits=3),
]


# the slow tier adds the two-key merge
@pytest.fixture(scope="module", params=slow_params(CONFIGS, fast={"l8k52"}, ids=lambda pe: f"l{pe.l}k{pe.key_bits}"))
def rtl(request, build_root):
    pe = request.param
    return pe, RtlSim.from_component(
        pe.component(), "bitonic_merge", build_root / f"bitonic_merge_{pe.l}_{pe.key_bits}"
    )


def sorted_keys(rng, shape, key_bits):
    return np.sort(rng.integers(0, (1 << key_bits) - 1, shape, dtype=np.uint64, endpoint=True), axis=-1)


@pytest.mark.parametrize("l", [2, 4, 8, 16, 32, 64])
def test_network_merges_every_sorted_zero_one_pair(l):
    """0-1 principle over all (l+1)**2 pairs of ascending binary arrays: correct for every input."""
    steps = np.array([[0] * (l - i) + [1] * i for i in range(l + 1)], dtype=np.uint64)
    a = np.repeat(steps, l + 1, axis=0)
    b = np.tile(steps, (l + 1, 1))
    out = BitonicMerge(l=l, key_bits=1).merge(a, b)
    assert np.array_equal(out, np.sort(np.concatenate([a, b], axis=1), axis=1)[:, :l])


@pytest.mark.parametrize("l,key_bits", [(16, 64), (64, 52), (8, 4)])
def test_reference_keeps_the_l_smallest(l, key_bits):
    rng = np.random.default_rng(l * key_bits)
    a, b = sorted_keys(rng, (3000, l), key_bits), sorted_keys(rng, (3000, l), key_bits)
    b[:1000] = np.sort(a[:1000] + np.uint64(1) * (a[:1000] < np.uint64((1 << key_bits) - 1)), axis=-1)  # interleaved
    pe = BitonicMerge(l=l, key_bits=key_bits)
    assert np.array_equal(pe.merge(a, b), smallest_keys(np.concatenate([a, b], axis=1), l))
    assert pe.latency() == int(np.log2(l)) + 2 and pe.ii() == 1


def test_bad_inputs_are_user_errors():
    with pytest.raises(FannsError, match="power of two"):
        BitonicMerge(l=6, key_bits=32)
    pe = BitonicMerge(l=4, key_bits=8)
    with pytest.raises(FannsError, match="not sorted"):
        pe.merge(np.array([[1, 2, 3, 4]]), np.array([[4, 3, 2, 1]]))
    with pytest.raises(FannsError, match="shape"):
        pe.merge(np.zeros((2, 4), dtype=np.uint64), np.zeros((3, 4), dtype=np.uint64))


def test_rtl_matches_reference_and_timing_model(rtl):
    """One simulation per build: random queries under bubbles/back-pressure, then stall-free timing."""
    pe, sim = rtl
    params = {
        "pe": pe.params(),
        "queries": 50,
        "max_vectors": 60,
        "bubble": 0.3,
        "backpressure": 0.3,
        "seed": 5,
        "timing_queries": 12,
    }
    out = sim.run(pe.testbench, params)
    assert out["mismatches"] == 0
    assert out["checked"] >= 1000
    assert len(out["spans"]) == 12
    for n, cycles in out["spans"]:
        assert cycles == pe.cycles(n), f"N={n}: simulated {cycles}, model {pe.cycles(n)}"


@pytest.mark.parametrize("l", [8, 32])
def test_hls_csim_matches_reference(l, build_root):
    pe = BitonicMerge(l=l, key_bits=64)
    binary = compile_program([shared_dir("sim") / "csim" / "tb_bitonic_merge.cpp"], build_root / "csim", {"TB_L": l})
    rng = np.random.default_rng(l)
    for trial in range(3):
        n = int(rng.integers(1, 2000))
        a, b = sorted_keys(rng, (n, l), 64), sorted_keys(rng, (n, l), 64)
        b[: n // 3] = np.sort(a[: n // 3] ^ np.uint64(1), axis=-1)  # interleaved with a
        (out,) = run_program(binary, [a, b], [("uint64", (n, l))], build_root / f"csim_merge{l}_{trial}", args=[str(n)])
        assert np.array_equal(out, pe.merge(a, b))


@pytest.mark.slow  # a fresh yosys synthesis (test_calibration keeps one in the fast tier)
def test_fresh_synthesis_matches_calibrated_model():
    """A size the table was not fitted on: yosys now vs the committed linear model."""
    pe = BitonicMerge(l=4, key_bits=48)
    measured, _ = synthesize(pe.verilog("top"), "top")
    predicted = pe.resources()
    assert measured.lut == pytest.approx(predicted.lut, rel=0.05)
    assert measured.ff == pytest.approx(predicted.ff, rel=0.01)
    assert measured.dsp == predicted.dsp == 0 and measured.bram18 == predicted.bram18 == 0
