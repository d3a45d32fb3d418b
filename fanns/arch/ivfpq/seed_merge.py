"""Seed merge of the IVF-PQ accelerator: a step-wise run's kept keys merged into each query's result.

In a step-wise run (`mode`, docs/stepwise.md) every query brings k seed keys (ascending: an
earlier step's result, or sentinels), read by the I/O reader into `seeds`. SelK's K keys of the
query (ascending, `last` on the K-th) and its seeds are two sorted lists: the merge compares their
heads and passes the smaller, K times, then drains what is left of both, so the result filter
keeps the k smallest of the union — top-k(A ∪ B) = top-k(top-k(A) ∪ B) for any k, the step's
result. Two heads, no K-deep storage; one key a cycle (II = 1, combinational, L = 0) and one idle
cycle between queries. A normal run (`mode` 0) passes SelK's keys through unchanged.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.pe.result_filter import RESULT_BITS
from fanns.pe.systolic_pq import key_stream


def seed_layout() -> data.StructLayout:
    """A seed key as the I/O reader delivers it: the 64-bit key and whether it is the query's last."""
    return data.StructLayout({"key": RESULT_BITS, "last": 1})


class SeedMerge(wiring.Component):
    """K keys a query from `keys` merged with its seeds from `seeds` (see the module docstring)."""

    def __init__(self, key_bits: int, max_k: int):
        self.key_bits, self.max_k = key_bits, max_k
        super().__init__(
            {
                "keys": In(key_stream(key_bits)),
                "seeds": In(stream.Signature(seed_layout())),
                "o": Out(key_stream(key_bits)),
                "mode": In(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        a, s, o = self.keys, self.seeds, self.o
        n = Signal(range(self.max_k + 1))  # keys passed of the current query
        a_done, s_done = Signal(), Signal()  # its SelK keys / seeds all taken
        merging, s_key, pick_s, heads = Signal(), Signal(self.key_bits), Signal(), Signal()
        m.d.comb += [
            merging.eq(n != self.max_k),
            s_key.eq(s.payload.key[: self.key_bits]),
            pick_s.eq(~s_done & (s_key < a.payload.key)),
            heads.eq(a.valid & (s_done | s.valid)),
        ]
        with m.If(~self.mode):
            m.d.comb += [o.valid.eq(a.valid), o.payload.eq(a.payload), a.ready.eq(o.ready)]
        with m.Else():
            m.d.comb += [
                o.valid.eq(merging & heads),
                o.payload.key.eq(Mux(pick_s, s_key, a.payload.key)),
                o.payload.last.eq(n == self.max_k - 1),
                a.ready.eq(Mux(merging, o.ready & heads & ~pick_s, ~a_done)),
                s.ready.eq(Mux(merging, o.ready & heads & pick_s, ~s_done)),
            ]
            with m.If(o.valid & o.ready):
                m.d.sync += n.eq(n + 1)
            with m.If(a.valid & a.ready & a.payload.last):
                m.d.sync += a_done.eq(1)
            with m.If(s.valid & s.ready & s.payload.last):
                m.d.sync += s_done.eq(1)
            with m.If(~merging & a_done & s_done):  # the query is done: the next one's lists
                m.d.sync += [n.eq(0), a_done.eq(0), s_done.eq(0)]
        return m
