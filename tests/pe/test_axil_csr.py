"""AXI4-Lite register file PE: random host/core traffic against the register model with AxiLiteMaster."""

import json
import re

import pytest

from fanns.hdl.regmap import Register, control_block, kernel_control_block
from fanns.pe.axil_csr import AxilCsr
from fanns.tools.verilator import RtlSim

REGISTERS = control_block() + (
    Register("nprobe", 0x10, 16, "RW", reset=8),
    Register("k", 0x10, 8, "RW", reset=10, bit=16),
    Register("mode", 0x10, 2, "RW", reset=2, bit=30),
    Register("base", 0x18, 64, "RW", reset=0x1234_5678_9ABC),
    Register("status", 0x20, 5, "W1C", reset=0b10000, bit=3),
    Register("kick", 0x24, 4, "PULSE", bit=8),
    Register("queries", 0x28, 32, "RO"),
    Register("hits", 0x2C, 20, "RO", bit=4),
    Register("ctr48", 0x30, 48, "RO"),
)
PE = AxilCsr(registers=REGISTERS, addr_width=8)
KERNEL_PE = AxilCsr(
    registers=kernel_control_block()
    + (Register("nq", 0x10, 32), Register("base", 0x18, 64), Register("ctr", 0x20, 64, "RO")),
    addr_width=8,
)
"""The Xilinx RTL-kernel control block: ap_done/ap_ready clear on read, ISR toggles on write."""
PORT = re.compile(r"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?(\w+)\s*;", re.M)


@pytest.fixture(scope="module")
def sim(build_root):
    return RtlSim.from_component(PE.component(), "axil_csr", build_root / "axil_csr")


@pytest.mark.parametrize("pause", [0.0, 0.4])
def test_rtl_matches_register_model(sim, pause):
    out = sim.run(PE.testbench, {"pe": PE.params(), "ops": 900, "pause": pause, "seed": 11 + int(10 * pause)})
    assert out["read_mismatches"] == 0 and out["resp_mismatches"] == 0 and out["pulse_mismatches"] == 0
    assert out["long_pulses"] == 0
    assert out["reads"] >= 900 and out["writes"] >= 800 and out["unmapped"] > 0 and out["pulses"] > 20
    if pause == 0.0:  # a ready master: latencies and back-to-back spacing as the timing model says
        assert out["read_latency"] == [PE.latency()]
        assert out["write_latency"] == [PE.write_latency()]
        assert out["ar_spacing"] == PE.ii() and out["aw_spacing"] == PE.ii()


def test_kernel_control_block_matches_register_model(build_root):
    sim = RtlSim.from_component(KERNEL_PE.component(), "axil_csr", build_root / "axil_csr_kernel")
    out = sim.run(KERNEL_PE.testbench, {"pe": KERNEL_PE.params(), "ops": 900, "pause": 0.2, "seed": 5})
    assert out["read_mismatches"] == 0 and out["resp_mismatches"] == 0 and out["pulse_mismatches"] == 0
    assert out["reads"] >= 900 and out["pulses"] > 20


def test_kernel_control_model_clears_on_read_and_toggles_on_write():
    model = KERNEL_PE.model()
    inputs = {"ap_idle": 1, "ctr": 0}
    model.set_bits("ap_done", 1)
    model.set_bits("ap_ready", 1)
    assert model.read(0x0, inputs) == (0, 0b1110)  # done, idle, ready
    assert model.read(0x0, inputs) == (0, 0b0100)  # done and ready cleared by the read
    model.set_bits("isr", 0b01)
    model.write(0xC, 0b11)
    assert model.read(0xC, inputs) == (0, 0b10)  # toggled, and not cleared by reading
    assert model.read(0xC, inputs) == (0, 0b10)


def test_ports_follow_the_register_map():
    ports = dict((name, (direction, width)) for direction, width, name in PORT.findall(PE.verilog("axil_csr")))
    assert ports["s_axil__awaddr"] == ("input", "7") and ports["s_axil__rdata"] == ("output", "31")
    assert ports["ap_start"] == ("output", "") and ports["ap_done_set"] == ("input", "")
    assert ports["base"] == ("output", "63") and ports["ctr48"] == ("input", "47") and ports["kick"] == ("output", "3")


def test_pe_round_trips_through_json_params():
    again = AxilCsr(**json.loads(json.dumps(PE.params())))
    assert again == PE and again.registers[0].__class__ is Register
    assert AxilCsr.from_regmap(PE.regmap) == PE


def test_model_semantics():
    model = PE.model()
    inputs = {"ap_idle": 1, "cycles": (7 << 32) | 5, "queries": 3, "hits": 9, "ctr48": 1 << 40}
    assert model.read(0x10, inputs) == (0, 8 | 10 << 16 | 2 << 30)
    assert model.write(0x10, 0xFFFF_FFFF, 0b0010) == (0, {})  # byte 1 only
    assert model.read(0x10, inputs)[1] == 0xFF08 | 10 << 16 | 2 << 30
    assert model.write(0x00, 0b11, 0xF) == (0, {"ap_start": 1})
    assert model.read(0x0C, inputs) == (0, 0)  # upper cycles word before any low read: shadow empty
    assert model.read(0x08, inputs) == (0, 5)
    assert model.read(0x0C, {**inputs, "cycles": 0}) == (0, 7)  # latched by the low read
    assert model.read(0x04, inputs) == (2, 0) and model.write(0x04, 1) == (2, {})  # unmapped: SLVERR
