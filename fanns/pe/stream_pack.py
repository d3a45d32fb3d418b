"""Stream width converter, narrow to wide: gather k items into one data-bus word.

The inverse of `stream_unpack`, for results on their way to the AXI write master: item j of a
word sits at bits j*item_bits; a word leaves when it holds k items or when an item with `last`
arrives, so the final word of a frame may be partial; its per-item `keep` mask says which slots
hold items (a prefix) and the empty slots are zero. No HLS header: in HLS this is a loop that
fills an `ap_uint` word.

Timing: L = 2 (the word completed by the item taken at cycle t leaves at t+1, inclusive span
2 for a one-item frame), II = 1 item; while the output word waits for `o.ready`, input stalls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.pe.base import PE
from fanns.pe.stream_unpack import item_layout, packed_layout


@dataclass(frozen=True)
class StreamPack(PE):
    item_bits: int = 32
    k: int = 16

    name: ClassVar[str] = "stream_pack"
    summary: ClassVar[str] = "gather k items into one wide word (partial last word with keep), one item per cycle"
    timing_formula: ClassVar[str] = "L = 2; II = 1 item"
    hls_header: ClassVar[str] = ""
    testbench: ClassVar[str] = "tb_stream_pack"
    calibration_points: ClassVar[tuple] = (
        {"item_bits": 32, "k": 16},
        {"item_bits": 64, "k": 8},
        {"item_bits": 128, "k": 4},
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
    def pack(self, items: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
        """(data, keep, last) words from (item, last) items."""
        out, slot, word = [], 0, 0
        mask = (1 << self.item_bits) - 1
        for item, last in items:
            word |= (int(item) & mask) << (slot * self.item_bits)
            slot += 1
            if slot == self.k or last:
                out.append((word, (1 << slot) - 1, int(bool(last))))
                slot, word = 0, 0
        return out

    # -- timing ---------------------------------------------------------------------------------
    def latency(self) -> int:
        return 2

    def ii(self) -> int:
        return 1

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        return {"word_bits": self.word_bits, "slot_bits": (self.k - 1) * self.item_bits, "k": self.k}

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return StreamPackComponent(self.item_bits, self.k)


class StreamPackComponent(wiring.Component):
    """Amaranth implementation of `StreamPack` (see the module docstring)."""

    def __init__(self, item_bits: int, k: int):
        self.item_bits, self.k = item_bits, k
        super().__init__(
            {
                "i": In(stream.Signature(item_layout(item_bits))),
                "o": Out(stream.Signature(packed_layout(item_bits, k))),
            }
        )

    def elaborate(self, platform):
        m = Module()
        b, k = self.item_bits, self.k
        slots = [Signal(b, name=f"slot{j}") for j in range(k - 1)]  # the last slot is never held
        count = Signal(range(max(2, k)))
        take = Signal()
        item = self.i.payload.item
        closes = Signal()
        m.d.comb += [
            self.i.ready.eq(~self.o.valid | self.o.ready),
            take.eq(self.i.valid & self.i.ready),
            closes.eq((count == k - 1) | self.i.payload.last),
        ]
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(take):
            for j in range(k - 1):
                with m.If(count == j):
                    m.d.sync += slots[j].eq(item)
            with m.If(closes):
                words = [
                    Mux(count == j, item, Mux(count > j, slots[j], 0)) if j < k - 1 else Mux(count == j, item, 0)
                    for j in range(k)
                ]
                m.d.sync += [
                    self.o.valid.eq(1),
                    self.o.payload.data.eq(Cat(*words)),
                    self.o.payload.keep.eq(Cat(*(count >= j for j in range(k)))),
                    self.o.payload.last.eq(self.i.payload.last),
                    count.eq(0),
                ]
            with m.Else():
                m.d.sync += count.eq(count + 1)
        return m
