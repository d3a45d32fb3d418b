"""cocotb bench of a whole IVF-PQ accelerator with its memories in RTL (the fast harness).

The design under test is `fanns.sim.ivfpq.fast.IvfPqBench`: the project's `fanns_ivfpq` module
with every AXI master on a `SimMemory`. This bench loads the memories through the bench's back
door, programs the registers pin by pin (`fanns_tb.axil`), starts each run and polls `ap_done` and
the `progress` register every `POLL_CYCLES` (sleeping on a timer in between, so no Python runs
while the accelerator works), then reads the result buffer back through the back door and checks
it as `sim/tb_ivfpq.py` does (same report: per run the mismatches and cycle registers; `stuck`
when the watchdog stops a run; `bad_params_status`).

Parameters (FANNS_TB_PARAMS): `regmap`, `memories` ([{image: .npy of bytes, word_bytes}] in the
bench's port order), `ports` ([{name, short, write}] in that order), `regs` (register -> value,
programmed once: ROM and PQ-image addresses), `queries` and `results` (byte addresses in the I/O
memory), `query_stride`, `latency` ({io, pq, hot}), `stall` (0..255: a memory's ready/valid drops
with probability stall/256), `frozen` (bit mask of ports that never take a request), `runs`
(as `sim/tb_ivfpq.py`), `limits`, `bad_params`, `streams` (the names of the `streams` register's bit pairs; passed in so
the bench does not import the accelerator's Python, seconds of start-up). Report as `sim/tb_ivfpq.py`.
"""

import time

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge, Timer

from fanns.hdl.regmap import RegMap
from fanns_tb import PERIOD_NS, Cycles, backdoor_read, params, report, start
from fanns_tb.axil import PinCsr, axil_idle
from fanns_tb.ivfpq import RUN_REGISTERS, check_run, refused_run, stuck_text

POLL_CYCLES = 1024
"""Cycles between two polls of `ap_done` and `progress` (the watchdog's granularity)."""


class Stuck(Exception):
    """The watchdog stopped a run; the message says where the design stands."""


def port_states(dut, ports: list[dict]) -> dict[str, str]:
    """Each memory port's requests in flight, worded as `fanns_tb.axi.LatencyAxiRam.outstanding`."""
    out = {}
    for port in ports:
        s, parts = port["short"], []
        if int(getattr(dut, f"{s}_ar_wait").value):
            parts.append("a read request not accepted")
        if port["write"] and int(getattr(dut, f"{s}_aw_wait").value):
            parts.append("a write request not accepted")
        reads = int(getattr(dut, f"{s}_reads").value)
        if reads:
            parts.append(f"{reads} read burst(s) not finished")
        if port["write"] and int(getattr(dut, f"{s}_writes").value):
            parts.append(f"{int(getattr(dut, f'{s}_writes').value)} write burst(s) not answered")
        out[port["name"]] = ", ".join(parts) or "idle"
    return out


async def run_once(dut, csr: PinCsr, limits: dict, p: dict) -> int:
    """Start a run and poll ap_done under the watchdog, by the register map's block protocol
    (`RegMap.control`, as the driver does); return the cycles spent (`p`: the bench's parameters,
    whose `ports` and `streams` the watchdog's report names)."""
    ctrl = csr.regmap.control()
    if ctrl.clear is not None:
        await csr.write_word(ctrl.offset, ctrl.clear)
    cycles = Cycles(dut)
    t0, wall0 = cycles.now, time.monotonic()
    await csr.write_word(ctrl.offset, ctrl.start)
    progress, moved = -1, t0

    async def stuck(why: str) -> Stuck:
        return Stuck(stuck_text(why, await csr.read("streams"), p["streams"], port_states(dut, p["ports"])))

    while not (await csr.read_word(ctrl.offset)) & ctrl.done:
        now = cycles.now
        seen = await csr.read("progress")
        if seen != progress:
            progress, moved = seen, now
        elif now - moved > limits["stall"]:
            raise await stuck(f"no progress for {now - moved:,} cycles (run at cycle {now - t0:,})")
        if now - t0 > limits["cycles"]:
            raise await stuck(f"no ap_done after {limits['cycles']:,} cycles")
        if time.monotonic() - wall0 > limits["seconds"]:
            raise await stuck(f"no ap_done after {limits['seconds']:,.0f} s ({now - t0:,} cycles)")
        await Timer(POLL_CYCLES * PERIOD_NS, unit="ns")
        await RisingEdge(dut.clk)
    return cycles.now - t0


async def backdoor_write(dut, sel: int, word_bytes: int, byte_addr: int, data: bytes) -> None:
    """Write `data` (whole words) at `byte_addr` of memory `sel`, one word per cycle."""
    words = np.frombuffer(data, dtype=np.uint8).reshape(-1, word_bytes)
    dut.bd_sel.value = sel
    dut.bd_we.value = 1
    for i, word in enumerate(words):
        dut.bd_addr.value = byte_addr // word_bytes + i
        dut.bd_wdata.value = int.from_bytes(word.tobytes(), "little")
        await RisingEdge(dut.clk)
    dut.bd_we.value = 0


async def load(dut, sel: int, word_bytes: int, image: np.ndarray) -> None:
    """Load a memory image (bytes from address 0) into a zeroed memory: nonzero words only."""
    words = image.reshape(-1, word_bytes)
    dut.bd_sel.value = sel
    dut.bd_we.value = 1
    for i in np.flatnonzero(words.any(axis=1)):
        dut.bd_addr.value = int(i)
        dut.bd_wdata.value = int.from_bytes(words[i].tobytes(), "little")
        await RisingEdge(dut.clk)
    dut.bd_we.value = 0


@cocotb.test()
async def searches_match_reference(dut):
    p = params()
    regmap = RegMap.from_json(open(p["regmap"]).read())
    axil_idle(dut)
    dut.bd_we.value = 0
    dut.stall.value = 0
    dut.frozen.value = 0
    for tier, latency in p["latency"].items():
        getattr(dut, f"latency_{tier}").value = latency
    await start(dut)
    for sel, mem in enumerate(p["memories"]):
        await load(dut, sel, mem["word_bytes"], np.load(mem["image"]))
    dut.stall.value = p["stall"]
    dut.frozen.value = p["frozen"]
    io_bytes = p["memories"][0]["word_bytes"]
    csr = PinCsr(dut, regmap)
    for name, value in p["regs"].items():
        await csr.write(name, value)
    wall = time.perf_counter()

    if p.get("bad_params"):
        report(bad_params_status=await refused_run(csr, lambda limits: run_once(dut, csr, limits, p)))

    results, simulated = [], 0
    for i, run in enumerate(p["runs"]):
        nq, stride = run["nq"], run["stride"]
        await backdoor_write(dut, 0, io_bytes, p["results"], b"\xa5" * (nq * stride))  # must be overwritten
        await csr.write("nq", nq)
        await csr.write("nprobe", run["nprobe"])
        await csr.write("k", run["k"])
        await csr.write("query_addr", p["queries"] + run["first"] * p["query_stride"])
        await csr.write("result_addr", p["results"])
        try:
            sim_cycles = await run_once(dut, csr, p["limits"], p)
        except Stuck as stuck:
            report(runs=results, stuck=f"run {i + 1} of {len(p['runs'])}: {stuck}")
            return
        simulated += sim_cycles
        dut.bd_sel.value = 0  # the I/O memory
        row = check_run(run, await backdoor_read(dut, io_bytes, p["results"], nq * stride))
        row |= {name: await csr.read(name) for name in RUN_REGISTERS} | {"sim_cycles": sim_cycles}
        results.append(row)
        report(runs=results, run_seconds=time.perf_counter() - wall, run_cycles=simulated)
    assert all(r["mismatched_keys"] == 0 for r in results), [r.get("first_bad") for r in results]
    assert all(r["status"] & 0b110 == 0 for r in results), [r["status"] for r in results]
