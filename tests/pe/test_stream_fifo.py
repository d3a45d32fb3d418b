"""Stream FIFO PE: RTL under bubbles and back-pressure, timing, and the storage rule against yosys."""

import pytest

from fanns.pe.stream_fifo import StreamFifo, memory_mapping
from fanns.tools.verilator import RtlSim
from fanns.tools.yosys import synthesize
from tests.tiers import slow_params

# Storage kind does not change behaviour in simulation; depth 2 is the special (II = 2) case.
CONFIGS = [StreamFifo(width=32, depth=2), StreamFifo(width=72, depth=17)]


@pytest.fixture(scope="module", params=CONFIGS, ids=lambda pe: f"w{pe.width}d{pe.depth}")
def rtl(request, build_root):
    pe = request.param
    return pe, RtlSim.from_component(pe.component(), "stream_fifo", build_root / f"stream_fifo_{pe.width}_{pe.depth}")


def test_rtl_delivers_every_word_under_backpressure(rtl):
    pe, sim = rtl
    bursts = [1, 2, 3, pe.depth, pe.depth + 1, 3 * pe.depth + 7, 1500]
    out = sim.run(pe.testbench, {"pe": pe.params(), "bursts": bursts, "bubble": 0.3, "backpressure": 0.6, "seed": 5})
    assert out["mismatches"] == 0
    assert out["checked"] == sum(bursts) >= 1500
    assert out["max_level"] == pe.depth  # it fills completely under back-pressure, and never overflows


def test_rtl_cycles_match_timing_model(rtl):
    pe, sim = rtl
    bursts = [1, 2, 5, 64, 300]
    out = sim.run(pe.testbench, {"pe": pe.params(), "bursts": bursts, "bubble": 0.0, "backpressure": 0.0, "seed": 2})
    for n, cycles in out["spans"]:
        assert cycles == pe.cycles(n), f"N={n}: simulated {cycles}, model {pe.cycles(n)}"


def test_storage_rule_examples():
    assert memory_mapping(32, 1)["kind"] == "registers"
    assert memory_mapping(8, 255) == {"kind": "lutram", "lutram": 8, "bram18": 1}
    assert memory_mapping(8, 511)["kind"] == "bram"
    assert memory_mapping(512, 127) == {"kind": "bram", "lutram": 148, "bram18": 15}
    assert memory_mapping(64, 127) == {"kind": "bram", "lutram": 20, "bram18": 2}


# LUT RAM and block RAM; the slow tier adds the wide LUT RAM
@pytest.mark.parametrize("width,depth", slow_params([(24, 128), (9, 257), (200, 64)], fast={(24, 128), (9, 257)}))
def test_storage_rule_matches_yosys(width, depth):
    pe = StreamFifo(width=width, depth=depth)
    measured, cells = synthesize(pe.verilog("top"), "top")
    storage = pe.storage()
    lutram_cells = sum(n for c, n in cells.items() if c.startswith("RAM") and not c.startswith("RAMB"))
    assert measured.bram18 == (storage["bram18"] if storage["kind"] == "bram" else 0)
    assert lutram_cells == (storage["lutram"] if storage["kind"] == "lutram" else 0)
    predicted = pe.resources()
    assert measured.lut == pytest.approx(predicted.lut, rel=0.25, abs=10)
    assert measured.ff == pytest.approx(predicted.ff, rel=0.25, abs=10)
