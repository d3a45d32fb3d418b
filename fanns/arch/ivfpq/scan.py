"""PQDist and SelK of the IVF-PQ accelerator, and the result stream written back to the host.

The LUTs arrive in probe order and travel along the 1-D array of `pq_decode` PEs (FANNS 6.4.2.2):
PE p takes a LUT word from its LUT FIFO only when PE p+1's LUT FIFO has room, and every word it
takes is copied into that FIFO, so all PEs load the same LUTs in the same order. Each PE scans
its own item stream (its shares of the probed lists, from `fanns.arch.ivfpq.feeder`) and its
keys go through a key FIFO into one input of the SelK selection PE.

`ResultFilter` keeps the first `k` of the design's K keys of every query (the run's k), marks each
query's last kept key (the result packer closes a beat there: every query's results start on a
beat of their own) and time-stamps the first and the latest query's completion for the cycle
registers.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.arch.ivfpq.feeder import item_layout
from fanns.arch.ivfpq.hw import RESULT_BITS, IvfPqHw
from fanns.arch.ivfpq.lut import lut_word_bits
from fanns.arch.streams import link
from fanns.pe.stream_fifo import StreamFifoComponent
from fanns.pe.stream_unpack import item_layout as packer_item
from fanns.pe.systolic_pq import key_stream


class ScanStage(wiring.Component):
    """LUT chain + pq_decode PEs + key FIFOs + SelK (see the module docstring)."""

    def __init__(self, hw: IvfPqHw):
        self.hw = hw
        pes = hw.stages.pq_dist.pes
        ports = {"luts": In(stream.Signature(unsigned(lut_word_bits(hw)))), "keys": Out(key_stream(hw.key_bits))}
        ports |= {f"items{p}": In(stream.Signature(item_layout(hw.m))) for p in range(pes)}
        super().__init__(ports)

    def elaborate(self, platform):
        hw = self.hw
        n, depth = hw.stages.pq_dist.pes, hw.design.fifo_depth
        m = Module()
        m.submodules.sel_k = sel = hw.sel_k_pe.component()
        lut_fifos = [StreamFifoComponent(unsigned(lut_word_bits(hw)), depth) for _ in range(n)]
        key = data.StructLayout({"key": hw.key_bits, "last": 1})
        for p in range(n):
            m.submodules[f"lut_chain_fifo{p}"] = lf = lut_fifos[p]
            m.submodules[f"item_fifo{p}"] = itf = StreamFifoComponent(item_layout(hw.m), depth)
            m.submodules[f"pq_decode{p}"] = pe = hw.pq_pe.component()
            m.submodules[f"pq_key_fifo{p}"] = kf = StreamFifoComponent(key, depth)
            link(m, getattr(self, f"items{p}"), itf.i)
            link(m, itf.o, pe.codes)
            link(m, pe.o, kf.i)
            link(m, kf.o, getattr(sel, f"i{p}"))
            # The LUT chain: a word moves into PE p only if PE p+1's FIFO takes its copy.
            onward = lut_fifos[p + 1].i.ready if p + 1 < n else 1
            m.d.comb += [
                pe.lut.valid.eq(lf.o.valid & onward),
                pe.lut.payload.eq(lf.o.payload),
                lf.o.ready.eq(pe.lut.ready & onward),
            ]
            if p + 1 < n:
                nxt = lut_fifos[p + 1]
                m.d.comb += [nxt.i.valid.eq(lf.o.valid & pe.lut.ready), nxt.i.payload.eq(lf.o.payload)]
        link(m, self.luts, lut_fifos[0].i)
        link(m, sel.o, self.keys)
        return m


class ResultFilter(wiring.Component):
    """The first `k` keys of each query as 64-bit result items, `last` on each query's last one."""

    def __init__(self, hw: IvfPqHw):
        self.hw = hw
        super().__init__(
            {
                "keys": In(key_stream(hw.key_bits)),
                "o": Out(stream.Signature(packer_item(RESULT_BITS))),
                "k": In(range(hw.k + 1)),
                "nq": In(32),
                "clear": In(1),
                "now": In(64),
                "first": Out(64),
                "latest": Out(64),
            }
        )

    def elaborate(self, platform):
        hw = self.hw
        m = Module()
        i = Signal(range(max(2, hw.k)))
        q = Signal(32)
        keep, query_end, run_end = Signal(), Signal(), Signal()
        m.d.comb += [
            keep.eq(i < self.k),
            query_end.eq(i == self.k - 1),
            run_end.eq(query_end & (q == self.nq - 1)),
            self.o.valid.eq(self.keys.valid & keep),
            self.o.payload.item.eq(self.keys.payload.key),
            self.o.payload.last.eq(query_end),
            self.keys.ready.eq(~keep | self.o.ready),
        ]
        with m.If(self.keys.valid & self.keys.ready):
            m.d.sync += i.eq(Mux(self.keys.payload.last, 0, i + 1))
            with m.If(keep & query_end):
                m.d.sync += [q.eq(Mux(run_end, 0, q + 1)), self.latest.eq(self.now)]
                with m.If(q == 0):
                    m.d.sync += self.first.eq(self.now)
        with m.If(self.clear):
            m.d.sync += [q.eq(0), i.eq(0)]
        return m
