"""AXI4-Lite register file PE, generated from a register map (`fanns.hdl.regmap`).

The host programs an accelerator through this slave: the same `RegMap` renders the Markdown
document and the JSON the driver reads, so hardware, document and driver agree by construction.
It has no HLS header: HLS builds its register file from `s_axilite` interface pragmas.

Ports: `s_axil` (the AXI4-Lite slave, Verilog `s_axil__awaddr`, ...) and, per register, the
core-side ports named in `Register.ports()`: RW -> output `name`; RO -> input `name`; W1C, COR,
TOW -> output `name` (current value) and input `name_set` (a 1 sets that bit; setting wins over a
simultaneous clear or toggle; COR clears on the read handshake of its word, the read returning the
value before it); PULSE -> output `name`, high for the one cycle after the write.

Protocol: AW and W are taken independently (one holding register each), the write happens the
cycle after both are held, and the response follows; reads answer the cycle after AR. No
combinational path from any input to any output. Unmapped words answer SLVERR (reads 0); a
write to a read-only word is ignored and answers OKAY.

Timing (ready master): a read answers L = 2 cycles after AR (AR and R handshakes inclusive), a
write 3 cycles after AW/W; back-to-back reads or writes go one per II = 2 cycles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from amaranth import Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fanns.hdl.bus import RESP_OKAY, RESP_SLVERR, axil_signature
from fanns.hdl.regmap import STICKY_KINDS, WORD_BITS, WORD_BYTES, Register, RegMap, control_block
from fanns.pe.base import PE


def _synthetic(rw: int, ro: int, w1c: int = 0, pulse: int = 0, wide_ro: int = 0) -> dict:
    """A calibration register map: `rw` 32-bit RW words, `ro` RO words, `wide_ro` 64-bit counters,
    and `w1c`/`pulse` single-bit fields packed into one word."""
    regs, off = [], 0
    for i in range(rw):
        regs.append({"name": f"rw{i}", "offset": off, "width": 32, "access": "RW", "reset": i})
        off += 4
    for i in range(ro):
        regs.append({"name": f"ro{i}", "offset": off, "width": 32, "access": "RO"})
        off += 4
    for i in range(wide_ro):
        regs.append({"name": f"ctr{i}", "offset": off, "width": 64, "access": "RO"})
        off += 8
    bit = 0
    for kind, n in (("W1C", w1c), ("PULSE", pulse)):
        for i in range(n):
            regs.append({"name": f"{kind.lower()}{i}", "offset": off, "width": 1, "access": kind, "bit": bit})
            bit += 1
    return {"registers": regs, "addr_width": 12}


@dataclass(frozen=True)
class AxilCsr(PE):
    registers: tuple = control_block()
    addr_width: int = 12

    name: ClassVar[str] = "axil_csr"
    summary: ClassVar[str] = "AXI4-Lite register file generated from a register map (RW/RO/W1C/PULSE)"
    timing_formula: ClassVar[str] = "read: L = 2, II = 2; write: 3 cycles AW/W to B, II = 2"
    hls_header: ClassVar[str] = ""
    testbench: ClassVar[str] = "tb_axil_csr"
    calibration_points: ClassVar[tuple] = (
        {"registers": [vars(r) for r in control_block()], "addr_width": 12},
        _synthetic(rw=4, ro=2, w1c=1, pulse=1),
        _synthetic(rw=8, ro=4, w1c=2, pulse=1, wide_ro=1),
        _synthetic(rw=16, ro=4, w1c=4, pulse=2, wide_ro=2),
        _synthetic(rw=24, ro=16, w1c=8, pulse=4, wide_ro=4),
        _synthetic(rw=40, ro=8, w1c=16, pulse=8, wide_ro=2),
        _synthetic(rw=4, ro=24, wide_ro=8),
    )

    def __post_init__(self) -> None:
        regs = tuple(r if isinstance(r, Register) else Register.from_dict(dict(r)) for r in self.registers)
        object.__setattr__(self, "registers", regs)
        super().__post_init__()

    @classmethod
    def from_regmap(cls, regmap: RegMap) -> AxilCsr:
        return cls(registers=regmap.registers, addr_width=regmap.addr_width)

    def validate(self) -> None:
        self.regmap  # noqa: B018  (RegMap validates and raises FannsError)

    @property
    def regmap(self) -> RegMap:
        return RegMap("csr", self.registers, self.addr_width)

    # -- reference model ------------------------------------------------------------------------
    def model(self) -> CsrModel:
        """A bit-accurate model of the register file's host-visible behaviour."""
        return CsrModel(self.regmap)

    # -- timing ---------------------------------------------------------------------------------
    def latency(self) -> int:
        return 2

    def ii(self) -> int:
        return 2

    def write_latency(self) -> int:
        return 3

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        bits = {k: 0 for k in ("RW", "RO", "W1C", "PULSE", "COR", "TOW")}
        shadow = 0
        for r in self.registers:
            bits[r.access] += r.width
            if r.access == "RO" and r.words > 1:
                shadow += r.width - WORD_BITS
        return {
            "words": len(self.regmap.word_offsets()),
            "rw_bits": bits["RW"],
            "ro_bits": bits["RO"],
            "flag_bits": bits["W1C"] + bits["PULSE"] + bits["COR"] + bits["TOW"],
            "shadow_bits": shadow,
        }

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return AxilCsrComponent(self.regmap)


class CsrModel:
    """Host-visible behaviour: what a read returns and what a write changes (core inputs given)."""

    def __init__(self, regmap: RegMap):
        self.regmap = regmap
        self.state = {r.name: r.reset for r in regmap.registers if r.access not in ("RO", "PULSE")}
        self.shadow: dict[str, int] = {}
        self.words = set(regmap.word_offsets())

    def write(self, offset: int, value: int, strb: int = 0xF) -> tuple[int, dict[str, int]]:
        """Apply a write; return (resp, pulses emitted)."""
        word = offset & ~(WORD_BYTES - 1)
        if word not in self.words:
            return RESP_SLVERR, {}
        bitmask = sum(0xFF << (8 * i) for i in range(WORD_BYTES) if strb >> i & 1)
        pulses = {}
        for r in self.regmap.registers:
            for off, wbit, rbit, n in r.word_slices():
                if off != word:
                    continue
                m = ((bitmask >> wbit) & ((1 << n) - 1)) << rbit
                v = ((value >> wbit) & ((1 << n) - 1)) << rbit
                if r.access == "RW":
                    self.state[r.name] = (self.state[r.name] & ~m) | (v & m)
                elif r.access == "W1C":
                    self.state[r.name] &= ~(v & m)
                elif r.access == "TOW":
                    self.state[r.name] ^= v & m
                elif r.access == "PULSE":
                    pulses[r.name] = pulses.get(r.name, 0) | (v & m)
        return RESP_OKAY, pulses

    def set_bits(self, name: str, bits: int) -> None:
        self.state[name] |= bits

    def read(self, offset: int, inputs: dict[str, int]) -> tuple[int, int]:
        """(resp, data) of a read, given the core's current RO inputs."""
        word = offset & ~(WORD_BYTES - 1)
        if word not in self.words:
            return RESP_SLVERR, 0
        out = 0
        for r in self.regmap.registers:
            for off, wbit, rbit, n in r.word_slices():
                if off != word:
                    continue
                if r.access == "RO":
                    if r.words > 1 and rbit == 0:
                        self.shadow[r.name] = inputs[r.name]
                    src = inputs[r.name] if rbit == 0 else self.shadow.get(r.name, 0)
                elif r.access == "PULSE":
                    src = 0
                else:
                    src = self.state[r.name]
                    if r.access == "COR":
                        self.state[r.name] &= ~(((1 << n) - 1) << rbit)
                out |= ((src >> rbit) & ((1 << n) - 1)) << wbit
        return RESP_OKAY, out


class AxilCsrComponent(wiring.Component):
    """Amaranth implementation of `AxilCsr` (see the module docstring)."""

    def __init__(self, regmap: RegMap):
        self.regmap = regmap
        members = {"s_axil": In(axil_signature(regmap.addr_width))}
        for r in regmap.registers:
            for port, direction in r.ports().items():
                members[port] = (In if direction == "in" else Out)(
                    r.width, init=r.reset if direction == "out" and r.access != "PULSE" else 0
                )
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        bus = self.s_axil
        index_bits = self.regmap.addr_width - 2

        # Write path: hold AW and W, write when both are held and the response slot is free.
        aw_full, w_full = Signal(), Signal()
        aw_word = Signal(index_bits)
        w_data = Signal(WORD_BITS)
        w_strb = Signal(WORD_BYTES)
        m.d.comb += [bus.awready.eq(~aw_full), bus.wready.eq(~w_full)]
        with m.If(bus.awvalid & bus.awready):
            m.d.sync += [aw_full.eq(1), aw_word.eq(bus.awaddr[2:])]
        with m.If(bus.wvalid & bus.wready):
            m.d.sync += [w_full.eq(1), w_data.eq(bus.wdata), w_strb.eq(bus.wstrb)]
        do_write = Signal()
        m.d.comb += do_write.eq(aw_full & w_full & ~bus.bvalid)
        with m.If(do_write):
            m.d.sync += [aw_full.eq(0), w_full.eq(0), bus.bvalid.eq(1)]
        with m.If(bus.bvalid & bus.bready):
            m.d.sync += bus.bvalid.eq(0)
        bitmask = Signal(WORD_BITS)
        m.d.comb += bitmask.eq(Cat(*(b.replicate(8) for b in w_strb)))

        # Read path: answer the cycle after AR.
        m.d.comb += bus.arready.eq(~bus.rvalid)
        ar_word = Signal(index_bits)
        m.d.comb += ar_word.eq(bus.araddr[2:])
        read_hs = Signal()
        m.d.comb += read_hs.eq(bus.arvalid & bus.arready)
        with m.If(bus.rvalid & bus.rready):
            m.d.sync += bus.rvalid.eq(0)
        with m.If(read_hs):
            m.d.sync += [bus.rvalid.eq(1), bus.rresp.eq(RESP_SLVERR), bus.rdata.eq(0)]

        with m.If(do_write):
            m.d.sync += bus.bresp.eq(RESP_SLVERR)
        word_fields: dict[int, list] = {}
        for r in self.regmap.registers:
            self._register(m, r, do_write, aw_word, w_data, bitmask, read_hs, ar_word, word_fields)
        for off, fields in sorted(word_fields.items()):
            value = Signal(WORD_BITS, name=f"word_{off:03x}")
            m.d.comb += [value[wbit : wbit + n].eq(src) for wbit, n, src in fields]
            with m.If(read_hs & (ar_word == off // WORD_BYTES)):
                m.d.sync += [bus.rdata.eq(value), bus.rresp.eq(RESP_OKAY)]
            with m.If(do_write & (aw_word == off // WORD_BYTES)):
                m.d.sync += bus.bresp.eq(RESP_OKAY)
        return m

    def _register(self, m, r: Register, do_write, aw_word, w_data, bitmask, read_hs, ar_word, word_fields) -> None:
        """Storage, write effect and read value of one register."""
        port = getattr(self, r.name)
        if r.access == "PULSE":
            m.d.sync += port.eq(0)
        if r.access in STICKY_KINDS:
            value = Signal(r.width, init=r.reset, name=f"{r.name}_value")
            m.d.comb += port.eq(value)
            clear = Signal(r.width, name=f"{r.name}_clear")  # W1C, COR: bits to clear; TOW: bits to toggle
            kept = value ^ clear if r.access == "TOW" else value & ~clear
            m.d.sync += value.eq(kept | getattr(self, f"{r.name}_set"))
        shadow = (
            Signal(max(1, r.width - WORD_BITS), name=f"{r.name}_shadow") if r.access == "RO" and r.words > 1 else None
        )
        for off, wbit, rbit, n in r.word_slices():
            hit = do_write & (aw_word == off // WORD_BYTES)
            wval = w_data[wbit : wbit + n]
            wmask = bitmask[wbit : wbit + n]
            if r.access == "RW":
                with m.If(hit):
                    m.d.sync += port[rbit : rbit + n].eq((port[rbit : rbit + n] & ~wmask) | (wval & wmask))
                src = port[rbit : rbit + n]
            elif r.access in ("W1C", "TOW"):
                m.d.comb += clear[rbit : rbit + n].eq(Const(0, n) | (wval & wmask & hit.replicate(n)))
                src = value[rbit : rbit + n]
            elif r.access == "COR":
                read_hit = read_hs & (ar_word == off // WORD_BYTES)
                m.d.comb += clear[rbit : rbit + n].eq(Const(0, n) | read_hit.replicate(n))
                src = value[rbit : rbit + n]
            elif r.access == "PULSE":
                with m.If(hit):
                    m.d.sync += port[rbit : rbit + n].eq(wval & wmask)
                src = Const(0, n)
            elif shadow is not None and rbit > 0:
                src = shadow[rbit - WORD_BITS : rbit - WORD_BITS + n]
            else:
                src = port[rbit : rbit + n]
            if shadow is not None and rbit == 0:
                with m.If(read_hs & (ar_word == off // WORD_BYTES)):
                    m.d.sync += shadow.eq(port[WORD_BITS:])
            word_fields.setdefault(off, []).append((wbit, n, src))
