"""Small stream blocks the composed accelerators are wired with: link, fork, regroup, split beats.

Why here and not in `fanns/pe/`: these have no arithmetic, no reference model of their own and
no HLS face (an HLS kernel gets them from `hls::stream` fan-out and `ap_uint` slicing); they are
the plumbing of `fanns.arch.ivfpq.top`, checked by the whole-accelerator simulation, which
exercises every one of them under back-pressure from the real PEs.

* `link` joins a producer's stream interface to a consumer's.
* `Broadcast` copies every item to n outputs (one register per output, full rate, no
  combinational path from an output's ready to another output's valid).
* `Regroup` turns words of a bits into words of b bits when one divides the other (lanes of one
  stage to lanes of the next), one output word per cycle.
* `BeatSplitter` turns AXI read-master words `{data, keep, last}` plus a routing `tag` into
  words of another width (the `stream_unpack` PE, or a gathering `Regroup`), dropping pieces
  whose bytes the master did not keep (the tail of a transfer that ends inside a beat).
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.pe.stream_unpack import StreamUnpackComponent


def link(m: Module, src, dst) -> None:
    """Drive consumer interface `dst` from producer interface `src` (valid, payload, ready)."""
    m.d.comb += [dst.valid.eq(src.valid), dst.payload.eq(src.payload), src.ready.eq(dst.ready)]


def stream_of(shape) -> stream.Interface:
    """A free-standing stream interface (both ends driven inside one module)."""
    return stream.Signature(shape).create()


class Broadcast(wiring.Component):
    """Copies each input item to outputs `o0` .. `o{n-1}`; takes the next item once every output
    has taken the current one (or takes it in the same cycle)."""

    def __init__(self, shape, n: int):
        self.shape, self.n = shape, n
        super().__init__({"i": In(stream.Signature(shape))} | {f"o{k}": Out(stream.Signature(shape)) for k in range(n)})

    def outputs(self) -> list:
        return [getattr(self, f"o{k}") for k in range(self.n)]

    def elaborate(self, platform):
        m = Module()
        outs = self.outputs()
        pending = [Signal(name=f"pending{k}") for k in range(self.n)]
        held = Signal(self.shape)
        m.d.comb += self.i.ready.eq(Cat(*(~p | o.ready for p, o in zip(pending, outs))).all())
        for p, o in zip(pending, outs):
            m.d.comb += [o.valid.eq(p), o.payload.eq(held)]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += held.eq(self.i.payload)
            m.d.sync += [p.eq(1) for p in pending]
        with m.Else():
            m.d.sync += [p.eq(p & ~o.ready) for p, o in zip(pending, outs)]
        return m


class Regroup(wiring.Component):
    """Words of `in_bits` to words of `out_bits` (one a multiple of the other), LSB piece first.

    Splitting holds one word and emits its pieces one per cycle, taking the next word in the
    cycle the last piece leaves; gathering collects pieces and emits the completed word from a
    register, taking input while that register is free or leaving. Equal widths pass through.
    """

    def __init__(self, in_bits: int, out_bits: int):
        big, small = max(in_bits, out_bits), min(in_bits, out_bits)
        assert big % small == 0, (in_bits, out_bits)
        self.in_bits, self.out_bits, self.ratio = in_bits, out_bits, big // small
        super().__init__({"i": In(stream.Signature(unsigned(in_bits))), "o": Out(stream.Signature(unsigned(out_bits)))})

    def elaborate(self, platform):
        m = Module()
        r = self.ratio
        if r == 1:
            link(m, self.i, self.o)
            return m
        idx = Signal(range(r))
        if self.in_bits > self.out_bits:
            word = Signal(self.in_bits)
            full = Signal()
            leaving = Signal()
            m.d.comb += [
                self.o.valid.eq(full),
                self.o.payload.eq(word.word_select(idx, self.out_bits)),
                leaving.eq(full & self.o.ready & (idx == r - 1)),
                self.i.ready.eq(~full | leaving),
            ]
            with m.If(self.o.valid & self.o.ready):
                m.d.sync += idx.eq(Mux(idx == r - 1, 0, idx + 1))
                with m.If(idx == r - 1):
                    m.d.sync += full.eq(0)
            with m.If(self.i.valid & self.i.ready):
                m.d.sync += [word.eq(self.i.payload), full.eq(1)]
            return m
        pieces = [Signal(self.in_bits, name=f"piece{j}") for j in range(r - 1)]
        m.d.comb += self.i.ready.eq(~self.o.valid | self.o.ready)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += idx.eq(Mux(idx == r - 1, 0, idx + 1))
            for j in range(r - 1):
                with m.If(idx == j):
                    m.d.sync += pieces[j].eq(self.i.payload)
            with m.If(idx == r - 1):
                m.d.sync += [self.o.valid.eq(1), self.o.payload.eq(Cat(*pieces, self.i.payload))]
        return m


def beat_layout(beat_bits: int, tag_bits: int) -> data.StructLayout:
    return data.StructLayout({"data": beat_bits, "keep": beat_bits // 8, "last": 1, "tag": tag_bits})


def word_layout(word_bits: int, tag_bits: int) -> data.StructLayout:
    return data.StructLayout({"data": word_bits, "last": 1, "tag": tag_bits})


class BeatSplitter(wiring.Component):
    """Read-master beats `{data, keep, last, tag}` to words `{data, last, tag}` of `word_bits`.

    Splitting (word no wider than a beat, `stream_unpack`): a piece leaves only if the master kept
    its first byte (pieces never straddle the transfer's end, since transfers hold whole words);
    `last` marks the final kept piece of a `last` beat. Gathering (word wider than a beat): every
    beat is whole; the word carries the `last` and `tag` of its final beat.
    """

    def __init__(self, beat_bits: int, word_bits: int, tag_bits: int = 1):
        assert max(beat_bits, word_bits) % min(beat_bits, word_bits) == 0 and word_bits % 8 == 0
        self.beat_bits, self.word_bits, self.tag_bits = beat_bits, word_bits, tag_bits
        super().__init__(
            {
                "i": In(stream.Signature(beat_layout(beat_bits, tag_bits))),
                "o": Out(stream.Signature(word_layout(word_bits, tag_bits))),
            }
        )

    def elaborate(self, platform):
        m = Module()
        take = self.i.valid & self.i.ready
        if self.word_bits > self.beat_bits:
            m.submodules.gather = g = Regroup(self.beat_bits, self.word_bits)
            m.d.comb += [
                g.i.valid.eq(self.i.valid),
                g.i.payload.eq(self.i.payload.data),
                self.i.ready.eq(g.i.ready),
                self.o.valid.eq(g.o.valid),
                self.o.payload.data.eq(g.o.payload),
                g.o.ready.eq(self.o.ready),
            ]
            with m.If(take):
                m.d.sync += [self.o.payload.last.eq(self.i.payload.last), self.o.payload.tag.eq(self.i.payload.tag)]
            return m
        r = self.beat_bits // self.word_bits
        step = self.word_bits // 8
        m.submodules.unpack = u = StreamUnpackComponent(self.word_bits, r)
        keep = self.i.payload.keep
        m.d.comb += [
            u.i.valid.eq(self.i.valid),
            self.i.ready.eq(u.i.ready),
            u.i.payload.data.eq(self.i.payload.data),
            u.i.payload.keep.eq(Cat(*(keep[j * step] for j in range(r)))),
            u.i.payload.last.eq(self.i.payload.last),
            self.o.valid.eq(u.o.valid),
            u.o.ready.eq(self.o.ready),
            self.o.payload.data.eq(u.o.payload.item),
            self.o.payload.last.eq(u.o.payload.last),
        ]
        with m.If(take):
            m.d.sync += self.o.payload.tag.eq(self.i.payload.tag)
        return m


def lane_truncate(word, lanes: int, from_bits: int, to_bits: int):
    """`lanes` elements of `from_bits` to `to_bits` each (signed values that fit: keep the low bits)."""
    return Cat(*(word[i * from_bits : i * from_bits + to_bits] for i in range(lanes)))
