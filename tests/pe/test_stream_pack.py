"""Narrow-to-wide stream converter: RTL against the reference model, partial last words, timing."""

import pytest

from fanns.pe.stream_pack import StreamPack
from fanns.tools.verilator import RtlSim
from tests.tiers import slow_params

CONFIGS = [StreamPack(item_bits=32, k=16), StreamPack(item_bits=24, k=3)]


# the slow tier adds 16 items a word
@pytest.fixture(scope="module", params=slow_params(CONFIGS, fast={"b24k3"}, ids=lambda pe: f"b{pe.item_bits}k{pe.k}"))
def rtl(request, build_root):
    pe = request.param
    return pe, RtlSim.from_component(pe.component(), "stream_pack", build_root / f"stream_pack_{pe.item_bits}_{pe.k}")


def test_rtl_matches_reference_under_backpressure(rtl):
    pe, sim = rtl
    frames = [1, 2, pe.k - 1, pe.k, pe.k + 1, 100, 3, 250, 1, 7, 300, 2 * pe.k, 500]
    out = sim.run(pe.testbench, {"pe": pe.params(), "frames": frames, "bubble": 0.3, "backpressure": 0.4, "seed": 6})
    assert out["mismatches"] == 0 and out["checked"] >= 1000


def test_rtl_cycles_match_timing_model(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {"pe": pe.params(), "frames": [1, 2, pe.k, 3 * pe.k + 1, 77], "bubble": 0.0, "backpressure": 0.0, "seed": 1},
    )
    for n, cycles in out["spans"]:
        assert cycles == pe.cycles(n), f"N={n}: simulated {cycles}, model {pe.cycles(n)}"


def test_reference_partial_last_word():
    pe = StreamPack(item_bits=8, k=4)
    assert pe.pack([(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 1)]) == [(0x04030201, 0b1111, 0), (0x0605, 0b0011, 1)]
