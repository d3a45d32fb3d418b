"""Across-query mode: `pipelines` Falcon QPPs serving different queries in parallel, one kernel.

Why one top level with its QPPs' own register files: a host splits a batch between the QPPs the
way it splits work between the compute units of a Vitis kernel (the HLS face's `nk=` copies), so
the same driver code programs either; each QPP keeps the whole single-QPP register map
(`QppHw.regmap`, docs/graph_architecture.md), its own query and result buffers and its own
`ap_start` / `ap_done`, and runs independently (Falcon 7.3.3: across-query parallelism is
several QPPs side by side).

Ports: `s_axil` — QPP p's register file at byte offset p x 4 KiB (`QPP_WINDOW`; an address past
the last QPP answers SLVERR); `interrupt` — bit p is QPP p's `ap_done`; and per QPP p its own
AXI masters `m_axi_p<p>_io`, `m_axi_p<p>_list`, `m_axi_p<p>_vec0` (an across-query QPP has one
BFC unit). The masters are not merged here: in a Vitis project each is connected to the memory
banks by the platform's interconnect (`sp=` of every master to the banks it reads), and the
memory channels' bandwidth is shared there — in simulation by `fanns.sim.axi_memory.SimMemory`
with `shared` set, where every channel moves one beat per cycle among all masters.
"""

from __future__ import annotations

from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fanns.arch.graph.top import FalconQpp
from fanns.arch.graph.units import wire_master
from fanns.design.graph_hw import ADDR_BITS, CSR_ADDR_BITS, QppHw, across_addr_bits
from fanns.hdl.bus import axi4_signature, axil_signature
from fanns.pe.axil_split import AxilSplit

QPP_WINDOW = 1 << CSR_ADDR_BITS


def qpp_masters(hw: QppHw) -> list[str]:
    """The AXI master roles of one QPP, in port order."""
    return ["io", "list", *(f"vec{u}" for u in range(hw.units))]


class FalconAcross(wiring.Component):
    """`pipelines` QPPs of `hw` (one BFC unit each) behind one control port (module docstring)."""

    def __init__(self, hw: QppHw, pipelines: int):
        self.hw, self.pipelines = hw, pipelines
        ports = {"s_axil": In(axil_signature(across_addr_bits(pipelines))), "interrupt": Out(pipelines)}
        for p in range(pipelines):
            ports[f"m_axi_p{p}_io"] = Out(axi4_signature(ADDR_BITS, hw.port_bits))
            for role in qpp_masters(hw)[1:]:
                ports[f"m_axi_p{p}_{role}"] = Out(axi4_signature(ADDR_BITS, hw.port_bits, write=False))
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        m.submodules.split = split = AxilSplit(
            self.pipelines, across_addr_bits(self.pipelines), CSR_ADDR_BITS
        ).instance()
        wiring.connect(m, wiring.flipped(self.s_axil), split.s_axil)
        for p in range(self.pipelines):
            m.submodules[f"qpp{p}"] = qpp = FalconQpp(self.hw)
            wiring.connect(m, getattr(split, f"m{p}"), qpp.s_axil)
            m.d.comb += self.interrupt[p].eq(qpp.interrupt)
            for role in qpp_masters(self.hw):
                wire_master(m, getattr(self, f"m_axi_p{p}_{role}"), getattr(qpp, f"m_axi_{role}"))
        return m
