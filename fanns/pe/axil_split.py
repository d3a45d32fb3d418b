"""AXI4-Lite split: one control port in front of `n` register files (the across-query graph
accelerator's QPPs, `fanns.arch.graph.across`), as a PE so the DSE prices it like any other block.

Control traffic only, one transfer at a time. Timing counts the split's own registers: a request
is registered before it is passed on and the response is registered before it is returned, so a
transfer takes L = 2 cycles around the register file's own response time, and the next transfer
is taken after the response (II = L + 1 with a register file that answers in one cycle). No HLS
face: Vitis builds the control interconnect of `nk=` compute units itself. No reference model of
its own: the across-query RTL simulation programs every QPP through it with the driver's calls.

Resources: the request registers and state are fixed; each target adds its handshake logic and
a compare of the window bits of the address (`decode_bits`), and the response path selects one of
n targets' 32 data + 2 response bits (`select_luts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fanns.hdl.bus import RESP_SLVERR, axil_signature
from fanns.pe.base import PE
from fanns.pe.glue_streams import select_luts

RESPONSE_BITS = 34
"""Read data (32) and response (2) bits the split selects from its targets."""


@dataclass(frozen=True)
class AxilSplit(PE):
    """`n` register files of 2**`window_bits` bytes behind one slave of `addr_bits` address bits."""

    n: int = 2
    addr_bits: int = 13
    window_bits: int = 12

    name: ClassVar[str] = "axil_split"
    summary: ClassVar[str] = "one AXI4-Lite slave in front of n register files (address windows)"
    timing_formula: ClassVar[str] = "L = 2 + the target's response; II = L + 1 (one transfer at a time)"
    calibration_points: ClassVar[tuple] = (
        {"n": 2, "addr_bits": 13, "window_bits": 12},
        {"n": 3, "addr_bits": 14, "window_bits": 12},
        {"n": 4, "addr_bits": 14, "window_bits": 12},
        {"n": 6, "addr_bits": 15, "window_bits": 12},
        {"n": 8, "addr_bits": 15, "window_bits": 12},
        {"n": 12, "addr_bits": 16, "window_bits": 12},
        {"n": 16, "addr_bits": 16, "window_bits": 12},
    )

    def validate(self) -> None:
        self.require(2 <= self.n <= 64, f"n={self.n} out of range 2..64")
        self.require(1 <= self.window_bits < self.addr_bits <= 32, "need 1 <= window_bits < addr_bits <= 32")
        self.require(self.n <= 1 << (self.addr_bits - self.window_bits), f"{self.n} windows need more address bits")

    def latency(self) -> int:
        return 2

    def ii(self) -> int:
        return self.latency() + 1

    def resource_features(self) -> dict[str, float]:
        return {
            "targets": self.n,
            "decode_bits": self.n * (self.addr_bits - self.window_bits),
            "select_luts": select_luts(RESPONSE_BITS, self.n),
        }

    def component(self) -> wiring.Component:
        return AxilSplitComponent(self.n, self.addr_bits, self.window_bits)


class AxilSplitComponent(wiring.Component):
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
