"""Streamed IVF centroids (`stages.ivf_dist.storage: stream`): one memory channel feeds its IVFDist PEs.

Each channel's image `ivf_centroids_<c>` (`fanns.images.ivfpq.pack_ivf_stream`) holds, for every
centroid index i, every word k and every PE of the channel that owns an i-th centroid, word k of
that centroid: the PEs' words interleave, PE by PE. Per query the channel's reader
(`fanns.pe.axi_reader`) reads the whole image with one command (`IvfStreamChannel.cmd`: the
controller's base address, one command per query of the run). Its beats are copied to every PE
of the channel (a broadcast with a small beat FIFO per PE, so PEs a few cycles apart do not stall
one another), and each PE's `WordPicker` takes its own words from the beats: positions q, q+P,
q+2P, ... of the channel's word stream (P PEs, q its place), then, in the last row that only the
first P' PEs own (`ivf_chunks` gives the extra centroids to the first PEs), q+P' apart. A beat
serves up to `port_bits / word_bits` PEs at one word per cycle each (`IvfPqHw` checks the
channel's PEs fit), so the channel sustains its PEs' rate as the model assumes
(`fanns.model.ivfpq.stage_pes.ivf_stream_channels`). A word wider than a beat (one PE per
channel) is gathered from whole beats instead.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.arch.streams import lane_truncate, link
from fanns.design.ivfpq_stages import IVF_BEAT_FIFO_DEPTH
from fanns.hdl.bus import axi4_signature
from fanns.images.ivfpq import IvfStreamLayout
from fanns.pe.axi_reader import AxiReader
from fanns.pe.glue_streams import BroadcastComponent, RegroupComponent
from fanns.pe.stream_fifo import stream_fifo

BEAT_FIFO_DEPTH = IVF_BEAT_FIFO_DEPTH
"""Beats buffered per PE behind the broadcast (the model prices these FIFOs)."""


class WordPicker(wiring.Component):
    """PE `q`'s words from the beats of one query's image (see the module docstring): `regular`
    words `pes` apart, then `ragged` words `ragged_pes` apart; the query's remaining beats are
    dropped, and the next query starts at beat 0 again."""

    def __init__(
        self, beat_bits: int, word_bits: int, beats: int, q: int, pes: int, regular: int, ragged: int, ragged_pes: int
    ):
        self.beat_bits, self.word_bits, self.beats = beat_bits, word_bits, beats
        self.q, self.pes, self.regular, self.ragged, self.ragged_pes = q, pes, regular, ragged, ragged_pes
        assert word_bits <= beat_bits and beat_bits % word_bits == 0 and pes <= beat_bits // word_bits
        super().__init__(
            {"i": In(stream.Signature(unsigned(beat_bits))), "o": Out(stream.Signature(unsigned(word_bits)))}
        )

    def elaborate(self, platform):
        m = Module()
        per_beat = self.beat_bits // self.word_bits
        total = self.regular + self.ragged
        pos = Signal(range(2 * per_beat), init=self.q)
        done = Signal(range(total + 1))
        beat = Signal(range(max(2, self.beats)))
        drain = Signal()
        nxt = Signal(range(3 * per_beat))
        last = Signal()
        m.d.comb += [
            nxt.eq(pos + Mux(done < self.regular, self.pes, max(1, self.ragged_pes))),
            last.eq(done == total - 1),
            self.o.valid.eq(self.i.valid & ~drain),
            self.o.payload.eq(self.i.payload.word_select(pos[: max(1, (per_beat - 1).bit_length())], self.word_bits)),
        ]
        take = self.o.valid & self.o.ready
        m.d.comb += self.i.ready.eq(Mux(drain, 1, take & (last | (nxt >= per_beat))))
        with m.If(take):
            m.d.sync += [done.eq(done + 1), pos.eq(Mux(nxt >= per_beat, nxt - per_beat, nxt))]
            with m.If(last):
                m.d.sync += drain.eq(1)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += beat.eq(beat + 1)
            with m.If(beat == self.beats - 1):
                m.d.sync += [beat.eq(0), done.eq(0), pos.eq(self.q), drain.eq(0)]
        return m


class CentroidDealer(wiring.Component):
    """A streamed-centroid channel's image beats (`beats`, one query's image after another) to
    its PEs' word streams `c0` .. (elements of `vec_bits` in lanes, as `fanns.pe.ivf_dist` takes
    them; see the module docstring)."""

    def __init__(self, layout: IvfStreamLayout, elem_bits: int):
        self.layout, self.elem_bits = layout, elem_bits
        ports = {"beats": In(stream.Signature(unsigned(layout.port_bits)))}
        ports |= {f"c{q}": Out(stream.Signature(unsigned(layout.lanes * layout.vec_bits))) for q in range(self.pes)}
        super().__init__(ports)

    @property
    def pes(self) -> int:
        return len(self.layout.channel_pes)

    def outputs(self) -> list:
        return [getattr(self, f"c{q}") for q in range(self.pes)]

    def elaborate(self, platform):
        lay = self.layout
        m = Module()
        word_bits = lay.lanes * self.elem_bits
        outs, words = self.outputs(), lay.d // lay.lanes
        if word_bits > lay.port_bits:  # one PE: gather its words from whole beats
            m.submodules.gather = g = RegroupComponent(lay.port_bits, word_bits)
            link(m, self.beats, g.i)
            self._emit(m, g.o, outs[0])
            return m
        sizes = [n for _, n in lay.chunks]
        rows = min(sizes)
        ragged_pes = sum(n > rows for n in sizes)
        assert sizes == sorted(sizes, reverse=True) and max(sizes) - rows <= 1, sizes
        sources = [self.beats]
        if len(outs) > 1:
            m.submodules.fork = fork = BroadcastComponent(unsigned(lay.port_bits), len(outs))
            link(m, self.beats, fork.i)
            sources = fork.outputs()
        for q, (src, out) in enumerate(zip(sources, outs, strict=True)):
            if len(outs) > 1:
                m.submodules[f"beats{q}"] = fifo = stream_fifo(unsigned(lay.port_bits), BEAT_FIFO_DEPTH)
                link(m, src, fifo.i)
                src = fifo.o
            pick = WordPicker(
                lay.port_bits,
                word_bits,
                lay.beats,
                q,
                len(outs),
                rows * words,
                words if q < ragged_pes else 0,
                ragged_pes,
            )
            m.submodules[f"pick{q}"] = pick
            link(m, src, pick.i)
            self._emit(m, pick.o, out)
        return m

    def _emit(self, m: Module, words, out) -> None:
        """Stored elements (`elem_bits`) to the PE's `vec_bits` lanes."""
        lay = self.layout
        m.d.comb += [
            out.valid.eq(words.valid),
            out.payload.eq(lane_truncate(words.payload, lay.lanes, self.elem_bits, lay.vec_bits)),
            words.ready.eq(out.ready),
        ]


class IvfStreamChannel(wiring.Component):
    """One streamed-centroid channel: its reader on `m_axi`, `nq` image reads per run (`run`: the
    controller runs queries, `clear`: a run starts) and its `CentroidDealer` (outputs `c0` ..)."""

    def __init__(self, layout: IvfStreamLayout, elem_bits: int, reader: AxiReader):
        self.layout, self.elem_bits, self.reader = layout, elem_bits, reader
        ports = {
            "base": In(reader.addr_width),
            "nq": In(32),
            "run": In(1),
            "clear": In(1),
            "error": Out(1),
            "m_axi": Out(axi4_signature(reader.addr_width, layout.port_bits, write=False)),
        }
        word = stream.Signature(unsigned(layout.lanes * layout.vec_bits))
        ports |= {f"c{q}": Out(word) for q in range(len(layout.channel_pes))}
        super().__init__(ports)

    def outputs(self) -> list:
        return [getattr(self, f"c{q}") for q in range(len(self.layout.channel_pes))]

    def elaborate(self, platform):
        lay = self.layout
        m = Module()
        m.submodules.reader = rd = self.reader.instance()
        wiring.connect(m, wiring.flipped(self.m_axi), rd.m_axi)
        sent = Signal(32)
        m.d.comb += [
            rd.cmd.valid.eq(self.run & (sent != self.nq)),
            rd.cmd.payload.addr.eq(self.base),
            rd.cmd.payload.len.eq(lay.beats * lay.port_bits // 8),
            self.error.eq(rd.error),
        ]
        with m.If(self.clear):
            m.d.sync += sent.eq(0)
        with m.Elif(rd.cmd.valid & rd.cmd.ready):
            m.d.sync += sent.eq(sent + 1)
        m.submodules.dealer = deal = CentroidDealer(lay, self.elem_bits)
        m.d.comb += [
            deal.beats.valid.eq(rd.o.valid),
            deal.beats.payload.eq(rd.o.payload.data),
            rd.o.ready.eq(deal.beats.ready),
        ]
        for src, dst in zip(deal.outputs(), self.outputs(), strict=True):
            link(m, src, dst)
        return m
