"""BuildLUT's centroids fetched from memory (`stages.build_lut.centroids: memory`).

Where the cell centroids do not fit on chip beside everything else (large nlist x d), BuildLUT
reads each probed cell's centroid from the image `lut_centroids` (`fanns.images.ivfpq.pack_cells`:
cell by cell, d stored elements padded to whole beats) instead of its centroid store. The
dispatcher's probes are forked: one copy waits in a cell FIFO for the dispatcher, the other
becomes one read command of the cell's beats at once, so the reads run ahead of the dispatch by
up to the cell FIFO and the reader's data FIFO (`OUTSTANDING` x `MAX_BURST` beats), and the
memory's latency stays hidden behind the BuildLUT PEs' 257 x d/w cycles a LUT. The beats become
the dispatcher's d/w words per cell (a beat holding several words: `WordPicker` takes the first
d/w and drops the padding; a word wider than a beat: gathered from whole beats) and wait in a
FIFO of two cells' words, so the dispatcher takes one word a cycle as from the on-chip store.
"""

from __future__ import annotations

from amaranth import Module, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.arch.ivfpq.ivf_stream import WordPicker
from fanns.arch.streams import lane_truncate, link
from fanns.design.ivfpq_stages import lut_fetch_fifo_depth
from fanns.hdl.bus import axi4_signature
from fanns.images.ivfpq_layout import cell_beats, elem_bytes
from fanns.pe.axi_reader import AxiReader
from fanns.pe.fetcher import cell_layout
from fanns.pe.glue_streams import RegroupComponent
from fanns.pe.stream_fifo import stream_fifo


class LutCentroidFetch(wiring.Component):
    """Probed cells in (`cells`), per cell its centroid's d/w words out (`words`, lanes of
    `vec_bits`), read through `reader` on `m_axi` from the image at `base` (module docstring)."""

    def __init__(self, d: int, lanes: int, vec_bits: int, reader: AxiReader):
        self.d, self.lanes, self.vec_bits, self.reader = d, lanes, vec_bits, reader
        self.elem_bits = 8 * elem_bytes(vec_bits)  # a stored element, as the image holds it
        super().__init__(
            {
                "cells": In(stream.Signature(cell_layout())),
                "base": In(reader.addr_width),
                "error": Out(1),
                "m_axi": Out(axi4_signature(reader.addr_width, reader.data_width, write=False)),
                "words": Out(stream.Signature(unsigned(lanes * vec_bits))),
            }
        )

    @property
    def beats(self) -> int:
        return cell_beats(self.d, self.vec_bits, self.reader.data_width)

    def elaborate(self, platform):
        m = Module()
        port_bits, word_bits, words = self.reader.data_width, self.lanes * self.elem_bits, self.d // self.lanes
        cell_bytes = self.beats * port_bits // 8
        m.submodules.reader = rd = self.reader.instance()
        wiring.connect(m, wiring.flipped(self.m_axi), rd.m_axi)
        m.d.comb += [
            rd.cmd.valid.eq(self.cells.valid),
            rd.cmd.payload.addr.eq(self.base + self.cells.payload.cell * cell_bytes),
            rd.cmd.payload.len.eq(cell_bytes),
            self.cells.ready.eq(rd.cmd.ready),
            self.error.eq(rd.error),
        ]
        if word_bits > port_bits:  # whole beats make a word; a cell is whole words
            split = RegroupComponent(port_bits, word_bits)
        else:
            split = WordPicker(port_bits, word_bits, self.beats, 0, 1, words, 0, 0)
        m.submodules.split = split
        m.d.comb += [
            split.i.valid.eq(rd.o.valid),
            split.i.payload.eq(rd.o.payload.data),
            rd.o.ready.eq(split.i.ready),
        ]
        depth = lut_fetch_fifo_depth(words)
        m.submodules.word_fifo = wf = stream_fifo(unsigned(self.lanes * self.vec_bits), depth)
        m.d.comb += [
            wf.i.valid.eq(split.o.valid),
            wf.i.payload.eq(lane_truncate(split.o.payload, self.lanes, self.elem_bits, self.vec_bits)),
            split.o.ready.eq(wf.i.ready),
        ]
        link(m, wf.o, self.words)
        return m
