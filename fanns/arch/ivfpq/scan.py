"""PQDist and SelK of the IVF-PQ accelerator.

The LUTs arrive in probe order, `lut_words` LUT words a beat, and travel along the 1-D array of
`pq_decode` PEs (FANNS 6.4.2.2): PE p takes a LUT beat from its LUT FIFO only when PE p+1's LUT
FIFO has room, and every beat it takes is copied into that FIFO, so all PEs load the same LUTs
in the same order. Each PE scans
its own item stream (its shares of the probed lists, from `fanns.pe.channel_feeder`) and its
keys go through a key FIFO into one input of the SelK selection PE.

The keys then go to the result filter (`fanns.pe.result_filter`) and the host.
"""

from __future__ import annotations

from amaranth import Module, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.arch.ivfpq.hw import IvfPqHw
from fanns.arch.ivfpq.lut import lut_beat_bits
from fanns.arch.streams import link
from fanns.pe.channel_feeder import item_layout
from fanns.pe.stream_fifo import stream_fifo
from fanns.pe.systolic_pq import key_stream


class ScanStage(wiring.Component):
    """LUT chain + pq_decode PEs + key FIFOs + SelK (see the module docstring)."""

    def __init__(self, hw: IvfPqHw):
        self.hw = hw
        pes = hw.stages.pq_dist.pes
        ports = {"luts": In(stream.Signature(unsigned(lut_beat_bits(hw)))), "keys": Out(key_stream(hw.key_bits))}
        ports |= {f"items{p}": In(stream.Signature(item_layout(hw.m))) for p in range(pes)}
        super().__init__(ports)

    def elaborate(self, platform):
        hw = self.hw
        n, depth = hw.stages.pq_dist.pes, hw.design.fifo_depth
        m = Module()
        m.submodules.sel_k = sel = hw.sel_k_pe.instance()
        lut_fifos = [stream_fifo(unsigned(lut_beat_bits(hw)), depth) for _ in range(n)]
        key = data.StructLayout({"key": hw.key_bits, "last": 1})
        for p in range(n):
            m.submodules[f"lut_chain_fifo{p}"] = lf = lut_fifos[p]
            m.submodules[f"item_fifo{p}"] = itf = stream_fifo(item_layout(hw.m), depth)
            m.submodules[f"pq_decode{p}"] = pe = hw.pq_pe.instance()
            m.submodules[f"pq_key_fifo{p}"] = kf = stream_fifo(key, depth)
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
