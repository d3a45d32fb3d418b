"""Bitonic sorting network: network proof (0-1 principle), reference model, RTL, timing, HLS."""

import itertools
import subprocess

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.numerics import smallest_keys
from fanns.paths import shared_dir
from fanns.pe.bitonic_sort import BitonicSort
from fanns.tools.csim import compile_program, run_program
from fanns.tools.verilator import RtlSim
from fanns.tools.yosys import synthesize
from tests.tiers import slow_params

CONFIGS = [
    BitonicSort(l=16, key_bits=64),
    BitonicSort(l=4, key_bits=3),
]


# the slow tier adds the 16-key network
@pytest.fixture(scope="module", params=slow_params(CONFIGS, fast={"l4k3"}, ids=lambda pe: f"l{pe.l}k{pe.key_bits}"))
def rtl(request, build_root):
    pe = request.param
    return pe, RtlSim.from_component(pe.component(), "bitonic_sort", build_root / f"bitonic_sort_{pe.l}_{pe.key_bits}")


@pytest.mark.parametrize("l", [2, 4, 8, 16])
def test_network_sorts_every_zero_one_input(l):
    """0-1 principle: a comparator network that sorts all 2**l binary inputs sorts every input."""
    x = np.array(list(itertools.product([0, 1], repeat=l)), dtype=np.uint64)
    assert np.array_equal(BitonicSort(l=l, key_bits=1).sort(x), np.sort(x, axis=-1))


@pytest.mark.parametrize("l", [2, 4, 8, 16, 32, 64, 128, 256])
def test_depth_and_size_match_the_thesis(l):
    pe = BitonicSort(l=l, key_bits=32)
    k = int(np.log2(l))
    assert pe.network().depth == k * (1 + k) // 2
    assert pe.network().cost()["comparators"] == (l // 2) * k * (1 + k) // 2
    assert pe.latency() == k * (1 + k) // 2 + 1 and pe.ii() == 1


@pytest.mark.parametrize("l,key_bits", [(16, 64), (32, 52), (8, 5)])
def test_reference_sorts_like_numerics(l, key_bits):
    rng = np.random.default_rng(l + key_bits)
    top = (1 << key_bits) - 1
    keys = rng.integers(0, top, (3000, l), dtype=np.uint64, endpoint=True)
    keys[:500] = np.uint64(top) - keys[:500] % np.uint64(4)  # sentinels and near-sentinels
    out = BitonicSort(l=l, key_bits=key_bits).sort(keys)
    assert np.array_equal(out, np.sort(keys, axis=-1))
    assert np.array_equal(out, smallest_keys(keys, l))


def test_bad_parameters_and_keys_are_user_errors():
    with pytest.raises(FannsError, match="power of two"):
        BitonicSort(l=12, key_bits=32)
    with pytest.raises(FannsError, match="key_bits"):
        BitonicSort(l=8, key_bits=65)
    pe = BitonicSort(l=4, key_bits=8)
    with pytest.raises(FannsError, match="2\\*\\*8"):
        pe.sort(np.array([[1, 2, 3, 256]]))
    with pytest.raises(FannsError, match="l=4"):
        pe.sort(np.zeros((2, 8), dtype=np.uint64))


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


@pytest.mark.parametrize("l", [8, 16])
def test_hls_csim_matches_reference(l, build_root):
    pe = BitonicSort(l=l, key_bits=64)
    binary = compile_program([shared_dir("sim") / "csim" / "tb_bitonic_sort.cpp"], build_root / "csim", {"TB_L": l})
    rng = np.random.default_rng(l)
    for trial in range(3):
        n = int(rng.integers(1, 2000))
        keys = rng.integers(0, 2**64 - 1, (n, l), dtype=np.uint64, endpoint=True)
        keys[: n // 4] %= np.uint64(5)  # duplicates
        (out,) = run_program(binary, [keys], [("uint64", (n, l))], build_root / f"csim_sort{l}_{trial}", args=[str(n)])
        assert np.array_equal(out, pe.sort(keys))


def test_csim_driver_stops_on_a_short_input_or_an_unwritable_output(build_root, tmp_path):
    """The drivers' shared file I/O (sim/csim/tb_io.h): a failed read or write exits 1 naming the file."""
    binary = compile_program([shared_dir("sim") / "csim" / "tb_bitonic_sort.cpp"], build_root / "csim", {"TB_L": 8})
    keys = tmp_path / "keys.bin"
    np.arange(8, dtype="<u8").tofile(keys)
    short = subprocess.run([str(binary), str(keys), str(tmp_path / "out.bin"), "2"], capture_output=True, text=True)
    assert short.returncode == 1 and f"cannot read 16 items from {keys}" in short.stderr
    unwritable = tmp_path / "missing" / "out.bin"
    failed = subprocess.run([str(binary), str(keys), str(unwritable), "1"], capture_output=True, text=True)
    assert failed.returncode == 1 and f"cannot write {unwritable}" in failed.stderr
    ok = subprocess.run([str(binary), str(keys), str(tmp_path / "out.bin"), "1"], capture_output=True, text=True)
    assert ok.returncode == 0 and np.array_equal(np.fromfile(tmp_path / "out.bin", dtype="<u8"), np.arange(8))


@pytest.mark.slow  # a fresh yosys synthesis (test_calibration keeps one in the fast tier)
def test_fresh_synthesis_matches_calibrated_model():
    """A size the table was not fitted on: yosys now vs the committed linear model."""
    pe = BitonicSort(l=8, key_bits=32)
    measured, _ = synthesize(pe.verilog("top"), "top")
    predicted = pe.resources()
    assert measured.lut == pytest.approx(predicted.lut, rel=0.05)
    assert measured.ff == pytest.approx(predicted.ff, rel=0.01)
    assert measured.dsp == predicted.dsp == 0 and measured.bram18 == predicted.bram18 == 0
