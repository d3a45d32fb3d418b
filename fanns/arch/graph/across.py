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

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from fanns.arch.graph.top import FalconQpp
from fanns.arch.graph.units import wire_master
from fanns.design.graph_hw import ADDR_BITS, CSR_ADDR_BITS, QppHw
from fanns.hdl.bus import RESP_SLVERR, axi4_signature, axil_signature

QPP_WINDOW = 1 << CSR_ADDR_BITS


def across_addr_bits(pipelines: int) -> int:
    return CSR_ADDR_BITS + max(1, ceil_log2(pipelines))


def qpp_masters(hw: QppHw) -> list[str]:
    """The AXI master roles of one QPP, in port order."""
    return ["io", "list", *(f"vec{u}" for u in range(hw.units))]


class AxilSplit(wiring.Component):
    """One AXI4-Lite slave in front of `n` register files of `window` bytes each: a write is taken
    (AW and W, in either order), passed to the file its address selects and its response returned;
    a read likewise. One transfer at a time (control traffic), SLVERR past the last file."""

    def __init__(self, n: int, addr_bits: int, window_bits: int):
        self.n, self.window_bits = n, window_bits
        members = {"s_axil": In(axil_signature(addr_bits))}
        members |= {f"m{i}": Out(axil_signature(window_bits)) for i in range(n)}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        s = self.s_axil
        wb = self.window_bits
        aw_full, w_full, aw_sent, w_sent = Signal(), Signal(), Signal(), Signal()
        aw_addr, w_data, w_strb = Signal.like(s.awaddr), Signal.like(s.wdata), Signal.like(s.wstrb)
        m.d.comb += [s.awready.eq(~aw_full), s.wready.eq(~w_full)]
        with m.If(s.awvalid & s.awready):
            m.d.sync += [aw_full.eq(1), aw_addr.eq(s.awaddr)]
        with m.If(s.wvalid & s.wready):
            m.d.sync += [w_full.eq(1), w_data.eq(s.wdata), w_strb.eq(s.wstrb)]
        ar_full, r_sent = Signal(), Signal()
        ar_addr = Signal.like(s.araddr)
        m.d.comb += s.arready.eq(~ar_full)
        with m.If(s.arvalid & s.arready):
            m.d.sync += [ar_full.eq(1), ar_addr.eq(s.araddr)]
        w_sel, r_sel = aw_addr[wb:], ar_addr[wb:]
        write_ready = aw_full & w_full & ~s.bvalid
        read_ready = ar_full & ~s.rvalid
        for i in range(self.n):
            t = getattr(self, f"m{i}")
            mine_w, mine_r = write_ready & (w_sel == i), read_ready & (r_sel == i)
            m.d.comb += [
                t.awaddr.eq(aw_addr[:wb]),
                t.awvalid.eq(mine_w & ~aw_sent),
                t.wdata.eq(w_data),
                t.wstrb.eq(w_strb),
                t.wvalid.eq(mine_w & ~w_sent),
                t.bready.eq(mine_w),
                t.araddr.eq(ar_addr[:wb]),
                t.arvalid.eq(mine_r & ~r_sent),
                t.rready.eq(mine_r),
            ]
            with m.If(mine_w):
                with m.If(t.awvalid & t.awready):
                    m.d.sync += aw_sent.eq(1)
                with m.If(t.wvalid & t.wready):
                    m.d.sync += w_sent.eq(1)
                with m.If(t.bvalid):
                    m.d.sync += [
                        s.bvalid.eq(1),
                        s.bresp.eq(t.bresp),
                        aw_full.eq(0),
                        w_full.eq(0),
                        aw_sent.eq(0),
                        w_sent.eq(0),
                    ]
            with m.If(mine_r):
                with m.If(t.arvalid & t.arready):
                    m.d.sync += r_sent.eq(1)
                with m.If(t.rvalid):
                    m.d.sync += [s.rvalid.eq(1), s.rdata.eq(t.rdata), s.rresp.eq(t.rresp), ar_full.eq(0), r_sent.eq(0)]
        with m.If(write_ready & (w_sel >= self.n)):
            m.d.sync += [s.bvalid.eq(1), s.bresp.eq(RESP_SLVERR), aw_full.eq(0), w_full.eq(0)]
        with m.If(read_ready & (r_sel >= self.n)):
            m.d.sync += [s.rvalid.eq(1), s.rdata.eq(0), s.rresp.eq(RESP_SLVERR), ar_full.eq(0)]
        with m.If(s.bvalid & s.bready):
            m.d.sync += s.bvalid.eq(0)
        with m.If(s.rvalid & s.rready):
            m.d.sync += s.rvalid.eq(0)
        return m


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
        m.submodules.split = split = AxilSplit(self.pipelines, across_addr_bits(self.pipelines), CSR_ADDR_BITS)
        wiring.connect(m, wiring.flipped(self.s_axil), split.s_axil)
        for p in range(self.pipelines):
            m.submodules[f"qpp{p}"] = qpp = FalconQpp(self.hw)
            wiring.connect(m, getattr(split, f"m{p}"), qpp.s_axil)
            m.d.comb += self.interrupt[p].eq(qpp.interrupt)
            for role in qpp_masters(self.hw):
                wire_master(m, getattr(self, f"m_axi_p{p}_{role}"), getattr(qpp, f"m_axi_{role}"))
        return m
