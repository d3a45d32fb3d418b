"""Hierarchical priority queue, HPQ (FANNS 6.4.1.2 option 1): the s smallest keys of z streams.

Why: a systolic queue takes one key every two cycles, but a PQ-decode or IVF-distance PE emits
one key per cycle; HPQ splits each of the z input streams over two level-1 queues (items 0, 2,
4, ... of a query to queue 2j, items 1, 3, ... to queue 2j+1), so all z streams run at one key
per cycle. At the end of a query the level-2 queue (length s) collects the 2z level-1 results
and emits the s smallest keys, ascending. The level-1 length `s1` is s here (exact); AHPQ
(`fanns.pe.ahpq`) shortens it.

Interface: input streams `i0` .. `i{z-1}` and output stream `o`, all {key, last}. Every stream
carries each query (at least one item per stream; pad with the sentinel) and frames it with
`last`; a stream may run ahead into the next query once its two level-1 queues have handed their
keys to level 2. Output: s keys ascending, `last` on the s-th.

Level 2 collects the level-1 queues in a fixed order (0 .. 2z-1), s1 keys from each, at one key
every two cycles. Timing of one query with N items on every stream (all streams start together,
inputs always valid, output always ready), from the first accepted item to the last output
(inclusive): II = 1 and
    L = SETTLE(s1) + 4·z·s1 + SETTLE(s) + s          (SETTLE(x) = x - 1)
i.e. the streams take N cycles, the level-1 queues settle, level 2 ingests 2z·s1 keys (2 cycles
each, 4·z·s1 - 1 cycles), settles and emits s keys. Exact (checked in simulation). With unequal
stream lengths, use the longest.

Back to back, stream j starts the next query as soon as level 2 has emptied its two level-1
queues, so the next query's level-1 filling overlaps the current query's level-2 work. In steady
state (every stream N items per query, no bubbles) consecutive queries start level-2 collection
    interval(N) = max(N + 4·s1 + SETTLE(s1) - 1,  4·z·s1 + SETTLE(s) + s - 1)
cycles apart (the first term: a stream restarts 4·s1·(j+1) - 1 cycles into the collection and
level 2 reaches its queues 4·s1·j cycles in; the second: level 2 is busy for the whole
collection, settle and output), so Q queries take cycles(N) + (Q - 1)·interval(N). Exact.

Coupled producers: in the IVF-PQ accelerator a stream whose queues level 2 has not yet
collected stalls the PQDist PE behind it, and PEs sharing a channel stall together
(`fanns.model.ivfpq.selk`). That model takes from here when stream j may restart,
`stream_restart(j)` = 4·s1·(j+1) - 1 cycles into the collection, when its last key must have
arrived for level 2 to find its queues settled, `stream_due(j)` = 4·s1·j - SETTLE(s1) - 1
cycles before the next collection start, and the level-2 bound `min_interval()`; with N keys per
stream at one per cycle these give `interval(N)` again (the first term is
restart(j) + N - 1 - due(j)).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from amaranth import Array, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fanns.engines.systolic import QueueUnit, settle_cycles
from fanns.numerics import smallest_keys
from fanns.pe.base import PE
from fanns.pe.systolic_pq import key_stream


@dataclass(frozen=True)
class Hpq(PE):
    z: int = 2
    s: int = 10
    key_bits: int = 64

    name: ClassVar[str] = "hpq"
    summary: ClassVar[str] = "hierarchical priority queue: s smallest of z streams (2z level-1 queues, one level-2)"
    timing_formula: ClassVar[str] = "II = 1 (per stream); L = (s1-1) + 4*z*s1 + (s-1) + s, s1 = s"
    hls_header: ClassVar[str] = "hpq.h"
    hls_call: ClassVar[str] = "fanns::hpq<{z}, {s}, {s1}, {key_bits}>"
    testbench: ClassVar[str] = "tb_hpq"
    calibration_points: ClassVar[tuple] = (
        {"z": 4, "s": 10, "key_bits": 52},
        {"z": 1, "s": 1, "key_bits": 64},
        {"z": 2, "s": 10, "key_bits": 64},
        {"z": 8, "s": 1, "key_bits": 64},
        {"z": 3, "s": 32, "key_bits": 40},
        {"z": 16, "s": 4, "key_bits": 52},
        {"z": 2, "s": 32, "key_bits": 64},
        {"z": 4, "s": 1, "key_bits": 52},
        {"z": 16, "s": 1, "key_bits": 64},
    )

    def validate(self) -> None:
        self.require(1 <= self.z <= 256, f"z={self.z} input streams out of range 1..256")
        self.require(1 <= self.s <= 4096, f"queue length s={self.s} out of range 1..4096")
        self.require(
            1 <= self.key_bits <= 64,
            f"key_bits={self.key_bits} out of range 1..64",
            "keys are (dist << 32) | id, at most 64 bits",
        )

    @property
    def s1(self) -> int:
        """Length of each level-1 queue (s: HPQ is exact)."""
        return self.s

    @property
    def num_l1(self) -> int:
        return 2 * self.z

    # -- reference model ------------------------------------------------------------------------
    def level1_inputs(self, streams: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """The keys each level-1 queue receives: stream j's even items to 2j, odd items to 2j+1."""
        self.require(len(streams) == self.z, f"expected {self.z} streams, got {len(streams)}")
        out = []
        for keys in streams:
            keys = np.asarray(keys, dtype=np.uint64)
            out += [keys[0::2], keys[1::2]]
        return out

    def select(self, streams: Sequence[Sequence[int]]) -> np.ndarray:
        """The s keys the hardware emits for one query, ascending (bit-exact model).

        Every level-1 queue keeps the s1 smallest of its keys (sentinel-padded); level 2 keeps
        the s smallest of all level-1 results. With s1 = s this is the s smallest of all keys.
        """
        kept = [smallest_keys(k, self.s1, fill_bits=self.key_bits) for k in self.level1_inputs(streams)]
        return smallest_keys(np.concatenate(kept), self.s, fill_bits=self.key_bits)

    # -- timing ---------------------------------------------------------------------------------
    def latency(self) -> int:
        return settle_cycles(self.s1) + 4 * self.z * self.s1 + settle_cycles(self.s) + self.s

    def ii(self) -> int:
        return 1

    def interval(self, n: int) -> int:
        """Cycles between consecutive queries of n items per stream, back to back (docstring)."""
        return max(self.stream_restart(0) + n - 1 - self.stream_due(0), self.min_interval())

    def stream_restart(self, j: int) -> int:
        """Cycles into the level-2 collection at which stream j may start the next query."""
        return 4 * self.s1 * (j + 1) - 1

    def stream_due(self, j: int) -> int:
        """Stream j's last key may be taken up to this many cycles before (negative: after) the next
        collection starts without delaying it: its queues settle (SETTLE(s1) idle cycles after
        the key's cycle), level 2 reaches them 4·s1·j cycles in."""
        return 4 * self.s1 * j - settle_cycles(self.s1) - 1

    def min_interval(self) -> int:
        """Level 2's share of `interval`: collection, settle and output."""
        return 4 * self.z * self.s1 + settle_cycles(self.s) + self.s - 1

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        """Queue slots (a register, compare-swap and 3:1 select per key bit), the level-2 collector
        (a 2z:1 multiplexer: 2z-1 2:1 selects per key bit) and per-queue control."""
        slots = self.num_l1 * self.s1 + self.s
        return {
            "slot_bits": slots * self.key_bits,
            "collect_mux_bits": (self.num_l1 - 1) * self.key_bits,
            "queues": self.num_l1 + 1,
        }

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return HpqComponent(self)


class HpqComponent(wiring.Component):
    """Amaranth implementation of `Hpq` / `Ahpq`: 2z level-1 `QueueUnit`s, a collector, level 2."""

    def __init__(self, pe: Hpq):
        self.pe = pe
        ports = {f"i{j}": In(key_stream(pe.key_bits)) for j in range(pe.z)}
        super().__init__(ports | {"o": Out(key_stream(pe.key_bits))})

    def elaborate(self, platform):
        pe = self.pe
        m = Module()
        l1 = [QueueUnit(pe.s1, pe.key_bits) for _ in range(pe.num_l1)]
        for k, unit in enumerate(l1):
            m.submodules[f"l1_{k}"] = unit
        m.submodules.l2 = l2 = QueueUnit(pe.s, pe.key_bits)

        # Split every stream over its two level-1 queues by item parity within the query.
        for j in range(pe.z):
            src = getattr(self, f"i{j}")
            even, odd = l1[2 * j], l1[2 * j + 1]
            to_odd = Signal(name=f"to_odd{j}")
            accept = Signal(name=f"accept{j}")
            m.d.comb += [
                src.ready.eq(even.filling & odd.filling & Mux(to_odd, odd.in_ready, even.in_ready)),
                accept.eq(src.valid & src.ready),
                even.in_valid.eq(accept & ~to_odd),
                odd.in_valid.eq(accept & to_odd),
                even.in_key.eq(src.payload.key),
                odd.in_key.eq(src.payload.key),
                even.in_end.eq(accept & src.payload.last),
                odd.in_end.eq(accept & src.payload.last),
            ]
            with m.If(accept):
                m.d.sync += to_odd.eq(~to_odd & ~src.payload.last)

        # Collect the level-1 queues in order into level 2.
        idx = Signal(range(max(pe.num_l1, 2)))
        valid = Array(u.out_valid for u in l1)[idx]
        key = Array(u.out_key for u in l1)[idx]
        last = Array(u.out_last for u in l1)[idx]
        take = Signal()
        m.d.comb += [
            take.eq(valid & l2.in_ready),
            l2.in_valid.eq(take),
            l2.in_key.eq(key),
            l2.in_end.eq(take & last & (idx == pe.num_l1 - 1)),
        ]
        for k, unit in enumerate(l1):
            m.d.comb += unit.out_ready.eq(take & (idx == k))
        with m.If(take & last):
            m.d.sync += idx.eq(Mux(idx == pe.num_l1 - 1, 0, idx + 1))

        m.d.comb += [
            self.o.valid.eq(l2.out_valid),
            self.o.payload.key.eq(l2.out_key),
            self.o.payload.last.eq(l2.out_last),
            l2.out_ready.eq(self.o.ready),
        ]
        return m
