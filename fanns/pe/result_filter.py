"""Result filter of the IVF-PQ accelerator: the first `k` of the design's K keys of every query.

SelK emits the design's K nearest keys per query; a run asks for k <= K. The filter keeps the
first k of each query as result items for the result packer, marks each query's last kept key
(the packer closes a beat there: every query's results start on a beat of their own) and
time-stamps the first and the latest query's completion for the cycle registers. No HLS header:
in HLS this is a counted loop of the result writer.

Timing: a combinational pass-through filter, L = 1, II = 1 key (a dropped key costs one cycle).
Resources: the query counter, its end compare and the two 64-bit time stamps are fixed; only
the key index grows with K (the key itself is wired through, never registered).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from amaranth import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.pe.base import PE
from fanns.pe.stream_unpack import item_layout
from fanns.pe.systolic_pq import key_stream

RESULT_BITS = 64
"""Bits of one result item (a key as the host reads it)."""
STAMP_BITS = 64
"""Bits of the cycle counter the first/latest completion stamps copy."""


@dataclass(frozen=True)
class ResultFilter(PE):
    """Keeps `k` (a run parameter, at most `max_k`) of every query's `max_k` keys of `key_bits`."""

    key_bits: int = 48
    max_k: int = 10

    name: ClassVar[str] = "result_filter"
    summary: ClassVar[str] = "the first k keys of every query, last flag on each query's last one"
    timing_formula: ClassVar[str] = "L = 1; II = 1 key"
    calibration_points: ClassVar[tuple] = (
        {"key_bits": 48, "max_k": 1},
        {"key_bits": 48, "max_k": 10},
        {"key_bits": 48, "max_k": 100},
        {"key_bits": 64, "max_k": 1000},
    )

    def validate(self) -> None:
        self.require(1 <= self.key_bits <= RESULT_BITS, f"key_bits={self.key_bits} out of range 1..{RESULT_BITS}")
        self.require(1 <= self.max_k <= 1 << 16, f"max_k={self.max_k} out of range 1..65536")

    def latency(self) -> int:
        return 1

    def ii(self) -> int:
        return 1

    def resource_features(self) -> dict[str, float]:
        return {"index_bits": math.ceil(math.log2(max(2, self.max_k)))}

    def component(self) -> wiring.Component:
        return ResultFilterComponent(self.key_bits, self.max_k)


class ResultFilterComponent(wiring.Component):
    """The first `k` keys of each query as 64-bit result items, `last` on each query's last one."""

    def __init__(self, key_bits: int, max_k: int):
        self.key_bits, self.max_k = key_bits, max_k
        super().__init__(
            {
                "keys": In(key_stream(key_bits)),
                "o": Out(stream.Signature(item_layout(RESULT_BITS))),
                "k": In(range(max_k + 1)),
                "nq": In(32),
                "clear": In(1),
                "now": In(STAMP_BITS),
                "first": Out(STAMP_BITS),
                "latest": Out(STAMP_BITS),
            }
        )

    def elaborate(self, platform):
        m = Module()
        i = Signal(range(max(2, self.max_k)))
        q = Signal(32)
        keep, query_end, run_end = Signal(), Signal(), Signal()
        m.d.comb += [
            keep.eq(i < self.k),
            query_end.eq(i == self.k - 1),
            run_end.eq(query_end & (q == self.nq - 1)),
            self.o.valid.eq(self.keys.valid & keep),
            self.o.payload.item.eq(self.keys.payload.key),
            self.o.payload.last.eq(query_end),
            self.keys.ready.eq(~keep | self.o.ready),
        ]
        with m.If(self.keys.valid & self.keys.ready):
            m.d.sync += i.eq(Mux(self.keys.payload.last, 0, i + 1))
            with m.If(keep & query_end):
                m.d.sync += [q.eq(Mux(run_end, 0, q + 1)), self.latest.eq(self.now)]
                with m.If(q == 0):
                    m.d.sync += self.first.eq(self.now)
        with m.If(self.clear):
            m.d.sync += [q.eq(0), i.eq(0)]
        return m
