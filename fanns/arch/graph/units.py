"""The fetch side of a Falcon QPP in Amaranth: the neighbour-list dispatcher and the BFC units.

* `Dispatcher`: takes the controller's tokens in order. CAND issues the read of the candidate's
  whole adjacency row (node i: channel i % C, row i // C; docs/graph_architecture.md) on the list
  master; ENTRY, GROUP_END and QUERY_END wait in a side FIFO, in order with the rows. Dispatch:
  every cycle each BFC unit u takes, from the current beat of ids, the first id with
  ``id % U == u`` it has not taken yet (lane 0 of a row's first beat is the degree word;
  padding ids are skipped), so a beat costs max(1, max_u ids of unit u) cycles and every unit
  sees its ids in list order. ENTRY goes to its unit; GROUP_END and QUERY_END to every unit.
* `BfcUnit`: token FIFO -> Bloom PE (test-and-set) with an order FIFO beside it for the tokens
  that bypass the filter -> for a new id, one vector read on the unit's master and a pending
  record -> `VectorWords` (beats to the distance PE's words) -> `l2dist` PE -> pairing of every
  distance with its pending record -> output {key = dist << 32 | id, entry} or the group-end
  marker. QUERY_END passes the Bloom PE as its `last` id (the filter clears itself afterwards)
  and the distance PE as a zero vector with `last` (which returns it to loading the next query);
  both of those outputs are dropped, and `qend` pulses when the unit has finished the query.
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from fanns.design.graph_hw import (
    ADDR_BITS,
    KIND_CHECK,
    KIND_ENTRY,
    KIND_GROUP_END,
    KIND_QUERY_END,
    PAD_ID,
    UNIT_FIFO_DEPTH,
    QppHw,
    token_layout,
    unit_out_layout,
)
from fanns.hdl.bus import axi4_signature
from fanns.numerics import ID_BITS
from fanns.pe.axi_reader import word_layout


def wire_master(m: Module, outer, inner) -> None:
    """Connect a sub-component's AXI master port to the same members of an outer port."""
    for name, member in inner.signature.members.items():
        o, i = getattr(outer, name), getattr(inner, name)
        m.d.comb += o.eq(i) if member.flow == Out else i.eq(o)


def channel_address(m: Module, hw: QppHw, node, bases: list, row_bytes: int) -> Signal:
    """Byte address of `node`'s row in the image of its channel (node % C at row node // C)."""
    shift = exact_log2(hw.channels)
    addr = Signal(ADDR_BITS, name="row_addr")
    base = Array(bases)[node[:shift]] if shift else bases[0]
    m.d.comb += addr.eq(base + (node >> shift) * row_bytes)
    return addr


class Dispatcher(wiring.Component):
    """Neighbour-list fetch and dispatch to the BFC units (see the module docstring)."""

    def __init__(self, hw: QppHw):
        self.hw = hw
        members = {
            "cmd": In(stream.Signature(token_layout())),
            "m_axi": Out(axi4_signature(ADDR_BITS, hw.port_bits, write=False)),
            "checks": Out(32),
            "clear": In(1),
            "error": Out(1),
        }
        members |= {f"base{c}": In(ADDR_BITS) for c in range(hw.channels)}
        members |= {f"u{u}": Out(stream.Signature(token_layout())) for u in range(hw.units)}
        super().__init__(members)

    def elaborate(self, platform):
        hw = self.hw
        m = Module()
        m.submodules.reader = rd = hw.list_reader.instance()
        wire_master(m, self.m_axi, rd.m_axi)
        m.d.comb += self.error.eq(rd.error)
        m.submodules.side = side = SyncFIFO(width=token_layout().size, depth=hw.cmd_depth)

        # Intake: one token per cycle; CAND also issues its row read.
        cmd = self.cmd.payload
        is_cand = cmd.kind == KIND_CHECK
        m.d.comb += [
            rd.cmd.valid.eq(self.cmd.valid & is_cand & side.w_rdy),
            rd.cmd.payload.addr.eq(
                channel_address(m, hw, cmd.id, [getattr(self, f"base{c}") for c in range(hw.channels)], hw.row_bytes)
            ),
            rd.cmd.payload.len.eq(hw.row_bytes),
            self.cmd.ready.eq(side.w_rdy & (~is_cand | rd.cmd.ready)),
            side.w_data.eq(cmd),
            side.w_en.eq(self.cmd.valid & self.cmd.ready),
        ]

        head = data.View(token_layout(), side.r_data)
        outs = [getattr(self, f"u{u}") for u in range(hw.units)]
        ubits = exact_log2(hw.units)
        sent = Signal(hw.units)  # broadcast tokens: units that already took the head
        taken = Signal(hw.units)  # units taking an item this cycle

        # Row beats: lanes of 32-bit ids; `used` marks lanes already dispatched.
        lanes = hw.ids_per_beat
        first = Signal(init=1)
        used = Signal(lanes)
        beat = rd.o.payload.data
        ids = [beat[32 * j : 32 * (j + 1)] for j in range(lanes)]
        live = Signal(lanes)
        m.d.comb += live.eq(Cat(*((ids[j] != PAD_ID) & ~(first & (j == 0)) & ~used[j] for j in range(lanes))))
        row_mode = side.r_rdy & (head.kind == KIND_CHECK) & rd.o.valid
        fired = []  # per unit: the lane it takes this cycle (one-hot), when any
        count = Signal(range(hw.units + 1))
        for u, out in enumerate(outs):
            match = Cat(*(live[j] & ((ids[j][:ubits] == u) if ubits else Const(1)) for j in range(lanes)))
            pick = Signal(lanes, name=f"pick{u}")
            m.d.comb += pick.eq(match & (~match + 1))  # lowest set bit
            lane_id = Signal(ID_BITS, name=f"lane_id{u}")
            for j in range(lanes):
                with m.If(pick[j]):
                    m.d.comb += lane_id.eq(ids[j])
            bcast = side.r_rdy & ((head.kind == KIND_GROUP_END) | (head.kind == KIND_QUERY_END))
            entry = side.r_rdy & (head.kind == KIND_ENTRY) & ((head.id[:ubits] == u) if ubits else Const(1))
            with m.If(row_mode):
                m.d.comb += [out.valid.eq(match.any()), out.payload.kind.eq(KIND_CHECK), out.payload.id.eq(lane_id)]
            with m.Elif(entry):
                m.d.comb += [out.valid.eq(1), out.payload.kind.eq(KIND_ENTRY), out.payload.id.eq(head.id)]
            with m.Elif(bcast):
                m.d.comb += [out.valid.eq(~sent[u]), out.payload.kind.eq(head.kind), out.payload.id.eq(head.id)]
            m.d.comb += taken[u].eq(out.valid & out.ready)
            fired.append(Mux(taken[u] & row_mode, pick, 0))
        took_lanes = Signal(lanes)
        acc = Const(0, lanes)
        for f in fired:
            acc = acc | f
        m.d.comb += took_lanes.eq(acc)
        m.d.comb += count.eq(sum(taken[u] for u in range(hw.units)))

        is_bcast = (head.kind == KIND_GROUP_END) | (head.kind == KIND_QUERY_END)
        with m.If(row_mode):
            beat_done = (live & ~took_lanes) == 0
            m.d.comb += rd.o.ready.eq(beat_done)
            with m.If(beat_done):
                m.d.sync += [used.eq(0), first.eq(rd.o.payload.last)]
                m.d.comb += side.r_en.eq(rd.o.payload.last)
            with m.Else():
                m.d.sync += used.eq(used | took_lanes)
        with m.Elif(side.r_rdy & (head.kind == KIND_ENTRY)):
            m.d.comb += side.r_en.eq(taken.any())
        with m.Elif(side.r_rdy & is_bcast):
            all_in = (sent | taken) == (1 << hw.units) - 1
            m.d.comb += side.r_en.eq(all_in)
            m.d.sync += sent.eq(Mux(all_in, 0, sent | taken))

        with m.If(self.clear):
            m.d.sync += self.checks.eq(0)
        with m.Elif(row_mode | (side.r_rdy & (head.kind == KIND_ENTRY))):
            m.d.sync += self.checks.eq(self.checks + count)
        return m


class VectorWords(wiring.Component):
    """Bus beats of one vector (or a zero vector, for `cmd.dummy`) to the distance PE's words.

    Collects the vector's beats (`vector_beats` of them), hands the whole vector to the emitter
    (one cycle), which sends its d/w words of w elements; `last` on the final word of a dummy.
    Collection and emission overlap, so a vector costs max(beats, d/w) cycles in steady state.
    """

    def __init__(self, hw: QppHw):
        self.hw = hw
        pe = hw.l2dist
        word = data.ArrayLayout(pe.elem_shape, pe.w)
        super().__init__(
            {
                "beats": In(stream.Signature(word_layout(hw.port_bits))),
                "cmd": In(stream.Signature(data.StructLayout({"dummy": 1}))),
                "o": Out(stream.Signature(data.StructLayout({"data": word, "last": 1}))),
            }
        )

    def elaborate(self, platform):
        hw = self.hw
        pe = hw.l2dist
        m = Module()
        nb, words = hw.vector_beats, pe.words
        word_bits = pe.w * pe.vec_bits
        buf = Signal(nb * hw.port_bits)
        got = Signal(range(nb + 1))
        full = Signal()
        ebuf = Signal(words * word_bits)
        e_valid, e_last = Signal(), Signal()
        e_idx = Signal(range(max(2, words)))
        e_free = Signal()
        m.d.comb += e_free.eq(~e_valid | (self.o.ready & (e_idx == words - 1)))

        # Emitter.
        m.d.comb += [
            self.o.valid.eq(e_valid),
            self.o.payload.data.eq(Array(ebuf[j * word_bits : (j + 1) * word_bits] for j in range(words))[e_idx]),
            self.o.payload.last.eq(e_last & (e_idx == words - 1)),
        ]
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += e_idx.eq(Mux(e_idx == words - 1, 0, e_idx + 1))
            with m.If(e_idx == words - 1):
                m.d.sync += e_valid.eq(0)

        # Hand-over: a full buffer (or a dummy) to the emitter.
        dummy = self.cmd.valid & self.cmd.payload.dummy
        hand = Signal()
        m.d.comb += hand.eq(e_free & self.cmd.valid & (full | self.cmd.payload.dummy))
        with m.If(hand):
            m.d.sync += [e_valid.eq(1), e_last.eq(self.cmd.payload.dummy), e_idx.eq(0)]
            m.d.sync += ebuf.eq(Mux(dummy, 0, buf[: words * word_bits]))
            with m.If(~dummy):
                m.d.sync += [full.eq(0), got.eq(0)]
        m.d.comb += self.cmd.ready.eq(hand)

        # Collector: beats of the head command's vector.
        accept = Signal()
        m.d.comb += [
            accept.eq(self.beats.valid & self.beats.ready),
            self.beats.ready.eq(self.cmd.valid & ~self.cmd.payload.dummy & (~full | hand)),
        ]
        with m.If(accept):
            for j in range(nb):
                with m.If(Mux(hand, 0, got) == j):
                    m.d.sync += buf[j * hw.port_bits : (j + 1) * hw.port_bits].eq(self.beats.payload.data)
            with m.If(Mux(hand, 0, got) == nb - 1):
                m.d.sync += [full.eq(1), got.eq(nb)]
            with m.Else():
                m.d.sync += got.eq(Mux(hand, 1, got + 1))
        return m


class BfcUnit(wiring.Component):
    """One Bloom-fetch-compute unit (see the module docstring)."""

    def __init__(self, hw: QppHw):
        self.hw = hw
        pe = hw.l2dist
        members = {
            "tok": In(stream.Signature(token_layout())),
            "q": In(stream.Signature(data.ArrayLayout(pe.elem_shape, pe.w))),
            "o": Out(stream.Signature(unit_out_layout(hw.key_bits))),
            "m_axi": Out(axi4_signature(ADDR_BITS, hw.port_bits, write=False)),
            "qend": Out(1),
            "idle": Out(1),
            "error": Out(1),
        }
        members |= {f"base{c}": In(ADDR_BITS) for c in range(hw.channels)}
        super().__init__(members)

    def elaborate(self, platform):
        hw = self.hw
        m = Module()
        tl = token_layout()
        m.submodules.tokens = tokens = SyncFIFO(width=tl.size, depth=UNIT_FIFO_DEPTH)
        m.submodules.order = order = SyncFIFO(width=tl.size, depth=UNIT_FIFO_DEPTH)
        m.submodules.bloom = bloom = hw.bloom.instance()
        m.submodules.reader = rd = hw.vector_reader.instance()
        m.submodules.words = vw = VectorWords(hw)
        m.submodules.dist = dist = hw.l2dist.instance()
        pend_layout = data.StructLayout({"kind": 2, "id": ID_BITS})
        m.submodules.pending = pending = SyncFIFO(width=pend_layout.size, depth=hw.pending_depth)
        m.submodules.fcmd = fcmd = SyncFIFO(width=1, depth=hw.pending_depth)
        m.submodules.out = out = SyncFIFO(width=unit_out_layout(hw.key_bits).size, depth=hw.out_depth)
        wire_master(m, self.m_axi, rd.m_axi)
        m.d.comb += self.error.eq(rd.error)

        # Tokens in.
        m.d.comb += [
            tokens.w_data.eq(self.tok.payload),
            tokens.w_en.eq(self.tok.valid),
            self.tok.ready.eq(tokens.w_rdy),
        ]

        # Front: checks into the Bloom filter, every token into the order FIFO.
        th = data.View(tl, tokens.r_data)
        bypass = th.kind == KIND_GROUP_END
        front = Signal()
        m.d.comb += [
            bloom.i.valid.eq(tokens.r_rdy & ~bypass & order.w_rdy),
            bloom.i.payload.id.eq(th.id),
            bloom.i.payload.last.eq(th.kind == KIND_QUERY_END),
            front.eq(tokens.r_rdy & order.w_rdy & (bypass | bloom.i.ready)),
            tokens.r_en.eq(front),
            order.w_data.eq(tokens.r_data),
            order.w_en.eq(front),
        ]

        # Merge: pair the Bloom results with the order FIFO; issue vector reads.
        oh = data.View(tl, order.r_data)
        is_ge, is_qe = oh.kind == KIND_GROUP_END, oh.kind == KIND_QUERY_END
        looked = order.r_rdy & ~is_ge & bloom.o.valid
        new = looked & ~is_qe & ~bloom.o.payload.visited
        room = pending.w_rdy & fcmd.w_rdy
        fire = Signal()
        with m.If(order.r_rdy & is_ge):
            m.d.comb += fire.eq(pending.w_rdy)
        with m.Elif(looked & is_qe):
            m.d.comb += fire.eq(room)
        with m.Elif(new):
            m.d.comb += fire.eq(room & rd.cmd.ready)
        with m.Elif(looked):
            m.d.comb += fire.eq(1)  # visited: dropped
        pv = data.View(pend_layout, pending.w_data)
        m.d.comb += [
            order.r_en.eq(fire),
            bloom.o.ready.eq(fire & ~is_ge),
            rd.cmd.valid.eq(new & room),
            rd.cmd.payload.addr.eq(
                channel_address(
                    m, hw, oh.id, [getattr(self, f"base{c}") for c in range(hw.channels)], hw.design.vector_row_bytes
                )
            ),
            rd.cmd.payload.len.eq(hw.vector_bytes),
            pv.kind.eq(oh.kind),
            pv.id.eq(oh.id),
            pending.w_en.eq(fire & (is_ge | is_qe | new)),
            fcmd.w_data.eq(is_qe),
            fcmd.w_en.eq(fire & (is_qe | new)),
        ]

        # Vector words into the distance PE.
        wiring.connect(m, rd.o, vw.beats)
        m.d.comb += [vw.cmd.valid.eq(fcmd.r_rdy), vw.cmd.payload.dummy.eq(fcmd.r_data), fcmd.r_en.eq(vw.cmd.ready)]
        wiring.connect(m, vw.o, dist.x)
        wiring.connect(m, wiring.flipped(self.q), dist.q)

        # Pairing: every distance with its pending record, markers in order.
        ph = data.View(pend_layout, pending.r_data)
        p_ge = ph.kind == KIND_GROUP_END
        p_qe = ph.kind == KIND_QUERY_END
        ov = data.View(unit_out_layout(hw.key_bits), out.w_data)
        take = Signal()
        with m.If(pending.r_rdy & p_ge):
            m.d.comb += take.eq(out.w_rdy)
        with m.Elif(pending.r_rdy & p_qe):
            m.d.comb += take.eq(dist.o.valid)
        with m.Elif(pending.r_rdy):
            m.d.comb += take.eq(dist.o.valid & out.w_rdy)
        m.d.comb += [
            pending.r_en.eq(take),
            dist.o.ready.eq(take & ~p_ge),
            ov.key.eq(Cat(ph.id, dist.o.payload.dist)),
            ov.entry.eq(ph.kind == KIND_ENTRY),
            ov.group_end.eq(p_ge),
            out.w_en.eq(take & ~p_qe),
            self.qend.eq(take & p_qe),
            self.o.valid.eq(out.r_rdy),
            self.o.payload.eq(out.r_data),
            out.r_en.eq(self.o.ready),
            self.idle.eq(bloom.i.ready & ~tokens.r_rdy),
        ]
        return m
