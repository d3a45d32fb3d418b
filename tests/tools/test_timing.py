"""The netlist timing walk: hand-built netlists with known delays, and one real synthesis."""

import json
import math

import pytest

from fanns.errors import FannsError
from fanns.tools.delay_models import ECP5, MODELS, XC7, XCUP
from fanns.tools.timing import Timing, analyze, synth_netlist

CLK, RST = 2, 3


class Netlist:
    """A yosys JSON netlist built cell by cell (bits are integers, as yosys numbers nets)."""

    def __init__(self, inputs: dict[str, list[int]], outputs: dict[str, list[int]]):
        ports = {n: {"direction": "input", "bits": b} for n, b in inputs.items()}
        ports |= {n: {"direction": "output", "bits": b} for n, b in outputs.items()}
        self.module = {"ports": ports, "cells": {}, "netnames": {}}

    def cell(self, name: str, kind: str, ins: dict, outs: dict, **params) -> None:
        dirs = {p: "input" for p in ins} | {p: "output" for p in outs}
        self.module["cells"][name] = {
            "type": kind,
            "parameters": params,
            "port_directions": dirs,
            "connections": {**ins, **outs},
        }

    def ff(self, name: str, d: int, q: int) -> None:
        self.cell(name, "FDRE", {"C": [CLK], "CE": ["1"], "R": ["0"], "D": [d]}, {"Q": [q]})

    def json(self) -> dict:
        return {"modules": {"top": self.module}}


def test_lut_chain_costs_cells_and_routed_nets():
    """FF -> LUT6 -> LUT2 -> FF: clock-to-out, two LUT delays, three routed nets (one of fan-out 2)."""
    n = Netlist({"clk": [CLK]}, {})
    n.ff("a", 20, 10)
    n.cell("l1", "LUT6", {f"I{i}": [10] for i in range(6)}, {"O": [11]})
    n.cell("l2", "LUT2", {"I0": [11], "I1": [11]}, {"O": [12]})
    n.ff("b", 12, 20)
    t = analyze(n.json(), "top", XCUP)
    # nets: 10 drives six LUT6 pins, 11 drives two LUT2 pins, 12 one D pin
    want = XCUP.ff_cko + XCUP.route(6) + XCUP.lut + XCUP.route(2) + XCUP.lut + XCUP.route(1) + XCUP.ff_setup
    assert t.reg_to_reg == pytest.approx(want, abs=1e-4)
    assert (t.lut_levels, t.carry_cells, t.max_lut_levels) == (2, 0, 2)
    assert t.path == ("FDRE/6", "LUT6/2", "LUT2/1")
    assert t.fmax_mhz == pytest.approx(1e3 / t.reg_to_reg)
    assert Timing.from_dict(json.loads(json.dumps(t.to_dict()))) == t


def test_carry_chain_uses_dedicated_wires():
    """Two CARRY4 in a chain: entry, one block over the dedicated CO->CI wire (no routed net), exit."""
    n = Netlist({"clk": [CLK]}, {})
    n.ff("a", 40, 30)
    n.cell("c0", "CARRY4", {"CI": ["0"], "CYINIT": ["0"], "DI": ["0"] * 4, "S": [30, 30, 30, 30]}, {
        "CO": [31, 32, 33, 34], "O": [35, 36, 37, 38]})  # fmt: skip
    n.cell("c1", "CARRY4", {"CI": [34], "CYINIT": ["0"], "DI": ["0"] * 4, "S": ["1"] * 4}, {
        "CO": [41, 42, 43, 44], "O": [45, 46, 47, 48]})  # fmt: skip
    n.ff("b", 48, 40)
    t = analyze(n.json(), "top", XCUP)
    want = XCUP.ff_cko + XCUP.route(4) + XCUP.carry_entry + XCUP.carry_exit + XCUP.route(1)
    assert t.reg_to_reg == pytest.approx(want, abs=1e-4)
    assert t.carry_cells == 2 and t.lut_levels == 0


def test_dsp_without_registers_is_one_combinational_block_and_ports_are_apart():
    """An unregistered DSP between two registers costs its data-sheet delay; paths from the
    top-level inputs and to the outputs are reported apart from register-to-register ones."""
    n = Netlist({"clk": [CLK], "x": [50]}, {"y": [53]})
    n.ff("a", 52, 51)
    n.cell("m", "DSP48E2", {"A": [51], "B": [50]}, {"P": [52]}, AREG="0", BREG="0", MREG="0", PREG="0")
    n.cell("inv", "INV", {"I": [52]}, {"O": [53]})
    t = analyze(n.json(), "top", XCUP)
    assert t.blocks == ("DSP48E2",)
    assert t.reg_to_reg == pytest.approx(XCUP.ff_cko + XCUP.route(1) + XCUP.dsp_comb + XCUP.route(2), abs=1e-4)
    assert t.in_to_reg == pytest.approx(XCUP.route(1) + XCUP.dsp_comb + XCUP.route(2), abs=1e-4)
    assert t.in_to_out > 0 and t.reg_to_out > 0  # the inverter is folded into its neighbour


def test_registered_dsp_and_ram_cut_paths():
    n = Netlist({"clk": [CLK]}, {})
    n.ff("a", 60, 61)
    n.cell("m", "DSP48E2", {"A": [61], "B": [61]}, {"P": [62]}, AREG="1", BREG="1", MREG="1", PREG="1")
    n.cell("r", "RAMB18E2", {"CLKARDCLK": [CLK], "ADDRARDADDR": [62]}, {"DOUTADOUT": [63]})
    n.ff("b", 63, 60)
    t = analyze(n.json(), "top", XCUP)
    worst = max(
        XCUP.ff_cko + XCUP.route(2) + XCUP.dsp_setup,  # into the DSP's input registers
        XCUP.dsp_cko + XCUP.route(1) + XCUP.ram_setup,  # DSP output register into the RAM
        XCUP.ram_cko + XCUP.route(1) + XCUP.ff_setup,  # RAM data-out into the register
    )
    assert t.reg_to_reg == pytest.approx(worst, abs=1e-4)


def test_fanout_grows_the_route_logarithmically():
    for model in (XCUP, XC7, ECP5):
        assert model.route(1) == model.route_ns
        assert model.route(64) - model.route(32) == pytest.approx(model.route_per_doubling_ns)
        assert all(v for k, v in model.sources.items()), model.family
    assert set(MODELS) == {"xcup", "xc7"}
    assert math.isclose(XCUP.dsp_comb, 1e3 / 410)  # DS923 FMAX_NOPIPELINEREG, -2


def test_loops_and_unknown_cells_are_errors():
    n = Netlist({"clk": [CLK]}, {})
    n.cell("l1", "LUT1", {"I0": [71]}, {"O": [70]})
    n.cell("l2", "LUT1", {"I0": [70]}, {"O": [71]})
    with pytest.raises(FannsError, match="combinational loop"):
        analyze(n.json(), "top", XCUP)
    n = Netlist({"clk": [CLK]}, {})
    n.cell("x", "MYSTERY", {"I": [1]}, {"O": [2]})
    with pytest.raises(FannsError, match="unknown cell type 'MYSTERY'"):
        analyze(n.json(), "top", XCUP)


def test_a_synthesised_counter_has_its_carry_chain_on_the_critical_path():
    """yosys maps a 32-bit counter to CARRY4 cells; its slowest path runs through them."""
    verilog = (
        "module top(input clk, output [31:0] q); reg [31:0] c = 0; "
        "always @(posedge clk) c <= c + 1; assign q = c; endmodule"
    )
    t = analyze(synth_netlist(verilog, "top", "xcup"), "top", XCUP)
    assert t.carry_cells == 8 and t.blocks == () and t.path[0].startswith("FDRE")
    assert 300 < t.fmax_mhz < 2000
