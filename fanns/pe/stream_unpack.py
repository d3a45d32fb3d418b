"""Stream width converter, wide to narrow: split each data-bus word into its k items.

A 512-bit memory word holds four 16-byte PQ codes, sixteen 32-bit ids, ...; the scan stages
consume one item per cycle. Input words carry a per-item `keep` mask (item j valid iff bit j;
for byte-sized items, the read master's byte `keep` taken every item_bytes-th bit) and `last`;
the PE emits the kept items in order, one per cycle, with `last` on the final kept item of a
`last` word, so partial first and last words work. A word with no kept item is dropped
(with its `last`): producers never emit one. No HLS header: in HLS this is a loop over an
`ap_uint` word that the tool pipelines, not a separate unit.

Timing: L = 2 (a word taken at cycle 0 yields its first item at cycle 1, inclusive span 2),
II = 1 item; a new word is taken in the cycle its last item leaves, so full words stream at
k items per k cycles without a bubble.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from amaranth import Cat, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.pe.base import PE


def packed_layout(item_bits: int, k: int) -> data.StructLayout:
    """A word of k items (item j at bits j*item_bits), a per-item keep mask and a last flag."""
    return data.StructLayout({"data": item_bits * k, "keep": k, "last": 1})


def item_layout(item_bits: int) -> data.StructLayout:
    return data.StructLayout({"item": item_bits, "last": 1})


@dataclass(frozen=True)
class StreamUnpack(PE):
    item_bits: int = 128
    k: int = 4

    name: ClassVar[str] = "stream_unpack"
    summary: ClassVar[str] = "split each wide word into its kept items, one item per cycle"
    timing_formula: ClassVar[str] = "L = 2; II = 1 item"
    hls_header: ClassVar[str] = ""
    testbench: ClassVar[str] = "tb_stream_unpack"
    calibration_points: ClassVar[tuple] = (
        {"item_bits": 128, "k": 4},
        {"item_bits": 32, "k": 16},
        {"item_bits": 64, "k": 8},
        {"item_bits": 8, "k": 64},
        {"item_bits": 256, "k": 2},
        {"item_bits": 16, "k": 4},
        {"item_bits": 32, "k": 8},
    )

    def validate(self) -> None:
        self.require(1 <= self.item_bits <= 4096, f"item_bits={self.item_bits} out of range 1..4096")
        self.require(1 <= self.k <= 256, f"k={self.k} out of range 1..256")

    @property
    def word_bits(self) -> int:
        return self.item_bits * self.k

    # -- reference model ------------------------------------------------------------------------
    def unpack(self, words: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
        """(item, last) for every kept item of the (data, keep, last) words."""
        out = []
        mask = (1 << self.item_bits) - 1
        for word, keep, last in words:
            kept = [j for j in range(self.k) if keep >> j & 1]
            out += [((word >> (j * self.item_bits)) & mask, int(bool(last) and j == kept[-1])) for j in kept]
        return out

    # -- timing ---------------------------------------------------------------------------------
    def latency(self) -> int:
        return 2

    def ii(self) -> int:
        return 1

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        # yosys maps a 2:1 or 4:1 item select to one LUT per bit, wider ones to LUT3/LUT4 trees
        # (no MUXF7/F8 without -widemux), so wide selects get their own term.
        return {
            "word_bits": self.word_bits,
            "item_bits": self.item_bits,
            "k": self.k,
            "wide_mux_bits": self.word_bits if self.k > 4 else 0,
        }

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return StreamUnpackComponent(self.item_bits, self.k)


class StreamUnpackComponent(wiring.Component):
    """Amaranth implementation of `StreamUnpack` (see the module docstring)."""

    def __init__(self, item_bits: int, k: int):
        self.item_bits, self.k = item_bits, k
        super().__init__(
            {
                "i": In(stream.Signature(packed_layout(item_bits, k))),
                "o": Out(stream.Signature(item_layout(item_bits))),
            }
        )

    def elaborate(self, platform):
        m = Module()
        word = Signal(self.item_bits * self.k)
        mask = Signal(self.k)  # items still to emit
        last = Signal()
        lowest = Signal(self.k)  # one-hot: the next item
        rest = Signal(self.k)
        m.d.comb += [lowest.eq(mask & (~mask + 1)), rest.eq(mask & ~lowest)]
        index = Signal(range(max(2, self.k)))  # binary position of the one-hot `lowest`
        for bit in range(len(index)):
            m.d.comb += index[bit].eq(Cat(*(lowest[j] for j in range(self.k) if j >> bit & 1)).any())
        item = Signal(self.item_bits)
        m.d.comb += [
            item.eq(word.word_select(index, self.item_bits)),
            self.o.valid.eq(mask != 0),
            self.o.payload.item.eq(item),
            self.o.payload.last.eq(last & (rest == 0)),
            self.i.ready.eq((mask == 0) | (self.o.ready & (rest == 0))),
        ]
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += mask.eq(rest)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [word.eq(self.i.payload.data), mask.eq(self.i.payload.keep), last.eq(self.i.payload.last)]
        return m
