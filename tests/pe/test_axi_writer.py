"""AXI4 write master PE: memory contents, bursts and strobes against AxiRam, done/error, cycle-exact timing."""

import pytest

from fanns.pe.axi_writer import AxiWriter
from fanns.tools.verilator import RtlSim
from tests.tiers import slow_params

CONFIGS = [
    AxiWriter(data_width=512, addr_width=64, max_burst=64, outstanding=4),
    AxiWriter(data_width=64, addr_width=32, max_burst=16, outstanding=2, len_bits=20),
]


# a design's port; the slow tier adds the narrow one
@pytest.fixture(
    scope="module",
    params=slow_params(CONFIGS, fast={"w512b64o4"}, ids=lambda pe: f"w{pe.data_width}b{pe.max_burst}o{pe.outstanding}"),
)
def rtl(request, build_root):
    pe = request.param
    tag = f"{pe.data_width}_{pe.max_burst}_{pe.outstanding}"
    return pe, RtlSim.from_component(pe.component(), "axi_writer", build_root / f"axi_writer_{tag}")


def test_rtl_matches_reference_with_random_memory_timing(rtl):
    pe, sim = rtl
    spec = {"count": 200, "max_len": 40 * pe.beat_bytes, "aligned": 0.3, "zero": 0.05}
    out = sim.run(
        pe.testbench,
        {
            "pe": pe.params(),
            "mem_bytes": 1 << 16,
            "seed": 4,
            "latency": 9,
            "pause": 0.3,
            "bubble": 0.2,
            "backpressure": 0.5,
            "random": spec,
        },
        testcase="memory_matches_reference",
    )
    assert out["byte_mismatches"] == 0 and out["burst_mismatches"] == 0 and out["strobe_mismatches"] == 0
    assert out["errors"] == 0 and out["extra_done"] == 0
    assert out["words"] >= 2000 and out["bursts"] > out["commands"]


# within and beyond the outstanding window; the slow tier adds the one between
@pytest.mark.parametrize("latency", slow_params([2, 30, 150], fast={2, 150}))
def test_rtl_cycles_match_timing_model(rtl, latency):
    pe, sim = rtl
    b = pe.beat_bytes
    commands = [
        [0, b],
        [4096 - 3 * b, 7 * b],
        [5, 100 * b],
        [8192, 0],
        [8192 + 1, 3 * b - 2],
        [16384, 300 * b],
        [64, 1],
    ]
    out = sim.run(
        pe.testbench,
        {"pe": pe.params(), "mem_bytes": 1 << 20, "seed": 1, "latency": latency, "commands": commands},
        testcase="memory_matches_reference",
    )
    assert out["w_stalls"] == 0  # the RAM took every W word when offered
    t0 = out["cmd_times"][0]
    simulated = [t - t0 if t is not None else -1 for t in out["done_times"]]
    assert simulated == pe.transfer_cycles([tuple(c) for c in commands], latency)


def test_done_carries_slverr(rtl):
    pe, sim = rtl
    out = sim.run(pe.testbench, {"pe": pe.params(), "mem_bytes": 1 << 16, "seed": 2}, testcase="done_reports_slverr")
    assert out["error_checked"] == 1
