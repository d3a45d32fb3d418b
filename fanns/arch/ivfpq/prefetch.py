"""The prefetch command of a host-memory design (docs/host_tier.md, "The faces"): a descriptor
walker and one copy engine per PQ channel.

A prefetch run (`mode` 2) reads `nq` descriptors of four uint32 words (cell, op, at, source) from
`cells_addr` through the I/O reader; `DescriptorWalker` gathers each descriptor's words and hands it
to the Fetcher (`fanns.pe.fetcher`, `copy_req`), which updates its location table and sends every
channel's `CopyEngine` one copy of the list's share. A copy engine reads the share through the
channel's host reader (`m_axi_pq<c>`, FROM_HOST) or its cache reader (`m_axi_cache<c>`, MOVE) and
writes it through the cache writer at `at`: a forward, beat-by-beat copy (each beat is read before
it is written, so a MOVE to a lower offset that overlaps its source is correct). The run ends when
every descriptor is taken and every copy's write is answered (`idle`).

Timing: the walker takes one word a cycle (a descriptor every 4 cycles); a copy engine keeps
`COPIES` copies in flight, so copies overlap their read latency; a copy of b beats moves one beat a
cycle once the read's first beat arrives. Resources: the walker's 3 x 32-bit word registers; per
engine a `COPIES`-deep FIFO of one bit (the source of each copy in flight) and an outstanding
counter; the readers and the writer are AxiReader/AxiWriter PEs priced as such
(`fanns.model.ivfpq.stages`).
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from fanns.arch.ivfpq.hw import CELL_WORD_BITS
from fanns.hdl.bus import command_layout
from fanns.model.ivfpq.control import COPY_OUTSTANDING_BITS
from fanns.model.ivfpq.control import COPY_SOURCES as COPIES
from fanns.pe.axi_reader import word_layout
from fanns.pe.fetcher import copy_layout, copy_req_layout

DESCRIPTOR_WORDS = 4
"""Words of one descriptor: cell, op, at, source (`fanns.model.ivfpq.prefetch_plan.DESCRIPTOR_WORDS`)."""


class DescriptorWalker(wiring.Component):
    """Cell-list words (`CELL_WORD_BITS`, then a last flag) to descriptors for the Fetcher; `taken`
    counts the descriptors handed on since `clear`."""

    def __init__(self):
        super().__init__(
            {
                "words": In(stream.Signature(unsigned(CELL_WORD_BITS + 1))),
                "o": Out(stream.Signature(copy_req_layout())),
                "clear": In(1),
                "taken": Out(32),
            }
        )

    def elaborate(self, platform):
        m = Module()
        held = [Signal(CELL_WORD_BITS, name=f"word{i}") for i in range(DESCRIPTOR_WORDS - 1)]
        n = Signal(range(DESCRIPTOR_WORDS))
        word = self.words.payload[:CELL_WORD_BITS]
        complete = n == DESCRIPTOR_WORDS - 1
        m.d.comb += [
            self.o.valid.eq(self.words.valid & complete),
            self.o.payload.cell.eq(held[0]),
            self.o.payload.op.eq(held[1]),
            self.o.payload.at.eq(held[2]),
            self.o.payload.source.eq(word),
            self.words.ready.eq(~complete | self.o.ready),
        ]
        with m.If(self.words.valid & self.words.ready):
            m.d.sync += n.eq(Mux(complete, 0, n + 1))
            with m.Switch(n):
                for i in range(DESCRIPTOR_WORDS - 1):
                    with m.Case(i):
                        m.d.sync += held[i].eq(word)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.taken.eq(self.taken + 1)
        with m.If(self.clear):
            m.d.sync += [self.taken.eq(0), n.eq(0)]
        return m


class CopyEngine(wiring.Component):
    """One channel's copy loop: a copy to a read command on the host or the cache reader and a write
    command on the cache writer; the source reader's beats to the writer (module docstring)."""

    def __init__(self, addr_bits: int, len_bits: int, port_bits: int):
        cmd = stream.Signature(command_layout(addr_bits, len_bits))
        super().__init__(
            {
                "copy": In(stream.Signature(copy_layout(addr_bits, len_bits))),
                "host_cmd": Out(cmd),
                "cache_cmd": Out(cmd),
                "write_cmd": Out(cmd),
                "host_beats": In(stream.Signature(word_layout(port_bits))),
                "cache_beats": In(stream.Signature(word_layout(port_bits))),
                "write_data": Out(stream.Signature(word_layout(port_bits))),
                "write_done": In(1),
                "idle": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        m.submodules.sources = sources = SyncFIFO(width=1, depth=COPIES)
        c = self.copy.payload
        outstanding = Signal(COPY_OUTSTANDING_BITS)  # writes not yet answered
        # the read and the write command leave together, with the copy's source queued for its beats
        take = (
            self.copy.valid
            & sources.w_rdy
            & self.write_cmd.ready
            & Mux(c.host, self.host_cmd.ready, self.cache_cmd.ready)
        )
        m.d.comb += [
            self.copy.ready.eq(take),
            sources.w_en.eq(take),
            sources.w_data.eq(c.host),
            self.host_cmd.valid.eq(self.copy.valid & c.host & sources.w_rdy & self.write_cmd.ready),
            self.cache_cmd.valid.eq(self.copy.valid & ~c.host & sources.w_rdy & self.write_cmd.ready),
            self.write_cmd.valid.eq(take),
            self.host_cmd.payload.addr.eq(c.src),
            self.cache_cmd.payload.addr.eq(c.src),
            self.write_cmd.payload.addr.eq(c.dst),
            self.host_cmd.payload.len.eq(c.len),
            self.cache_cmd.payload.len.eq(c.len),
            self.write_cmd.payload.len.eq(c.len),
        ]
        host = sources.r_data[0]
        src = Mux(host, self.host_beats.payload.as_value(), self.cache_beats.payload.as_value())
        last = Mux(host, self.host_beats.payload.last, self.cache_beats.payload.last)
        valid = sources.r_rdy & Mux(host, self.host_beats.valid, self.cache_beats.valid)
        moved = valid & self.write_data.ready
        m.d.comb += [
            self.write_data.valid.eq(valid),
            self.write_data.payload.eq(src),
            self.host_beats.ready.eq(sources.r_rdy & host & self.write_data.ready),
            self.cache_beats.ready.eq(sources.r_rdy & ~host & self.write_data.ready),
            sources.r_en.eq(moved & last),  # the copy's last beat: the next copy's source
        ]
        m.d.sync += outstanding.eq(outstanding + take - self.write_done)
        m.d.comb += self.idle.eq((outstanding == 0) & ~sources.r_rdy)
        return m


class Prefetch:
    """The prefetch command's wiring in the top level: `active` while a prefetch run moves data
    (the copy engines then own the channels' readers), the walker in front of the Fetcher's
    `copy_req`, one copy engine and cache writer per channel; `quiet` when every copy is written."""

    def __init__(self, fetch):
        self.fetch = fetch
        self.active = Signal()
        self.walker = DescriptorWalker()
        self.idle: list = []
        self.errors: list = []

    def cells(self, m: Module, search) -> stream.Interface:
        """The stream the I/O router hands cell-list words to: the walker's while `active`, else
        `search` (the Front's step-wise cell list)."""
        m.submodules.prefetch_walker = w = self.walker
        wiring.connect(m, w.o, self.fetch.copy_req)
        words = stream.Signature(unsigned(CELL_WORD_BITS + 1)).create()
        m.d.comb += [
            w.words.valid.eq(words.valid & self.active),
            w.words.payload.eq(words.payload),
            search.valid.eq(words.valid & ~self.active),
            search.payload.eq(words.payload),
            words.ready.eq(Mux(self.active, w.words.ready, search.ready)),
        ]
        return words

    def engine(self, m: Module, c: int, writer) -> list[tuple]:
        """Channel c's copy engine writing through `writer` (an AxiWriter instance on the cache
        port's write half); returns, for the host and the cache reader, (active, the engine's
        command stream, its beat stream) for `IvfPqAccelerator._reader`."""
        pe = self.fetch.pe
        m.submodules[f"copy{c}"] = e = CopyEngine(pe.addr_bits, pe.len_bits, pe.beat_bytes * 8)
        wiring.connect(m, getattr(self.fetch, f"copy{c}"), e.copy)
        m.d.comb += [
            writer.cmd.valid.eq(e.write_cmd.valid),
            writer.cmd.payload.eq(e.write_cmd.payload),
            e.write_cmd.ready.eq(writer.cmd.ready),
            writer.i.valid.eq(e.write_data.valid),
            writer.i.payload.data.eq(e.write_data.payload.data),
            e.write_data.ready.eq(writer.i.ready),
            writer.done.ready.eq(1),
            e.write_done.eq(writer.done.valid),
        ]
        self.idle.append(e.idle)
        self.errors.append(writer.done.valid & writer.done.payload.error)
        return [(self.active, e.host_cmd, e.host_beats), (self.active, e.cache_cmd, e.cache_beats)]

    @property
    def quiet(self):
        """No descriptor in the Fetcher and every copy engine idle."""
        return ~self.fetch.busy & Cat(*self.idle).all()
