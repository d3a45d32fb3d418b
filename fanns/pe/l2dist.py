"""L2 distance PE: squared L2 between a query and streamed database vectors (graph search, Falcon 7.3.2.4).

The query (d elements) is loaded once through stream `q` as d/w words of w elements. Database
vectors then arrive on stream `x`, w elements per word (d/w words per vector); the PE emits one
exact integer squared distance per vector on `o`. `x.last`, set on any word of the final vector
of a query, returns the PE to loading the next query; `o.last` marks that vector's distance.

Datapath: w subtractors, w squarers, a pipelined adder tree of depth ceil(log2 w) and an
accumulator over the d/w words of a vector. All stages advance together when the output is
free (`o.ready` or `o.valid` low), which gives back-pressure without skid buffers.

Timing per query of N vectors (query load of d/w cycles excluded): II = d/w, L = d/w + 3 +
ceil(log2 w) (subtract, square, tree, accumulate/output registers).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from amaranth import Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

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
    def tree_depth(self) -> int:
        return math.ceil(math.log2(self.w)) if self.w > 1 else 0

    def latency(self) -> int:
        return self.words + 3 + self.tree_depth()

    def ii(self) -> int:
        return self.words

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        return {"w": self.w, "w*vec_bits": self.w * self.vec_bits, "d*vec_bits": self.d * self.vec_bits}

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return L2DistComponent(self)


class L2DistComponent(wiring.Component):
    """Amaranth implementation of `L2Dist` (see the module docstring)."""

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
        en = Signal()
        m.d.comb += en.eq(~self.o.valid | self.o.ready)

        # Query registers, loaded word by word while `loading`.
        query = [Signal(data.ArrayLayout(pe.elem_shape, pe.w), name=f"query{k}") for k in range(pe.words)]
        loading = Signal(init=1)
        q_idx = Signal(range(max(2, pe.words)))
        m.d.comb += self.q.ready.eq(loading)
        with m.If(self.q.valid & self.q.ready):
            for k in range(pe.words):
                with m.If(q_idx == k):
                    m.d.sync += query[k].eq(self.q.payload)
            with m.If(q_idx == pe.words - 1):
                m.d.sync += [q_idx.eq(0), loading.eq(0)]
            with m.Else():
                m.d.sync += q_idx.eq(q_idx + 1)

        # Stage 0: accept a database word, subtract the matching query word.
        x_idx = Signal(range(max(2, pe.words)))
        accept = Signal()
        m.d.comb += [self.x.ready.eq(~loading & en), accept.eq(self.x.valid & self.x.ready)]
        diff_shape = signed(pe.vec_bits + 1)
        diff = [Signal(diff_shape, name=f"diff{i}") for i in range(pe.w)]
        s0_valid, s0_first, s0_eov, s0_last = Signal(), Signal(), Signal(), Signal()
        qword = Signal(data.ArrayLayout(pe.elem_shape, pe.w))
        for k in range(pe.words):
            with m.If(x_idx == k):
                m.d.comb += qword.eq(query[k])
        eov = Signal()
        m.d.comb += eov.eq(x_idx == pe.words - 1)
        with m.If(en):
            m.d.sync += [s0_valid.eq(accept), s0_first.eq(x_idx == 0), s0_eov.eq(eov), s0_last.eq(self.x.payload.last)]
            for i in range(pe.w):
                m.d.sync += diff[i].eq(self.x.payload.data[i] - qword[i])
        with m.If(accept):
            with m.If(eov):
                m.d.sync += x_idx.eq(0)
                with m.If(self.x.payload.last):
                    m.d.sync += loading.eq(1)
            with m.Else():
                m.d.sync += x_idx.eq(x_idx + 1)

        # Stage 1: square.
        sq_bits = 2 * (pe.vec_bits + 1)
        level = [Signal(sq_bits, name=f"sq{i}") for i in range(pe.w)]
        valid, first, eovs, last = Signal(), Signal(), Signal(), Signal()
        with m.If(en):
            m.d.sync += [valid.eq(s0_valid), first.eq(s0_first), eovs.eq(s0_eov), last.eq(s0_last)]
            for i in range(pe.w):
                m.d.sync += level[i].eq(diff[i] * diff[i])

        # Adder tree: one registered level per halving.
        depth = 0
        while len(level) > 1:
            depth += 1
            nxt = []
            for i in range(0, len(level), 2):
                pair = level[i : i + 2]
                s = Signal(len(pair[0]) + 1, name=f"tree{depth}_{i // 2}")
                with m.If(en):
                    m.d.sync += s.eq(pair[0] + pair[1] if len(pair) == 2 else pair[0])
                nxt.append(s)
            v, f, e, la = Signal(), Signal(), Signal(), Signal()
            with m.If(en):
                m.d.sync += [v.eq(valid), f.eq(first), e.eq(eovs), la.eq(last)]
            level, valid, first, eovs, last = nxt, v, f, e, la

        # Accumulate over the words of a vector; emit at the end of each vector.
        acc = Signal(pe.dist_bits)
        total = Signal(pe.dist_bits)
        m.d.comb += total.eq(level[0] + Mux(first, 0, acc))
        with m.If(en):
            m.d.sync += self.o.valid.eq(valid & eovs)
            with m.If(valid):
                m.d.sync += acc.eq(total)
                with m.If(eovs):
                    m.d.sync += [self.o.payload.dist.eq(total), self.o.payload.last.eq(last)]
        return m
