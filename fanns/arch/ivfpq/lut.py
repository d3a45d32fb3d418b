"""The BuildLUT stage of the IVF-PQ accelerator: probe dispatcher, BuildLUT PEs, LUT collector.

The PEs work in G groups of W = `lut_words` (the LUT words a beat PQDist loads; W = 1: every PE
its own group), PE r of a group holding the codebook rows j = r mod W and building those words
of every LUT. Per query the dispatcher takes the query (d/w words, into one bank of a two-bank
buffer so the next query loads while this one is dispatched) and sends each probe's d/w words
{q, c, last}, c the probed cell's centroid read from the on-chip centroid store, to the next
group in turn, each word to every PE of the group (each takes it when it is ready; the next word
follows once all have it): the k-th LUT of the run goes to group k mod G, across
queries (FANNS 6.4.2 gives probe j of a query to PE j mod P; going on across queries keeps all
groups busy when G exceeds nprobe, G / nprobe queries at a time). Every PE writes its LUT words
into its own FIFO of two whole LUTs' share (`lut_fifo_depth`), so the groups run in parallel;
the collector reads the LUTs back in the same turn, one word from each PE of the group a beat
(256 / W beats a LUT), and hands them to PQDist.

The codebook arrives once on `codebook_fill` (256 rows of d/w words) and row j is written into
every PE of phase j mod W at the same time; the centroid store is filled once on `lutc_fill`.
With the centroids fetched from memory (`centroids: memory`) there is no store and no
`lutc_fill`: the probes are forked to a `LutCentroidFetch` on `m_axi` (reading the image at
`lutc_base`) and to a cell FIFO in front of the dispatcher, which takes each probe's centroid
words from the fetch instead of the store.
"""

from __future__ import annotations

from amaranth import Array, Cat, Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from fanns.arch.ivfpq.hw import IvfPqHw
from fanns.arch.ivfpq.lut_fetch import LutCentroidFetch
from fanns.arch.streams import link
from fanns.design.ivfpq_stages import lut_fifo_depth
from fanns.hdl.bus import axi4_signature
from fanns.pe.axi_reader import AxiReader
from fanns.pe.fetcher import cell_layout
from fanns.pe.glue_streams import BroadcastComponent
from fanns.pe.stream_fifo import stream_fifo


def lut_word_bits(hw: IvfPqHw) -> int:
    """Bits of one LUT word (one entry of every sub-space)."""
    return hw.m * hw.fmt.lut_bits


def lut_beat_bits(hw: IvfPqHw) -> int:
    """Bits of one beat of the LUT stream into PQDist: `lut_words` LUT words."""
    return hw.ctx.lut_words * lut_word_bits(hw)


class LutStage(wiring.Component):
    """Dispatcher + BuildLUT PEs + LUT FIFOs + collector (see the module docstring)."""

    def __init__(self, hw: IvfPqHw, reader: AxiReader | None = None):
        """`reader`: the centroid fetch's AXI read master (centroids fetched from memory only)."""
        self.hw, self.reader = hw, reader
        wb = hw.stages.build_lut.lanes * hw.vec_bits
        ports = {
            "q": In(stream.Signature(unsigned(wb))),
            "cells": In(stream.Signature(cell_layout())),
            "codebook_fill": In(stream.Signature(unsigned(wb))),
            "luts": Out(stream.Signature(unsigned(lut_beat_bits(hw)))),
        }
        assert (reader is not None) == hw.lut_fetched
        if reader is None:
            ports["lutc_fill"] = In(stream.Signature(unsigned(wb)))
        else:
            ports |= {
                "lutc_base": In(reader.addr_width),
                "lutc_error": Out(1),
                "m_axi": Out(axi4_signature(reader.addr_width, reader.data_width, write=False)),
            }
        super().__init__(ports)

    def elaborate(self, platform):
        hw = self.hw
        st = hw.stages.build_lut
        words = hw.d // st.lanes
        wb = st.lanes * hw.vec_bits
        ways = hw.ctx.lut_words
        groups = st.pes // ways
        m = Module()
        pes = [hw.lut_pe.instance() for _ in range(st.pes)]
        for p, pe in enumerate(pes):
            m.submodules[f"build_lut{p}"] = pe
        group_pes = [pes[g * ways : (g + 1) * ways] for g in range(groups)]

        # Codebook: one fill stream; row j goes into every PE of phase j mod W at once.
        phase = Signal(range(max(2, ways)), name="fill_phase")
        fk = Signal(range(max(2, words)), name="fill_word")
        takes = [Cat(*(grp[r].codebook.ready for grp in group_pes)).all() for r in range(ways)]
        m.d.comb += self.codebook_fill.ready.eq(Array(takes)[phase] if ways > 1 else takes[0])
        fill = self.codebook_fill.valid & self.codebook_fill.ready
        for grp in group_pes:
            for r, pe in enumerate(grp):
                m.d.comb += [
                    pe.codebook.valid.eq(fill & (phase == r)),
                    pe.codebook.payload.eq(self.codebook_fill.payload),
                ]
        if ways > 1:
            with m.If(fill):
                m.d.sync += fk.eq(Mux(fk == words - 1, 0, fk + 1))
                with m.If(fk == words - 1):
                    m.d.sync += phase.eq(phase + 1)

        cells, cent = self._centroids(m, words, wb)

        # Query buffer: two banks of d/w words; a query loads into a free bank.
        qbuf = Memory(shape=unsigned(wb), depth=2 * words, init=[])
        m.submodules.query_buffer = qbuf
        qw, qr = qbuf.write_port(), qbuf.read_port()
        lbank, dbank = Signal(), Signal()
        lk = Signal(range(max(2, words)))
        full = Signal(2)
        m.d.comb += [
            self.q.ready.eq(~full.bit_select(lbank, 1)),
            qw.addr.eq(lk + Mux(lbank, words, 0)),
            qw.data.eq(self.q.payload),
            qw.en.eq(self.q.valid & self.q.ready),
        ]
        loaded = self.q.valid & self.q.ready & (lk == words - 1)
        with m.If(self.q.valid & self.q.ready):
            m.d.sync += lk.eq(Mux(lk == words - 1, 0, lk + 1))
        with m.If(loaded):
            m.d.sync += lbank.eq(~lbank)

        # Dispatch: issue (memory reads) -> register stage B (offered to every PE of group `bp`).
        k = Signal(range(max(2, words)))
        p = Signal(range(max(2, groups)))
        b_valid, b_last = Signal(), Signal()
        bp = Signal(range(max(2, groups)))
        b_free = Signal()
        # a group's PEs may take the offer in different cycles: it moves on once every one has it
        taken = [Signal(len(grp), name=f"taken{g}") for g, grp in enumerate(group_pes)]
        group_done = [(taken[g] | Cat(*(pe.x.ready for pe in grp))).all() for g, grp in enumerate(group_pes)]
        m.d.comb += b_free.eq(~b_valid | Array(group_done)[bp])
        issue = Signal()
        cell_bits = max(1, (hw.nlist - 1).bit_length())
        ready_q = full.bit_select(dbank, 1)
        m.d.comb += [
            issue.eq(cells.valid & ready_q & b_free & cent.valid),
            cent.take.eq(issue),
            qr.addr.eq(k + Mux(dbank, words, 0)),
            qr.en.eq(issue),
        ]
        if cent.addr is not None:
            m.d.comb += cent.addr.eq(cells.payload.cell[:cell_bits] * words + k)
        probe_done = issue & (k == words - 1)
        m.d.comb += cells.ready.eq(probe_done)
        last_cell = cells.payload.last
        with m.If(issue):
            m.d.sync += k.eq(Mux(k == words - 1, 0, k + 1))
        with m.If(probe_done):
            m.d.sync += p.eq(Mux(p == groups - 1, 0, p + 1))
            with m.If(last_cell):
                m.d.sync += dbank.eq(~dbank)
        released = probe_done & last_cell
        for bank in range(2):
            set_ = loaded & (lbank == bank)
            clear = released & (dbank == bank)
            with m.If(set_ | clear):
                m.d.sync += full[bank].eq(set_)
        with m.If(b_free):
            m.d.sync += b_valid.eq(issue)
            with m.If(issue):
                m.d.sync += [bp.eq(p), b_last.eq(last_cell)]
        for g, grp in enumerate(group_pes):
            for i, pe in enumerate(grp):
                m.d.comb += [
                    pe.x.valid.eq(b_valid & (bp == g) & ~taken[g][i]),
                    pe.x.payload.q.eq(qr.data),
                    pe.x.payload.c.eq(cent.data),
                    pe.x.payload.last.eq(b_last),
                ]
                with m.If(b_free):
                    m.d.sync += taken[g][i].eq(0)
                with m.Elif(pe.x.valid & pe.x.ready):
                    m.d.sync += taken[g][i].eq(1)

        # Every PE's LUT words into its own FIFO; the collector reads them back in probe order,
        # a word from every PE of the group at once.
        depth = lut_fifo_depth(hw.ctx.lut_words)
        fifos = []
        for i, pe in enumerate(pes):
            m.submodules[f"lut_fifo{i}"] = f = stream_fifo(unsigned(lut_word_bits(hw)), depth)
            m.d.comb += [f.i.valid.eq(pe.o.valid), f.i.payload.eq(pe.o.payload.lut), pe.o.ready.eq(f.i.ready)]
            fifos.append(f)
        group_fifos = [fifos[g * ways : (g + 1) * ways] for g in range(groups)]
        cp = Signal(range(max(2, groups)))
        cw = Signal(range(hw.pq_pe.load_cycles))
        m.d.comb += [
            self.luts.valid.eq(Array(Cat(*(f.o.valid for f in grp)).all() for grp in group_fifos)[cp]),
            self.luts.payload.eq(Array(Cat(*(f.o.payload for f in grp)) for grp in group_fifos)[cp]),
        ]
        for g, grp in enumerate(group_fifos):
            for f in grp:
                m.d.comb += f.o.ready.eq(self.luts.valid & self.luts.ready & (cp == g))
        with m.If(self.luts.valid & self.luts.ready):
            m.d.sync += cw.eq(cw + 1)
            with m.If(cw == hw.pq_pe.load_cycles - 1):
                m.d.sync += cp.eq(Mux(cp == groups - 1, 0, cp + 1))
        return m

    def _centroids(self, m: Module, words: int, wb: int):
        """The dispatcher's probes and centroid words: (cells stream, `_CentroidPort`). On chip:
        the store (nlist x d/w words, filled once in cell order), read at `addr` on `take`. Fetched:
        the probes through a cell FIFO, the words from the fetch's FIFO in probe order, registered
        on `take`. Either way a word taken appears on `data` the cycle after, as the query buffer's."""
        hw, st = self.hw, self.hw.stages.build_lut
        if self.reader is None:
            port = _CentroidPort(wb, hw.nlist * words)
            attrs = {"ram_style": "ultra"} if st.centroids == "uram" else {}
            store = Memory(shape=unsigned(wb), depth=hw.nlist * words, init=[], attrs=attrs)
            m.submodules.centroid_store = store
            sw, sr = store.write_port(), store.read_port()
            fill_addr = Signal(range(max(2, hw.nlist * words)))
            m.d.comb += [
                self.lutc_fill.ready.eq(1),
                sw.addr.eq(fill_addr),
                sw.data.eq(self.lutc_fill.payload),
                sw.en.eq(self.lutc_fill.valid),
                sr.addr.eq(port.addr),
                sr.en.eq(port.take),
                port.data.eq(sr.data),
                port.valid.eq(1),
            ]
            with m.If(self.lutc_fill.valid):
                m.d.sync += fill_addr.eq(fill_addr + 1)
            return self.cells, port
        port = _CentroidPort(wb)
        m.submodules.cell_fork = fork = BroadcastComponent(cell_layout(), 2)
        m.submodules.cell_fifo = cf = stream_fifo(cell_layout(), hw.design.fifo_depth)
        m.submodules.centroid_fetch = fetch = LutCentroidFetch(hw.d, st.lanes, hw.vec_bits, self.reader)
        wiring.connect(m, wiring.flipped(self.m_axi), fetch.m_axi)
        link(m, self.cells, fork.i)
        link(m, fork.o0, cf.i)
        link(m, fork.o1, fetch.cells)
        held = Signal(wb)
        m.d.comb += [
            fetch.base.eq(self.lutc_base),
            self.lutc_error.eq(fetch.error),
            fetch.words.ready.eq(port.take),
            port.valid.eq(fetch.words.valid),
            port.data.eq(held),
        ]
        with m.If(port.take):
            m.d.sync += held.eq(fetch.words.payload)
        return cf.o, port


class _CentroidPort:
    """The dispatcher's view of its centroid source: word `addr` of a store of `depth` words, or
    (no `depth`, no `addr`) the next fetched word, the fetch's words coming in probe order; taken
    on `take` (only while `valid`), it appears on `data` the cycle after."""

    def __init__(self, wb: int, depth: int | None = None):
        self.addr = None if depth is None else Signal(range(max(2, depth)))
        self.take, self.valid = Signal(), Signal()
        self.data = Signal(wb)
