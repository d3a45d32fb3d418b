"""Helpers shared by the cocotb testbenches: parameters, reports, clocked stream drivers.

A testbench reads its parameters with `params()` and leaves measured values for the Python
side with `report(...)`. Streams follow `amaranth.lib.stream`: ports `<name>__valid`,
`<name>__ready`, `<name>__payload`; a transfer happens on a rising edge where valid and ready
are both high.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterable

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge
from cocotb.utils import get_sim_time


def params() -> dict:
    return json.loads(os.environ.get("FANNS_TB_PARAMS", "{}"))


def report(**values) -> None:
    """Merge `values` into the JSON report the Python side reads back."""
    path = os.environ.get("FANNS_TB_OUT")
    if not path:
        return
    data = json.load(open(path)) if os.path.exists(path) else {}
    data.update(values)
    with open(path, "w") as f:
        json.dump(data, f)


PERIOD_NS = 10


def clock_reset(dut) -> tuple:
    """(clock, reset, reset active level) of `dut`: `ap_clk` and the active-low `ap_rst_n` of an
    RTL kernel (a generated project's top level), else Amaranth's `clk` and `rst`."""
    if hasattr(dut, "ap_clk"):
        return dut.ap_clk, dut.ap_rst_n, False
    return dut.clk, dut.rst, True


async def start(dut, period_ns: int = PERIOD_NS, reset_cycles: int = 2) -> None:
    """Start the clock and hold the reset for `reset_cycles` (`clock_reset` names them)."""
    clk, rst, level = clock_reset(dut)
    cocotb.start_soon(Clock(clk, period_ns, unit="ns").start())
    rst.value = int(level)
    for _ in range(reset_cycles):
        await RisingEdge(clk)
    rst.value = int(not level)


class Cycles:
    """Clock-cycle time: `now` is the index of the current clock period (from simulation time).

    Derived from simulation time rather than counted by a coroutine, so every coroutine woken by
    the same rising edge reads the same value.
    """

    def __init__(self, dut, period_ns: int = PERIOD_NS):
        self.period = period_ns

    @property
    def now(self) -> int:
        return int(get_sim_time(unit="ns") // self.period)


def pack(fields: Iterable[tuple[int, int]]) -> int:
    """Pack (value, width) pairs LSB-first, as Amaranth lays out a StructLayout."""
    out, shift = 0, 0
    for value, width in fields:
        out |= (int(value) & ((1 << width) - 1)) << shift
        shift += width
    return out


def unpack(word: int, widths: Iterable[int]) -> list[int]:
    out = []
    for width in widths:
        out.append(word & ((1 << width) - 1))
        word >>= width
    return out


class StreamSource:
    """Drives a valid/ready stream from a list of payload integers, with random bubbles."""

    def __init__(self, dut, name: str, bubble: float = 0.0, seed: int = 0):
        self.valid = getattr(dut, f"{name}__valid")
        self.ready = getattr(dut, f"{name}__ready")
        self.payload = getattr(dut, f"{name}__payload")
        self.clk = dut.clk
        self.bubble = bubble
        self.rng = random.Random(seed)
        self.valid.value = 0
        self.sent_cycles: list[int] = []

    async def send(self, items: Iterable[int], cycles: Cycles | None = None) -> None:
        for item in items:
            while self.bubble and self.rng.random() < self.bubble:
                self.valid.value = 0
                await RisingEdge(self.clk)
            self.valid.value = 1
            self.payload.value = int(item)
            while True:
                await RisingEdge(self.clk)
                if int(self.ready.value):
                    break
            if cycles is not None:
                self.sent_cycles.append(cycles.now)
        self.valid.value = 0


class StreamSink:
    """Accepts a valid/ready stream with random back-pressure and records payloads and cycles."""

    def __init__(self, dut, name: str, backpressure: float = 0.0, seed: int = 1):
        self.valid = getattr(dut, f"{name}__valid")
        self.ready = getattr(dut, f"{name}__ready")
        self.payload = getattr(dut, f"{name}__payload")
        self.clk = dut.clk
        self.backpressure = backpressure
        self.rng = random.Random(seed)
        self.items: list[int] = []
        self.cycles: list[int] = []
        self.ready.value = 0

    def start(self, counter: Cycles | None = None) -> None:
        cocotb.start_soon(self._run(counter))

    async def _run(self, counter: Cycles | None) -> None:
        ready = False
        while True:
            ready = not (self.backpressure and self.rng.random() < self.backpressure)
            self.ready.value = int(ready)
            await RisingEdge(self.clk)
            if ready and int(self.valid.value):
                self.items.append(int(self.payload.value))
                self.cycles.append(counter.now if counter else 0)

    async def wait_for(self, n: int, timeout_cycles: int = 10_000_000) -> list[int]:
        for _ in range(timeout_cycles):
            if len(self.items) >= n:
                return self.items[:n]
            await RisingEdge(self.clk)
        raise TimeoutError(f"sink received {len(self.items)} of {n} items")


async def backdoor_read(dut, word_bytes: int, byte_addr: int, nbytes: int) -> bytes:
    """`nbytes` from `byte_addr` of a bench memory through its back door (`bd_addr` in, `bd_rdata`
    out one cycle later: one word per cycle), as the whole-accelerator benches keep their memories
    in RTL; a bench with several memories selects one first (`bd_sel`)."""
    first, count = byte_addr // word_bytes, -(-nbytes // word_bytes)
    raw = bytearray()
    for i in range(first, first + count + 1):
        dut.bd_addr.value = i
        await RisingEdge(dut.clk)
        if i > first:
            raw += int(dut.bd_rdata.value).to_bytes(word_bytes, "little")
    return bytes(raw[:nbytes])
