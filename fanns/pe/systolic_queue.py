"""Graph-search queue (Falcon 7.3.2.1): a bounded systolic priority queue driven by commands.

Why: Falcon's candidate queue (insert neighbours, pop the nearest candidate) and result queue
(insert, keep only the l best, compare with the worst, sort out at the end) are the same
systolic register array as the replace-only queue (`fanns.engines.systolic`) with a command port.
Bounded: the queue holds at most s keys; inserting into a full queue drops the largest of the
s+1 keys (exactly), so a result queue of length l keeps the l best. Empty slots hold the sentinel.

Interface
---------
* `cmd` stream, payload {key, op}: op 0 INSERT key, 1 POP (emit the smallest key, remove it;
  the sentinel when empty), 2 FLUSH (sort-out: emit all s keys ascending, `last` on the s-th,
  and leave the queue empty), 3 CLEAR (empty the queue, no output).
* `o` stream {key, last} (a registered output): one key per POP (`last` = 1), s keys per FLUSH.
* `worst` (the largest kept key; the sentinel while fewer than s keys are held) with
  `worst_valid`: valid in every cycle except the one right after an INSERT. This is what a
  result queue compares candidates with (Falcon's termination test).

Cycle cost of each command (inputs always valid, output always ready; `schedule` computes the
exact accept and output cycles of any command sequence and is checked against simulation):
* INSERT: one every 2 cycles (not in the cycle right after an INSERT).
* POP / FLUSH need the array sorted: SETTLE = s - 1 cycles after the last INSERT, i.e. a POP
  can be accepted s cycles after the last INSERT's cycle (the "sorted in s-1 cycles" of Falcon);
  its key leaves one cycle after acceptance. Back-to-back POPs: one per cycle.
* FLUSH: accepted like a POP; its s keys leave in the s cycles after acceptance; the next command
  is accepted s cycles after the FLUSH.
* CLEAR: 1 cycle; a POP may follow at once.
`cycles(N)` (the PE contract) is N INSERTs followed by a FLUSH, from the first INSERT to the last
key out: the last INSERT's cycle, s - 1 settle cycles, the FLUSH acceptance and s output cycles,
so L = 2s + 1 and II = 2. Exact (checked in simulation).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar

from amaranth import Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.engines.systolic import SystolicCore, settle_cycles
from fanns.numerics import sentinel
from fanns.pe.base import PE
from fanns.pe.systolic_pq import key_stream


class Op(IntEnum):
    INSERT = 0
    POP = 1
    FLUSH = 2
    CLEAR = 3


class BoundedQueue:
    """Functional reference model: a multiset of at most s keys, padded with the sentinel."""

    def __init__(self, s: int, key_bits: int):
        self.s = s
        self.fill = sentinel(key_bits)
        self.keys = [self.fill] * s  # ascending

    @property
    def worst(self) -> int:
        return self.keys[-1]

    def insert(self, key: int) -> None:
        if key < self.keys[-1]:
            self.keys[-1] = int(key)
            self.keys.sort()

    def pop(self) -> int:
        head = self.keys[0]
        self.keys = self.keys[1:] + [self.fill]
        return head

    def flush(self) -> list[int]:
        out = self.keys
        self.keys = [self.fill] * self.s
        return out

    def clear(self) -> None:
        self.keys = [self.fill] * self.s

    def run(self, commands: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
        """Apply (op, key) commands; return the (key, last) outputs in order."""
        out: list[tuple[int, int]] = []
        for op, key in commands:
            if op == Op.INSERT:
                self.insert(key)
            elif op == Op.POP:
                out.append((self.pop(), 1))
            elif op == Op.FLUSH:
                keys = self.flush()
                out += [(k, int(i == self.s - 1)) for i, k in enumerate(keys)]
            else:
                self.clear()
        return out


@dataclass(frozen=True)
class SystolicQueue(PE):
    s: int = 64
    key_bits: int = 64

    name: ClassVar[str] = "systolic_queue"
    summary: ClassVar[str] = "graph-search queue: insert / pop-min / sort-out / clear commands, bounded to s keys"
    timing_formula: ClassVar[str] = (
        "INSERT every 2 cycles; POP s cycles after the last INSERT, then 1/cycle; FLUSH s cycles; L = 2s+1, II = 2"
    )
    hls_header: ClassVar[str] = "systolic_queue.h"
    testbench: ClassVar[str] = "tb_systolic_queue"
    calibration_points: ClassVar[tuple] = (
        {"s": 64, "key_bits": 64},
        {"s": 4, "key_bits": 64},
        {"s": 8, "key_bits": 52},
        {"s": 16, "key_bits": 64},
        {"s": 32, "key_bits": 40},
        {"s": 100, "key_bits": 56},
    )

    def validate(self) -> None:
        self.require(1 <= self.s <= 4096, f"queue length s={self.s} out of range 1..4096")
        self.require(
            1 <= self.key_bits <= 64,
            f"key_bits={self.key_bits} out of range 1..64",
            "keys are (dist << 32) | id, at most 64 bits",
        )

    # -- reference model ------------------------------------------------------------------------
    def reference(self) -> BoundedQueue:
        return BoundedQueue(self.s, self.key_bits)

    # -- timing ---------------------------------------------------------------------------------
    def schedule(self, ops: Sequence[int]) -> tuple[list[int], list[int]]:
        """Exact cycle of every command acceptance and every output, for commands that are always
        available and an output that is always ready (cycle 0: the first acceptance)."""
        accepts: list[int] = []
        outputs: list[int] = []
        t, last_insert = 0, None
        for op in ops:
            if op == Op.INSERT:
                if last_insert is not None and last_insert == t - 1:
                    t += 1
                last_insert = t
                accepts.append(t)
                t += 1
                continue
            if op in (Op.POP, Op.FLUSH) and last_insert is not None:
                t = max(t, last_insert + 1 + settle_cycles(self.s))
            accepts.append(t)
            if op == Op.POP:
                outputs.append(t + 1)
                t += 1
            elif op == Op.FLUSH:
                outputs += [t + 1 + i for i in range(self.s)]
                t += self.s
            else:
                last_insert = None
                t += 1
        return accepts, outputs

    def latency(self) -> int:
        return 1 + settle_cycles(self.s) + self.s + 1

    def ii(self) -> int:
        return 2

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        return {"s*key_bits": self.s * self.key_bits, "s": self.s}

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return SystolicQueueComponent(self)


def command_layout(key_bits: int) -> data.StructLayout:
    return data.StructLayout({"key": key_bits, "op": 2})


class SystolicQueueComponent(wiring.Component):
    """Amaranth implementation of `SystolicQueue`: a `SystolicCore` behind a command decoder."""

    def __init__(self, pe: SystolicQueue):
        self.pe = pe
        super().__init__(
            {
                "cmd": In(stream.Signature(command_layout(pe.key_bits))),
                "o": Out(key_stream(pe.key_bits)),
                "worst": Out(pe.key_bits),
                "worst_valid": Out(1),
            }
        )

    def elaborate(self, platform):
        pe = self.pe
        m = Module()
        m.submodules.core = core = SystolicCore(pe.s, pe.key_bits)
        op = self.cmd.payload.op
        flushing = Signal()
        count = Signal(range(max(pe.s, 2)))
        out_free = Signal()
        can_emit = Signal()
        m.d.comb += [
            out_free.eq(~self.o.valid | self.o.ready),
            can_emit.eq(core.settled & out_free),
            self.worst.eq(core.worst),
            self.worst_valid.eq(core.ins_ok),
        ]
        with m.If(~flushing):
            with m.Switch(op):
                with m.Case(Op.INSERT):
                    m.d.comb += self.cmd.ready.eq(core.ins_ok)
                with m.Case(Op.POP, Op.FLUSH):
                    m.d.comb += self.cmd.ready.eq(can_emit)
                with m.Case(Op.CLEAR):
                    m.d.comb += self.cmd.ready.eq(1)
        accept = self.cmd.valid & self.cmd.ready
        m.d.comb += [
            core.insert.eq(accept & (op == Op.INSERT)),
            core.key.eq(self.cmd.payload.key),
            core.clear.eq(accept & (op == Op.CLEAR)),
        ]

        # Emit the smallest key into the output register: on POP/FLUSH acceptance and while flushing.
        start_pop, start_flush = accept & (op == Op.POP), accept & (op == Op.FLUSH)
        emit = Signal()
        last = Signal()
        m.d.comb += [
            emit.eq(start_pop | start_flush | (flushing & can_emit)),
            core.shift.eq(emit),
            last.eq(start_pop | (start_flush & (pe.s == 1)) | (flushing & (count == pe.s - 1))),
        ]
        with m.If(emit):
            m.d.sync += [self.o.valid.eq(1), self.o.payload.key.eq(core.head), self.o.payload.last.eq(last)]
        with m.Elif(self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        if pe.s > 1:
            with m.If(start_flush):
                m.d.sync += [flushing.eq(1), count.eq(1)]
            with m.Elif(flushing & can_emit):
                with m.If(count == pe.s - 1):
                    m.d.sync += [flushing.eq(0), count.eq(0)]
                with m.Else():
                    m.d.sync += count.eq(count + 1)
        return m
