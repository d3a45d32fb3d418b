"""cocotb testbench of the AXI4-Lite register file PE (fanns.pe.axil_csr) with cocotbext-axi's AxiLiteMaster.

Parameters (FANNS_TB_PARAMS): `pe`, `ops` (random operations), `pause` (probability of a
master valid/ready pause per cycle and channel), `seed`. The bench mixes single writes (random
byte strobes, mapped and unmapped words), back-to-back batches of writes and of reads, core
events on W1C inputs (also held across a clearing write: setting wins), new values on RO
inputs (including a change between the low and high reads of a wide register), and checks
every response code, every read value and every PULSE output (value and single-cycle width)
against `CsrModel`. Reports counts and the read/write handshake latencies and spacing.
"""

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiLiteMaster

from fanns.pe.axil_csr import AxilCsr
from fanns_tb import Cycles, params, report, start
from fanns_tb.axi import Handshakes, axil_bus, random_pause


class Core:
    """Drives the register file's core-side inputs and watches its PULSE outputs."""

    def __init__(self, dut, pe, cycles, rng):
        self.dut, self.rng = dut, rng
        self.regs = pe.regmap.registers
        self.inputs = {r.name: 0 for r in self.regs if r.access == "RO"}
        self.pulses: list[tuple[int, str, int]] = []
        self.cycles = cycles
        for r in self.regs:
            if r.access == "RO":
                getattr(dut, r.name).value = 0
            if r.access == "W1C":
                getattr(dut, f"{r.name}_set").value = 0

    def new_inputs(self) -> None:
        for r in self.regs:
            if r.access == "RO":
                self.inputs[r.name] = (
                    int(self.rng.integers(0, 1 << r.width, dtype=np.uint64))
                    if r.width < 64
                    else int.from_bytes(self.rng.bytes(8), "little")
                )
                getattr(self.dut, r.name).value = self.inputs[r.name]

    async def watch_pulses(self) -> None:
        pulse_regs = [r for r in self.regs if r.access == "PULSE"]
        while True:
            await RisingEdge(self.dut.clk)
            for r in pulse_regs:
                v = int(getattr(self.dut, r.name).value)
                if v:
                    self.pulses.append((self.cycles.now, r.name, v))


def word_addresses(pe, rng, n: int, unmapped: float) -> list[int]:
    mapped = pe.regmap.word_offsets()
    free = sorted(set(range(0, 1 << pe.addr_width, 4)) - set(mapped))
    return [int(rng.choice(free)) if free and rng.random() < unmapped else int(rng.choice(mapped)) for _ in range(n)]


@cocotb.test()
async def registers_match_model(dut):
    p = params()
    pe = AxilCsr(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    cycles = Cycles(dut)
    master = AxiLiteMaster(axil_bus(dut, "s_axil"), dut.clk, dut.rst)
    if p.get("pause"):
        for k, ch in enumerate(
            (
                master.write_if.aw_channel,
                master.write_if.w_channel,
                master.write_if.b_channel,
                master.read_if.ar_channel,
                master.read_if.r_channel,
            )
        ):
            ch.set_pause_generator(random_pause(p["pause"], p["seed"] + k))
    ar = Handshakes(dut, "s_axil__arvalid", "s_axil__arready", cycles).start()
    r = Handshakes(dut, "s_axil__rvalid", "s_axil__rready", cycles).start()
    aw = Handshakes(dut, "s_axil__awvalid", "s_axil__awready", cycles).start()
    w = Handshakes(dut, "s_axil__wvalid", "s_axil__wready", cycles).start()
    b = Handshakes(dut, "s_axil__bvalid", "s_axil__bready", cycles).start()
    model = pe.model()
    core = Core(dut, pe, cycles, rng)
    cocotb.start_soon(core.watch_pulses())
    expected_pulses: list[tuple[str, int]] = []
    w1c = [reg for reg in pe.regmap.registers if reg.access in ("W1C", "COR", "TOW")]  # set by the core
    wide_ro = [reg for reg in pe.regmap.registers if reg.access == "RO" and reg.words > 1]
    counts = {"reads": 0, "writes": 0, "read_mismatches": 0, "resp_mismatches": 0, "unmapped": 0}

    async def check_read(addr: int, resp) -> None:
        exp_resp, exp_data = model.read(addr, core.inputs)
        got = int.from_bytes(resp.data, "little")
        counts["reads"] += 1
        counts["read_mismatches"] += got != exp_data
        counts["resp_mismatches"] += int(resp.resp) != exp_resp

    def expect_write(addr: int, value: int, strb: int, resp) -> None:
        exp_resp, pulses = model.write(addr, value, strb)
        counts["writes"] += 1
        counts["resp_mismatches"] += int(resp.resp) != exp_resp
        counts["unmapped"] += exp_resp != 0
        expected_pulses.extend(sorted((name, v) for name, v in pulses.items() if v))

    # Reset values first.
    for addr in pe.regmap.word_offsets():
        await check_read(addr, await master.read(addr, 4))

    for _ in range(p["ops"]):
        op = rng.random()
        if op < 0.35:  # one write with random strobes
            addr = word_addresses(pe, rng, 1, 0.1)[0]
            lo = int(rng.integers(0, 4))
            hi = int(rng.integers(lo, 4))
            data = rng.bytes(hi - lo + 1)
            resp = await master.write(addr + lo, data)
            strb = sum(1 << i for i in range(lo, hi + 1))
            expect_write(addr, int.from_bytes(bytes(lo) + data, "little"), strb, resp)
        elif op < 0.55:  # one read
            addr = word_addresses(pe, rng, 1, 0.1)[0]
            await check_read(addr, await master.read(addr, 4))
        elif op < 0.65:  # back-to-back writes
            addrs = word_addresses(pe, rng, 6, 0.05)
            values = [int.from_bytes(rng.bytes(4), "little") for _ in addrs]
            events = [master.init_write(a, v.to_bytes(4, "little")) for a, v in zip(addrs, values)]
            for a, v, ev in zip(addrs, values, events):
                await ev.wait()
                expect_write(a, v, 0xF, ev.data)
        elif op < 0.75:  # back-to-back reads
            addrs = word_addresses(pe, rng, 6, 0.05)
            events = [master.init_read(a, 4) for a in addrs]
            for a, ev in zip(addrs, events):
                await ev.wait()
                await check_read(a, ev.data)
        elif op < 0.85 and w1c:  # core events on sticky (W1C, COR, TOW) inputs
            reg = w1c[int(rng.integers(len(w1c)))]
            bits = int(rng.integers(0, 1 << reg.width))
            pin = getattr(dut, f"{reg.name}_set")
            pin.value = bits
            await RisingEdge(dut.clk)
            pin.value = 0
            model.set_bits(reg.name, bits)
            if rng.random() < 0.5:  # held across a clearing write: setting wins
                pin.value = bits
                off = reg.offset
                resp = await master.write(off, ((1 << reg.width) - 1 << reg.bit).to_bytes(4, "little"))
                expect_write(off, (1 << reg.width) - 1 << reg.bit, 0xF, resp)
                pin.value = 0
                model.set_bits(reg.name, bits)
        elif wide_ro:  # a wide RO register read low then high, with the input changing in between
            reg = wide_ro[int(rng.integers(len(wide_ro)))]
            core.new_inputs()
            await check_read(reg.offset, await master.read(reg.offset, 4))
            core.new_inputs()
            for k in range(1, reg.words):
                await check_read(reg.offset + 4 * k, await master.read(reg.offset + 4 * k, 4))
        else:
            core.new_inputs()
    for _ in range(10):
        await RisingEdge(dut.clk)

    got_pulses = [(name, v) for _, name, v in core.pulses]
    times = [t for t, _, _ in core.pulses]
    pulse_mismatches = sum(g != e for g, e in zip(got_pulses, expected_pulses)) + abs(
        len(got_pulses) - len(expected_pulses)
    )
    # Each PULSE write shows for exactly one cycle: no two observations of one write are adjacent.
    long_pulses = sum(
        1
        for a, b2, (_, na, _), (_, nb, _) in zip(times, times[1:], core.pulses, core.pulses[1:])
        if b2 == a + 1 and na == nb
    )
    read_latency = sorted({t2 - t1 + 1 for t1, t2 in zip(ar.times, r.times)})
    write_latency = sorted({tb - max(ta, tw) + 1 for ta, tw, tb in zip(aw.times, w.times, b.times)})
    report(
        **counts,
        pulses=len(got_pulses),
        pulse_mismatches=pulse_mismatches,
        long_pulses=long_pulses,
        read_latency=read_latency,
        write_latency=write_latency,
        ar_spacing=min((t2 - t1 for t1, t2 in zip(ar.times, ar.times[1:])), default=0),
        aw_spacing=min((t2 - t1 for t1, t2 in zip(aw.times, aw.times[1:])), default=0),
    )
    assert counts["read_mismatches"] == 0 and counts["resp_mismatches"] == 0, counts
    assert pulse_mismatches == 0, f"pulses: got {got_pulses[:10]}, expected {expected_pulses[:10]}"
    assert long_pulses == 0
