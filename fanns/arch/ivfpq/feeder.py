"""PQ-code fetch of the IVF-PQ accelerator: list tables, per-channel read commands, channel feeders.

The layout is the packer's (`fanns.images.ivfpq.PqLayout`): a PQ channel image starts with a
list table of (start_beat, beats, share_items, count) per list, which every channel's reader
loads on chip at the first run (`table_fill<c>`), then holds the lists.

`Fetcher`: for every probed cell (in probe order) it looks the list up in each channel's table
and sends each PQ-code channel c one read command — the list's `beats` beats from `start_beat`
— and a descriptor {share_items, last} for the channel's feeder.

`ChannelFeeder`: turns a channel's beats back into one item stream per PQDist PE of the channel.
A list arrives unit by unit (a unit is one code beat of `codes_per_unit` codes); for every unit,
each PE of the channel in turn gets its code beat, preceded by its next id beat when the unit is
the first to need it (`PqLayout.schedule`: ids arrive just in time). Each PE has a two-entry id
FIFO and a two-entry code FIFO, so the channel moves one beat per cycle while the PE's
assembler emits one item per cycle: code i of the head code beat with the next id of the head id
beat (popped when used up or at the end of the share), `pad` when the id is the packer's
padding id, `last_cell` on the share's final item. An empty list reads no beat; each PE gets one
padding item for it (pq_decode needs at least one item per cell). In a tiered design each
feeder has a second beat input, the paired fast-tier channel's reader, and takes a cell's beats
from the input its descriptor's `tier` names (both readers run ahead on their own commands, so a
cell waits only for its own tier).
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from fanns.arch.ivfpq.front import cell_layout
from fanns.arch.ivfpq.hw import ADDR_BITS, TABLE_FIELD_BITS, TABLE_RECORD_BITS, IvfPqHw
from fanns.hdl.bus import command_layout
from fanns.images import ivfpq as ivfpq_images
from fanns.numerics import ID_BITS
from fanns.pe.axi_reader import word_layout

LEN_BITS = 32
ALL_ONES_ID = ivfpq_images.PAD_ID


def desc_layout() -> data.StructLayout:
    """A cell for a channel's feeder: its share items, whether it ends the query, and its tier
    (1: the beats come from the fast tier's reader)."""
    return data.StructLayout({"share": TABLE_FIELD_BITS, "last": 1, "tier": 1})


def item_layout(m: int) -> data.StructLayout:
    """A PQDist code item, exactly the `codes` payload of `pq_decode`."""
    return data.StructLayout(
        {"codes": data.ArrayLayout(8, m), "id": ID_BITS, "pad": 1, "last_cell": 1, "last_query": 1}
    )


class Fetcher(wiring.Component):
    """Per-channel list tables, commands and descriptors (see the module docstring). A tiered
    design also has, per channel, the fast tier's list table (`hot_table_fill<c>`, commands
    `hot_cmd<c>` relative to `hot_base<c>`) and one list->tier table (`tier_fill`, one word per
    list, bit 0 = fast tier): a cell's command goes to the reader of its tier only, and its
    descriptor tells the feeder which reader's beats to take."""

    def __init__(self, hw: IvfPqHw):
        self.hw = hw
        ports = {"cells": In(stream.Signature(cell_layout()))}
        if hw.tiered:
            ports["tier_fill"] = In(stream.Signature(unsigned(hw.section_word_bits("tiers"))))
        for c in range(hw.channels):
            for pre in ("", "hot_") if hw.tiered else ("",):
                ports[f"{pre}table_fill{c}"] = In(stream.Signature(unsigned(TABLE_RECORD_BITS)))
                ports[f"{pre}cmd{c}"] = Out(stream.Signature(command_layout(ADDR_BITS, LEN_BITS)))
                ports[f"{pre}base{c}"] = In(ADDR_BITS)
            ports[f"desc{c}"] = Out(stream.Signature(desc_layout()))
        super().__init__(ports)

    def _table(self, m: Module, name: str, fill, width: int, issue):
        """An on-chip table of `width`-bit words filled in order from `fill`, read at the issued cell."""
        hw = self.hw
        cell_bits = max(1, (hw.nlist - 1).bit_length())
        table = Memory(shape=unsigned(width), depth=hw.nlist, init=[])
        m.submodules[name] = table
        tw, tr = table.write_port(), table.read_port()
        fill_addr = Signal(range(max(2, hw.nlist)), name=f"{name}_fill_addr")
        m.d.comb += [
            fill.ready.eq(1),
            tw.addr.eq(fill_addr),
            tw.data.eq(fill.payload[:width]),
            tw.en.eq(fill.valid),
            tr.addr.eq(self.cells.payload.cell[:cell_bits]),
            tr.en.eq(issue),
        ]
        with m.If(fill.valid):
            m.d.sync += fill_addr.eq(fill_addr + 1)
        return tr.data

    def elaborate(self, platform):
        hw = self.hw
        m = Module()
        fb = TABLE_FIELD_BITS
        issue = Signal()
        tier = self._table(m, "list_tiers", self.tier_fill, 1, issue) if hw.tiered else Const(0, 1)
        outs, enabled = [], []  # every output of a cell, and whether this cell uses it
        for c in range(hw.channels):
            outs.append(getattr(self, f"desc{c}"))
            enabled.append(Const(1, 1))
            outs.append(getattr(self, f"cmd{c}"))
            enabled.append(~tier)
            if hw.tiered:
                outs.append(getattr(self, f"hot_cmd{c}"))
                enabled.append(tier)
        pending = Signal(len(outs))
        due = [pending[i] & enabled[i] for i in range(len(outs))]
        free = Signal()
        m.d.comb += free.eq(Cat(*(~due[i] | o.ready for i, o in enumerate(outs))).all())
        last = Signal()
        m.d.comb += [issue.eq(self.cells.valid & free), self.cells.ready.eq(issue)]
        with m.If(free):
            m.d.sync += pending.eq(Mux(issue, (1 << len(outs)) - 1, 0))
            with m.If(issue):
                m.d.sync += last.eq(self.cells.payload.last)
        with m.Else():
            m.d.sync += pending.eq(pending & ~Cat(*(o.ready for o in outs)))
        shift = exact_log2(hw.pq_beat_bytes)
        for i, o in enumerate(outs):
            m.d.comb += o.valid.eq(due[i])
        for c in range(hw.channels):
            for pre in ("", "hot_") if hw.tiered else ("",):
                row = self._table(m, f"{pre}list_table{c}", getattr(self, f"{pre}table_fill{c}"), 3 * fb, issue)
                start, beats, share = row[:fb], row[fb : 2 * fb], row[2 * fb : 3 * fb]  # share: the same in both tables
                cmd = getattr(self, f"{pre}cmd{c}")
                m.d.comb += [
                    cmd.payload.addr.eq(getattr(self, f"{pre}base{c}") + (start << shift)),
                    cmd.payload.len.eq(beats << shift),
                ]
            desc = getattr(self, f"desc{c}")
            m.d.comb += [desc.payload.share.eq(share), desc.payload.last.eq(last), desc.payload.tier.eq(tier)]
        return m


def code_entry_layout(hw: IvfPqHw, c: int) -> data.StructLayout:
    return data.StructLayout({"data": hw.pq_layout(c).codes_per_unit * 8 * hw.m, "cend": 1, "lastq": 1, "empty": 1})


class ChannelFeeder(wiring.Component):
    """One channel's beats to its PEs' item streams (see the module docstring)."""

    PH_ID, PH_CODE, PH_EMPTY = 0, 1, 2

    def __init__(self, hw: IvfPqHw, channel: int):
        self.hw, self.channel = hw, channel
        self.layout = hw.pq_layout(channel)
        self.pes = len(self.layout.channel_pes)
        ports = {
            "beats": In(stream.Signature(word_layout(hw.stages.pq_dist.port_bits))),
            "desc": In(stream.Signature(desc_layout())),
        }
        if hw.tiered:  # the paired fast-tier channel's beats; a cell's descriptor names its tier
            ports["hot_beats"] = In(stream.Signature(word_layout(hw.stages.pq_dist.port_bits)))
        ports |= {f"items{i}": Out(stream.Signature(item_layout(hw.m))) for i in range(self.pes)}
        super().__init__(ports)

    def elaborate(self, platform):
        n = self.pes
        entry = code_entry_layout(self.hw, self.channel)
        m = Module()
        idf = [SyncFIFO(width=self.hw.stages.pq_dist.port_bits, depth=2) for _ in range(n)]
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
        n, lay = self.pes, self.layout
        ipu, ipb = lay.codes_per_unit, lay.ids_per_beat
        fb = TABLE_FIELD_BITS
        active, lastq, tier = Signal(), Signal(), Signal()
        phase = Signal(2)
        q = Signal(range(max(2, n)))
        share, pos, idp = (
            Signal(fb),
            Signal(fb),
            Signal(fb),
        )  # items of a share; first item of this unit / of the next id beat
        need_id, unit_last = Signal(), Signal()
        m.d.comb += [need_id.eq(idp < pos + ipu), unit_last.eq(pos + ipu == share)]

        last_pe = q == n - 1
        w_rdy = Signal()
        m.d.comb += w_rdy.eq(
            Mux(
                phase == self.PH_ID,
                Cat(*(f.w_rdy for f in idf)).bit_select(q, 1),
                Cat(*(f.w_rdy for f in codef)).bit_select(q, 1),
            )
        )
        empty = phase == self.PH_EMPTY
        move = Signal()
        src = self.beats.signature.create()  # the beats of the current cell's tier
        take = active & ~empty & w_rdy
        if self.hw.tiered:
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
        m.d.comb += [
            code.data.eq(src.payload.data[: entry.size - 3]),
            code.cend.eq(unit_last | empty),
            code.lastq.eq(lastq),
            code.empty.eq(empty),
        ]
        for i in range(n):
            m.d.comb += [
                idf[i].w_data.eq(src.payload.data),
                idf[i].w_en.eq(move & (phase == self.PH_ID) & (q == i)),
                codef[i].w_data.eq(code),
                codef[i].w_en.eq(move & (phase != self.PH_ID) & (q == i)),
            ]
        next_pos = pos + ipu
        next_idp = idp + Mux(need_id, ipb, 0)
        unit_done = move & (phase == self.PH_CODE) & last_pe
        cell_done = Signal()
        m.d.comb += cell_done.eq((unit_done & unit_last) | (move & empty & last_pe))
        with m.If(move):
            with m.Switch(phase):
                with m.Case(self.PH_ID):
                    m.d.sync += phase.eq(self.PH_CODE)
                with m.Case(self.PH_CODE):
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
        hw, lay = self.hw, self.layout
        ipu, ipb = lay.codes_per_unit, lay.ids_per_beat
        head = data.View(entry, codef.r_data)
        i = Signal(range(max(2, ipu)))
        slot = Signal(range(max(2, ipb)))
        unit_end, share_end = Signal(), Signal()
        ident = Signal(ID_BITS)
        m.d.comb += [
            unit_end.eq(head.empty | (i == ipu - 1)),
            share_end.eq(head.cend & unit_end),
            ident.eq(Mux(head.empty, Const(ALL_ONES_ID, ID_BITS), idf.r_data.word_select(slot, ID_BITS))),
            out.valid.eq(codef.r_rdy & (head.empty | idf.r_rdy)),
            out.payload.codes.eq(head.data.word_select(i, 8 * hw.m) if ipu > 1 else head.data),
            out.payload.id.eq(ident),
            out.payload.pad.eq(ident == ALL_ONES_ID),
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
