"""AXI4 read master PE: (byte address, byte length) commands in, data-bus words out, in order.

Each memory channel of a generated accelerator (PQ codes, vectors, neighbour lists) is read
through one of these. It has no HLS header: HLS builds its read masters from `m_axi` pragmas.

Datapath: a `BurstSplitter` (INCR bursts of at most `max_burst` beats, never crossing 4 KiB),
an AR register, a data FIFO of `outstanding * burst` words, and an output stage. A burst is
issued only when fewer than `outstanding` are in flight *and* the data FIFO has room reserved
for all of its beats (credits), so R is never stalled and back-pressure from the consumer never
loses data. The output `o` carries each word with `keep` (the bytes inside the command's range,
AXI4-Stream tkeep semantics) and `last` on the command's final word; a zero-length command
produces nothing. `error` goes high (sticky) on any non-OKAY response.

Timing model (`transfer_cycles`): an event-exact recurrence over bursts and beats for a memory
whose first read beat comes `mem_latency` cycles after AR (pipelined, one beat per cycle) and a
consumer that is always ready. Burst i loads into AR when (a) one cycle after burst i-1,
(b) burst i-`outstanding` has returned its last beat, (c) the FIFO has credits for it, (d) the
burst-info FIFO has room; AR handshakes a cycle later, data follow after `mem_latency`, and
words leave 2 cycles after arriving. One long transfer runs at one word per cycle when
`outstanding * burst >= mem_latency + burst + 3`, else at about `outstanding * burst` words
per `mem_latency + burst + 3` cycles (`words_per_cycle` gives the exact model value).
`test_axi_reader` checks the model against simulation cycle for cycle (tolerance 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from amaranth import Module, Mux, Signal
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2, exact_log2

from fanns.hdl.bus import (
    BURST_INCR,
    CACHE_MODIFIABLE,
    BurstSplitter,
    axi4_signature,
    beat_keeps,
    burst_layout,
    command_layout,
    keep_mask,
    max_burst_beats,
    split_bursts,
)
from fanns.pe.base import PE
from fanns.pe.stream_fifo import fifo_features

IDEAL_MEMORY_LATENCY = 2
FIFO_LATENCY = 2  # a word written into the data FIFO leaves two cycles later


@dataclass(frozen=True)
class AxiReader(PE):
    data_width: int = 512
    addr_width: int = 64
    max_burst: int = 64
    outstanding: int = 4
    len_bits: int = 32

    name: ClassVar[str] = "axi_reader"
    summary: ClassVar[str] = "AXI4 read master: commands to in-order words, INCR bursts, outstanding reads, credits"
    timing_formula: ClassVar[str] = (
        "L = mem_latency + 5; II = 1 word while outstanding*burst >= mem_latency + burst + 3"
    )
    hls_header: ClassVar[str] = ""
    testbench: ClassVar[str] = "tb_axi_reader"
    calibration_points: ClassVar[tuple] = (
        {"data_width": 512, "addr_width": 64, "max_burst": 64, "outstanding": 4, "len_bits": 32},
        {"data_width": 512, "addr_width": 64, "max_burst": 32, "outstanding": 8, "len_bits": 32},
        {"data_width": 256, "addr_width": 64, "max_burst": 64, "outstanding": 4, "len_bits": 32},
        {"data_width": 256, "addr_width": 40, "max_burst": 16, "outstanding": 16, "len_bits": 24},
        {"data_width": 128, "addr_width": 48, "max_burst": 32, "outstanding": 8, "len_bits": 32},
        {"data_width": 64, "addr_width": 64, "max_burst": 64, "outstanding": 8, "len_bits": 32},
        {"data_width": 64, "addr_width": 32, "max_burst": 16, "outstanding": 2, "len_bits": 20},
        {"data_width": 32, "addr_width": 32, "max_burst": 256, "outstanding": 2, "len_bits": 32},
    )

    def validate(self) -> None:
        self.require(
            self.data_width in (32, 64, 128, 256, 512, 1024),
            f"data_width={self.data_width}",
            "use 32..1024, a power of 2",
        )
        self.require(12 <= self.addr_width <= 64, f"addr_width={self.addr_width} out of range 12..64")
        self.require(
            self.max_burst in (1, 2, 4, 8, 16, 32, 64, 128, 256),
            f"max_burst={self.max_burst}",
            "a power of 2 up to 256 beats",
        )
        self.require(1 <= self.outstanding <= 64, f"outstanding={self.outstanding} out of range 1..64")
        self.require(8 <= self.len_bits <= self.addr_width, f"len_bits={self.len_bits} out of range 8..addr_width")

    # -- derived sizes --------------------------------------------------------------------------
    @property
    def beat_bytes(self) -> int:
        return self.data_width // 8

    @property
    def burst_beats(self) -> int:
        return max_burst_beats(self.beat_bytes, self.max_burst)

    @property
    def fifo_depth(self) -> int:
        return max(4, self.outstanding * self.burst_beats)

    @property
    def info_depth(self) -> int:
        return self.outstanding + 4

    # -- reference model ------------------------------------------------------------------------
    def bursts(self, addr: int, nbytes: int) -> list[tuple[int, int]]:
        """The (address, beats) of every burst the master issues for one command."""
        return split_bursts(addr, nbytes, self.beat_bytes, self.max_burst)

    def words(self, memory: bytes | np.ndarray, addr: int, nbytes: int) -> list[tuple[int, int, int]]:
        """(data, keep, last) of every output word of one command, read from `memory`."""
        mem = memory if isinstance(memory, (bytes, bytearray)) else bytes(memory)
        b = self.beat_bytes
        base = addr - addr % b
        keeps = beat_keeps(addr, nbytes, b)
        n = len(keeps)
        return [
            (int.from_bytes(mem[base + i * b : base + (i + 1) * b], "little"), keeps[i], int(i == n - 1))
            for i in range(n)
        ]

    # -- timing ---------------------------------------------------------------------------------
    def transfer_cycles(self, commands: list[tuple[int, int]], mem_latency: int = IDEAL_MEMORY_LATENCY) -> list[int]:
        """Cycle of each command's last output word, counting the first command's handshake as
        cycle 0 (so the span of a lone command is the value + 1); -1 for zero-length commands.
        Commands are offered back to back; memory and consumer as in the module docstring."""
        o, d, q = self.outstanding, self.fifo_depth, self.info_depth
        loads, rlast, burst_pop = [], [], []
        pops: list[int] = []  # pop cycle of every word so far
        r_prev, cmd_at, done = -1, 0, []
        for addr, nbytes in commands:
            bursts = self.bursts(addr, nbytes)
            if not bursts:
                done.append(-1)
                cmd_at += 1
                continue
            for k, (_, n) in enumerate(bursts):
                i = len(loads)
                t = cmd_at + 1 if k == 0 else loads[-1] + 1
                if i:
                    t = max(t, loads[-1] + 1)
                if i >= o:
                    t = max(t, rlast[i - o] + 1)
                need = len(pops) + n - d  # words that must have left before this burst fits
                if need > 0:
                    t = max(t, pops[need - 1] + 1)
                if i >= q:
                    t = max(t, burst_pop[i - q] + 1)
                loads.append(t)
                first = max(t + 1 + mem_latency, r_prev + 1)
                for j in range(n):
                    pops.append(max(first + j + FIFO_LATENCY, pops[-1] + 1 if pops else 0))
                r_prev = first + n - 1
                rlast.append(r_prev)
                burst_pop.append(pops[-1])
            cmd_at = loads[-1]
            done.append(pops[-1])
        return done

    def latency(self, mem_latency: int = IDEAL_MEMORY_LATENCY) -> int:
        return mem_latency + 3 + FIFO_LATENCY

    def ii(self) -> int:
        return 1

    def cycles(self, n: int, mem_latency: int = IDEAL_MEMORY_LATENCY) -> int:
        """Cycles to read `n` words as one aligned command (first handshake to last word, inclusive)."""
        return 0 if n <= 0 else self.transfer_cycles([(0, n * self.beat_bytes)], mem_latency)[0] + 1

    def words_per_cycle(self, mem_latency: int = IDEAL_MEMORY_LATENCY) -> float:
        """Sustained throughput of a long transfer (from the exact model over 64 full bursts)."""
        n = 64 * self.burst_beats
        return n / (self.cycles(2 * n, mem_latency) - self.cycles(n, mem_latency))

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        return {
            "data_width": self.data_width,
            "addr_width": self.addr_width,
            "counter_bits": ceil_log2(self.fifo_depth + 1) + ceil_log2(self.outstanding + 1) + self.len_bits,
            **fifo_features(self.data_width, self.fifo_depth, prefix="fifo_"),
        }

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return AxiReaderComponent(self)


def word_layout(data_width: int) -> data.StructLayout:
    """A data-bus word on a stream: data, byte-keep mask, last word of its command."""
    return data.StructLayout({"data": data_width, "keep": data_width // 8, "last": 1})


class AxiReaderComponent(wiring.Component):
    """Amaranth implementation of `AxiReader` (see the module docstring)."""

    def __init__(self, pe: AxiReader):
        self.pe = pe
        super().__init__(
            {
                "cmd": In(stream.Signature(command_layout(pe.addr_width, pe.len_bits))),
                "o": Out(stream.Signature(word_layout(pe.data_width))),
                "m_axi": Out(axi4_signature(pe.addr_width, pe.data_width, write=False)),
                "error": Out(1),
            }
        )

    def elaborate(self, platform):
        pe, bus = self.pe, self.m_axi
        m = Module()
        m.submodules.split = split = BurstSplitter(pe.addr_width, pe.len_bits, pe.beat_bytes, pe.max_burst)
        wiring.connect(m, wiring.flipped(self.cmd), split.cmd)
        info_shape = burst_layout(pe.addr_width, pe.beat_bytes, pe.burst_beats)
        m.submodules.info = info = fifo.SyncFIFO(width=info_shape.size, depth=pe.info_depth)
        m.submodules.data = dfifo = fifo.SyncFIFOBuffered(width=pe.data_width, depth=pe.fifo_depth)

        burst = split.bursts.payload
        inflight = Signal(range(pe.outstanding + 1))
        credits = Signal(range(pe.fifo_depth + 1), init=pe.fifo_depth)
        load = Signal()
        m.d.comb += [
            split.bursts.ready.eq(
                (~bus.arvalid | bus.arready) & (inflight < pe.outstanding) & (credits >= burst.beats) & info.w_rdy
            ),
            load.eq(split.bursts.valid & split.bursts.ready),
            info.w_data.eq(burst),
            info.w_en.eq(load),
        ]
        m.d.comb += [
            bus.arid.eq(0),
            bus.arsize.eq(exact_log2(pe.beat_bytes)),
            bus.arburst.eq(BURST_INCR),
            bus.arcache.eq(CACHE_MODIFIABLE),
            bus.arprot.eq(0),
        ]
        with m.If(load):
            m.d.sync += [bus.arvalid.eq(1), bus.araddr.eq(burst.addr), bus.arlen.eq(burst.beats - 1)]
        with m.Elif(bus.arready):
            m.d.sync += bus.arvalid.eq(0)

        # R: every beat has a reserved FIFO slot, so rready stays high.
        r_hs, r_done = Signal(), Signal()
        m.d.comb += [
            bus.rready.eq(dfifo.w_rdy),
            r_hs.eq(bus.rvalid & bus.rready),
            r_done.eq(r_hs & bus.rlast),
            dfifo.w_data.eq(bus.rdata),
            dfifo.w_en.eq(bus.rvalid),
        ]
        with m.If(r_hs & (bus.rresp != 0)):
            m.d.sync += self.error.eq(1)
        m.d.sync += inflight.eq(inflight + load - r_done)

        # Output: words with keep/last from the head of the burst-info FIFO.
        head = data.View(info_shape, info.r_data)
        beat = Signal(range(max(2, pe.burst_beats)))
        first_beat, last_beat, pop = Signal(), Signal(), Signal()
        m.d.comb += [
            first_beat.eq(beat == 0),
            last_beat.eq(beat == head.beats - 1),
            self.o.valid.eq(dfifo.r_rdy & info.r_rdy),
            self.o.payload.data.eq(dfifo.r_data),
            self.o.payload.keep.eq(keep_mask(m, pe.beat_bytes, head, first_beat, last_beat)),
            self.o.payload.last.eq(last_beat & head.last),
            pop.eq(self.o.valid & self.o.ready),
            dfifo.r_en.eq(pop),
            info.r_en.eq(pop & last_beat),
        ]
        with m.If(pop):
            m.d.sync += beat.eq(Mux(last_beat, 0, beat + 1))
        m.d.sync += credits.eq(credits - Mux(load, burst.beats, 0) + pop)
        return m
