"""List fetcher of the IVF-PQ accelerator: per-channel list tables, read commands and descriptors.

The layout is the packer's (`fanns.images.ivfpq.PqLayout`): a PQ channel image starts with a
list table of (start_beat, beats, share_items, count) per list. A channel's table depends only on
how many PEs the channel feeds (every PE's share of a list has the same items and beats), so
channels with equal PE counts hold equal tables and share one on chip: `table_of[c]` names
channel c's table, loaded at the first run from the first channel that uses it
(`table_fill<t>`). For every probed cell (in probe order) the fetcher looks the list up in each
table and sends each PQ-code channel c one read command — the list's `beats` beats from
`start_beat`, relative to the channel's base — and a descriptor {share_items, last} for the
channel's feeder (`fanns.pe.channel_feeder`). A tiered design also has the fast tier's tables
(`hot_table_fill<t>`, commands `hot_cmd<c>` relative to `hot_base<c>`) and one list->tier table
(`tier_fill`, one word per list, bit 0 = fast tier): a cell's command goes to the reader of its
tier only, and its descriptor tells the feeder which reader's beats to take.

A host-memory design (`cached`, docs/host_tier.md "The faces") reuses that mechanism with the
cold tier = host memory (`cmd<c>`, the `pq_codes_<c>` images) and the fast tier = each channel's
cache region (`hot_cmd<c>` relative to `hot_base<c>`, the `pq_cache_<c>` regions): the list->tier
table is the run-time location table, (valid, offset in beats) per list, one offset for every
channel. It is emptied while table 0 loads (every list invalid) and written by the prefetch
command's descriptors (`copy_req`: cell, op, at, source; `fanns.model.ivfpq.prefetch_plan`): EVICT
clears the entry, FROM_HOST and MOVE set it to `at` and send every channel's copy engine one copy
(`copy<c>`: source and destination address, bytes, and whether the source is host memory) of the
list's share from the list tables. A valid cell is read from its cache region at `offset`, an
invalid one from host memory at the list table's start; the beats are the list table's either way.
No HLS header: the HLS kernel's fetch loop reads the table from memory.

Timing: one cell (or prefetch descriptor) per cycle when every output takes its item (L = 2:
the table read is registered, II = 1 cell). Resources: a table of three 32-bit fields per list and reader (LUT
RAM or block RAM by nlist, as `fanns.pe.stream_fifo.memory_mapping` maps it; a LUT RAM's read
register) per distinct table, an address adder and the control of each reader; a cached design
adds the location table (1 + 32 bits per list) and per channel a copy command's two address adders.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from amaranth import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from fanns.engines.datapath import bram18_tiles
from fanns.hdl.bus import command_layout
from fanns.numerics import ID_BITS
from fanns.pe.base import PE
from fanns.pe.stream_fifo import memory_mapping

LUTRAM_MAX_WORDS = 4096
"""Deeper tables are block RAM whatever their width (`memory_mapping` covers shallower ones)."""

FIELD_BITS = 32
"""Bits of each field of a list-table record (start_beat, beats, share_items, count)."""
TABLE_BITS = 3 * FIELD_BITS
"""Bits of a record the fetcher keeps on chip (count is the host's)."""


def shared_tables(pes_per_channel: list[int]) -> tuple[int, ...]:
    """`Fetcher.table_of` for channels feeding these PE counts: one table per distinct count."""
    counts = sorted(set(pes_per_channel), key=pes_per_channel.index)
    return tuple(counts.index(n) for n in pes_per_channel)


def cell_layout() -> data.StructLayout:
    """A probed cell: its list id, whether it is the query's last probe, and whether it is an empty
    probe (a step-wise run's query with no cell: an empty list, so the query still yields its keys)."""
    return data.StructLayout({"cell": ID_BITS, "last": 1, "empty": 1})


EVICT, FROM_HOST, MOVE = 0, 1, 2
"""Ops of a prefetch descriptor (`fanns.model.ivfpq.prefetch_plan`, docs/host_tier.md)."""
LOCATION_BITS = 1 + FIELD_BITS
"""A location-table entry of a cached design: valid, then the offset in beats."""


def copy_req_layout() -> data.StructLayout:
    """A prefetch descriptor as the fetcher takes it: (cell, op, at, source), at and source in beats."""
    return data.StructLayout({"cell": ID_BITS, "op": 2, "at": FIELD_BITS, "source": FIELD_BITS})


def copy_layout(addr_bits: int, len_bits: int) -> data.StructLayout:
    """One channel's copy of a list share: byte addresses, bytes, and whether it reads host memory."""
    return data.StructLayout({"src": addr_bits, "dst": addr_bits, "len": len_bits, "host": 1})


def desc_layout() -> data.StructLayout:
    """A cell for a channel's feeder: its share items, whether it ends the query, and its tier
    (1: the beats come from the fast tier's reader)."""
    return data.StructLayout({"share": FIELD_BITS, "last": 1, "tier": 1})


@dataclass(frozen=True)
class Fetcher(PE):
    """List tables of `nlist` lists for `channels` PQ-code readers (two per channel if `tiered` or
    `cached`); `table_of` gives each channel's table (empty: all channels share one); `cached`: a
    host-memory design's location table and copy commands (module docstring)."""

    nlist: int = 64
    channels: int = 1
    table_of: tuple[int, ...] = ()
    beat_bytes: int = 64
    tiered: bool = False
    addr_bits: int = 64
    len_bits: int = 32
    record_bits: int = 128
    tier_word_bits: int = 8
    cached: bool = False

    name: ClassVar[str] = "fetcher"
    summary: ClassVar[str] = "per-channel list tables: one read command and one feeder descriptor per probed cell"
    timing_formula: ClassVar[str] = "L = 2; II = 1 cell"
    calibration_points: ClassVar[tuple] = (
        {"nlist": 16, "channels": 1},
        {"nlist": 64, "channels": 2},
        {"nlist": 256, "channels": 1},
        {"nlist": 1024, "channels": 2},
        {"nlist": 64, "channels": 2, "tiered": True},
        {"nlist": 16, "channels": 4},
        {"nlist": 64, "channels": 3, "table_of": (0, 1, 0)},
        {"nlist": 1024, "channels": 4, "table_of": (0, 0, 1, 2)},
        {"nlist": 64, "channels": 2, "cached": True},
        {"nlist": 1024, "channels": 1, "cached": True},
    )

    def validate(self) -> None:
        self.require(self.nlist >= 1, f"nlist={self.nlist} must be positive")
        self.require(self.channels >= 1, f"channels={self.channels} must be positive")
        self.require(self.beat_bytes >= 1 and self.beat_bytes & (self.beat_bytes - 1) == 0, "beat_bytes: a power of 2")
        self.require(self.record_bits >= TABLE_BITS, f"record_bits={self.record_bits} below {TABLE_BITS}")
        self.require(not (self.tiered and self.cached), "a fetcher is tiered or cached, not both")
        if self.table_of:
            object.__setattr__(self, "table_of", tuple(self.table_of))  # a list from a JSON table
            self.require(len(self.table_of) == self.channels, f"table_of has {len(self.table_of)} entries")
            firsts = sorted(set(self.table_of), key=self.table_of.index)
            self.require(
                firsts == list(range(len(firsts))), f"table_of={self.table_of}: number tables 0, 1, .. in order"
            )

    @property
    def two_tiers(self) -> bool:
        """A second reader per channel: the fast tier's (tiered) or the cache region's (cached)."""
        return self.tiered or self.cached

    @property
    def readers(self) -> int:
        return self.channels * (2 if self.two_tiers else 1)

    @property
    def tables(self) -> int:
        """Distinct list tables per tier."""
        return max(self.table_of, default=0) + 1

    def table(self, c: int) -> int:
        """The list table of channel `c`."""
        return self.table_of[c] if self.table_of else 0

    def loader(self, t: int) -> int:
        """The channel whose image fills table `t` at load."""
        return next(c for c in range(self.channels) if self.table(c) == t)

    def latency(self) -> int:
        return 2

    def ii(self) -> int:
        return 1

    def resource_features(self) -> dict[str, float]:
        tables = [(TABLE_BITS, self.tables * (2 if self.tiered else 1))] + ([(1, 1)] if self.tiered else [])
        tables += [(LOCATION_BITS, 1)] if self.cached else []
        lutram = bram = read_bits = 0.0
        for width, count in tables:
            deep = self.nlist > LUTRAM_MAX_WORDS
            mapping = None if deep else memory_mapping(width, self.nlist)
            if deep or mapping["kind"] == "bram":
                bram += count * bram18_tiles(width, self.nlist)
            else:  # LUT RAM reads asynchronously: the registered read port costs a register per bit
                lutram += count * mapping["lutram"]
                read_bits += count * width
        return {
            "table_lutram": lutram,
            "table_bram18": bram,
            "lutram_read_bits": read_bits,
            "readers": self.readers + (self.channels if self.cached else 0),  # a copy command's adders
        }

    def component(self) -> wiring.Component:
        return FetcherComponent(self)


class FetcherComponent(wiring.Component):
    """Per-channel list tables, commands and descriptors (see the module docstring)."""

    def __init__(self, pe: Fetcher):
        self.pe = pe
        ports = {"cells": In(stream.Signature(cell_layout()))}
        if pe.tiered:
            ports["tier_fill"] = In(stream.Signature(unsigned(pe.tier_word_bits)))
        if pe.cached:
            ports["copy_req"] = In(stream.Signature(copy_req_layout()))
            ports["busy"] = Out(1)
        for pre in ("", "hot_") if pe.tiered else ("",):
            for t in range(pe.tables):
                ports[f"{pre}table_fill{t}"] = In(stream.Signature(unsigned(pe.record_bits)))
        for c in range(pe.channels):
            for pre in ("", "hot_") if pe.two_tiers else ("",):
                ports[f"{pre}cmd{c}"] = Out(stream.Signature(command_layout(pe.addr_bits, pe.len_bits)))
                ports[f"{pre}base{c}"] = In(pe.addr_bits)
            ports[f"desc{c}"] = Out(stream.Signature(desc_layout()))
            if pe.cached:
                ports[f"copy{c}"] = Out(stream.Signature(copy_layout(pe.addr_bits, pe.len_bits)))
        super().__init__(ports)

    def _table(self, m: Module, name: str, fill, width: int, issue, addr):
        """An on-chip table of `width`-bit words filled in order from `fill`, read at `addr` when `issue`."""
        nlist = self.pe.nlist
        cell_bits = max(1, (nlist - 1).bit_length())
        table = Memory(shape=unsigned(width), depth=nlist, init=[])
        m.submodules[name] = table
        tw, tr = table.write_port(), table.read_port()
        fill_addr = Signal(range(max(2, nlist)), name=f"{name}_fill_addr")
        m.d.comb += [
            fill.ready.eq(1),
            tw.addr.eq(fill_addr),
            tw.data.eq(fill.payload[:width]),
            tw.en.eq(fill.valid),
            tr.addr.eq(addr[:cell_bits]),
            tr.en.eq(issue),
        ]
        with m.If(fill.valid):
            m.d.sync += fill_addr.eq(fill_addr + 1)
        return tr.data, tw

    def _locations(self, m: Module, issue, copy_issue, fill):
        """The location table of a cached design: every entry invalid while table 0 loads (`fill`),
        written by a descriptor as it issues, read at the issued cell. Returns (valid, offset)."""
        nlist = self.pe.nlist
        cell_bits = max(1, (nlist - 1).bit_length())
        table = Memory(shape=unsigned(LOCATION_BITS), depth=nlist, init=[])
        m.submodules.locations = table
        tw, tr = table.write_port(), table.read_port()
        fill_addr = Signal(range(max(2, nlist)))
        req = self.copy_req.payload
        with m.If(fill.valid):
            m.d.sync += fill_addr.eq(fill_addr + 1)
        m.d.comb += [
            tw.addr.eq(Mux(fill.valid, fill_addr, req.cell[:cell_bits])),
            tw.data.eq(Mux(fill.valid, 0, Cat(req.op != EVICT, req.at))),
            tw.en.eq(fill.valid | copy_issue),
            tr.addr.eq(self.cells.payload.cell[:cell_bits]),
            tr.en.eq(issue),
        ]
        return tr.data[0], tr.data[1:]

    def elaborate(self, platform):
        pe = self.pe
        m = Module()
        fb = FIELD_BITS
        issue, copy_issue = Signal(), Signal()  # a probed cell / a prefetch descriptor leaves this cycle
        is_copy, op, at, source = Signal(), Signal(2), Signal(fb), Signal(fb)  # the issued descriptor
        offset = Const(0, fb)
        if pe.tiered:
            tier, _ = self._table(m, "list_tiers", self.tier_fill, 1, issue, self.cells.payload.cell)
        elif pe.cached:
            tier, offset = self._locations(m, issue, copy_issue, self.table_fill0)
        else:
            tier = Const(0, 1)
        outs, enabled = [], []  # every output of a cell, and whether this cell uses it
        for c in range(pe.channels):
            outs.append(getattr(self, f"desc{c}"))
            enabled.append(~is_copy if pe.cached else Const(1, 1))
            outs.append(getattr(self, f"cmd{c}"))
            enabled.append(~is_copy & ~tier if pe.cached else ~tier)
            if pe.two_tiers:
                outs.append(getattr(self, f"hot_cmd{c}"))
                enabled.append(~is_copy & tier if pe.cached else tier)
        rows = {
            (pre, t): self._table(
                m,
                f"{pre}list_table{t}",
                getattr(self, f"{pre}table_fill{t}"),
                TABLE_BITS,
                issue | copy_issue if pe.cached else issue,
                Mux(copy_issue, self.copy_req.payload.cell, self.cells.payload.cell)
                if pe.cached
                else self.cells.payload.cell,
            )[0]
            for pre in (("", "hot_") if pe.tiered else ("",))
            for t in range(pe.tables)
        }
        if pe.cached:
            for c in range(pe.channels):
                outs.append(getattr(self, f"copy{c}"))
                beats = rows["", pe.table(c)][fb : 2 * fb]
                enabled.append(is_copy & (op != EVICT) & (beats != 0))  # an empty share copies nothing
        pending = Signal(len(outs))
        due = [pending[i] & enabled[i] for i in range(len(outs))]
        free = Signal()
        m.d.comb += free.eq(Cat(*(~due[i] | o.ready for i, o in enumerate(outs))).all())
        last, empty = Signal(), Signal()
        m.d.comb += [issue.eq(self.cells.valid & free), self.cells.ready.eq(issue)]
        if pe.cached:  # descriptors only while no cell waits (a prefetch run has no cells)
            m.d.comb += [
                copy_issue.eq(self.copy_req.valid & ~self.cells.valid & free),
                self.copy_req.ready.eq(copy_issue),
                self.busy.eq(Cat(*due).any()),
            ]
        with m.If(free):
            m.d.sync += pending.eq(Mux(issue | copy_issue, (1 << len(outs)) - 1, 0))
            with m.If(issue):
                m.d.sync += [last.eq(self.cells.payload.last), empty.eq(self.cells.payload.empty)]
            if pe.cached:
                req = self.copy_req.payload
                with m.If(issue):
                    m.d.sync += is_copy.eq(0)
                with m.If(copy_issue):
                    m.d.sync += [is_copy.eq(1), op.eq(req.op), at.eq(req.at), source.eq(req.source)]
        with m.Else():
            m.d.sync += pending.eq(pending & ~Cat(*(o.ready for o in outs)))
        shift = exact_log2(pe.beat_bytes)
        for i, o in enumerate(outs):
            m.d.comb += o.valid.eq(due[i])
        for c in range(pe.channels):
            for pre in ("", "hot_") if pe.two_tiers else ("",):
                row = rows["" if pe.cached else pre, pe.table(c)]
                start, beats = row[:fb], row[fb : 2 * fb]  # share: the same in both tables
                cmd = getattr(self, f"{pre}cmd{c}")
                start = offset if pe.cached and pre == "hot_" else start  # the cache region's copy
                m.d.comb += [
                    cmd.payload.addr.eq(getattr(self, f"{pre}base{c}") + (start << shift)),
                    cmd.payload.len.eq(Mux(empty, 0, beats << shift)),
                ]
            row = rows["", pe.table(c)]
            desc = getattr(self, f"desc{c}")
            m.d.comb += [
                desc.payload.share.eq(Mux(empty, 0, row[2 * fb : 3 * fb])),
                desc.payload.last.eq(last),
                desc.payload.tier.eq(tier),
            ]
            if pe.cached:
                copy, cache = getattr(self, f"copy{c}"), getattr(self, f"hot_base{c}")
                host = op == FROM_HOST
                m.d.comb += [
                    copy.payload.src.eq(
                        Mux(host, getattr(self, f"base{c}") + (row[:fb] << shift), cache + (source << shift))
                    ),
                    copy.payload.dst.eq(cache + (at << shift)),
                    copy.payload.len.eq(row[fb : 2 * fb] << shift),
                    copy.payload.host.eq(host),
                ]
        return m
