"""The host side of the compiled whole-accelerator benches (`fanns.tools.vmodel`), shared by the
IVF-PQ (`fanns.sim.ivfpq.fast`) and graph (`fanns.sim.graph.rtl`) benches: reset, AXI4-Lite
accesses pin by pin on the bench's `s_axil__*` ports, registers by name from a register map, and
the memory images loaded and results read in a bench memory's word array in place (`load`,
`read`: no clock cycle; `BACKDOOR_WRITE` / `BACKDOOR_READ` name a `SimMemory`'s clocked back-door
ports, one word a cycle, which the cocotb graph bench loads through). Every register access is a few
clock cycles of `Model.step`; nothing runs per cycle in Python while the accelerator works.
"""

from __future__ import annotations

from pathlib import Path

from fanns.errors import FannsError
from fanns.hdl.regmap import RegMap
from fanns.tools.vmodel import Model

AXIL = "s_axil__"
BACKDOOR_WRITE = ("bd_addr", "bd_wdata", "bd_we")
BACKDOOR_READ = ("bd_addr", "bd_rdata")


def check_trace(trace: Path | None, harness: str) -> None:
    """Waveforms come from the compiled ("fast") harness only."""
    if trace is not None and harness != "fast":
        raise FannsError("waveform traces come from the fast harness", hint="leave out --harness cocotb")


def reset(model: Model, cycles: int = 2) -> None:
    """Hold Amaranth's active-high `rst` for `cycles` rising edges, every host valid/ready low."""
    for sig in ("awvalid", "wvalid", "arvalid", "bready", "rready"):
        model.poke(AXIL + sig, 0)
    model.poke("rst", 1)
    model.step(cycles)
    model.poke("rst", 0)


class AxilHost:
    """AXI4-Lite accesses on the model's `s_axil__*` ports, one at a time."""

    def __init__(self, model: Model):
        self.m = model

    def write(self, addr: int, value: int) -> int:
        """One write; returns BRESP."""
        for name, v in (("awaddr", addr), ("wdata", value & 0xFFFFFFFF), ("wstrb", 0xF)):
            self.m.poke(AXIL + name, v)
        self.m.poke(AXIL + "bready", 1)
        self._offer("aw", "w")
        return self._take("b", "bresp")

    def read(self, addr: int) -> int:
        """One read; returns RDATA."""
        self.m.poke(AXIL + "araddr", addr)
        self.m.poke(AXIL + "rready", 1)
        self._offer("ar")
        return self._take("r", "rdata")

    def _offer(self, *channels: str) -> None:
        """Raise `valid` on the request channels; each drops it after the edge that accepts it."""
        m = self.m
        waiting = set(channels)
        for ch in waiting:
            m.poke(AXIL + ch + "valid", 1)
        while waiting:
            accepted = [ch for ch in waiting if m.peek(AXIL + ch + "ready")]
            m.step()
            for ch in accepted:
                m.poke(AXIL + ch + "valid", 0)
                waiting.discard(ch)

    def _take(self, channel: str, field: str) -> int:
        """Wait for the response channel's `valid` (its `ready` is up), read `field`, complete it."""
        m = self.m
        while not m.peek(AXIL + channel + "valid"):
            m.step()
        value = m.peek(AXIL + field)
        m.step()
        m.poke(AXIL + channel + "ready", 0)
        return value


class Csr:
    """Registers by name (`RegMap.word_slices`), at `base` bytes (a QPP's window in an across-query
    bench); a response that is not OKAY is counted in `bad`, or raised with `strict`."""

    def __init__(self, host: AxilHost, regmap: RegMap, base: int = 0, strict: bool = True):
        self.host, self.regmap, self.base, self.strict = host, regmap, base, strict
        self.bad = 0

    def write_word(self, offset: int, value: int) -> None:
        if self.host.write(self.base + offset, value):
            self.bad += 1
            if self.strict:
                raise RuntimeError(f"AXI4-Lite write to {self.base + offset:#x} was not OKAY")

    def read_word(self, offset: int) -> int:
        return self.host.read(self.base + offset)

    def write(self, name: str, value: int) -> None:
        for offset, wbit, rbit, bits in self.regmap[name].word_slices():
            self.write_word(offset, ((value >> rbit) & ((1 << bits) - 1)) << wbit)

    def read(self, name: str) -> int:
        out = 0
        for offset, wbit, rbit, bits in self.regmap[name].word_slices():
            out |= ((self.read_word(offset) >> wbit) & ((1 << bits) - 1)) << rbit
        return out


def load(
    model: Model, image: bytes, word_bytes: int, first_word: int = 0, zeroed: bool = True, memory: str = ""
) -> None:
    """Write `image` (padded to whole words) at word `first_word` of the bench memory `memory` (a
    component of its hierarchical name, e.g. "mem_io"; "": the bench's only memory), in place:
    no clock cycle runs, so the cycles of the queries are those after the load with or without it
    (the stall LFSRs and the memory's cycle counter do not advance: with random stalls their
    pattern starts elsewhere). `zeroed`: the memory holds zeros there, so all-zero words are skipped
    (`SimMemory` starts zeroed)."""
    name = model.memory(memory)
    if model.memories[name].word_bytes != word_bytes:
        raise FannsError(f"{name} has words of {model.memories[name].word_bytes} bytes, not {word_bytes}")
    image = bytes(image) + bytes(-len(image) % word_bytes)
    model.write_memory(name, image, first_word, skip_zero=zeroed)


def read(model: Model, word_bytes: int, byte_addr: int, nbytes: int, memory: str = "") -> bytes:
    """`nbytes` from `byte_addr` of the bench memory `memory` (as `load`), read in place."""
    name = model.memory(memory)
    first, end = byte_addr // word_bytes, -(-(byte_addr + nbytes) // word_bytes)
    raw = model.read_memory(name, end - first, first)
    skip = byte_addr - first * word_bytes
    return raw[skip : skip + nbytes]
