"""Stream glue of the composed accelerators: fork (`broadcast`), width change (`regroup`) and
read-master beats to words (`beat_splitter`), as PEs so the DSE prices them like any other block.

They have no arithmetic and no reference model of their own, and no HLS face (an HLS kernel gets
them from `hls::stream` fan-out and `ap_uint` slicing): the whole-accelerator simulation checks
them under back-pressure from the real PEs. Their resource faces are calibrated with yosys like
every PE's (`fanns calibrate --pe broadcast` ...).

* `Broadcast` copies every item to n outputs (one register per output, full rate, no
  combinational path from an output's ready to another output's valid). L = 2, II = 1.
* `Regroup` turns words of a bits into words of b bits when one divides the other (lanes of one
  stage to lanes of the next). Splitting r-fold: L = r + 1, II = r cycles per input word;
  gathering: L = 2, II = 1 per input piece; equal widths: a wire (L = 1, II = 1, no resources).
* `BeatSplitter` turns AXI read-master words `{data, keep, last}` plus a routing `tag` into
  words of another width (a `stream_unpack`, or a gathering `Regroup`), dropping pieces whose
  bytes the master did not keep (the tail of a transfer that ends inside a beat). Its timing
  is that of the block inside.

Resource features follow the structure: held register bits, select LUTs (`select_luts`), the
piece count (control), the tag register.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from amaranth import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.pe.base import PE
from fanns.pe.stream_unpack import StreamUnpackComponent


def select_luts(bits: int, ways: int) -> int:
    """LUTs of a `ways`:1 select of `bits` bits as yosys builds it (no MUXF7/F8 without -widemux):
    one LUT6 per bit up to 4 ways, above that two selects of half the ways and a 2:1 step, so
    ways/2 - 1 per bit (measured: 3 at 8 ways, 7-8 at 16, `tables/xcup/regroup.json`)."""
    if ways <= 1:
        return 0
    return bits * (1 if ways <= 4 else 2 * select_luts(1, math.ceil(ways / 2)) + 1)


def width_ratio(a: int, b: int) -> int:
    big, small = max(a, b), min(a, b)
    return big // small


# -- Broadcast ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Broadcast(PE):
    """`n`-way fork of a stream of `width`-bit items."""

    width: int = 33
    n: int = 2

    name: ClassVar[str] = "broadcast"
    summary: ClassVar[str] = "copy every item to n outputs, one item per cycle"
    timing_formula: ClassVar[str] = "L = 2; II = 1 item"
    calibration_points: ClassVar[tuple] = (
        {"width": 33, "n": 2},
        {"width": 128, "n": 2},
        {"width": 512, "n": 2},
        {"width": 64, "n": 4},
        {"width": 256, "n": 3},
    )

    def validate(self) -> None:
        self.require(1 <= self.width <= 8192, f"width={self.width} out of range 1..8192")
        self.require(1 <= self.n <= 64, f"n={self.n} out of range 1..64")

    def latency(self) -> int:
        return 2

    def ii(self) -> int:
        return 1

    def resource_features(self) -> dict[str, float]:
        return {"held_bits": self.width, "outputs": self.n}

    def component(self) -> wiring.Component:
        return BroadcastComponent(unsigned(self.width), self.n)


class BroadcastComponent(wiring.Component):
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
        m.d.comb += self.i.ready.eq(Cat(*(~p | o.ready for p, o in zip(pending, outs, strict=True))).all())
        for p, o in zip(pending, outs, strict=True):
            m.d.comb += [o.valid.eq(p), o.payload.eq(held)]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += held.eq(self.i.payload)
            m.d.sync += [p.eq(1) for p in pending]
        with m.Else():
            m.d.sync += [p.eq(p & ~o.ready) for p, o in zip(pending, outs, strict=True)]
        return m


# -- Regroup ------------------------------------------------------------------------------------
def regroup_features(in_bits: int, out_bits: int) -> dict[str, float]:
    """Held bits, select LUTs and pieces of a `Regroup` (all zero for equal widths: a wire)."""
    r = width_ratio(in_bits, out_bits)
    if r == 1:
        return {"held_bits": 0.0, "select_luts": 0.0, "pieces": 0.0}
    if in_bits > out_bits:  # split: the held word, an r:1 piece select
        return {"held_bits": in_bits, "select_luts": select_luts(out_bits, r), "pieces": r}
    return {"held_bits": (r - 1) * in_bits + out_bits, "select_luts": 0.0, "pieces": r}  # gather


@dataclass(frozen=True)
class Regroup(PE):
    """Words of `in_bits` to words of `out_bits` (one a multiple of the other)."""

    in_bits: int = 128
    out_bits: int = 64

    name: ClassVar[str] = "regroup"
    summary: ClassVar[str] = "split or gather words by a whole ratio, one output word per cycle"
    timing_formula: ClassVar[str] = "split r-fold: L = r + 1, II = r per word; gather: L = 2, II = 1; equal: L = 1"
    calibration_points: ClassVar[tuple] = (
        {"in_bits": 256, "out_bits": 128},
        {"in_bits": 512, "out_bits": 64},
        {"in_bits": 1024, "out_bits": 64},
        {"in_bits": 64, "out_bits": 256},
        {"in_bits": 128, "out_bits": 1024},
    )

    def validate(self) -> None:
        big, small = max(self.in_bits, self.out_bits), min(self.in_bits, self.out_bits)
        self.require(small >= 1 and big % small == 0, f"{self.in_bits} and {self.out_bits} bits: no whole ratio")

    @property
    def ratio(self) -> int:
        return width_ratio(self.in_bits, self.out_bits)

    def latency(self) -> int:
        if self.ratio == 1:
            return 1
        return self.ratio + 1 if self.in_bits > self.out_bits else 2

    def ii(self) -> int:
        return self.ratio if self.in_bits > self.out_bits else 1

    def resource_features(self) -> dict[str, float]:
        return regroup_features(self.in_bits, self.out_bits)

    def component(self) -> wiring.Component:
        return RegroupComponent(self.in_bits, self.out_bits)


class RegroupComponent(wiring.Component):
    """Words of `in_bits` to words of `out_bits` (one a multiple of the other), LSB piece first.

    Splitting holds one word and emits its pieces one per cycle, taking the next word in the
    cycle the last piece leaves; gathering collects pieces and emits the completed word from a
    register, taking input while that register is free or leaving. Equal widths pass through.
    """

    def __init__(self, in_bits: int, out_bits: int):
        self.in_bits, self.out_bits, self.ratio = in_bits, out_bits, width_ratio(in_bits, out_bits)
        assert max(in_bits, out_bits) % min(in_bits, out_bits) == 0, (in_bits, out_bits)
        super().__init__({"i": In(stream.Signature(unsigned(in_bits))), "o": Out(stream.Signature(unsigned(out_bits)))})

    def elaborate(self, platform):
        m = Module()
        r = self.ratio
        if r == 1:
            m.d.comb += [
                self.o.valid.eq(self.i.valid),
                self.o.payload.eq(self.i.payload),
                self.i.ready.eq(self.o.ready),
            ]
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


# -- BeatSplitter -------------------------------------------------------------------------------
def beat_layout(beat_bits: int, tag_bits: int) -> data.StructLayout:
    return data.StructLayout({"data": beat_bits, "keep": beat_bits // 8, "last": 1, "tag": tag_bits})


def word_layout(word_bits: int, tag_bits: int) -> data.StructLayout:
    return data.StructLayout({"data": word_bits, "last": 1, "tag": tag_bits})


@dataclass(frozen=True)
class BeatSplitter(PE):
    """Read-master beats of `beat_bits` to words of `word_bits` with a `tag_bits` routing tag."""

    beat_bits: int = 512
    word_bits: int = 128
    tag_bits: int = 1

    name: ClassVar[str] = "beat_splitter"
    summary: ClassVar[str] = "read-master beats to words of another width, dropping unkept pieces"
    timing_formula: ClassVar[str] = (
        "split: stream_unpack's (L = 2, II = 1 word); gather: regroup's (L = 2, II = 1 beat)"
    )
    calibration_points: ClassVar[tuple] = (
        {"beat_bits": 512, "word_bits": 128, "tag_bits": 1},
        {"beat_bits": 512, "word_bits": 256, "tag_bits": 3},
        {"beat_bits": 512, "word_bits": 32, "tag_bits": 3},
        {"beat_bits": 256, "word_bits": 64, "tag_bits": 3},
        {"beat_bits": 64, "word_bits": 128, "tag_bits": 1},
        {"beat_bits": 512, "word_bits": 1024, "tag_bits": 3},
        {"beat_bits": 256, "word_bits": 32, "tag_bits": 3},
    )

    def validate(self) -> None:
        big, small = max(self.beat_bits, self.word_bits), min(self.beat_bits, self.word_bits)
        self.require(small >= 8 and big % small == 0, f"{self.beat_bits} and {self.word_bits} bits: no whole ratio")
        self.require(self.word_bits % 8 == 0, f"word_bits={self.word_bits} is not whole bytes")

    def latency(self) -> int:
        return 2

    def ii(self) -> int:
        return 1

    def resource_features(self) -> dict[str, float]:
        r = width_ratio(self.beat_bits, self.word_bits)
        if self.word_bits > self.beat_bits:  # a gathering regroup, last and tag registers
            feats = regroup_features(self.beat_bits, self.word_bits)
            return feats | {"held_bits": feats["held_bits"] + 1 + self.tag_bits, "wide_select_bits": 0}
        # stream_unpack: the beat, its piece mask and last held, an r:1 piece select. Up to 4
        # pieces that is one LUT per bit; beyond, its select by the one-hot next-piece mask grows
        # with word_bits x log2(r) (measured ~2 LUTs each at 8 and 16 pieces), not as a binary tree
        held = self.beat_bits + r + 1 + self.tag_bits
        wide = r > 4
        return {
            "held_bits": held,
            "select_luts": 0 if wide else select_luts(self.word_bits, r),
            "pieces": r,
            "wide_select_bits": self.word_bits * math.log2(r) if wide else 0,
        }

    def component(self) -> wiring.Component:
        return BeatSplitterComponent(self.beat_bits, self.word_bits, self.tag_bits)


class BeatSplitterComponent(wiring.Component):
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
            m.submodules.gather = g = RegroupComponent(self.beat_bits, self.word_bits)
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
