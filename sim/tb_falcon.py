"""cocotb bench of a generated Falcon QPP (`fanns.arch.graph.top.FalconQpp`) with its memory in RTL.

The design under test is `fanns.sim.graph.rtl.FalconBench`: the QPP wired to a `SimMemory`
(every AXI port of the QPP on one word array, latency and random stalls), so the simulation
runs inside Verilator and this bench only touches the DUT to load memory, program registers,
wait for the interrupt and read the results.

Parameters (FANNS_TB_PARAMS): `image` (a .npy of the memory bytes), `words` (how many leading
64-byte words to load), `word_bytes` (the memory's word: the graph's port width), `regs`
(register name -> value), `offsets` (register name -> byte offset, from
the register map), `latency`, `stall`, `result` ([byte offset, bytes] to read back), `out`
(where to save the result bytes as .npy), `timeout_cycles`, and optionally `control` (register
name -> [offset, bit] of the ap_ctrl_hs block: the bench then reads the control word before,
during and after the run, twice after it (ap_done and ap_ready clear on read), toggles ISR off and
reads again a while later, reported as `protocol`). Reports `status`, `cycles` (the run's
cycle counter), `sim_cycles` (ap_start to interrupt, measured by the bench), `bad_response`
(AXI-Lite responses that were not OKAY), `seconds` and `cpu_seconds` (wall and processor time from
the register writes on).

Several QPPs (`fanns.sim.graph.across_rtl.FalconAcrossBench`): `regs` is a list, one register
set per QPP, QPP p's registers at p x `window` bytes; `shared` drives the memory's channel
sharing. Every QPP is started, the run ends when every bit of `interrupt` is set, and `status`
and `cycles` are lists (one per QPP).
"""

import time

import cocotb
import numpy as np
from cocotb.triggers import First, RisingEdge, Timer, ValueChange

from fanns_tb import PERIOD_NS, Cycles, backdoor_read, params, report, start
from fanns_tb.axil import axil_read, axil_write, write_reg

WORD_BYTES = 64


@cocotb.test()
async def run_queries(dut):
    p = params()
    for sig in ("awvalid", "wvalid", "arvalid", "bready", "rready"):
        getattr(dut, f"s_axil__{sig}").value = 0
    dut.bd_we.value = 0
    dut.latency.value = p["latency"]
    dut.stall.value = 0
    await start(dut)
    cycles = Cycles(dut)

    image = np.load(p["image"])
    words = image[: p["words"] * WORD_BYTES].reshape(-1, p["word_bytes"])
    nonzero = np.flatnonzero(words.any(axis=1))
    dut.bd_we.value = 1
    for i in nonzero:
        dut.bd_addr.value = int(i)
        dut.bd_wdata.value = int.from_bytes(words[i].tobytes(), "little")
        await RisingEdge(dut.clk)
    dut.bd_we.value = 0
    dut.stall.value = p["stall"]
    if "shared" in p:
        dut.shared.value = p["shared"]
    wall, cpu = time.perf_counter(), time.process_time()

    several = isinstance(p["regs"], list)
    sets = p["regs"] if several else [p["regs"]]
    window = p.get("window", 0)
    offsets = {k: tuple(v) for k, v in p["offsets"].items()}
    bad = 0
    for i, regs in enumerate(sets):
        for name, value in regs.items():
            bad += await write_reg(dut, offsets, name, int(value), i * window)
    control = p.get("control")  # {register: [offset, bit]}: observe the block protocol (one QPP)
    seen = {}
    if control:
        ctrl = control["ap_start"][0]
        seen["before"] = await axil_read(dut, ctrl)
    t0 = cycles.now
    for i in range(len(sets)):
        bad += await axil_write(dut, i * window + offsets["ap_start"][0], 1)
    if control:
        seen["running"] = await axil_read(dut, ctrl)
    everyone = (1 << len(sets)) - 1
    limit = t0 + p["timeout_cycles"]
    while int(dut.interrupt.value) != everyone and cycles.now < limit:
        await First(ValueChange(dut.interrupt), Timer(PERIOD_NS * 1000, unit="ns"))
    timed_out = int(dut.interrupt.value) != everyone
    sim_cycles = cycles.now - t0
    if control:
        isr = control["isr"][0]
        seen["done"] = await axil_read(dut, ctrl)
        seen["read_again"] = await axil_read(dut, ctrl)
        seen["isr"] = await axil_read(dut, isr)
        bad += await axil_write(dut, isr, seen["isr"])  # ISR bits toggle on a written 1
        seen["isr_after_write"] = await axil_read(dut, isr)
        seen["interrupt_after_write"] = int(dut.interrupt.value)
        await Timer(PERIOD_NS * 1000, unit="ns")  # no restart with auto_restart off
        seen["later"] = await axil_read(dut, ctrl)
    dut.stall.value = 0
    status, run = [], []
    for i in range(len(sets)):
        base = i * window
        status.append(await axil_read(dut, base + offsets["status"][0]))
        run.append(
            await axil_read(dut, base + offsets["cycles"][0])
            | (await axil_read(dut, base + offsets["cycles"][0] + 4)) << 32
        )
    if not several:
        status, run = status[0], run[0]

    start_byte, nbytes = p["result"]
    raw = await backdoor_read(dut, p["word_bytes"], start_byte, nbytes)
    np.save(p["out"], np.frombuffer(raw, dtype=np.uint8))
    report(
        status=status,
        cycles=run,
        sim_cycles=sim_cycles,
        bad_response=bad,
        timed_out=timed_out,
        seconds=time.perf_counter() - wall,
        cpu_seconds=time.process_time() - cpu,
        protocol=seen,
    )
