"""L2 distance PE: squared L2 between a query and streamed database vectors (graph search, Falcon 7.3.2.4).

The query (d elements) is loaded once through stream `q` as d/w words of w elements. Database
vectors then arrive on stream `x`, w elements per word (d/w words per vector); the PE emits one
exact integer squared distance per vector on `o`. `x.last`, set on the final word of the last vector
of a query, returns the PE to loading the next query; `o.last` marks that vector's distance.

Datapath: the shared row-sweep engine (`fanns.engines.rowsweep`) with a streamed row source: w
subtractors, w squarers, a pipelined adder tree of depth ceil(log2 w) and an accumulator over
the d/w words of a vector. All stages advance together when the output is free (`o.ready` or
`o.valid` low), which gives back-pressure without skid buffers.

Timing per query of N vectors (query load of d/w cycles excluded): II = d/w, L = d/w + 3 +
ceil(log2 w) (subtract, square, tree, accumulate/output registers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from amaranth import Module, Signal, signed, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.engines.datapath import tree_depth
from fanns.engines.rowsweep import Sweep, SweepSpec
from fanns.numerics import bits_for
from fanns.pe.base import PE


@dataclass(frozen=True)
class L2Dist(PE):
    d: int = 128
    w: int = 16
    vec_bits: int = 8
    signed: bool = False

    name: ClassVar[str] = "l2dist"
    summary: ClassVar[str] = "squared L2 distance of streamed vectors to a query, one vector per d/w cycles"
    timing_formula: ClassVar[str] = "II = d/w; L = d/w + 3 + ceil(log2 w)"
    hls_header: ClassVar[str] = "l2dist.h"
    testbench: ClassVar[str] = "tb_l2dist"
    calibration_points: ClassVar[tuple] = (
        {"d": 128, "w": 16, "vec_bits": 8, "signed": False},
        {"d": 128, "w": 8, "vec_bits": 8, "signed": False},
        {"d": 128, "w": 4, "vec_bits": 8, "signed": False},
        {"d": 96, "w": 16, "vec_bits": 8, "signed": True},
        {"d": 128, "w": 16, "vec_bits": 16, "signed": True},
        {"d": 64, "w": 32, "vec_bits": 8, "signed": True},
        {"d": 128, "w": 2, "vec_bits": 12, "signed": True},
    )

    def validate(self) -> None:
        self.require(self.d > 0 and self.w > 0, "d and w must be positive")
        self.require(self.d % self.w == 0, f"w={self.w} must divide d={self.d}", "pick w as a divisor of d")
        self.require(2 <= self.vec_bits <= 24, f"vec_bits={self.vec_bits} out of range 2..24")

    # -- derived widths -------------------------------------------------------------------------
    @property
    def words(self) -> int:
        return self.d // self.w

    @property
    def elem_shape(self):
        return signed(self.vec_bits) if self.signed else unsigned(self.vec_bits)

    @property
    def dist_bits(self) -> int:
        lo, hi = self.elem_range()
        return bits_for((hi - lo) ** 2 * self.d)

    def elem_range(self) -> tuple[int, int]:
        if self.signed:
            return -(1 << (self.vec_bits - 1)), (1 << (self.vec_bits - 1)) - 1
        return 0, (1 << self.vec_bits) - 1

    # -- reference model ------------------------------------------------------------------------
    def distances(self, q: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Exact squared L2 of query q [d] to vectors x [n, d] (int64)."""
        diff = np.asarray(x, dtype=np.int64) - np.asarray(q, dtype=np.int64)[None, :]
        return (diff * diff).sum(axis=1)

    def pack_words(self, vec: np.ndarray) -> list[int]:
        """Split one vector into its d/w stream words (element i of a word at bits i*vec_bits)."""
        mask = (1 << self.vec_bits) - 1
        words = []
        for k in range(self.words):
            word = 0
            for i, v in enumerate(vec[k * self.w : (k + 1) * self.w]):
                word |= (int(v) & mask) << (i * self.vec_bits)
            words.append(word)
        return words

    # -- timing ---------------------------------------------------------------------------------
    def latency(self) -> int:
        return self.words + 3 + tree_depth(self.w)

    def ii(self) -> int:
        return self.words

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        return {"w": self.w, "w*vec_bits": self.w * self.vec_bits, "d*vec_bits": self.d * self.vec_bits}

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return L2DistComponent(self)


class L2DistComponent(wiring.Component):
    """Amaranth implementation of `L2Dist`: the row-sweep engine over streamed vectors."""

    def __init__(self, pe: L2Dist):
        self.pe = pe
        word = data.ArrayLayout(pe.elem_shape, pe.w)
        super().__init__(
            {
                "q": In(stream.Signature(word)),
                "x": In(stream.Signature(data.StructLayout({"data": word, "last": 1}))),
                "o": Out(stream.Signature(data.StructLayout({"dist": pe.dist_bits, "last": 1}))),
            }
        )

    def elaborate(self, platform):
        pe = self.pe
        m = Module()
        spec = SweepSpec(
            w=pe.w,
            words=pe.words,
            rows=None,
            vec_range=pe.elem_range(),
            row_range=pe.elem_range(),
            op="sqdiff",
            result_lanes=pe.w,
            result_words=pe.words,
            collect=1,
            source="stream",
        )
        sw = Sweep(spec, post=lambda total: total, post_shape=unsigned(pe.dist_bits))
        en = Signal()
        m.d.comb += en.eq(~sw.out_valid | self.o.ready)
        sw.build(m, en)
        m.d.comb += [
            sw.load_valid.eq(self.q.valid),
            sw.load_word.eq(self.q.payload),
            self.q.ready.eq(sw.load_ready),
            sw.row_valid.eq(self.x.valid),
            sw.row_word.eq(self.x.payload.data),
            sw.row_last.eq(self.x.payload.last),
            self.x.ready.eq(sw.row_ready),
            self.o.valid.eq(sw.out_valid),
            self.o.payload.dist.eq(sw.out_word[0]),
            self.o.payload.last.eq(sw.out_last),
        ]
        return m
