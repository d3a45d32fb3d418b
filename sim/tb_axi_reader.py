"""cocotb testbench of the AXI4 read master PE (fanns.pe.axi_reader) against cocotbext-axi's AxiRam.

Parameters (FANNS_TB_PARAMS): `pe`, `mem_bytes`, `seed`, `latency` (memory read latency),
`pause` (probability of a RAM ready/valid pause per cycle and channel), `bubble` (command
source), `backpressure` (word sink), and either `commands` ([[addr, len], ...]) or `random`
({"count", "max_len", "aligned", "zero"}: random commands, a fraction word-aligned and a
fraction of zero length). The RAM holds random bytes. Checks every output word (data, keep,
last) and every AR burst (address, length) bit-exactly against the reference model, and that
the master never stalls R. Reports counts and the cycles of every handshake for the timing test.
"""

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge

from fanns.pe.axi_reader import AxiReader
from fanns_tb import Cycles, StreamSink, StreamSource, pack, params, report, start, unpack
from fanns_tb.axi import Handshakes, LatencyAxiRam


def make_commands(pe: AxiReader, p: dict, rng) -> list[tuple[int, int]]:
    if "commands" in p:
        return [tuple(c) for c in p["commands"]]
    spec, size = p["random"], p["mem_bytes"]
    out = []
    for _ in range(spec["count"]):
        n = 0 if rng.random() < spec.get("zero", 0.0) else int(rng.integers(1, spec["max_len"] + 1))
        addr = int(rng.integers(0, size - n + 1))
        if rng.random() < spec.get("aligned", 0.0):
            addr -= addr % pe.beat_bytes
        out.append((addr, n))
    return out


async def setup(dut, p):
    pe = AxiReader(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    cycles = Cycles(dut)
    ram = LatencyAxiRam(dut, "m_axi", p["mem_bytes"], cycles, read_latency=p.get("latency", 2), write=False)
    contents = rng.bytes(p["mem_bytes"])
    ram.write(0, contents)
    ram.pause(p.get("pause", 0.0), p["seed"] + 10)
    return pe, rng, cycles, ram, contents


@cocotb.test()
async def words_and_bursts_match_reference(dut):
    p = params()
    pe, rng, cycles, ram, contents = await setup(dut, p)
    ar = Handshakes(dut, "m_axi__arvalid", "m_axi__arready", cycles, ("m_axi__araddr", "m_axi__arlen")).start()
    r = Handshakes(dut, "m_axi__rvalid", "m_axi__rready", cycles, ("m_axi__rlast",)).start()
    src = StreamSource(dut, "cmd", bubble=p.get("bubble", 0.0), seed=p["seed"] + 1)
    sink = StreamSink(dut, "o", backpressure=p.get("backpressure", 0.0), seed=p["seed"] + 2)
    sink.start(cycles)

    commands = make_commands(pe, p, rng)
    expected, bursts, ends = [], [], []
    for addr, n in commands:
        expected += pe.words(contents, addr, n)
        bursts += [(a, beats - 1) for a, beats in pe.bursts(addr, n)]
        ends.append(len(expected) - 1 if n else None)
    await src.send([pack([(a, pe.addr_width), (n, pe.len_bits)]) for a, n in commands], cycles)
    await sink.wait_for(len(expected))
    for _ in range(20):
        await RisingEdge(dut.clk)

    widths = [pe.data_width, pe.beat_bytes, 1]
    got = [tuple(unpack(v, widths)) for v in sink.items]
    mismatches = sum(g != e for g, e in zip(got, expected)) + abs(len(got) - len(expected))
    burst_mismatches = sum(g != e for g, e in zip(ar.values, bursts)) + abs(len(ar.values) - len(bursts))
    report(
        checked=len(expected),
        commands=len(commands),
        bursts=len(bursts),
        mismatches=mismatches,
        burst_mismatches=burst_mismatches,
        r_stalls=r.stalls,
        error=int(dut.error.value),
        cmd_times=src.sent_cycles,
        done_times=[sink.cycles[e] if e is not None else None for e in ends],
        ar_times=ar.times,
        r_times=r.times,
        r_last=[v[0] for v in r.values],
    )
    assert mismatches == 0, (
        f"{mismatches} word mismatches; first: {next(((g, e) for g, e in zip(got, expected) if g != e), None)}"
    )
    assert burst_mismatches == 0, f"{burst_mismatches} burst mismatches"
    assert r.stalls == 0, "the master stalled R"
    assert int(dut.error.value) == 0


@cocotb.test()
async def error_flag_on_slverr(dut):
    """A SLVERR on any beat raises the sticky `error` output; data still flow."""
    p = params()
    pe, rng, cycles, ram, contents = await setup(dut, p)
    read = ram.read_if._read
    poison = 3 * 4096

    async def failing_read(address, length):
        if poison <= address < poison + pe.beat_bytes:
            raise OSError("injected error")
        return await read(address, length)

    ram.read_if._read = failing_read
    src = StreamSource(dut, "cmd", seed=1)
    sink = StreamSink(dut, "o", seed=2)
    sink.start(cycles)
    await src.send([pack([(0, pe.addr_width), (2 * pe.beat_bytes, pe.len_bits)])])
    await sink.wait_for(2)
    for _ in range(5):
        await RisingEdge(dut.clk)
    assert int(dut.error.value) == 0, "error set without an error response"
    await src.send([pack([(poison - pe.beat_bytes, pe.addr_width), (3 * pe.beat_bytes, pe.len_bits)])])
    await sink.wait_for(5)
    for _ in range(5):
        await RisingEdge(dut.clk)
    assert int(dut.error.value) == 1, "SLVERR did not raise error"
    report(error_checked=1)
