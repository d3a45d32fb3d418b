"""The whole IVF-PQ accelerator as one Amaranth component: the top level `fanns generate-rtl` emits.

Ports (bus conventions of CONTRIBUTING.md): `s_axil` (the control/status registers of
`IvfPqHw.regmap`, the Xilinx RTL-kernel layout with ap_ctrl_hs), `interrupt` (GIE & ISR),
`m_axi_io` (AXI4 read + write on the host I/O channel: index arrays and
queries in, results out) and `m_axi_pq<c>` (AXI4 read, one per PQ-code channel); a tiered
design (`stages.pq_dist.tiers`) adds `m_axi_hot<c>`, the fast tier's channel paired with PQ
channel c, and loads the list->tier table with the ROM images; a host-memory design
(`stages.pq_dist.host_tier`) reads `m_axi_pq<c>` from host memory and adds `m_axi_cache<c>` (AXI4
read + write), channel c's cache region, with the prefetch command (`fanns.arch.ivfpq.prefetch`);
streamed IVF centroids add
`m_axi_ivf<c>` (AXI4 read, one per `ivf_centroids` channel, its image read once per query of a run);
BuildLUT's centroids fetched from memory add `m_axi_lutc` (AXI4 read, one cell's centroid per probe);
a streamed OPQ matrix adds `m_axi_opq` (AXI4 read, the matrix image read once per query, as a
streamed-centroid channel of one PE reads its image).

A run (`ap_start`): the controller checks the parameters (nprobe and k within the design's,
addresses aligned to the beat; otherwise it sets `status.bad_params` and finishes at once). The
first run after reset loads the index on chip — the ROM images through the I/O reader (one read
command per image; the router hands each image's words to the memories that keep it) and every
PQ channel's list table through that channel's reader — and waits until every word is in place.
Then it issues one read command per query (the query buffer's layout pads each query to whole
beats) and one write command per query's k result keys; the run ends when the write master has
reported the last query's responses. A step-wise run (`mode` set, docs/stepwise.md) reads after
each query its cell list (`cells_addr`, to the Front's step filter instead of SelCells' choice)
and its k seed keys (`seeds_addr`, to the seed merge).
The stages run free: Front (OPQ, IVFDist, SelCells) -> LutStage (BuildLUT) and Fetcher
(list table, per-channel reads) -> ChannelFeeders -> ScanStage (PQDist, SelK) -> SeedMerge ->
ResultFilter.
"""

from __future__ import annotations

from amaranth import Array, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from fanns.arch.ivfpq.control import controller
from fanns.arch.ivfpq.front import Front
from fanns.arch.ivfpq.hw import (
    ADDR_BITS,
    CSR_ADDR_BITS,
    LEN_BITS,
    MATRIX_BITS,
    RESULT_BITS,
    SECTIONS,
    TABLE_RECORD_BITS,
    WATCHED_STREAMS,
    IvfPqHw,
)
from fanns.arch.ivfpq.ivf_stream import IvfStreamChannel
from fanns.arch.ivfpq.lut import LutStage
from fanns.arch.ivfpq.prefetch import Prefetch
from fanns.arch.ivfpq.scan import ScanStage
from fanns.arch.ivfpq.seed_merge import SeedMerge, seed_layout
from fanns.arch.streams import lane_truncate, link
from fanns.hdl.bus import axi4_signature, axil_signature
from fanns.model.ivfpq.control import SEED_FIFO_LISTS
from fanns.pe.axi_reader import AxiReader
from fanns.pe.axi_writer import AxiWriter
from fanns.pe.axil_csr import AxilCsrComponent
from fanns.pe.glue_streams import BeatSplitterComponent, BroadcastComponent
from fanns.pe.stream_fifo import stream_fifo
from fanns.pe.stream_pack import StreamPackComponent

MAX_BURST, OUTSTANDING = 64, 4
"""AXI masters: 64-beat bursts, 4 outstanding (docs/ivfpq_architecture.md, `fanns.model.ivfpq.stages`)."""
STATUS_LOADED, STATUS_BAD_PARAMS, STATUS_AXI_ERROR = 0, 1, 2
TAG_BITS = 3


def wire_master(m: Module, outer, inner) -> None:
    """Connect a sub-component's AXI master port to the matching members of a top-level port."""
    for name, member in inner.signature.members.items():
        o, i = getattr(outer, name), getattr(inner, name)
        m.d.comb += o.eq(i) if member.flow == Out else i.eq(o)


def accelerator_signature(hw: IvfPqHw) -> wiring.Signature:
    """The top level's ports (module docstring), for `IvfPqAccelerator` and for the files that
    describe its interfaces without building it (the RTL kernel's packaging)."""
    ports = {
        "s_axil": In(axil_signature(CSR_ADDR_BITS)),
        "m_axi_io": Out(axi4_signature(ADDR_BITS, hw.io_port_bits)),
        "interrupt": Out(1),
    }
    for c in range(hw.channels):
        ports[f"m_axi_pq{c}"] = Out(axi4_signature(ADDR_BITS, hw.stages.pq_dist.port_bits, write=False))
    if hw.tiered:
        for c in range(hw.channels):
            ports[f"m_axi_hot{c}"] = Out(axi4_signature(ADDR_BITS, hw.stages.pq_dist.port_bits, write=False))
    if hw.host_tier:
        for c in range(hw.channels):
            ports[f"m_axi_cache{c}"] = Out(axi4_signature(ADDR_BITS, hw.stages.pq_dist.port_bits))
    for c, lay in enumerate(hw.ivf_stream_layouts):
        ports[f"m_axi_ivf{c}"] = Out(axi4_signature(ADDR_BITS, lay.port_bits, write=False))
    if hw.lut_fetched:
        ports["m_axi_lutc"] = Out(axi4_signature(ADDR_BITS, hw.io_port_bits, write=False))
    if hw.opq_stream_layout is not None:
        ports["m_axi_opq"] = Out(axi4_signature(ADDR_BITS, hw.opq_stream_layout.port_bits, write=False))
    return wiring.Signature(ports)


class IvfPqAccelerator(wiring.Component):
    """The accelerator of one `IvfPqHw` (see the module docstring)."""

    def __init__(self, hw: IvfPqHw):
        self.hw = hw
        super().__init__(accelerator_signature(hw))

    def elaborate(self, platform):
        hw = self.hw
        m = Module()
        m.submodules.csr = csr = AxilCsrComponent(hw.regmap)
        wiring.connect(m, wiring.flipped(self.s_axil), csr.s_axil)

        m.submodules.io_reader = rd = AxiReader(hw.io_port_bits, ADDR_BITS, MAX_BURST, OUTSTANDING, LEN_BITS).instance()
        m.submodules.io_writer = wr = AxiWriter(hw.io_port_bits, ADDR_BITS, MAX_BURST, OUTSTANDING, LEN_BITS).instance()
        wire_master(m, self.m_axi_io, rd.m_axi)
        wire_master(m, self.m_axi_io, wr.m_axi)

        m.submodules.front = front = Front(hw)
        lut_reader = AxiReader(hw.io_port_bits, ADDR_BITS, MAX_BURST, OUTSTANDING, LEN_BITS) if hw.lut_fetched else None
        m.submodules.lut = lut = LutStage(hw, lut_reader)
        if hw.lut_fetched:
            wiring.connect(m, wiring.flipped(self.m_axi_lutc), lut.m_axi)
        m.submodules.fetch = fetch = hw.fetcher_pe.instance()
        m.submodules.scan = scan = ScanStage(hw)
        m.submodules.results = res = hw.result_filter_pe.instance()
        m.submodules.cell_fork = fork = BroadcastComponent(front.cells.payload.shape(), 2)
        link(m, front.lut_q, lut.q)
        link(m, front.cells, fork.i)
        link(m, fork.o0, lut.cells)
        link(m, fork.o1, fetch.cells)
        link(m, lut.luts, scan.luts)

        loading = Signal()
        pre = Prefetch(fetch) if hw.host_tier else None
        table_cmds, table_words = self._channels(m, fetch, scan, loading, pre)

        m.submodules.out_fifo = of = stream_fifo(scan.keys.payload.shape(), hw.design.fifo_depth)
        link(m, scan.keys, of.i)
        m.submodules.seed_merge = merge = SeedMerge(hw.key_bits, hw.k)
        m.submodules.seed_fifo = seeds = stream_fifo(seed_layout(), SEED_FIFO_LISTS * hw.k)
        link(m, seeds.o, merge.seeds)
        link(m, of.o, merge.keys)
        link(m, merge.o, res.keys)
        m.submodules.result_pack = pack = StreamPackComponent(RESULT_BITS, hw.io_port_bits // RESULT_BITS)
        link(m, res.o, pack.i)
        m.d.comb += [
            wr.i.valid.eq(pack.o.valid),
            wr.i.payload.data.eq(pack.o.payload.data),
            pack.o.ready.eq(wr.i.ready),
        ]

        pq = hw.stages.pq_dist
        readers = [f"{p}cmd{c}" for c in range(hw.channels) for p in (("", "hot_") if fetch.pe.two_tiers else ("",))]
        self._watch(
            m,
            csr,
            {
                "query": [front.q],
                "lut_query": [lut.q],
                "cells": [front.cells],
                "lut_cells": [lut.cells],
                "fetch_cells": [fetch.cells],
                "luts": [lut.luts],
                "cmd": [getattr(fetch, name) for name in readers],
                "desc": [getattr(fetch, f"desc{c}") for c in range(hw.channels)],
                "beats": [m.submodules[f"feeder{c}"].beats for c in range(hw.channels)],
                "items": [getattr(scan, f"items{i}") for i in range(pq.pes)],
                "keys": [scan.keys],
                "results": [res.o],
                "writes": [wr.i],
            },
        )

        tags, rom_words = self._router(m, rd, front, lut, fetch, seeds.i, pre)
        streams = self._streams(m, front)
        controller(
            hw,
            m,
            csr,
            self.interrupt,
            rd,
            wr,
            front,
            lut,
            fetch,
            res,
            merge,
            tags,
            [rom_words, *table_words],
            table_cmds,
            loading,
            streams,
            pre,
        )
        return m

    # -- streamed images: one reader per channel, the image read once per query -----------------
    def _streams(self, m: Module, front) -> list[tuple[IvfStreamChannel, str]]:
        """(channel, its address register) of every image read once per query: per `ivf_centroids`
        channel an `IvfStreamChannel` on `m_axi_ivf<c>`, its words to its PEs; a streamed OPQ
        matrix's on `m_axi_opq`, its row words to the OPQ PE."""
        hw = self.hw
        out, pe = [], 0
        for c, lay in enumerate(hw.ivf_stream_layouts):
            reader = AxiReader(lay.port_bits, ADDR_BITS, MAX_BURST, OUTSTANDING, LEN_BITS)
            m.submodules[f"ivf{c}_stream"] = ch = IvfStreamChannel(lay, hw.elem_bits, reader)
            wiring.connect(m, wiring.flipped(getattr(self, f"m_axi_ivf{c}")), ch.m_axi)
            for word in ch.outputs():
                link(m, word, getattr(front, f"ivf_c{pe}"))
                pe += 1
            out.append((ch, f"ivf{c}_addr"))
        lay = hw.opq_stream_layout
        if lay is not None:
            reader = AxiReader(lay.port_bits, ADDR_BITS, MAX_BURST, OUTSTANDING, LEN_BITS)
            m.submodules.opq_stream = ch = IvfStreamChannel(lay, MATRIX_BITS, reader)
            wiring.connect(m, wiring.flipped(self.m_axi_opq), ch.m_axi)
            link(m, ch.outputs()[0], front.opq_rows)
            out.append((ch, "opq_addr"))
        return out

    # -- progress and stream state for a watchdog -------------------------------------------------
    def _watch(self, m: Module, csr, streams: dict[str, list]) -> None:
        """Drive `progress` (cycles in which any watched stream or memory port moved a word) and
        `streams` (per stream: a word held, a consumer waiting) from the stage boundaries."""
        assert tuple(streams) == WATCHED_STREAMS
        fired, state = [], []
        for group in streams.values():
            fired += [s.valid & s.ready for s in group]
            state += [Cat(*(s.valid & ~s.ready for s in group)).any(), Cat(*(s.ready & ~s.valid for s in group)).any()]
        ports = [getattr(self, name) for name in self.signature.members if name.startswith("m_axi_")]
        for port in ports:
            members = port.signature.members
            fired += [
                getattr(port, f"{ch}valid") & getattr(port, f"{ch}ready")
                for ch in ("ar", "r", "aw", "w", "b")
                if f"{ch}valid" in members
            ]
        progress = Signal(32)
        with m.If(Cat(*fired).any()):
            m.d.sync += progress.eq(progress + 1)
        m.d.comb += [csr.progress.eq(progress), csr.streams.eq(Cat(*state))]

    # -- PQ-code channels: list tables at load, then list reads into the feeders ----------------
    def _channels(self, m: Module, fetch, scan, loading, pre: Prefetch | None):
        """Per channel: reader(s), command/descriptor FIFOs, feeder; while `loading`, the
        controller's table command goes to each table's loader and its beats to that list table.
        Returns, per reader, (table command or None, error, base-address register, the Fetcher's
        base input) and the table-word strobes. A host-memory design's channel also has the cache
        reader and writer and a copy engine, which has both readers while `pre.active`."""
        hw = self.hw
        pe = 0
        table_cmds, table_words = [], []
        for c in range(hw.channels):
            feeder = hw.feeder_pe(c).instance()
            m.submodules[f"feeder{c}"] = feeder
            desc = getattr(fetch, f"desc{c}")
            m.submodules[f"desc_fifo{c}"] = df = stream_fifo(desc.payload.shape(), hw.design.fifo_depth)
            link(m, desc, df.i)
            link(m, df.o, feeder.desc)
            copies = [None, None]
            if pre is not None:
                writer = AxiWriter(hw.stages.pq_dist.port_bits, ADDR_BITS, MAX_BURST, OUTSTANDING, LEN_BITS).instance()
                m.submodules[f"cache{c}_writer"] = writer
                wire_master(m, getattr(self, f"m_axi_cache{c}"), writer.m_axi)
                copies = pre.engine(m, c, writer)
            readers = [("", f"pq{c}", feeder.beats, copies[0])]
            if hw.tiered:
                readers.append(("hot_", f"hot{c}", feeder.hot_beats, None))
            if hw.host_tier:
                readers.append(("hot_", f"cache{c}", feeder.hot_beats, copies[1]))
            for head, port, beats, copy in readers:
                tcmd, err, strobe = self._reader(m, c, head, port, fetch, beats, loading, copy)
                table_cmds.append((tcmd, err, f"{port}_addr", getattr(fetch, f"{head}base{c}")))
                if strobe is not None:
                    table_words.append(strobe)
            for i in range(feeder.pes):
                link(m, getattr(feeder, f"items{i}"), getattr(scan, f"items{pe}"))
                pe += 1
        return table_cmds, table_words

    def _reader(self, m: Module, c: int, pre: str, port: str, fetch, beats, loading, copy=None):
        """One PQ-code reader on `m_axi_<port>`: at load, the list table its channel shares with the
        channels of equal PE count if it is that table's loader (`Fetcher.loader`), then the
        Fetcher's commands; with `copy` (active, the copy engine's command and beat streams), the
        copy engine's commands while a prefetch is active. Returns (table command or None, error,
        table-word strobe or None)."""
        hw = self.hw
        rd = AxiReader(hw.stages.pq_dist.port_bits, ADDR_BITS, MAX_BURST, OUTSTANDING, LEN_BITS).instance()
        m.submodules[f"{port}_reader"] = rd
        if port.startswith("cache"):  # the writer has the port's write half
            wire_master(m, getattr(self, f"m_axi_{port}"), rd.m_axi)
        else:
            wiring.connect(m, wiring.flipped(getattr(self, f"m_axi_{port}")), rd.m_axi)
        cmd = getattr(fetch, f"{pre}cmd{c}")
        m.submodules[f"{port}_cmd_fifo"] = cf = stream_fifo(cmd.payload.shape(), hw.design.fifo_depth)
        link(m, cmd, cf.i)
        busy = loading
        run_valid, run_payload, run_ready = cf.o.valid, cf.o.payload, beats.ready  # the search's side
        if copy is not None:
            active, ccmd, cbeats = copy
            busy = loading | active
            run_valid = Mux(active, ccmd.valid, cf.o.valid)
            run_payload = Mux(active, ccmd.payload, cf.o.payload)
            run_ready = Mux(active, cbeats.ready, beats.ready)
            m.d.comb += [
                ccmd.ready.eq(active & rd.cmd.ready),
                cbeats.valid.eq(active & rd.o.valid),
                cbeats.payload.eq(rd.o.payload),
            ]
        m.d.comb += [
            cf.o.ready.eq(~busy & rd.cmd.ready),
            beats.valid.eq(~busy & rd.o.valid),
            beats.payload.eq(rd.o.payload),
        ]
        table = fetch.pe.table(c)
        if pre == "hot_" and fetch.pe.cached or fetch.pe.loader(table) != c:  # a cache region has no table
            m.d.comb += [
                rd.cmd.valid.eq(~loading & run_valid),
                rd.cmd.payload.eq(run_payload),
                rd.o.ready.eq(~loading & run_ready),
            ]
            return None, rd.error, None
        m.submodules[f"{port}_table_split"] = ts = BeatSplitterComponent(hw.stages.pq_dist.port_bits, TABLE_RECORD_BITS)
        tcmd = rd.cmd.signature.create()
        m.d.comb += [
            rd.cmd.valid.eq(Mux(loading, tcmd.valid, run_valid)),
            rd.cmd.payload.eq(Mux(loading, tcmd.payload, run_payload)),
            tcmd.ready.eq(loading & rd.cmd.ready),
            ts.i.valid.eq(loading & rd.o.valid),
            ts.i.payload.data.eq(rd.o.payload.data),
            ts.i.payload.keep.eq(rd.o.payload.keep),
            ts.i.payload.last.eq(rd.o.payload.last),
            rd.o.ready.eq(Mux(loading, ts.i.ready, run_ready)),
        ]
        fill = getattr(fetch, f"{pre}table_fill{table}")
        m.d.comb += [fill.valid.eq(ts.o.valid), fill.payload.eq(ts.o.payload.data), ts.o.ready.eq(fill.ready)]
        return tcmd, rd.error, fill.valid & fill.ready

    # -- the I/O read path: ROM images at load, then queries ------------------------------------
    def _router(self, m: Module, rd, front, lut, fetch, seeds, pre: Prefetch | None = None):
        """Beats of the I/O reader to their destinations; returns (tag FIFO, ROM words taken on
        chip this cycle). Sections of different word widths go through different splitters, which
        drain independently: the tail of one section's last beat can leave its splitter in the
        same cycles as the next section's first words leave theirs, so several ROM words can be
        taken in one cycle (one per splitter) and all of them count."""
        hw = self.hw
        names = hw.sections() + ["query", "cells", "seeds"]
        m.submodules.tags = tags = SyncFIFO(width=TAG_BITS, depth=8)
        widths = sorted({hw.section_word_bits(s) for s in names})
        splitters = {}
        for w in widths:
            splitters[w] = sp = BeatSplitterComponent(hw.io_port_bits, w, TAG_BITS)
            m.submodules[f"split{w}"] = sp
        route = Signal(range(max(2, len(widths))))
        width_of_tag = [widths.index(hw.section_word_bits(s)) if s in names else 0 for s in SECTIONS]
        m.d.comb += route.eq(Array(width_of_tag)[tags.r_data])
        for idx, w in enumerate(widths):
            sp = splitters[w]
            m.d.comb += [
                sp.i.valid.eq(rd.o.valid & tags.r_rdy & (route == idx)),
                sp.i.payload.data.eq(rd.o.payload.data),
                sp.i.payload.keep.eq(rd.o.payload.keep),
                sp.i.payload.last.eq(rd.o.payload.last),
                sp.i.payload.tag.eq(tags.r_data),
            ]
        m.d.comb += [
            rd.o.ready.eq(tags.r_rdy & Array(splitters[w].i.ready for w in widths)[route]),
            tags.r_en.eq(rd.o.valid & rd.o.ready & rd.o.payload.last),
        ]
        targets = {"codebook": lut.codebook_fill, "query": front.q, "cells": front.cell_list, "seeds": seeds}
        if "ivf" in names:
            targets["ivf"] = front.ivf_fill
        if "lutc" in names:
            targets["lutc"] = lut.lutc_fill
        if "opq" in names:
            targets["opq"] = front.opq_fill
        if hw.tiered:
            targets["tiers"] = fetch.tier_fill
        if pre is not None:  # a prefetch run's descriptors come as a cell list
            targets["cells"] = pre.cells(m, front.cell_list)
        strobes = []
        for name in names:
            dst, sp = targets[name], splitters[hw.section_word_bits(name)]
            lanes = hw.section_word_bits(name) // hw.elem_bits
            if name in ("cells", "seeds"):  # a list's words and its end
                word = Cat(sp.o.payload.data, sp.o.payload.last)
            elif name in ("opq", "tiers"):
                word = sp.o.payload.data
            else:
                word = lane_truncate(sp.o.payload.data, lanes, hw.elem_bits, hw.vec_bits)
            m.d.comb += [dst.valid.eq(sp.o.valid & (sp.o.payload.tag == SECTIONS.index(name))), dst.payload.eq(word)]
            if name not in ("query", "cells", "seeds"):
                strobes.append(dst.valid & dst.ready)
        for w, sp in splitters.items():
            readies = [targets[s].ready if s in names and hw.section_word_bits(s) == w else 0 for s in SECTIONS]
            m.d.comb += sp.o.ready.eq(Array(readies)[sp.o.payload.tag])
        rom_words = Signal(range(len(strobes) + 1))
        m.d.comb += rom_words.eq(sum(strobes))
        return tags, rom_words
