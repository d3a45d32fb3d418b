"""The control side of a Falcon QPP in Amaranth: DST controller, inserter and the two queues.

Why one component: the controller (Algorithm 2: refill the pipeline after each completed group)
and the inserter (commit a completed group's distances into the queues) never work at the same
time — the inserter takes group g only after the controller synchronised group g-1, and the
controller synchronises g only after the inserter committed it (docs/graph_architecture.md) —
so one state machine owns both systolic queues (`fanns.pe.systolic_queue`):

* C, the candidate queue (`cand` keys): INSERT kept keys, POP candidates.
* R, the result queue (`l_max` slots, keys one bit wider): the run-time size l is made by
  inserting l_max - l *blocked* keys (0, smaller than every real key ``1 << key_bits | key``)
  at the start of a query; they sit at the output end, so Max(R) (the queue's `worst`) is the
  l-th smallest real key, and the final FLUSH skips them.

A query: launch group 0 (tokens ENTRY(entry), CAND(entry), GROUP_END), preload R; then for
every group in launch order: INSERT (latch T = Max(R); from every unit take new keys until its
group-end marker: the entry's key into R only, keys <= T into C and R, others dropped), SYNC
(T = Max(R); while fewer than mg groups are in flight: pop mc candidates from C — the first
that is the sentinel or above T ends the group and the refill, the rest of that round is
discarded, which loses nothing: C is sorted and T never grows — then GROUP_END). When no group
is in flight: FLUSH R (its first k real keys are the result), CLEAR C, QUERY_END to the units.
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from fanns.design.graph_hw import (
    KIND_CAND,
    KIND_ENTRY,
    KIND_GROUP_END,
    KIND_QUERY_END,
    QppHw,
    token_layout,
    unit_out_layout,
)
from fanns.numerics import ID_BITS, sentinel
from fanns.pe.systolic_queue import Op


class QppCore(wiring.Component):
    """Controller, inserter, candidate and result queues of one QPP (see the module docstring)."""

    def __init__(self, hw: QppHw):
        self.hw = hw
        q, lim = hw.design.queues, hw.design.limits
        members = {
            "cmd": Out(stream.Signature(token_layout())),
            "res": Out(stream.Signature(data.StructLayout({"key": hw.key_bits, "last": 1}))),
            "start": In(1),
            "l": In(range(q.l_max + 1)),
            "k": In(range(q.k_max + 1)),
            "mg": In(range(lim.mg_max + 1)),
            "mc": In(range(lim.mc_max + 1)),
            "entry": In(ID_BITS),
            "busy": Out(1),
            "done": Out(1),
            "qe_sent": Out(1),
            "cycles": Out(32),
            "hops": Out(32),
            "visited": Out(32),
            "groups": Out(32),
        }
        members |= {f"u{u}": In(stream.Signature(unit_out_layout(hw.key_bits))) for u in range(hw.units)}
        super().__init__(members)

    def elaborate(self, platform):
        hw = self.hw
        q, lim = hw.design.queues, hw.design.limits
        m = Module()
        m.submodules.cq = cq = hw.cand_queue.instance()
        m.submodules.rq = rq = hw.result_queue.instance()
        m.submodules.cmdf = cmdf = SyncFIFO(width=token_layout().size, depth=hw.cmd_depth)
        m.d.comb += [self.cmd.valid.eq(cmdf.r_rdy), self.cmd.payload.eq(cmdf.r_data), cmdf.r_en.eq(self.cmd.ready)]
        push = data.View(token_layout(), cmdf.w_data)

        l, k, mg, mc, entry = (
            Signal.like(self.l),
            Signal.like(self.k),
            Signal.like(self.mg),
            Signal.like(self.mc),
            Signal(ID_BITS),
        )
        qcycles = Signal(32)
        in_flight = Signal(range(lim.mg_max + 2))
        T = Signal(hw.rkey_bits)
        ended = Signal(hw.units)
        pre = Signal(range(q.l_max + 1))
        issued, recv, taken = (Signal(range(lim.mc_max + 1), name=n) for n in ("issued", "recv", "taken"))
        dead, stop = Signal(), Signal()
        fin = Signal(3)  # FINISH: R flushed, C cleared, QUERY_END sent
        idx = Signal(range(q.l_max + 1))
        c_sentinel = sentinel(hw.key_bits)
        with m.If(self.busy):
            m.d.sync += qcycles.eq(qcycles + 1)
        m.d.comb += [rq.o.ready.eq(1), cq.o.ready.eq(1)]

        units = [getattr(self, f"u{u}") for u in range(hw.units)]
        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [
                        l.eq(self.l),
                        k.eq(self.k),
                        mg.eq(self.mg),
                        mc.eq(self.mc),
                        entry.eq(self.entry),
                        qcycles.eq(1),
                        self.busy.eq(1),
                        in_flight.eq(1),
                        self.hops.eq(1),
                        self.groups.eq(1),
                        self.visited.eq(0),
                    ]
                    m.next = "ENTRY"
            for state, nxt, kind in (
                ("ENTRY", "CAND", KIND_ENTRY),
                ("CAND", "GROUP0_END", KIND_CAND),
                ("GROUP0_END", "PRELOAD", KIND_GROUP_END),
            ):
                with m.State(state):
                    m.d.comb += [push.kind.eq(kind), push.id.eq(entry), cmdf.w_en.eq(1)]
                    with m.If(cmdf.w_rdy):
                        if nxt == "PRELOAD":
                            m.d.sync += pre.eq(q.l_max - l)
                        m.next = nxt
            with m.State("PRELOAD"):
                m.d.comb += [rq.cmd.valid.eq(pre != 0), rq.cmd.payload.op.eq(Op.INSERT), rq.cmd.payload.key.eq(0)]
                with m.If(rq.cmd.valid & rq.cmd.ready):
                    m.d.sync += pre.eq(pre - 1)
                with m.If(pre == 0):
                    m.next = "INS_START"
            with m.State("INS_START"):
                with m.If(rq.worst_valid):
                    m.d.sync += [T.eq(rq.worst), ended.eq(0)]
                    m.next = "INS"
            with m.State("INS"):
                self._insert(m, units, cq, rq, T, ended, in_flight)
            with m.State("SYNC"):
                with m.If(rq.worst_valid):
                    m.d.sync += [T.eq(rq.worst), stop.eq(0)]
                    m.next = "REFILL"
            with m.State("REFILL"):
                m.d.sync += [issued.eq(0), recv.eq(0), taken.eq(0), dead.eq(0)]
                with m.If((in_flight >= mg) | stop):
                    m.next = "SYNC_END"
                with m.Else():
                    m.next = "POP"
            with m.State("POP"):
                m.d.comb += [cq.cmd.valid.eq(issued < mc), cq.cmd.payload.op.eq(Op.POP), cq.o.ready.eq(cmdf.w_rdy)]
                with m.If(cq.cmd.valid & cq.cmd.ready):
                    m.d.sync += issued.eq(issued + 1)
                key = cq.o.payload.key
                ok = ~dead & (key != c_sentinel) & (Cat(key, 1) <= T)
                got = cq.o.valid & cq.o.ready
                m.d.comb += [push.kind.eq(KIND_CAND), push.id.eq(key[:ID_BITS]), cmdf.w_en.eq(got & ok)]
                with m.If(got):
                    m.d.sync += recv.eq(recv + 1)
                    with m.If(ok):
                        m.d.sync += [taken.eq(taken + 1), self.hops.eq(self.hops + 1)]
                    with m.Else():
                        m.d.sync += dead.eq(1)
                    with m.If(recv == mc - 1):
                        with m.If((taken != 0) | ok):
                            m.next = "GROUP_END"
                        with m.Else():
                            m.d.sync += stop.eq(1)
                            m.next = "SYNC_END"
            with m.State("GROUP_END"):
                m.d.comb += [push.kind.eq(KIND_GROUP_END), push.id.eq(0), cmdf.w_en.eq(1)]
                with m.If(cmdf.w_rdy):
                    m.d.sync += [in_flight.eq(in_flight + 1), self.groups.eq(self.groups + 1), stop.eq(dead)]
                    m.next = "REFILL"
            with m.State("SYNC_END"):
                with m.If(in_flight == 0):
                    m.d.sync += [fin.eq(0), idx.eq(0)]
                    m.next = "FINISH"
                with m.Else():
                    m.next = "INS_START"
            with m.State("FINISH"):
                m.d.comb += [
                    rq.cmd.valid.eq(~fin[0]),
                    rq.cmd.payload.op.eq(Op.FLUSH),
                    cq.cmd.valid.eq(~fin[1]),
                    cq.cmd.payload.op.eq(Op.CLEAR),
                    push.kind.eq(KIND_QUERY_END),
                    push.id.eq(0),
                    cmdf.w_en.eq(~fin[2]),
                    self.qe_sent.eq(~fin[2] & cmdf.w_rdy),
                ]
                now = Cat(fin[0] | rq.cmd.ready, fin[1] | cq.cmd.ready, fin[2] | cmdf.w_rdy)
                m.d.sync += fin.eq(now)
                self._drain(m, rq, idx, l, k, qcycles)
                with m.If(now.all()):
                    m.next = "DRAIN"
            with m.State("DRAIN"):
                self._drain(m, rq, idx, l, k, qcycles)
                with m.If(rq.o.valid & rq.o.ready & rq.o.payload.last):
                    m.d.comb += self.done.eq(1)
                    m.d.sync += self.busy.eq(0)
                    m.next = "IDLE"
        return m

    def _insert(self, m: Module, units, cq, rq, T, ended, in_flight) -> None:
        """One cycle of group insertion: take group-end markers of every unit, one new key."""
        hw = self.hw
        ge = Signal(hw.units)
        new = Signal(hw.units)
        for u, port in enumerate(units):
            m.d.comb += [
                ge[u].eq(port.valid & port.payload.group_end & ~ended[u]),
                new[u].eq(port.valid & ~port.payload.group_end & ~ended[u]),
            ]
        sel = Signal(hw.units)
        m.d.comb += sel.eq(new & (~new + 1))  # the lowest unit with a new key
        key, is_entry = Signal(hw.key_bits), Signal()
        for u, port in enumerate(units):
            with m.If(sel[u]):
                m.d.comb += [key.eq(port.payload.key), is_entry.eq(port.payload.entry)]
        rkey = Cat(key, 1)
        kept = rkey <= T
        r_ok, c_ok = rq.cmd.ready, cq.cmd.ready
        any_new = new.any()
        can = Mux(is_entry, r_ok, Mux(kept, r_ok & c_ok, 1))
        take = any_new & can
        m.d.comb += [
            rq.cmd.payload.op.eq(Op.INSERT),
            rq.cmd.payload.key.eq(rkey),
            cq.cmd.payload.op.eq(Op.INSERT),
            cq.cmd.payload.key.eq(key),
            rq.cmd.valid.eq(any_new & (is_entry | kept) & r_ok & (is_entry | c_ok)),
            cq.cmd.valid.eq(any_new & ~is_entry & kept & r_ok & c_ok),
        ]
        for u, port in enumerate(units):
            m.d.comb += port.ready.eq(ge[u] | (sel[u] & take))
        with m.If(take):
            m.d.sync += self.visited.eq(self.visited + 1)
        m.d.sync += ended.eq(ended | ge)
        with m.If((ended | ge).all()):
            m.d.sync += in_flight.eq(in_flight - 1)
            m.next = "SYNC"

    def _drain(self, m: Module, rq, idx, l, k, qcycles) -> None:
        """R's flushed keys: skip the blocked slots, pass the first k real keys to `res`."""
        hw = self.hw
        skip = hw.design.queues.l_max - l
        emit = (idx >= skip) & (idx < skip + k)
        m.d.comb += [
            self.res.valid.eq(rq.o.valid & emit),
            self.res.payload.key.eq(rq.o.payload.key[: hw.key_bits]),
            self.res.payload.last.eq(idx == skip + k - 1),
            rq.o.ready.eq(~emit | self.res.ready),
        ]
        with m.If(rq.o.valid & rq.o.ready):
            m.d.sync += idx.eq(idx + 1)
            with m.If(emit & (idx == skip + k - 1)):
                m.d.sync += self.cycles.eq(qcycles)
