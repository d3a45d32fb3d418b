"""Register maps: one description renders the AXI4-Lite register file, its document and its JSON.

The host driver programs a generated accelerator from the JSON (`RegMap.to_json`), the user
reads the Markdown (`RegMap.to_markdown`), and the `axil_csr` PE builds the hardware from the
same `RegMap`, so the three can never disagree.

A register is one field: `width` bits at bit `bit` of the 32-bit word at byte `offset`.
Several narrow registers may share a word (the control block packs ap_start/ap_done/ap_idle
into word 0); a register wider than 32 bits starts at bit 0 and spans consecutive words, least
significant word first. Access kinds:

* ``RW``    written by the host (byte strobes honoured), read back; drives the core.
* ``RO``    driven by the core, read by the host. Reading the lowest word of a wide RO register
            latches its upper words, so a 64-bit counter reads consistently as low then high.
* ``W1C``   sticky status: the core sets bits with a pulse, the host clears them by writing 1.
* ``PULSE`` writing 1 to a bit pulses that bit for one cycle (e.g. ap_start); reads return 0.
* ``COR``   sticky status cleared by reading: the core sets bits with a pulse, a read of the word
            returns them and clears them (Xilinx's ap_done / ap_ready).
* ``TOW``   sticky status toggled by writing: the core sets bits with a pulse, writing 1 to a bit
            inverts it (Xilinx's interrupt status register, ISR).

`kernel_control_block()` is the Xilinx RTL-kernel control block (UG1393, ap_ctrl_hs): the block
protocol at 0x00, GIE at 0x04, IER at 0x08, ISR at 0x0C; kernel arguments follow from 0x10
(`KERNEL_ARGS_OFFSET`). `RegMap.control()` tells a host how to start a run and see it finish,
from the map itself, so the driver and the testbenches share one protocol.
"""

from __future__ import annotations

import json
import keyword
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from fanns.errors import FannsError

ACCESS_KINDS = ("RW", "RO", "W1C", "PULSE", "COR", "TOW")
WORD_BITS = 32
WORD_BYTES = WORD_BITS // 8
RESERVED_NAMES = ("clk", "rst", "s_axil", "interrupt")

ACCESS_DOC = {
    "RW": "read/write",
    "RO": "read-only (driven by the core)",
    "W1C": "sticky, set by the core, write 1 to clear",
    "PULSE": "write 1 to pulse for one cycle, reads 0",
    "COR": "sticky, set by the core, cleared when the word is read",
    "TOW": "sticky, set by the core, write 1 to toggle",
}
STICKY_KINDS = ("W1C", "COR", "TOW")
"""Kinds the core sets with a `<name>_set` pulse and the host clears (by writing or reading)."""
KERNEL_ARGS_OFFSET = 0x10
"""First byte offset of a Xilinx kernel's arguments (UG1393: 0x00-0x0C hold the control block)."""


@dataclass(frozen=True)
class Register:
    """One field of the register map (see the module docstring)."""

    name: str
    offset: int
    width: int = WORD_BITS
    access: str = "RW"
    reset: int = 0
    description: str = ""
    bit: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Register:
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(data) - known)
        if unknown:
            raise FannsError(
                f"register {data.get('name', '?')!r}: unknown keys {unknown}", hint=f"allowed: {sorted(known)}"
            )
        return cls(**data)

    @property
    def words(self) -> int:
        """Number of 32-bit words the register touches."""
        return (self.bit + self.width + WORD_BITS - 1) // WORD_BITS

    def word_slices(self) -> list[tuple[int, int, int, int]]:
        """(byte offset, bit in word, bit in register, bits) of each word the register covers."""
        out, done = [], 0
        while done < self.width:
            word_bit = (self.bit + done) % WORD_BITS
            n = min(WORD_BITS - word_bit, self.width - done)
            out.append((self.offset + WORD_BYTES * ((self.bit + done) // WORD_BITS), word_bit, done, n))
            done += n
        return out

    def ports(self) -> dict[str, str]:
        """Core-side port names of this register and their direction ("in" = from the core)."""
        return {
            "RW": {self.name: "out"},
            "RO": {self.name: "in"},
            "W1C": {self.name: "out", f"{self.name}_set": "in"},
            "PULSE": {self.name: "out"},
            "COR": {self.name: "out", f"{self.name}_set": "in"},
            "TOW": {self.name: "out", f"{self.name}_set": "in"},
        }[self.access]


def _check_register(r: Register, addr_width: int) -> None:
    where = f"register {r.name!r}"
    if not (isinstance(r.name, str) and r.name.isidentifier() and not keyword.iskeyword(r.name)):
        raise FannsError(f"{where}: the name must be a Python/Verilog identifier", hint="use letters, digits and _")
    if r.name.startswith("_") or "__" in r.name or r.name in RESERVED_NAMES:
        raise FannsError(
            f"{where}: the name is reserved or contains '__'", hint=f"avoid {RESERVED_NAMES} and double underscores"
        )
    if r.access not in ACCESS_KINDS:
        raise FannsError(f"{where}: unknown access {r.access!r}", hint=f"use one of {', '.join(ACCESS_KINDS)}")
    if r.offset < 0 or r.offset % WORD_BYTES:
        raise FannsError(
            f"{where}: offset 0x{r.offset:x} is not a multiple of {WORD_BYTES}",
            hint="registers are 32-bit word aligned",
        )
    if not 1 <= r.width <= 64:
        raise FannsError(f"{where}: width {r.width} out of range 1..64")
    if not 0 <= r.bit < WORD_BITS or (r.bit + r.width > WORD_BITS and r.bit != 0):
        raise FannsError(
            f"{where}: bit {r.bit} with width {r.width} crosses a word",
            hint="registers wider than the rest of the word start at bit 0",
        )
    if not 0 <= r.reset < (1 << r.width):
        raise FannsError(f"{where}: reset value {r.reset} does not fit in {r.width} bits")
    if r.access in ("RO", "PULSE") and r.reset:
        raise FannsError(f"{where}: {r.access} registers have no state, so no reset value", hint="set reset to 0")
    if r.access in ("COR", "TOW") and r.reset:
        raise FannsError(f"{where}: {r.access} registers reset to 0", hint="set reset to 0")
    end = r.offset + WORD_BYTES * r.words
    if end > (1 << addr_width):
        raise FannsError(
            f"{where}: ends at 0x{end:x}, beyond the {addr_width}-bit address space", hint="raise addr_width"
        )


@dataclass(frozen=True)
class RegMap:
    """An ordered, validated set of registers behind one AXI4-Lite slave."""

    name: str
    registers: tuple[Register, ...]
    addr_width: int = 12
    description: str = ""

    def __post_init__(self) -> None:
        regs = tuple(r if isinstance(r, Register) else Register.from_dict(dict(r)) for r in self.registers)
        object.__setattr__(self, "registers", tuple(sorted(regs, key=lambda r: (r.offset, r.bit))))
        self.validate()

    def validate(self) -> None:
        if not 3 <= self.addr_width <= 32:
            raise FannsError(f"register map {self.name!r}: addr_width {self.addr_width} out of range 3..32")
        if not self.registers:
            raise FannsError(f"register map {self.name!r} has no registers")
        ports: dict[str, str] = {}
        used: dict[tuple[int, int], str] = {}
        for r in self.registers:
            _check_register(r, self.addr_width)
            for port in r.ports():
                if port in ports:
                    raise FannsError(
                        f"register map {self.name!r}: port {port!r} of {r.name!r} clashes with {ports[port]!r}",
                        hint="rename one register",
                    )
                ports[port] = r.name
            for off, wbit, _, n in r.word_slices():
                for b in range(wbit, wbit + n):
                    if (off, b) in used:
                        raise FannsError(
                            f"register map {self.name!r}: {r.name!r} overlaps {used[(off, b)]!r} at 0x{off:x} bit {b}",
                            hint="move one of them",
                        )
                    used[(off, b)] = r.name

    # -- queries --------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> Register:
        for r in self.registers:
            if r.name == name:
                return r
        raise KeyError(name)

    def word_offsets(self) -> list[int]:
        """Byte offsets of every word that holds at least one register, ascending."""
        return sorted({off for r in self.registers for off, *_ in r.word_slices()})

    def has(self, name: str) -> bool:
        return any(r.name == name for r in self.registers)

    def control(self) -> Control:
        """How a host starts a run and sees it finish (the block protocol of this map)."""
        start, done = self["ap_start"], self["ap_done"]
        if start.words != 1 or done.words != 1 or start.offset != done.offset:
            raise FannsError(f"register map {self.name!r}: ap_start and ap_done must share one word")
        return Control(
            offset=start.offset,
            start=1 << start.bit,
            done=1 << done.bit,
            clear=(1 << done.bit) if done.access == "W1C" else None,
            clear_on_read=done.access == "COR",
        )

    def kernel_args(self) -> tuple[Register, ...]:
        """The kernel arguments: the host-written (RW) registers from `KERNEL_ARGS_OFFSET` on, in
        offset order (a Xilinx kernel's kernel.xml lists these)."""
        return tuple(r for r in self.registers if r.offset >= KERNEL_ARGS_OFFSET and r.access == "RW")

    def extended(self, *registers: Register, name: str | None = None) -> RegMap:
        """A new map with more registers (same address width)."""
        return replace(self, name=name or self.name, registers=self.registers + tuple(registers))

    # -- renderers ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        regs = []
        for r in self.registers:
            d = asdict(r)
            d["words"] = [{"offset": off, "bit": wb, "reg_bit": rb, "bits": n} for off, wb, rb, n in r.word_slices()]
            regs.append(d)
        return {
            "name": self.name,
            "description": self.description,
            "bus": "axi4-lite",
            "data_width": WORD_BITS,
            "addr_width": self.addr_width,
            "access_kinds": dict(ACCESS_DOC),
            "registers": regs,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RegMap:
        regs = [{k: v for k, v in r.items() if k != "words"} for r in data.get("registers", [])]
        return cls(
            name=data["name"],
            registers=tuple(regs),
            addr_width=data.get("addr_width", 12),
            description=data.get("description", ""),
        )

    @classmethod
    def from_json(cls, text: str) -> RegMap:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FannsError(f"register map JSON is invalid: {exc}", hint="regenerate it with the project") from None
        return cls.from_dict(data)

    def to_markdown(self) -> str:
        lines = [f"# Register map: {self.name}", ""]
        if self.description:
            lines += [self.description, ""]
        lines += [
            f"AXI4-Lite slave, 32-bit data, {self.addr_width}-bit byte addresses. Accesses to unmapped "
            "words complete with SLVERR and read 0. Writes honour byte strobes.",
            "",
            "| offset | bits | name | access | reset | description |",
            "|---|---|---|---|---|---|",
        ]
        for r in self.registers:
            for off, wbit, rbit, n in r.word_slices():
                bits = f"{wbit + n - 1}:{wbit}" if n > 1 else f"{wbit}"
                label = r.name if r.words == 1 else f"{r.name}[{rbit + n - 1}:{rbit}]"
                reset = (r.reset >> rbit) & ((1 << n) - 1)
                lines.append(f"| 0x{off:03x} | {bits} | `{label}` | {r.access} | 0x{reset:x} | {r.description} |")
        lines += ["", "Access kinds:", ""]
        lines += [f"- **{k}**: {v}" for k, v in ACCESS_DOC.items() if any(r.access == k for r in self.registers)]
        if any(r.access == "RO" and r.words > 1 for r in self.registers):
            lines.append("- Wide read-only registers: reading the lowest word latches the upper words; read low first.")
        return "\n".join(lines) + "\n"


def control_block(offset: int = 0) -> tuple[Register, ...]:
    """The usual accelerator control block (ap_start/ap_done/ap_idle at `offset`, a cycle counter).

    The core drives `ap_idle` and `cycles` (the cycles of the last run, from ap_start to done)
    and pulses `ap_done_set` when a run finishes; `ap_start` pulses for one cycle when the host
    writes 1 to bit 0.
    """
    return (
        Register("ap_start", offset, 1, "PULSE", description="write 1 to start a run", bit=0),
        Register("ap_done", offset, 1, "W1C", description="set when a run has finished; write 1 to clear", bit=1),
        Register("ap_idle", offset, 1, "RO", description="1 while no run is in progress", bit=2),
        Register("cycles", offset + 0x8, 64, "RO", description="clock cycles of the last run (ap_start to ap_done)"),
    )


@dataclass(frozen=True)
class Control:
    """The block protocol of a map: write `start` to the word at `offset`, then poll it until
    `done` is set; `clear` is the word that clears a W1C ap_done before a start (None when reading
    clears it: `clear_on_read`)."""

    offset: int
    start: int
    done: int
    clear: int | None
    clear_on_read: bool


def kernel_control_block() -> tuple[Register, ...]:
    """The control block of a Xilinx RTL kernel with the ap_ctrl_hs protocol (UG1393, "RTL
    kernels"), at 0x00-0x0C.

    0x00: ap_start (bit 0, write 1 to start; reads 0 here), ap_done (bit 1, clear on read),
    ap_idle (bit 2), ap_ready (bit 3, clear on read; this core is ready for new arguments when it
    is done), auto_restart (bit 7: 1 makes the core start again when a run finishes).
    0x04: GIE (global interrupt enable), 0x08: IER (bit 0 done, bit 1 ready), 0x0C: ISR (the same
    bits, set when an enabled event happens, write 1 to toggle). The `interrupt` output is
    GIE & (ISR != 0). The core drives `ap_idle` and pulses `ap_done_set`, `ap_ready_set`, `isr_set`.
    """
    return (
        Register("ap_start", 0, 1, "PULSE", description="write 1 to start a run (reads 0)", bit=0),
        Register("ap_done", 0, 1, "COR", description="set when a run has finished; cleared by reading", bit=1),
        Register("ap_idle", 0, 1, "RO", description="1 while no run is in progress", bit=2),
        Register("ap_ready", 0, 1, "COR", description="set when the core takes new arguments; read clears", bit=3),
        Register("auto_restart", 0, 1, "RW", description="1: start the next run as soon as a run finishes", bit=7),
        Register("gie", 0x4, 1, "RW", description="global interrupt enable"),
        Register("ier", 0x8, 2, "RW", description="interrupt enable: bit 0 ap_done, bit 1 ap_ready"),
        Register("isr", 0xC, 2, "TOW", description="interrupt status: bit 0 ap_done, bit 1 ap_ready; 1 toggles"),
    )


@dataclass
class RegMapBuilder:
    """Lays out registers one after another (each wide register on the next free word)."""

    name: str
    addr_width: int = 12
    description: str = ""
    registers: list[Register] = field(default_factory=list)

    def add(
        self,
        name: str,
        width: int = WORD_BITS,
        access: str = "RW",
        reset: int = 0,
        description: str = "",
        align: int = WORD_BYTES,
    ) -> Register:
        """Place a register on the next free word (at a multiple of `align` bytes)."""
        end = max((off + WORD_BYTES for r in self.registers for off, *_ in r.word_slices()), default=0)
        end = -(-end // align) * align
        reg = Register(name, end, width, access, reset, description)
        self.registers.append(reg)
        return reg

    def build(self) -> RegMap:
        return RegMap(self.name, tuple(self.registers), self.addr_width, self.description)


def vitis_hls_regmap(kernel: str, pointers: list[str], scalars: list[tuple[str, str]]) -> RegMap:
    """The `s_axilite` register map Vitis HLS gives `kernel(pointers..., scalars...)`: control word
    at 0x00, then every argument from 0x10 (a 64-bit pointer takes two data words and a reserved
    word, a 32-bit scalar one data word and a reserved word). Why here: the host driver, the
    Zynq block-design record and its tests must read the same offsets."""
    regs = [
        Register("ap_start", 0, 1, "PULSE", description="write 1 to start a run", bit=0),
        Register("ap_done", 0, 1, "COR", description="set when a run has finished (clear on read)", bit=1),
        Register("ap_idle", 0, 1, "RO", description="1 while no run is in progress", bit=2),
    ]
    offset = 0x10
    for name in pointers:
        regs.append(Register(name, offset, 64, "RW", description=f"device address of buffer {name}"))
        offset += 12
    for name, desc in scalars:
        regs.append(Register(name, offset, 32, "RW", description=desc))
        offset += 8
    return RegMap(kernel, tuple(regs), addr_width=max(12, offset.bit_length()), description="Vitis HLS kernel control")
