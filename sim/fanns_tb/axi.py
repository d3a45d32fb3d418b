"""AXI helpers for the cocotb testbenches: bus lookup, random pauses, handshake logs, a latency RAM.

Ports follow the "Bus interfaces" convention of CONTRIBUTING.md: an interface member `m_axi`
appears as `m_axi__araddr`, ..., so cocotbext-axi buses are built with `bus_separator="__"`; a
generated project's top level is an RTL kernel (`m_axi_io_araddr`, `s_axi_control_awaddr`, clock
`ap_clk`, active-low `ap_rst_n`): pass `separator="_"`.

`LatencyAxiRam` is cocotbext-axi's `AxiRam` (its read and write halves) with a fixed, pipelined
memory latency: the first read beat of a burst is handed over exactly `read_latency` cycles after
its AR handshake (or right after the previous beat, whichever is later), and a write response
`write_latency` cycles after the burst's last W beat, with any number of requests in flight.
`read_rate` < 1 models a memory of less bandwidth: read beats leave at most `read_rate` per cycle on
average (a beat 1 / read_rate cycles after the previous one, fractions carried over). That is the
memory the AXI masters' timing model assumes; the benches also log every handshake so the tests can
check the memory behaved so.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

import cocotb
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiBus, AxiLiteBus, AxiRamRead, AxiRamWrite, AxiReadBus, AxiWriteBus
from cocotbext.axi.memory import Memory

from fanns_tb import Cycles, clock_reset

# AxiRam hands a queued beat to the bus two cycles after queuing it (queue, drive, handshake).
RAM_BASE_LATENCY = 2


def axi_bus(dut, prefix: str, separator: str = "__") -> AxiBus:
    return AxiBus.from_prefix(dut, prefix, bus_separator=separator)


def axil_bus(dut, prefix: str, separator: str = "__") -> AxiLiteBus:
    """`separator` "_" for the ports of an RTL kernel (`s_axi_control_awaddr`)."""
    return AxiLiteBus.from_prefix(dut, prefix, bus_separator=separator)


def random_pause(probability: float, seed: int) -> Iterator[bool]:
    """An endless pause pattern: True (stall) with the given probability each cycle."""
    rng = random.Random(seed)
    while True:
        yield rng.random() < probability


class Handshakes:
    """Logs the cycle (and optionally payload signals) of every valid&ready handshake."""

    def __init__(self, dut, valid: str, ready: str, cycles: Cycles, fields: tuple[str, ...] = ()):
        self.clk = clock_reset(dut)[0]
        self.valid, self.ready = getattr(dut, valid), getattr(dut, ready)
        self.fields = [getattr(dut, f) for f in fields]
        self.cycles = cycles
        self.times: list[int] = []
        self.values: list[tuple[int, ...]] = []
        self.stalls = 0  # cycles with valid high and ready low

    def start(self) -> Handshakes:
        cocotb.start_soon(self._run())
        return self

    async def _run(self) -> None:
        while True:
            await RisingEdge(self.clk)
            if int(self.valid.value):
                if int(self.ready.value):
                    self.times.append(self.cycles.now)
                    self.values.append(tuple(int(f.value) for f in self.fields))
                else:
                    self.stalls += 1


class LatencyAxiRam(Memory):
    """cocotbext-axi's AxiRam (its read and/or write half) with pipelined latencies (see above)."""

    def __init__(
        self,
        dut,
        prefix: str,
        size: int,
        cycles: Cycles,
        read_latency: int = RAM_BASE_LATENCY,
        write_latency: int = RAM_BASE_LATENCY,
        read: bool = True,
        write: bool = True,
        read_rate: float = 1.0,
        separator: str = "__",
    ):
        assert read_latency >= RAM_BASE_LATENCY and write_latency >= RAM_BASE_LATENCY and 0 < read_rate <= 1
        super().__init__(size)
        clk, rst, level = clock_reset(dut)
        self.clk, self.cycles = clk, cycles
        sep = separator
        self.read_latency, self.write_latency = read_latency, write_latency
        self.read_rate = read_rate
        self._next_slot = 0.0
        self.read_if = self.write_if = None
        if read:
            bus = AxiReadBus.from_prefix(dut, prefix, bus_separator=sep)
            self.read_if = AxiRamRead(bus, clk, rst, level, mem=self.mem)
            self.read_if.ar_channel.queue_occupancy_limit = 1 << 16
            self.ar_log = Handshakes(dut, f"{prefix}{sep}arvalid", f"{prefix}{sep}arready", cycles).start()
            self._ar_served = 0
            self._bursts_read = 0
            self._next_is_first = True
            self._send_beat = self.read_if.r_channel.send
            self.read_if.r_channel.send = self._delayed_beat
        if write:
            bus = AxiWriteBus.from_prefix(dut, prefix, bus_separator=sep)
            self.write_if = AxiRamWrite(bus, clk, rst, level, mem=self.mem)
            self.write_if.aw_channel.queue_occupancy_limit = 1 << 16
            self.write_if.b_channel.queue_occupancy_limit = 1 << 16  # delayed responses never wait, so stay in order
            self.aw_log = Handshakes(dut, f"{prefix}{sep}awvalid", f"{prefix}{sep}awready", cycles).start()
            self._bursts_written = 0
            self._send_response = self.write_if.b_channel.send
            self.write_if.b_channel.send = self._delayed_response

    async def _until(self, cycle: int) -> None:
        while self.cycles.now < cycle:
            await RisingEdge(self.clk)

    async def _delayed_beat(self, beat) -> None:
        if self._next_is_first:
            log = self.ar_log.times
            # The AR log may not have recorded this edge's handshake yet: then it is now.
            accepted = log[self._ar_served] if self._ar_served < len(log) else self.cycles.now
            self._ar_served += 1
            await self._until(accepted + self.read_latency - RAM_BASE_LATENCY)
        if self.read_rate < 1.0:  # a narrower memory: beats at least 1 / read_rate cycles apart
            due = max(float(self.cycles.now), self._next_slot)
            await self._until(math.ceil(due))
            self._next_slot = due + 1.0 / self.read_rate
        self._next_is_first = bool(int(beat.rlast))
        self._bursts_read += self._next_is_first
        await self._send_beat(beat)

    async def _delayed_response(self, b) -> None:
        due = self.cycles.now + self.write_latency - RAM_BASE_LATENCY

        async def later():
            await self._until(due)
            self._bursts_written += 1
            await self._send_response(b)

        cocotb.start_soon(later())

    def outstanding(self) -> str:
        """The port's requests in flight, for a watchdog's report ("idle" when none)."""
        parts = []
        if self.read_if and int(self.ar_log.valid.value) and not int(self.ar_log.ready.value):
            parts.append("a read request not accepted")
        if self.write_if and int(self.aw_log.valid.value) and not int(self.aw_log.ready.value):
            parts.append("a write request not accepted")
        if self.read_if and len(self.ar_log.times) > self._bursts_read:
            parts.append(f"{len(self.ar_log.times) - self._bursts_read} read burst(s) not finished")
        if self.write_if and len(self.aw_log.times) > self._bursts_written:
            parts.append(f"{len(self.aw_log.times) - self._bursts_written} write burst(s) not answered")
        return ", ".join(parts) or "idle"

    def pause(self, probability: float, seed: int) -> None:
        """Random ready/valid pauses on every channel the RAM drives."""
        channels = []
        if self.read_if:
            channels += [self.read_if.ar_channel, self.read_if.r_channel]
        if self.write_if:
            channels += [self.write_if.aw_channel, self.write_if.w_channel, self.write_if.b_channel]
        for k, ch in enumerate(channels):
            if probability:
                ch.set_pause_generator(random_pause(probability, seed + k))
