"""AXI4 read master PE: bit-exact words and bursts against AxiRam, no R stalls, and a cycle-exact timing model."""

import pytest

from fanns.pe.axi_reader import AxiReader
from fanns.tools.verilator import RtlSim
from tests.tiers import slow_params

CONFIGS = [
    AxiReader(data_width=512, addr_width=64, max_burst=64, outstanding=4),
    AxiReader(data_width=64, addr_width=32, max_burst=16, outstanding=3, len_bits=20),
]


# a design's port; the slow tier adds the narrow one
@pytest.fixture(
    scope="module",
    params=slow_params(CONFIGS, fast={"w512b64o4"}, ids=lambda pe: f"w{pe.data_width}b{pe.max_burst}o{pe.outstanding}"),
)
def rtl(request, build_root):
    pe = request.param
    tag = f"{pe.data_width}_{pe.max_burst}_{pe.outstanding}"
    return pe, RtlSim.from_component(pe.component(), "axi_reader", build_root / f"axi_reader_{tag}")


def test_rtl_matches_reference_with_random_memory_timing(rtl):
    pe, sim = rtl
    spec = {"count": 250, "max_len": 40 * pe.beat_bytes, "aligned": 0.3, "zero": 0.05}
    out = sim.run(
        pe.testbench,
        {
            "pe": pe.params(),
            "mem_bytes": 1 << 16,
            "seed": 3,
            "latency": 12,
            "pause": 0.3,
            "bubble": 0.2,
            "backpressure": 0.5,
            "random": spec,
        },
        testcase="words_and_bursts_match_reference",
    )
    assert out["mismatches"] == 0 and out["burst_mismatches"] == 0
    assert out["r_stalls"] == 0
    assert out["checked"] >= 2000 and out["bursts"] > out["commands"]


def ideal_memory_holds(out, latency):
    """The RAM delivered each burst's first beat exactly `latency` after AR, or right after the previous beat."""
    firsts, after_last = [], True  # the very first beat starts a burst, then every beat after a last one
    for t, last in zip(out["r_times"], out["r_last"]):
        if after_last:
            firsts.append(t)
        after_last = last
    last_times = [t for t, last in zip(out["r_times"], out["r_last"]) if last]
    return all(
        f == max(a + latency, (last_times[i - 1] + 1) if i else 0)
        for i, (a, f) in enumerate(zip(out["ar_times"], firsts))
    )


# within and beyond the outstanding window; the slow tier adds the one between
@pytest.mark.parametrize("latency", slow_params([2, 40, 200], fast={2, 200}))
def test_rtl_cycles_match_timing_model(rtl, latency):
    pe, sim = rtl
    b = pe.beat_bytes
    commands = [[0, b], [4096 - 3 * b, 7 * b], [5, 100 * b], [8192, 0], [8192 + 1, 3 * b - 2], [16384, 600 * b], [0, 1]]
    out = sim.run(
        pe.testbench,
        {"pe": pe.params(), "mem_bytes": 1 << 20, "seed": 1, "latency": latency, "commands": commands},
        testcase="words_and_bursts_match_reference",
    )
    assert ideal_memory_holds(out, latency)
    t0 = out["cmd_times"][0]
    simulated = [t - t0 if t is not None else -1 for t in out["done_times"]]
    assert simulated == pe.transfer_cycles([tuple(c) for c in commands], latency)


def test_error_flag(rtl):
    pe, sim = rtl
    out = sim.run(pe.testbench, {"pe": pe.params(), "mem_bytes": 1 << 16, "seed": 2}, testcase="error_flag_on_slverr")
    assert out["error_checked"] == 1


def test_model_throughput_limits():
    pe = AxiReader(data_width=512, max_burst=64, outstanding=4)
    assert pe.words_per_cycle(2) == 1.0
    # Beyond the window, throughput is outstanding*burst per round trip (mem_latency + burst + 3).
    assert pe.words_per_cycle(400) == pytest.approx(4 * 64 / (400 + 64 + 3))
    assert pe.cycles(1, 100) == pe.latency(100) == 105


@pytest.mark.slow
@pytest.mark.long  # a fresh yosys synthesis against the calibrated model
def test_fresh_synthesis_matches_calibration():
    from fanns.tools.yosys import synthesize

    pe = AxiReader(data_width=128, addr_width=40, max_burst=16, outstanding=6, len_bits=24)  # not a calibration point
    measured, _ = synthesize(pe.verilog("top"), "top")
    predicted = pe.resources()
    assert measured.bram18 == predicted.bram18
    assert measured.lut == pytest.approx(predicted.lut, rel=0.15)
    assert measured.ff == pytest.approx(predicted.ff, rel=0.15)
