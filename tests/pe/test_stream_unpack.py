"""Wide-to-narrow stream converter: RTL against the reference model, partial words, timing."""

import pytest

from fanns.pe.stream_pack import StreamPack
from fanns.pe.stream_unpack import StreamUnpack
from fanns.tools.verilator import RtlSim
from tests.tiers import slow_params

CONFIGS = [StreamUnpack(item_bits=128, k=4), StreamUnpack(item_bits=32, k=16)]


# the slow tier adds 4 wide items a word
@pytest.fixture(scope="module", params=slow_params(CONFIGS, fast={"b32k16"}, ids=lambda pe: f"b{pe.item_bits}k{pe.k}"))
def rtl(request, build_root):
    pe = request.param
    return pe, RtlSim.from_component(
        pe.component(), "stream_unpack", build_root / f"stream_unpack_{pe.item_bits}_{pe.k}"
    )


def test_rtl_matches_reference_under_backpressure(rtl):
    pe, sim = rtl
    frames = [1, 2, 3, 17, 40, 1, 5, 90, 2, 60, 1, 33, 200]
    out = sim.run(
        pe.testbench,
        {"pe": pe.params(), "frames": frames, "partial": 0.7, "bubble": 0.3, "backpressure": 0.4, "seed": 9},
    )
    assert out["mismatches"] == 0 and out["checked"] >= 1000


def test_rtl_cycles_match_timing_model(rtl):
    pe, sim = rtl
    out = sim.run(
        pe.testbench,
        {"pe": pe.params(), "frames": [1, 2, 7, 50], "partial": 0.0, "bubble": 0.0, "backpressure": 0.0, "seed": 1},
    )
    for n, cycles in out["spans"]:
        assert cycles == pe.cycles(n), f"N={n}: simulated {cycles}, model {pe.cycles(n)}"


def test_reference_partial_words_and_round_trip():
    pe = StreamUnpack(item_bits=8, k=4)
    assert pe.unpack([(0x44332211, 0b0110, 1)]) == [(0x22, 0), (0x33, 1)]
    assert pe.unpack([(0x44332211, 0b1111, 0), (0x88776655, 0b0001, 1)])[-2:] == [(0x44, 0), (0x55, 1)]
    packer = StreamPack(item_bits=8, k=4)
    items = [(v, int(i in (4, 9))) for i, v in enumerate(range(10, 20))]
    assert pe.unpack(packer.pack(items)) == items
