"""AXI4 write master PE: (byte address, byte length) commands plus a word stream in, bursts out.

Results (ids, distances) leave a generated accelerator through one of these. It has no HLS
header: HLS builds its write masters from `m_axi` pragmas.

The data stream `i` carries data-bus words laid out as in memory (the byte for address a in
lane a mod bytes-per-word), exactly `transfer_beats(addr, len)` words per command; the master
writes only the bytes inside [addr, addr + len) (WSTRB), so neighbouring data are untouched.
Bursts follow the shared rule (`fanns.hdl.bus.split_bursts`). An AW is issued when fewer than
`outstanding` bursts await their response; W words follow their AW, straight from `i` (no
buffering: `wvalid` is `i.valid` while a burst is open). When every response of a command has
arrived, `done` carries one item whose `error` bit says whether any response was not OKAY.

Timing model (`transfer_cycles`): the same event recurrence style as the read master, for a
memory that answers `mem_latency` cycles after a burst's last W word and a data source that is
always valid: AW loads one cycle after the previous, once burst i-`outstanding` is answered and
the W/B bookkeeping FIFOs have room; W words go one per cycle from the cycle after the AW load;
`done` leaves one cycle after the command's last response. `test_axi_writer` checks it against
simulation cycle for cycle (tolerance 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

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

IDEAL_MEMORY_LATENCY = 2


@dataclass(frozen=True)
class AxiWriter(PE):
    data_width: int = 512
    addr_width: int = 64
    max_burst: int = 64
    outstanding: int = 4
    len_bits: int = 32

    name: ClassVar[str] = "axi_writer"
    summary: ClassVar[str] = "AXI4 write master: commands + word stream to INCR bursts with strobes, done per command"
    timing_formula: ClassVar[str] = (
        "L = mem_latency + 4 (command to done); II = 1 word while outstanding bursts cover the response latency"
    )
    hls_header: ClassVar[str] = ""
    testbench: ClassVar[str] = "tb_axi_writer"
    calibration_points: ClassVar[tuple] = (
        {"data_width": 512, "addr_width": 64, "max_burst": 64, "outstanding": 4, "len_bits": 32},
        {"data_width": 512, "addr_width": 64, "max_burst": 16, "outstanding": 8, "len_bits": 32},
        {"data_width": 256, "addr_width": 64, "max_burst": 64, "outstanding": 4, "len_bits": 32},
        {"data_width": 128, "addr_width": 48, "max_burst": 32, "outstanding": 16, "len_bits": 24},
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

    @property
    def beat_bytes(self) -> int:
        return self.data_width // 8

    @property
    def burst_beats(self) -> int:
        return max_burst_beats(self.beat_bytes, self.max_burst)

    @property
    def info_depth(self) -> int:
        return self.outstanding + 2

    # -- reference model ------------------------------------------------------------------------
    def bursts(self, addr: int, nbytes: int) -> list[tuple[int, int]]:
        return split_bursts(addr, nbytes, self.beat_bytes, self.max_burst)

    def write(self, memory: bytearray, addr: int, nbytes: int, words: list[int]) -> list[int]:
        """Apply one command to `memory` (in place); return the WSTRB of each word."""
        b = self.beat_bytes
        base = addr - addr % b
        keeps = beat_keeps(addr, nbytes, b)
        for i, (word, keep) in enumerate(zip(words, keeps)):
            raw = int(word).to_bytes(b, "little")
            for j in range(b):
                if keep >> j & 1:
                    memory[base + i * b + j] = raw[j]
        return keeps

    # -- timing ---------------------------------------------------------------------------------
    def transfer_cycles(self, commands: list[tuple[int, int]], mem_latency: int = IDEAL_MEMORY_LATENCY) -> list[int]:
        """Cycle of each command's `done` handshake, counting the first command's handshake as
        cycle 0; -1 for zero-length commands (they produce no `done`)."""
        o, q = self.outstanding, self.info_depth
        loads, w_end, bresp = [], [], []
        w_prev, cmd_at, done = -1, 0, []
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
                    t = max(t, bresp[i - o] + 1)
                if i >= q:
                    t = max(t, w_end[i - q] + 1, bresp[i - q] + 1)
                loads.append(t)
                w_prev = max(t + 1, w_prev + 1) + n - 1
                w_end.append(w_prev)
                bresp.append(max(w_prev + mem_latency, bresp[-1] + 1 if bresp else 0))
            cmd_at = loads[-1]
            done.append(bresp[-1] + 1)
        return done

    def latency(self, mem_latency: int = IDEAL_MEMORY_LATENCY) -> int:
        return mem_latency + 4

    def ii(self) -> int:
        return 1

    def cycles(self, n: int, mem_latency: int = IDEAL_MEMORY_LATENCY) -> int:
        """Cycles to write `n` words as one aligned command (command to `done`, inclusive)."""
        return 0 if n <= 0 else self.transfer_cycles([(0, n * self.beat_bytes)], mem_latency)[0] + 1

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        return {
            "data_width": self.data_width,
            "addr_width": self.addr_width,
            "counter_bits": ceil_log2(self.outstanding + 1) + self.len_bits,
        }

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return AxiWriterComponent(self)


class AxiWriterComponent(wiring.Component):
    """Amaranth implementation of `AxiWriter` (see the module docstring)."""

    def __init__(self, pe: AxiWriter):
        self.pe = pe
        super().__init__(
            {
                "cmd": In(stream.Signature(command_layout(pe.addr_width, pe.len_bits))),
                "i": In(stream.Signature(data.StructLayout({"data": pe.data_width}))),
                "done": Out(stream.Signature(data.StructLayout({"error": 1}))),
                "m_axi": Out(axi4_signature(pe.addr_width, pe.data_width, read=False)),
            }
        )

    def elaborate(self, platform):
        pe, bus = self.pe, self.m_axi
        m = Module()
        m.submodules.split = split = BurstSplitter(pe.addr_width, pe.len_bits, pe.beat_bytes, pe.max_burst)
        wiring.connect(m, wiring.flipped(self.cmd), split.cmd)
        info_shape = burst_layout(pe.addr_width, pe.beat_bytes, pe.burst_beats)
        m.submodules.wq = wq = fifo.SyncFIFO(width=info_shape.size, depth=pe.info_depth)
        m.submodules.bq = bq = fifo.SyncFIFO(width=1, depth=pe.info_depth)

        burst = split.bursts.payload
        inflight = Signal(range(pe.outstanding + 1))
        load = Signal()
        m.d.comb += [
            split.bursts.ready.eq((~bus.awvalid | bus.awready) & (inflight < pe.outstanding) & wq.w_rdy & bq.w_rdy),
            load.eq(split.bursts.valid & split.bursts.ready),
            wq.w_data.eq(burst),
            wq.w_en.eq(load),
            bq.w_data.eq(burst.last),
            bq.w_en.eq(load),
            bus.awid.eq(0),
            bus.awsize.eq(exact_log2(pe.beat_bytes)),
            bus.awburst.eq(BURST_INCR),
            bus.awcache.eq(CACHE_MODIFIABLE),
            bus.awprot.eq(0),
        ]
        with m.If(load):
            m.d.sync += [bus.awvalid.eq(1), bus.awaddr.eq(burst.addr), bus.awlen.eq(burst.beats - 1)]
        with m.Elif(bus.awready):
            m.d.sync += bus.awvalid.eq(0)

        # W: words straight from `i` while a burst is open.
        head = data.View(info_shape, wq.r_data)
        beat = Signal(range(max(2, pe.burst_beats)))
        first_beat, last_beat, w_hs = Signal(), Signal(), Signal()
        m.d.comb += [
            first_beat.eq(beat == 0),
            last_beat.eq(beat == head.beats - 1),
            bus.wvalid.eq(self.i.valid & wq.r_rdy),
            bus.wdata.eq(self.i.payload.data),
            bus.wstrb.eq(keep_mask(m, pe.beat_bytes, head, first_beat, last_beat)),
            bus.wlast.eq(last_beat),
            self.i.ready.eq(bus.wready & wq.r_rdy),
            w_hs.eq(bus.wvalid & bus.wready),
            wq.r_en.eq(w_hs & last_beat),
        ]
        with m.If(w_hs):
            m.d.sync += beat.eq(Mux(last_beat, 0, beat + 1))

        # B: count responses; the command's last one emits `done`.
        b_hs = Signal()
        error = Signal()
        m.d.comb += [
            bus.bready.eq(bq.r_rdy & (~self.done.valid | self.done.ready)),
            b_hs.eq(bus.bvalid & bus.bready),
            bq.r_en.eq(b_hs),
        ]
        with m.If(self.done.valid & self.done.ready):
            m.d.sync += self.done.valid.eq(0)
        with m.If(b_hs):
            with m.If(bq.r_data[0]):
                m.d.sync += [self.done.valid.eq(1), self.done.payload.error.eq(error | (bus.bresp != 0)), error.eq(0)]
            with m.Else():
                m.d.sync += error.eq(error | (bus.bresp != 0))
        m.d.sync += inflight.eq(inflight + load - b_hs)
        return m
