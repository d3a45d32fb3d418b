"""Channel feeder of the IVF-PQ accelerator: one PQ-code channel's beats to its PEs' item streams.

A list arrives unit by unit (`codes_per_unit`, `beats_per_unit`: a unit is one code beat of up to
`codes_per_unit` codes, or — for codes wider than a beat — the `beats_per_unit` consecutive beats
of one code, zero padded); for every unit, each PE of the channel in turn gets its unit, preceded
by its next id beat when the unit is the first to need it (`fanns.images.ivfpq.PqLayout.schedule`:
ids arrive just in time). The beats of a multi-beat unit are gathered in one shift register of
(`beats_per_unit` - 1) beats shared by the channel's PEs (a unit's beats are consecutive) and
written into the PE's code FIFO with the last one. Each PE has a two-entry id FIFO and a
two-entry code FIFO, so the channel moves one beat per cycle while the PE's assembler emits one
item per cycle: code i of the head unit with the next id of the head id beat (popped when used
up or at the end of the share), `pad` when the id is the packer's padding id, `last_cell` on
the share's final item. An empty list reads no beat; each PE gets one padding item for it
(pq_decode needs at least one item per cell). In a tiered design the feeder has a second beat
input, the paired fast-tier channel's reader, and takes a cell's beats from the input its
descriptor's `tier` names. No HLS header: the HLS kernel's scan loop reads codes and ids from
its own streams.

Timing: each PE's items leave one per cycle (II = 1 item) once its beats are in; the first item
of a cell leaves 3 cycles after its id beat (L = 3); a channel moves one beat per cycle, so a
wide code takes `beats_per_unit` channel cycles. Resources: per PE, the two FIFOs and the code
and id selects; the shared gather register; a sequencer of 32-bit counters per channel; the tier
input select.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from fanns.numerics import ID_BITS
from fanns.pe.axi_reader import word_layout
from fanns.pe.base import PE
from fanns.pe.fetcher import FIELD_BITS, desc_layout
from fanns.pe.glue_streams import select_luts

PAD_ID = (1 << ID_BITS) - 1
"""The packer's padding id (`fanns.images.ivfpq.PAD_ID`)."""


def codes_per_unit(m: int, port_bits: int) -> int:
    """Codes of one code unit: as many m-byte codes as fill a beat, but no more than the beat's
    32-bit ids (so a unit needs at most one new id beat: m < 4 leaves bytes of the beat unused),
    and 1 for codes wider than a beat. The rule the packer (`PqLayout`), the model (`Packing`)
    and the HLS kernel (`PqPattern`) share."""
    return max(1, min(port_bits // 8 // m, port_bits // ID_BITS))


def beats_per_unit(m: int, port_bits: int) -> int:
    """Beats of one code unit: ceil(8m / port_bits), 1 when codes fit a beat."""
    return -(-8 * m // port_bits)


def item_layout(m: int) -> data.StructLayout:
    """A PQDist code item, exactly the `codes` payload of `pq_decode`."""
    return data.StructLayout(
        {"codes": data.ArrayLayout(8, m), "id": ID_BITS, "pad": 1, "last_cell": 1, "last_query": 1}
    )


@dataclass(frozen=True)
class ChannelFeeder(PE):
    """Beats of one `port_bits` channel to `pes` item streams of `m`-byte codes."""

    m: int = 16
    port_bits: int = 512
    pes: int = 1
    tiered: bool = False

    name: ClassVar[str] = "channel_feeder"
    summary: ClassVar[str] = "one channel's id and code beats to its PEs' item streams, one item per PE per cycle"
    timing_formula: ClassVar[str] = "L = 3; II = 1 item per PE"
    calibration_points: ClassVar[tuple] = (
        {"m": 8, "port_bits": 512, "pes": 1},
        {"m": 8, "port_bits": 512, "pes": 2},
        {"m": 16, "port_bits": 512, "pes": 4},
        {"m": 32, "port_bits": 256, "pes": 2},
        {"m": 8, "port_bits": 128, "pes": 3},
        {"m": 16, "port_bits": 512, "pes": 2, "tiered": True},
        {"m": 64, "port_bits": 256, "pes": 2},
        {"m": 96, "port_bits": 128, "pes": 1},
        {"m": 2, "port_bits": 256, "pes": 2},
    )

    def validate(self) -> None:
        self.require(self.m >= 1, f"m={self.m} must be positive")
        self.require(self.port_bits >= 64 and self.port_bits % 64 == 0, f"port_bits={self.port_bits}: a multiple of 64")
        self.require(self.pes >= 1, f"pes={self.pes} must be positive")

    @property
    def codes_per_unit(self) -> int:
        """Codes of one code unit (`codes_per_unit`)."""
        return codes_per_unit(self.m, self.port_bits)

    @property
    def beats_per_unit(self) -> int:
        return beats_per_unit(self.m, self.port_bits)

    @property
    def gather_bits(self) -> int:
        """The shift register holding a multi-beat unit's first beats (0 when a code fits a beat)."""
        return (self.beats_per_unit - 1) * self.port_bits

    @property
    def ids_per_beat(self) -> int:
        return self.port_bits // ID_BITS

    @property
    def entry_bits(self) -> int:
        """A code FIFO entry: a unit's codes and the cend, lastq, empty flags."""
        return self.codes_per_unit * 8 * self.m + 3

    def latency(self) -> int:
        return 3

    def ii(self) -> int:
        return 1

    def resource_features(self) -> dict[str, float]:
        per_pe_select = select_luts(8 * self.m, self.codes_per_unit) + select_luts(ID_BITS, self.ids_per_beat)
        return {
            "fifo_bits": self.pes * (self.port_bits + self.entry_bits),
            "select_luts": self.pes * per_pe_select,
            "pes": self.pes,
            "tier_bits": self.port_bits if self.tiered else 0,
            "gather_bits": self.gather_bits,
        }

    def component(self) -> wiring.Component:
        return ChannelFeederComponent(self)


class ChannelFeederComponent(wiring.Component):
    """One channel's beats to its PEs' item streams (see the module docstring)."""

    PH_ID, PH_CODE, PH_EMPTY = 0, 1, 2

    def __init__(self, pe: ChannelFeeder):
        self.pe = pe
        self.pes = pe.pes
        ports = {
            "beats": In(stream.Signature(word_layout(pe.port_bits))),
            "desc": In(stream.Signature(desc_layout())),
        }
        if pe.tiered:  # the paired fast-tier channel's beats; a cell's descriptor names its tier
            ports["hot_beats"] = In(stream.Signature(word_layout(pe.port_bits)))
        ports |= {f"items{i}": Out(stream.Signature(item_layout(pe.m))) for i in range(pe.pes)}
        super().__init__(ports)

    def elaborate(self, platform):
        n = self.pes
        entry = data.StructLayout({"data": self.pe.entry_bits - 3, "cend": 1, "lastq": 1, "empty": 1})
        m = Module()
        idf = [SyncFIFO(width=self.pe.port_bits, depth=2) for _ in range(n)]
        codef = [SyncFIFO(width=entry.size, depth=2) for _ in range(n)]
        for i in range(n):
            m.submodules[f"id_fifo{i}"] = idf[i]
            m.submodules[f"code_fifo{i}"] = codef[i]
        self._sequencer(m, idf, codef, entry)
        for i in range(n):
            self._assembler(m, idf[i], codef[i], entry, getattr(self, f"items{i}"))
        return m

    def _sequencer(self, m: Module, idf, codef, entry) -> None:
        """Route each beat of the current list to the id or code FIFO of its PE (`PqLayout.schedule`)."""
        n = self.pes
        ipu, ipb = self.pe.codes_per_unit, self.pe.ids_per_beat
        fb = FIELD_BITS
        active, lastq, tier = Signal(), Signal(), Signal()
        phase = Signal(2)
        q = Signal(range(max(2, n)))
        # items of a share; first item of this unit / of the next id beat
        share, pos, idp = Signal(fb), Signal(fb), Signal(fb)
        need_id, unit_last = Signal(), Signal()
        m.d.comb += [need_id.eq(idp < pos + ipu), unit_last.eq(pos + ipu == share)]

        last_pe = q == n - 1
        bpu = self.pe.beats_per_unit
        beat = Signal(range(max(2, bpu)))  # beat of the current multi-beat unit
        beat_last = Signal()
        m.d.comb += beat_last.eq(beat == bpu - 1)
        w_rdy = Signal()
        m.d.comb += w_rdy.eq(
            Mux(
                phase == self.PH_ID,
                Cat(*(f.w_rdy for f in idf)).bit_select(q, 1),
                Cat(*(f.w_rdy for f in codef)).bit_select(q, 1) | ((phase == self.PH_CODE) & ~beat_last),
            )
        )
        empty = phase == self.PH_EMPTY
        move = Signal()
        src = self.beats.signature.create()  # the beats of the current cell's tier
        take = active & ~empty & w_rdy
        if self.pe.tiered:
            hot = self.hot_beats
            m.d.comb += [
                src.valid.eq(Mux(tier, hot.valid, self.beats.valid)),
                src.payload.eq(Mux(tier, hot.payload, self.beats.payload)),
                self.beats.ready.eq(take & ~tier),
                hot.ready.eq(take & tier),
            ]
        else:
            m.d.comb += [src.valid.eq(self.beats.valid), src.payload.eq(self.beats.payload), self.beats.ready.eq(take)]
        m.d.comb += move.eq(active & w_rdy & (empty | src.valid))
        code = Signal(entry)
        if bpu > 1:  # the unit's first beats, oldest at the low end
            gather = Signal(self.pe.gather_bits)
            with m.If(move & (phase == self.PH_CODE) & ~beat_last):
                m.d.sync += gather.eq(Cat(gather[self.pe.port_bits :], src.payload.data))
            m.d.comb += code.data.eq(Cat(gather, src.payload.data)[: entry.size - 3])
        else:
            m.d.comb += code.data.eq(src.payload.data[: entry.size - 3])
        m.d.comb += [
            code.cend.eq(unit_last | empty),
            code.lastq.eq(lastq),
            code.empty.eq(empty),
        ]
        for i in range(n):
            m.d.comb += [
                idf[i].w_data.eq(src.payload.data),
                idf[i].w_en.eq(move & (phase == self.PH_ID) & (q == i)),
                codef[i].w_data.eq(code),
                codef[i].w_en.eq(move & (phase != self.PH_ID) & (q == i) & (beat_last | empty)),
            ]
        next_pos = pos + ipu
        next_idp = idp + Mux(need_id, ipb, 0)
        unit_done = move & (phase == self.PH_CODE) & beat_last & last_pe
        cell_done = Signal()
        m.d.comb += cell_done.eq((unit_done & unit_last) | (move & empty & last_pe))
        with m.If(move):
            with m.Switch(phase):
                with m.Case(self.PH_ID):
                    m.d.sync += phase.eq(self.PH_CODE)
                with m.Case(self.PH_CODE):
                    if bpu > 1:
                        m.d.sync += beat.eq(Mux(beat_last, 0, beat + 1))
                    with m.If(beat_last):  # the unit is in: the next PE's unit, or the next unit
                        m.d.sync += q.eq(Mux(last_pe, 0, q + 1))
                        with m.If(last_pe):
                            m.d.sync += [
                                pos.eq(next_pos),
                                idp.eq(next_idp),
                                phase.eq(Mux(next_idp < next_pos + ipu, self.PH_ID, self.PH_CODE)),
                            ]
                        with m.Else():
                            m.d.sync += phase.eq(Mux(need_id, self.PH_ID, self.PH_CODE))
                with m.Case(self.PH_EMPTY):
                    m.d.sync += q.eq(q + 1)
        with m.If(cell_done):
            m.d.sync += active.eq(0)
        m.d.comb += self.desc.ready.eq(~active | cell_done)
        with m.If(self.desc.valid & self.desc.ready):
            d = self.desc.payload
            m.d.sync += [
                active.eq(1),
                q.eq(0),
                pos.eq(0),
                idp.eq(0),
                share.eq(d.share),
                lastq.eq(d.last),
                tier.eq(d.tier),
                phase.eq(Mux(d.share == 0, self.PH_EMPTY, self.PH_ID)),
            ]

    def _assembler(self, m: Module, idf, codef, entry, out) -> None:
        """Items of the head code beat, one per cycle, each with the next id of the head id beat."""
        ipu, ipb = self.pe.codes_per_unit, self.pe.ids_per_beat
        head = data.View(entry, codef.r_data)
        i = Signal(range(max(2, ipu)))
        slot = Signal(range(max(2, ipb)))
        unit_end, share_end = Signal(), Signal()
        ident = Signal(ID_BITS)
        m.d.comb += [
            unit_end.eq(head.empty | (i == ipu - 1)),
            share_end.eq(head.cend & unit_end),
            ident.eq(Mux(head.empty, Const(PAD_ID, ID_BITS), idf.r_data.word_select(slot, ID_BITS))),
            out.valid.eq(codef.r_rdy & (head.empty | idf.r_rdy)),
            out.payload.codes.eq(head.data.word_select(i, 8 * self.pe.m) if ipu > 1 else head.data),
            out.payload.id.eq(ident),
            out.payload.pad.eq(ident == PAD_ID),
            out.payload.last_cell.eq(share_end),
            out.payload.last_query.eq(share_end & head.lastq),
        ]
        take = out.valid & out.ready
        id_used = ~head.empty & ((slot == ipb - 1) | share_end)
        m.d.comb += [codef.r_en.eq(take & unit_end), idf.r_en.eq(take & id_used)]
        with m.If(take):
            m.d.sync += i.eq(Mux(unit_end, 0, i + 1))
            with m.If(~head.empty):
                m.d.sync += slot.eq(Mux(id_used, 0, slot + 1))
