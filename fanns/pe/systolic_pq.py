"""Systolic priority queue, replace-only (FANNS 6.4.1.1, Fig. 6.5): the s smallest keys of a query.

Why this PE: it is the K-selection primitive of the SelCells and SelK stages and the building
block of HPQ, AHPQ and HSMPQG. One replace every two cycles, resources linear in s * key_bits.

Interface: input stream `i` of {key, last}, output stream `o` of {key, last}. A query is the
items up to and including the one with `last` (at least one item; pad with the sentinel). At the
end of a query the queue emits its s keys in ascending order (`last` on the s-th), padded with the
sentinel when the query had fewer than s keys, and is all sentinels again for the next query.
The array and its schedule are in `fanns.engines.systolic` (SETTLE = s - 1 idle cycles sort it).

Timing of one query of N items, from the cycle the first item is accepted to the cycle the last
key leaves (both inclusive), inputs always valid and output always ready:
  * items are accepted every II = 2 cycles (a replace occupies an insert and an even cycle);
  * after the last item, SETTLE = s - 1 cycles sort the array; then s output cycles;
  * cycles(N) = L + (N - 1) * 2 with L = 1 + (s - 1) + s = 2s. Exact (checked in simulation).
The next query's first item can be accepted in the cycle after the last output, so back-to-back
queries cost exactly cycles(N) each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from amaranth import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.engines.systolic import QueueUnit, SystolicArray, settle_cycles
from fanns.numerics import smallest_keys
from fanns.pe.base import PE


def key_stream(key_bits: int) -> stream.Signature:
    """The selection-key stream used by all queue PEs: {key, last}, key in the low bits."""
    return stream.Signature(data.StructLayout({"key": key_bits, "last": 1}))


@dataclass(frozen=True)
class SystolicPQ(PE):
    s: int = 10
    key_bits: int = 64

    name: ClassVar[str] = "systolic_pq"
    summary: ClassVar[str] = "systolic priority queue (replace-only): the s smallest keys per query, ascending"
    timing_formula: ClassVar[str] = "II = 2; L = 2s (settle s-1, output s)"
    hls_header: ClassVar[str] = "systolic_pq.h"
    testbench: ClassVar[str] = "tb_systolic_pq"
    calibration_points: ClassVar[tuple] = (
        {"s": 10, "key_bits": 64},
        {"s": 1, "key_bits": 64},
        {"s": 4, "key_bits": 52},
        {"s": 16, "key_bits": 20},
        {"s": 32, "key_bits": 52},
        {"s": 64, "key_bits": 40},
        {"s": 100, "key_bits": 64},
    )

    def validate(self) -> None:
        self.require(1 <= self.s <= 4096, f"queue length s={self.s} out of range 1..4096")
        self.require(
            1 <= self.key_bits <= 64,
            f"key_bits={self.key_bits} out of range 1..64",
            "keys are (dist << 32) | id, at most 64 bits",
        )

    # -- reference model ------------------------------------------------------------------------
    def select(self, keys: Sequence[int] | np.ndarray) -> np.ndarray:
        """The functional model: the s smallest keys of one query, ascending, sentinel-padded."""
        return smallest_keys(np.asarray(keys, dtype=np.uint64), self.s, fill_bits=self.key_bits)

    def run_schedule(self, keys: Sequence[int], gaps: Sequence[int] | None = None) -> tuple[list[int], int]:
        """The cycle-level model: drive the register array exactly as the RTL does.

        `gaps[k]` extra idle cycles precede item k (input bubbles beyond the II). Returns the s
        output keys and the cycles from the first accepted item to the last output (inclusive).
        """
        arr = SystolicArray(self.s, self.key_bits)
        gaps = list(gaps) if gaps is not None else [0] * len(keys)
        cycle = 0
        for k, key in enumerate(keys):
            for _ in range(gaps[k] if k else 0):
                arr.idle()
                cycle += 1
            if not arr.ins_ok:
                arr.idle()
                cycle += 1
            arr.insert(int(key))
            cycle += 1
        while not arr.settled:
            arr.idle()
            cycle += 1
        out = [arr.shift() for _ in range(self.s)]
        return out, cycle + self.s

    # -- timing ---------------------------------------------------------------------------------
    def latency(self) -> int:
        return 1 + settle_cycles(self.s) + self.s

    def ii(self) -> int:
        return 2

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        return {"s*key_bits": self.s * self.key_bits, "s": self.s}

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return SystolicPQComponent(self)


class SystolicPQComponent(wiring.Component):
    """Amaranth implementation of `SystolicPQ`: one `QueueUnit` between two key streams."""

    def __init__(self, pe: SystolicPQ):
        self.pe = pe
        super().__init__({"i": In(key_stream(pe.key_bits)), "o": Out(key_stream(pe.key_bits))})

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = QueueUnit(self.pe.s, self.pe.key_bits)
        accept = self.i.valid & unit.in_ready
        m.d.comb += [
            self.i.ready.eq(unit.in_ready),
            unit.in_valid.eq(accept),
            unit.in_key.eq(self.i.payload.key),
            unit.in_end.eq(accept & self.i.payload.last),
            self.o.valid.eq(unit.out_valid),
            self.o.payload.key.eq(unit.out_key),
            self.o.payload.last.eq(unit.out_last),
            unit.out_ready.eq(self.o.ready),
        ]
        return m
