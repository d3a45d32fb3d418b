"""The systolic register array shared by every queue PE (6.4.1.1, Fig. 6.5; Falcon Fig. 7.2).

Why one module: the replace-only queue (`systolic_pq`), the graph queue (`systolic_queue`) and
the level-1/level-2 queues of HPQ/AHPQ are the same register array under different control. The
array, its cycle-level Python model, its settle bound and the proof of its schedule live here once.

The array
---------
Registers ``r[0..s-1]`` hold keys; ``r[0]`` is the *insertion end* and holds the largest kept key,
``r[s-1]`` is the *output end*. Between neighbours sit s-1 compare-swap units that move the larger
key towards ``r[0]``. Pairs ``(i, i+1)`` with even i are the *even* pairs, odd i the *odd* pairs.
Each clock cycle is one of:

* **insert x** (a replace): ``r[0] <- min(r[0], x)`` (x replaces the largest kept key when it is
  smaller, otherwise x is dropped) and the odd pairs compare-swap. Pair (0, 1) is not active in
  this cycle, so the cycle has one comparator on every path. Allowed when the previous cycle was
  not an insert: one replace every two cycles (II = 2). Inserting the sentinel changes no key
  and is allowed in any cycle (HPQ uses it as an end-of-query marker).
* **idle**: the even and odd pairs alternate (free-running phase); after an insert an even cycle
  follows.
* **shift** (output / pop): ``r[i] <- r[i-1]``, ``r[0] <- sentinel``; emits ``r[s-1]``. Only used
  once the array is settled (sorted), which a shift keeps sorted.
* **clear**: every register to the sentinel.

Guarantees (proved by `zero_one_check` for every s the tests run it on, s = 1..14; random-tested
with hypothesis up to s = 40 and in RTL simulation):

1. ``r[0]`` is the largest key in the array in every cycle in which an insert is allowed, so a
   replace drops exactly the largest of the s+1 candidates: the array always holds the s
   smallest keys inserted since the last clear/output (a multiset; duplicates and keys equal to
   the sentinel are fine).
2. ``SETTLE(s) = s - 1`` idle cycles after the last insert, the array is sorted (r[0] largest).

`zero_one_check` proves both by the 0-1 principle: every cycle applies the same min/max
operations whatever the key values (the schedule depends only on handshakes, never on keys), so the
schedule is correct for all keys iff it is correct for all 0/1 keys; the reachable 0/1 states of
the array (with the phase state) form a small finite set, explored exhaustively with all arrival
patterns (bubbles included).
"""

from __future__ import annotations

from collections import deque

from amaranth import Elaboratable, Module, Mux, Signal

from fanns.numerics import sentinel


def settle_cycles(s: int) -> int:
    """Idle cycles after the last insert until the array is sorted (see the module docstring)."""
    return max(s - 1, 0)


class SystolicArray:
    """Cycle-level model of the register array: one method call is one clock cycle of the RTL."""

    def __init__(self, s: int, key_bits: int):
        self.s = s
        self.key_bits = key_bits
        self.fill = sentinel(key_bits)
        self.clear()

    # -- state the controllers read -------------------------------------------------------------
    @property
    def ins_ok(self) -> bool:
        """An insert is allowed in this cycle (the previous cycle was not an insert)."""
        return not self.prev_insert

    @property
    def settled(self) -> bool:
        return self.since >= settle_cycles(self.s)

    @property
    def head(self) -> int:
        """The output end r[s-1]: the smallest key once settled."""
        return self.r[-1]

    @property
    def worst(self) -> int:
        """r[0]: the largest kept key whenever `ins_ok`."""
        return self.r[0]

    # -- one clock cycle each -------------------------------------------------------------------
    def clear(self) -> None:
        self.r = [self.fill] * self.s
        self.prev_insert = False
        self.next_even = True
        self.since = settle_cycles(self.s)

    def insert(self, key: int) -> None:
        """A replace; the sentinel (an end marker that changes no key) may come in any cycle."""
        if self.prev_insert and key != self.fill:
            raise RuntimeError("insert in the cycle after an insert (II is 2)")
        self.r[0] = min(self.r[0], int(key))
        self._swap(1)
        self.prev_insert, self.next_even, self.since = True, True, 0

    def idle(self) -> None:
        self._swap(0 if self.next_even else 1)
        self.next_even = not self.next_even
        self.prev_insert = False
        self.since = min(self.since + 1, settle_cycles(self.s))

    def shift(self) -> int:
        if not self.settled:
            raise RuntimeError("shift before the array settled")
        out = self.r[-1]
        self.r = [self.fill] + self.r[:-1]
        self.prev_insert = False
        return out

    def _swap(self, first: int) -> None:
        r = self.r
        for i in range(first, self.s - 1, 2):
            if r[i] < r[i + 1]:
                r[i], r[i + 1] = r[i + 1], r[i]


def zero_one_check(s: int, with_pops: bool = False) -> dict:
    """Exhaustively verify the schedule on 0/1 keys (module docstring); returns what it found.

    Explores every reachable state (array bits, phase, settle counter) under every arrival pattern:
    insert 0 (when allowed), insert 1 (the sentinel: in any cycle), idle and, with `with_pops`, pop
    (shift, when settled). Checks (a) a replace never drops a 0 while a 1 is kept (the array keeps
    the s smallest), (b) r[0] is the maximum whenever an insert is allowed, (c) the array is sorted
    whenever it is settled. Returns {"states": n, "settle": worst-case idle cycles to sorted}.
    """
    start = SystolicArray(s, 1)
    start_state = _state(start)
    seen = {start_state}
    todo = deque([start_state])
    settle = 0
    while todo:
        state = todo.popleft()
        arr = _restore(s, state)
        r = arr.r
        if arr.settled and r != sorted(r, reverse=True):
            raise AssertionError(f"s={s}: settled but unsorted {r}")
        moves = [("idle", None), ("insert", 1)]  # the sentinel (1) may be inserted in any cycle
        if arr.ins_ok:
            if r[0] != max(r):
                raise AssertionError(f"s={s}: r[0] is not the maximum of {r} when an insert is allowed")
            moves.append(("insert", 0))
        if with_pops and arr.settled:
            moves.append(("shift", None))
        for op, key in moves:
            nxt = _restore(s, state)
            if op == "insert":
                nxt.insert(key)
                if key == 0 and 1 in r and nxt.r.count(0) == r.count(0):
                    raise AssertionError(f"s={s}: inserting 0 into {r} dropped a 0")
                settle = max(settle, _cycles_to_sorted(nxt))
            else:
                getattr(nxt, op)()
            new = _state(nxt)
            if new not in seen:
                seen.add(new)
                todo.append(new)
    return {"states": len(seen), "settle": settle}


def _state(arr: SystolicArray) -> tuple:
    return (tuple(arr.r), arr.prev_insert, arr.next_even, arr.since)


def _restore(s: int, state: tuple) -> SystolicArray:
    arr = SystolicArray(s, 1)
    arr.r, arr.prev_insert, arr.next_even, arr.since = list(state[0]), *state[1:]
    return arr


def _cycles_to_sorted(arr: SystolicArray) -> int:
    probe = _restore(arr.s, _state(arr))
    n = 0
    while probe.r != sorted(probe.r, reverse=True):
        probe.idle()
        n += 1
    return n


class SystolicCore(Elaboratable):
    """The register array in Amaranth (same cycle behaviour as `SystolicArray`).

    Inputs (one operation per cycle; the controller guarantees `insert` only when `ins_ok`, and
    `shift` only when `settled`): `insert` with `key`, `shift`, `clear`. `clear` wins over the
    others. Outputs: `ins_ok`, `settled`, `head` (r[s-1]), `worst` (r[0]).
    """

    def __init__(self, s: int, key_bits: int):
        self.s = s
        self.key_bits = key_bits
        self.insert = Signal()
        self.key = Signal(key_bits)
        self.shift = Signal()
        self.clear = Signal()
        self.ins_ok = Signal()
        self.settled = Signal()
        self.head = Signal(key_bits)
        self.worst = Signal(key_bits)

    def elaborate(self, platform):
        m = Module()
        s, fill = self.s, sentinel(self.key_bits)
        settle = settle_cycles(s)
        r = [Signal(self.key_bits, init=fill, name=f"r{i}") for i in range(s)]
        prev_insert = Signal()
        next_even = Signal(init=1)
        m.d.comb += [
            self.ins_ok.eq(~prev_insert),
            self.head.eq(r[-1]),
            self.worst.eq(r[0]),
        ]

        # Which pairs are active: odd pairs on inserts and odd idle cycles, even pairs on even idle cycles.
        even_cycle, odd_cycle = Signal(), Signal()
        idle = Signal()
        m.d.comb += [
            idle.eq(~self.insert & ~self.shift),
            even_cycle.eq(idle & next_even),
            odd_cycle.eq(self.insert | (idle & ~next_even)),
        ]
        # One comparator per pair: swap when the left key is smaller.
        swap = []
        for i in range(s - 1):
            active = even_cycle if i % 2 == 0 else odd_cycle
            sw = Signal(name=f"swap{i}")
            m.d.comb += sw.eq(active & (r[i] < r[i + 1]))
            swap.append(sw)

        with m.If(self.clear):
            m.d.sync += [reg.eq(fill) for reg in r]
        with m.Else():
            for i in range(s):
                # r[i] takes its left neighbour on a shift or a swap of pair (i-1, i), its right
                # neighbour on a swap of pair (i, i+1), otherwise keeps (r[0]: or takes the key).
                take_left = self.shift | swap[i - 1] if i > 0 else self.shift
                left = r[i - 1] if i > 0 else fill
                keep = Mux(self.insert & (self.key < r[0]), self.key, r[0]) if i == 0 else r[i]
                with m.If(take_left):
                    m.d.sync += r[i].eq(left)
                if i < s - 1:
                    with m.Elif(swap[i]):
                        m.d.sync += r[i].eq(r[i + 1])
                with m.Else():
                    m.d.sync += r[i].eq(keep)

        # Phase and settle counter.
        with m.If(self.clear):
            m.d.sync += [prev_insert.eq(0), next_even.eq(1)]
        with m.Elif(self.insert):
            m.d.sync += [prev_insert.eq(1), next_even.eq(1)]
        with m.Elif(self.shift):
            m.d.sync += prev_insert.eq(0)
        with m.Else():
            m.d.sync += [prev_insert.eq(0), next_even.eq(~next_even)]
        if settle == 0:
            m.d.comb += self.settled.eq(1)
        else:
            since = Signal(range(settle + 1), init=settle)
            m.d.comb += self.settled.eq(since == settle)
            with m.If(self.clear):
                m.d.sync += since.eq(settle)
            with m.Elif(self.insert):
                m.d.sync += since.eq(0)
            with m.Elif(~self.shift & (since != settle)):
                m.d.sync += since.eq(since + 1)
        return m


class QueueUnit(Elaboratable):
    """A systolic array with the per-query control of a selection queue (used by `systolic_pq`,
    and by HPQ/AHPQ for every level-1 and the level-2 queue).

    Filling: `in_ready` (= `ins_ok` while filling); the producer strobes `in_valid` with `in_key`
    (only when `in_ready`) and `in_end` on the query's final input. `in_end` may also come alone
    (no key: a sibling of a split stream); it then acts as an insert of the sentinel, which changes
    no key, so every unit settles exactly SETTLE cycles after its end. After the end the unit
    waits until settled, then offers its s keys ascending on `out_*` (valid/ready; `out_last` on
    the s-th), shifting one per transfer; after the s-th it is all sentinels and filling again.
    """

    def __init__(self, s: int, key_bits: int):
        self.s = s
        self.key_bits = key_bits
        self.in_valid = Signal()
        self.in_key = Signal(key_bits)
        self.in_end = Signal()
        self.in_ready = Signal()
        self.filling = Signal()
        self.out_valid = Signal()
        self.out_ready = Signal()
        self.out_key = Signal(key_bits)
        self.out_last = Signal()

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = SystolicCore(self.s, self.key_bits)
        draining = Signal()
        count = Signal(range(max(self.s, 2)))
        m.d.comb += [
            self.filling.eq(~draining),
            self.in_ready.eq(~draining & core.ins_ok),
            core.insert.eq(~draining & (self.in_valid | self.in_end)),
            core.key.eq(Mux(self.in_valid, self.in_key, sentinel(self.key_bits))),
            self.out_valid.eq(draining & core.settled),
            self.out_key.eq(core.head),
            self.out_last.eq(count == self.s - 1),
            core.shift.eq(self.out_valid & self.out_ready),
        ]
        with m.If(~draining & self.in_end):
            m.d.sync += draining.eq(1)
        with m.If(core.shift):
            with m.If(self.out_last):
                m.d.sync += [count.eq(0), draining.eq(0)]
            with m.Else():
                m.d.sync += count.eq(count + 1)
        return m
