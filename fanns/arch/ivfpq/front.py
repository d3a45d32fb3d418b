"""The front of the IVF-PQ accelerator: OPQ, IVFDist (a 1-D array of PEs), SelCells, probe filter.

Query words enter once; OPQ (when the index has it) rotates them; the rotated query is copied
to the IVFDist array and to BuildLUT's query FIFO (each regrouped to its stage's lanes). IVFDist
PE i owns the centroids of `ivf_chunks(nlist, P)[i]` and forwards the query to PE i+1 (FANNS
6.4.2.2); each PE's keys go through its own FIFO to one input stream of the SelCells selection
PE, which emits the design's nprobe nearest cells ascending. The probe filter keeps the first
`nprobe` of them (the run's value, at most the design's) and marks the query's last probe.

In a step-wise run (`mode`, docs/stepwise.md) the probes are the host's: each query's cell list
arrives on `cell_list` (`cell_slots` ids, `last` on the final slot), SelCells' choice is drained,
and the step filter emits the list's cells (ids below nlist, in list order; a free slot is
dropped, so a step of c cells is c probes) once SelCells has started on the query, as a normal
query's probes would follow it; a list naming no cell gives one empty probe.

On-chip IVF centroids arrive once, on `ivf_fill`, in cell order; the fill router hands PE i its
chunk. Streamed centroids arrive per query, PE i's on `ivf_c<i>` (`fanns.arch.ivfpq.ivf_stream`).
The OPQ matrix arrives once on `opq_fill` (on chip), or again for every query on `opq_rows`
(streamed).
The FIFOs are those of docs/ivfpq_architecture.md (depth `fifo_depth`; with OPQ, IVFDist's and
BuildLUT's query FIFOs hold two whole rotated queries: `fanns.design.ivfpq_stages.query_fifo_depth`).
"""

from __future__ import annotations

import dataclasses

from amaranth import Array, Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.arch.ivfpq.hw import CELL_WORD_BITS, MATRIX_BITS, IvfPqHw
from fanns.arch.streams import link
from fanns.design.ivfpq_stages import query_fifo_depth
from fanns.numerics import ID_BITS
from fanns.pe.fetcher import cell_layout
from fanns.pe.glue_streams import BroadcastComponent, RegroupComponent
from fanns.pe.stream_fifo import stream_fifo


def cell_list_layout() -> data.StructLayout:
    """A word of a step-wise run's cell list: a cell id (`0xFFFFFFFF`: none) and whether it is the
    list's last slot."""
    return data.StructLayout({"id": CELL_WORD_BITS, "last": 1})


class Front(wiring.Component):
    """OPQ + IVFDist + SelCells + probe filter (see the module docstring)."""

    def __init__(self, hw: IvfPqHw):
        self.hw = hw
        vb = hw.vec_bits
        st = hw.stages
        ports = {
            "q": In(stream.Signature(unsigned(hw.src_lanes * vb))),
            "lut_q": Out(stream.Signature(unsigned(st.build_lut.lanes * vb))),
            "cells": Out(stream.Signature(cell_layout())),
            "nprobe": In(range(hw.nprobe + 1)),
            "mode": In(1),
            "cell_list": In(stream.Signature(cell_list_layout())),
        }
        word = stream.Signature(unsigned(st.ivf_dist.lanes * vb))
        if st.ivf_dist.storage == "stream":
            ports |= {f"ivf_c{i}": In(word) for i in range(st.ivf_dist.pes)}
        else:
            ports["ivf_fill"] = In(word)
        if st.opq is not None:
            rows = "opq_rows" if st.opq.storage == "stream" else "opq_fill"
            ports[rows] = In(stream.Signature(unsigned(st.opq.lanes * MATRIX_BITS)))
        super().__init__(ports)

    def elaborate(self, platform):
        hw = self.hw
        st, vb, depth = hw.stages, hw.vec_bits, hw.design.fifo_depth
        m = Module()

        # OPQ rotation (optional): query FIFO -> opq PE.
        src_bits = hw.src_lanes * vb
        m.submodules.fork = fork = BroadcastComponent(unsigned(src_bits), 2)
        if st.opq is not None:
            m.submodules.opq_fifo = qf = stream_fifo(unsigned(src_bits), depth)
            m.submodules.opq = opq = hw.opq_pe.instance()
            link(m, self.q, qf.i)
            link(m, qf.o, opq.x)
            link(m, self.opq_rows if st.opq.storage == "stream" else self.opq_fill, opq.matrix)
            m.d.comb += [fork.i.valid.eq(opq.o.valid), fork.i.payload.eq(opq.o.payload.y), opq.o.ready.eq(fork.i.ready)]
        else:
            link(m, self.q, fork.i)

        # The rotated query to IVFDist and to BuildLUT, each in its own lanes.
        ivf_bits, lut_bits = st.ivf_dist.lanes * vb, st.build_lut.lanes * vb
        m.submodules.to_ivf = to_ivf = RegroupComponent(src_bits, ivf_bits)
        m.submodules.to_lut = to_lut = RegroupComponent(src_bits, lut_bits)
        opq = st.opq is not None
        ivf_depth = query_fifo_depth(depth, hw.d, st.ivf_dist.lanes, opq)
        lut_depth = query_fifo_depth(depth, hw.d, st.build_lut.lanes, opq)
        m.submodules.ivf_qfifo = ivf_q = stream_fifo(unsigned(ivf_bits), ivf_depth)
        m.submodules.lut_qfifo = lut_q = stream_fifo(unsigned(lut_bits), lut_depth)
        link(m, fork.o0, to_ivf.i)
        link(m, to_ivf.o, ivf_q.i)
        link(m, fork.o1, to_lut.i)
        link(m, to_lut.o, lut_q.i)
        link(m, lut_q.o, self.lut_q)

        # IVFDist: a 1-D array; PE i's keys feed SelCells stream i. Each PE counts its cells from 0
        # and its first cell id is added here, so PEs with as many centroids are one module
        # (a simulator compiles it once: fanns.tools.vbuild).
        pes = [dataclasses.replace(pe, id_base=0).instance() for pe in hw.ivf_pes]
        sel = hw.sel_cells_pe.instance()
        m.submodules.sel_cells = sel
        key_layout = data.StructLayout({"key": hw.fmt.ivf_key_bits, "last": 1})
        for i, (pe, spec) in enumerate(zip(pes, hw.ivf_pes)):
            m.submodules[f"ivf{i}"] = pe
            link(m, ivf_q.o if i == 0 else pes[i - 1].q_fwd, pe.q)
            m.submodules[f"ivf_key_fifo{i}"] = kf = stream_fifo(key_layout, depth)
            key = pe.o.payload.key
            m.d.comb += [
                kf.i.valid.eq(pe.o.valid),
                kf.i.payload.key.eq(Cat((key[:ID_BITS] + spec.id_base)[:ID_BITS], key[ID_BITS:])),
                kf.i.payload.last.eq(pe.o.payload.last),
                pe.o.ready.eq(kf.i.ready),
            ]
            link(m, kf.o, getattr(sel, f"i{i}"))
        m.d.comb += pes[-1].q_fwd.ready.eq(1)
        if st.ivf_dist.storage == "stream":
            for i, pe in enumerate(pes):
                link(m, getattr(self, f"ivf_c{i}"), pe.centroids)
        else:
            self._fill_router(m, pes)

        # Probe filter: the first `nprobe` cells of each query, the last one marked; in a
        # step-wise run the host's cells instead (`_step_filter`).
        m.submodules.cell_fifo = cf = stream_fifo(cell_layout(), depth)
        j = Signal(range(max(2, hw.nprobe)))
        keep = Signal()
        started = Signal()  # a step-wise run's SelCells hands out the first cell of a query
        step = self._step_filter(m, started)
        m.d.comb += [
            keep.eq(j < self.nprobe),
            started.eq(self.mode & sel.o.valid & (j == 0)),
            sel.o.ready.eq(self.mode | ~keep | cf.i.ready),
            step.ready.eq(self.mode & cf.i.ready),
        ]
        with m.If(self.mode):
            m.d.comb += [cf.i.valid.eq(step.valid), cf.i.payload.eq(step.payload)]
        with m.Else():
            m.d.comb += [
                cf.i.valid.eq(sel.o.valid & keep),
                cf.i.payload.cell.eq(sel.o.payload.key[:ID_BITS]),
                cf.i.payload.last.eq(j == self.nprobe - 1),
            ]
        with m.If(sel.o.valid & sel.o.ready):
            m.d.sync += j.eq(Mux(sel.o.payload.last, 0, j + 1))
        link(m, cf.o, self.cells)
        return m

    def _step_filter(self, m: Module, started):
        """A step-wise run's probes: each query's cell list (from a FIFO of two lists) as cells,
        free slots and ids >= nlist dropped, the last kept one marked: a one-cell hold register
        keeps a kept id until the next kept id (it leaves, not last) or the list's end (it leaves,
        last; a kept final slot waits a cycle in the register, `flush`); a list that kept none
        ends with an empty probe. A query's list leaves once SelCells has started on that query
        (`started`: a credit each). Returns the probe stream (payload: `cell_layout`)."""
        hw = self.hw
        m.submodules.cell_list_fifo = lf = stream_fifo(cell_list_layout(), 2 * hw.cell_slots)
        link(m, self.cell_list, lf.i)
        out = stream.Signature(cell_layout()).create()
        credits = Signal(8)  # queries SelCells has started whose list has not left
        held, held_cell, flush, ended = Signal(), Signal(ID_BITS), Signal(), Signal()
        word = lf.o.payload
        named = word.id < hw.nlist
        head = lf.o.valid & (credits != 0) & ~flush
        emit_held = Signal()
        m.d.comb += [
            emit_held.eq(head & held & (named | word.last)),
            lf.o.ready.eq((credits != 0) & ~flush & (~out.valid | out.ready)),
        ]
        with m.If(flush):
            m.d.comb += [out.valid.eq(1), out.payload.cell.eq(held_cell), out.payload.last.eq(1)]
            with m.If(out.ready):
                m.d.sync += [flush.eq(0), held.eq(0)]
                m.d.comb += ended.eq(1)
        with m.Else():
            m.d.comb += [
                out.valid.eq(emit_held | (head & word.last & ~named & ~held)),
                out.payload.cell.eq(Mux(held, held_cell, 0)),
                out.payload.last.eq(word.last & ~named),
                out.payload.empty.eq(~held),
            ]
        with m.If(lf.o.valid & lf.o.ready):
            with m.If(named):
                m.d.sync += [held.eq(1), held_cell.eq(word.id)]
            with m.Elif(emit_held):
                m.d.sync += held.eq(0)
            with m.If(word.last & named):
                m.d.sync += flush.eq(1)
            with m.If(word.last & ~named):
                m.d.comb += ended.eq(1)
        m.d.sync += credits.eq(credits + started - ended)
        return out

    def _fill_router(self, m: Module, pes: list) -> None:
        """Centroid words in cell order: the first chunk's words to PE 0, the next to PE 1, ..."""
        words = [pe.pe.nlist * pe.pe.words for pe in pes]
        idx = Signal(range(max(2, len(pes))))
        cnt = Signal(range(max(2, max(words))))
        limit = Signal(range(max(2, max(words))))
        m.d.comb += [
            limit.eq(Array(w - 1 for w in words)[idx]),
            self.ivf_fill.ready.eq(Array(pe.centroids.ready for pe in pes)[idx]),
        ]
        for i, pe in enumerate(pes):
            m.d.comb += [
                pe.centroids.valid.eq(self.ivf_fill.valid & (idx == i)),
                pe.centroids.payload.eq(self.ivf_fill.payload),
            ]
        with m.If(self.ivf_fill.valid & self.ivf_fill.ready):
            m.d.sync += cnt.eq(Mux(cnt == limit, 0, cnt + 1))
            with m.If(cnt == limit):
                m.d.sync += idx.eq(idx + 1)
