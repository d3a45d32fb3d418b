"""cocotb testbench of the AXI4 write master PE (fanns.pe.axi_writer) against cocotbext-axi's AxiRam.

Parameters (FANNS_TB_PARAMS): `pe`, `mem_bytes`, `seed`, `latency` (write-response latency),
`pause` (RAM pause probability per cycle and channel), `bubble` (command and data sources),
`backpressure` (done sink), and `commands` or `random` (as in tb_axi_reader). The RAM starts
with random bytes; after all commands are done the bench compares the whole RAM with the
reference model's memory (so bytes outside every range must be untouched), every AW burst and
every W word's strobe and last flag. Reports counts and handshake cycles.
"""

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge
from tb_axi_reader import make_commands

from fanns.hdl.bus import transfer_beats
from fanns.pe.axi_writer import AxiWriter
from fanns_tb import Cycles, StreamSink, StreamSource, pack, params, report, start
from fanns_tb.axi import Handshakes, LatencyAxiRam


async def setup(dut, p):
    pe = AxiWriter(**p["pe"])
    rng = np.random.default_rng(p["seed"])
    await start(dut)
    cycles = Cycles(dut)
    ram = LatencyAxiRam(dut, "m_axi", p["mem_bytes"], cycles, write_latency=p.get("latency", 2), read=False)
    contents = bytearray(rng.bytes(p["mem_bytes"]))
    ram.write(0, bytes(contents))
    ram.pause(p.get("pause", 0.0), p["seed"] + 10)
    return pe, rng, cycles, ram, contents


@cocotb.test()
async def memory_matches_reference(dut):
    p = params()
    pe, rng, cycles, ram, memory = await setup(dut, p)
    aw = Handshakes(dut, "m_axi__awvalid", "m_axi__awready", cycles, ("m_axi__awaddr", "m_axi__awlen")).start()
    w = Handshakes(dut, "m_axi__wvalid", "m_axi__wready", cycles, ("m_axi__wstrb", "m_axi__wlast")).start()
    cmd_src = StreamSource(dut, "cmd", bubble=p.get("bubble", 0.0), seed=p["seed"] + 1)
    data_src = StreamSource(dut, "i", bubble=p.get("bubble", 0.0), seed=p["seed"] + 2)
    done = StreamSink(dut, "done", backpressure=p.get("backpressure", 0.0), seed=p["seed"] + 3)
    done.start(cycles)

    commands = make_commands(pe, p, rng)
    words, bursts, strobes = [], [], []
    for addr, n in commands:
        ws = [int.from_bytes(rng.bytes(pe.beat_bytes), "little") for _ in range(transfer_beats(addr, n, pe.beat_bytes))]
        words += ws
        keeps = pe.write(memory, addr, n, ws)
        for a, beats in pe.bursts(addr, n):
            bursts.append((a, beats - 1))
            strobes += [(keeps.pop(0), int(j == beats - 1)) for j in range(beats)]
    n_done = sum(1 for _, n in commands if n)
    feeder = cocotb.start_soon(data_src.send(words))
    await cmd_src.send([pack([(a, pe.addr_width), (n, pe.len_bits)]) for a, n in commands], cycles)
    await done.wait_for(n_done)
    await feeder
    for _ in range(20):
        await RisingEdge(dut.clk)

    final = ram.read(0, p["mem_bytes"])
    byte_mismatches = sum(a != b for a, b in zip(final, memory))
    burst_mismatches = sum(g != e for g, e in zip(aw.values, bursts)) + abs(len(aw.values) - len(bursts))
    strobe_mismatches = sum(g != e for g, e in zip(w.values, strobes)) + abs(len(w.values) - len(strobes))
    errors = sum(done.items)
    ends = [i for i, (_, n) in enumerate(commands) if n]
    done_times = [None] * len(commands)
    for k, i in enumerate(ends):
        done_times[i] = done.cycles[k]
    report(
        words=len(words),
        commands=len(commands),
        bursts=len(bursts),
        byte_mismatches=byte_mismatches,
        burst_mismatches=burst_mismatches,
        strobe_mismatches=strobe_mismatches,
        errors=errors,
        extra_done=len(done.items) - n_done,
        w_stalls=w.stalls,
        cmd_times=cmd_src.sent_cycles,
        done_times=done_times,
    )
    assert byte_mismatches == 0, f"{byte_mismatches} bytes differ"
    assert burst_mismatches == 0 and strobe_mismatches == 0
    assert errors == 0 and len(done.items) == n_done


@cocotb.test()
async def done_reports_slverr(dut):
    """A SLVERR response marks exactly the `done` of the command it belongs to."""
    p = params()
    pe, rng, cycles, ram, memory = await setup(dut, p)
    write = ram.write_if._write
    poison = 2 * 4096

    async def failing_write(address, data):
        if poison <= address < poison + pe.beat_bytes:
            raise OSError("injected error")
        return await write(address, data)

    ram.write_if._write = failing_write
    cmd_src = StreamSource(dut, "cmd", seed=1)
    data_src = StreamSource(dut, "i", seed=2)
    done = StreamSink(dut, "done", seed=3)
    done.start(cycles)
    b = pe.beat_bytes
    commands = [(0, 3 * b), (poison - b, 3 * b), (poison + 4 * b, 2 * b)]
    feeder = cocotb.start_soon(data_src.send(list(range(8))))
    await cmd_src.send([pack([(a, pe.addr_width), (n, pe.len_bits)]) for a, n in commands])
    await done.wait_for(3)
    await feeder
    assert done.items[:3] == [0, 1, 0], f"done errors {done.items}"
    report(error_checked=1)
