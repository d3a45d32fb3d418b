"""cocotb system testbench of a whole generated IVF-PQ accelerator (`fanns.arch.ivfpq.top`).

The accelerator runs against cocotbext-axi memory models holding the real memory images of the
packer (`fanns.images.ivfpq`): the I/O channel (ROM images, query buffer, result buffer) and
one RAM per PQ-code channel, each answering reads `latency` cycles after AR. A real
`AxiLiteMaster` programs the registers from the generated register-map JSON, exactly as a host
driver would, starts each run and polls `ap_done`. The result keys read back from memory are
compared bit for bit with the reference model's keys.

Parameters (FANNS_TB_PARAMS): `regmap` (regmap.json), `images` (folder with manifest.json),
`queries` (query buffer file), `io_port_bits`, `channels`, `latency`, `pq_memory` / `hot_memory`
({latency, rate}: the PQ-code RAMs of the slow / fast tier, default `latency` and one beat per
cycle; a tiered project's `pq_hot_<c>` images sit behind `m_axi_hot<c>`, streamed IVF centroids'
`ivf_centroids_<c>` behind `m_axi_ivf<c>`, timed as the PQ channels), `pause` (probability of a
random ready/valid pause per cycle on every RAM channel), `runs`: [{nq, first, nprobe, k,
expected (uint64 keys [nq, k] file), stride (bytes per query's results), keys (file to write the
result keys read back to)}], `bad_params` (also check that an out-of-range nprobe is refused),
`limits` ({stall, cycles, seconds}: the watchdog below), `frozen` (memory ports that never answer:
a fault to prove the watchdog).
Report: per run the mismatching queries and keys, the cycle registers and the status word;
`run_cycles`, `run_seconds` and `run_cpu_seconds`, the cycles, wall and processor time of the runs (setup
excluded).

Watchdog: while a run is busy the bench polls the accelerator's `progress` register (cycles in
which a stage-boundary stream or memory port moved a word). When it stays still for `stall`
cycles, or the run passes `cycles` simulated cycles or `seconds` of wall time, the bench stops and
reports `stuck`: the streams holding words and the streams waiting (the `streams` register) and
every memory port's requests in flight, so a hang is located at once instead of after hours.
"""

import logging
import time

import cocotb
from cocotb.triggers import ClockCycles
from cocotbext.axi import AxiLiteMaster

from fanns.arch.ivfpq.hw import IMAGE_REGISTERS, WATCHED_STREAMS
from fanns.hdl.regmap import RegMap
from fanns.images.ivfpq import MemoryImages
from fanns_tb import Cycles, params, report, start
from fanns_tb.axi import LatencyAxiRam, axil_bus
from fanns_tb.ivfpq import RUN_REGISTERS, check_run, refused_run, stuck_text

PAGE = 4096
POLL_CYCLES = 256


def _align(n: int) -> int:
    return -(-n // PAGE) * PAGE


class Csr:
    """Registers by name through an AXI4-Lite master (the generated JSON gives the words)."""

    def __init__(self, master: AxiLiteMaster, regmap: RegMap):
        self.master, self.regmap = master, regmap

    async def write(self, name: str, value: int) -> None:
        reg = self.regmap[name]
        for offset, wbit, rbit, bits in reg.word_slices():
            await self.master.write_dword(offset, ((value >> rbit) & ((1 << bits) - 1)) << wbit)

    async def read(self, name: str) -> int:
        reg = self.regmap[name]
        out = 0
        for offset, wbit, rbit, bits in reg.word_slices():
            word = await self.master.read_dword(offset)
            out |= ((word >> wbit) & ((1 << bits) - 1)) << rbit
        return out


class Stuck(Exception):
    """The watchdog stopped a run; the message says where the design stands."""


async def stuck_report(csr: Csr, rams: dict, why: str) -> str:
    ports = {name: ram.outstanding() for name, ram in rams.items()}
    return stuck_text(why, await csr.read("streams"), list(WATCHED_STREAMS), ports)


async def run_once(dut, csr: Csr, limits: dict, rams: dict) -> int:
    """Start a run and poll ap_done under the watchdog, by the register map's block protocol
    (`RegMap.control`, as the driver does); return the cycles spent."""
    ctrl = csr.regmap.control()
    if ctrl.clear is not None:
        await csr.master.write_dword(ctrl.offset, ctrl.clear)
    cycles = Cycles(dut)
    t0, wall0 = cycles.now, time.monotonic()
    await csr.master.write_dword(ctrl.offset, ctrl.start)
    progress, moved = -1, t0
    while not (await csr.master.read_dword(ctrl.offset)) & ctrl.done:
        now = cycles.now
        seen = await csr.read("progress")
        if seen != progress:
            progress, moved = seen, now
        elif now - moved > limits["stall"]:
            raise Stuck(
                await stuck_report(csr, rams, f"no progress for {now - moved:,} cycles (run at cycle {now - t0:,})")
            )
        if now - t0 > limits["cycles"]:
            raise Stuck(await stuck_report(csr, rams, f"no ap_done after {limits['cycles']:,} cycles"))
        if time.monotonic() - wall0 > limits["seconds"]:
            raise Stuck(
                await stuck_report(csr, rams, f"no ap_done after {limits['seconds']:,.0f} s ({now - t0:,} cycles)")
            )
        await ClockCycles(dut.ap_clk, POLL_CYCLES)
    return cycles.now - t0


@cocotb.test()
async def searches_match_reference(dut):
    await search_runs(dut, params())


async def search_runs(dut, p: dict) -> None:
    """The whole bench (a plain coroutine, so debugging benches can reuse it)."""
    regmap = RegMap.from_json(open(p["regmap"]).read())
    images = MemoryImages.read(p["images"])
    queries = open(p["queries"], "rb").read()
    await start(dut)
    cycles = Cycles(dut)

    # I/O channel: ROM images, the query buffer, one result buffer per run.
    layout, offset = {}, PAGE
    for img in images.by_use("rom"):
        layout[img.name] = offset
        offset += _align(img.nbytes)
    layout["queries"] = offset
    offset += _align(len(queries))
    for i, run in enumerate(p["runs"]):
        layout[f"results{i}"] = offset
        offset += _align(run["nq"] * run["stride"])
    io = LatencyAxiRam(
        dut, "m_axi_io", offset, cycles, read_latency=p["latency"], write_latency=p["latency"], separator="_"
    )
    for img in images.by_use("rom"):
        io.write(layout[img.name], img.data)
    io.write(layout["queries"], queries)
    rams = {"m_axi_io": io}
    tiers = [("pq", "pq_codes", p.get("pq_memory"))]
    if images.by_use("pq_hot"):
        tiers.append(("hot", "pq_hot", p.get("hot_memory")))
    if images.by_use("ivf_centroids"):  # streamed IVF centroids: a data channel timed as the PQ ones
        tiers.append(("ivf", "ivf_centroids", p.get("pq_memory")))
    for port, name, timing in tiers:
        latency, rate = (timing["latency"], timing["rate"]) if timing else (p["latency"], 1.0)
        for c in range(len(images.by_use(name))):
            img = images.get(f"{name}_{c}")
            ram = LatencyAxiRam(
                dut,
                f"m_axi_{port}{c}",
                PAGE + _align(img.nbytes),
                cycles,
                read_latency=latency,
                write=False,
                read_rate=rate,
                separator="_",
            )
            ram.write(PAGE, img.data)
            rams[f"m_axi_{port}{c}"] = ram
    for k, (name, ram) in enumerate(rams.items()):
        ram.pause(1.0 if name in p.get("frozen", ()) else p.get("pause", 0.0), 100 + k)

    master = AxiLiteMaster(axil_bus(dut, "s_axi_control", "_"), dut.ap_clk, dut.ap_rst_n, reset_active_level=False)
    for iface in (master.write_if, master.read_if):
        iface.log.setLevel(logging.WARNING)  # one line per register access otherwise
    csr = Csr(master, regmap)
    for name, reg in IMAGE_REGISTERS.items():
        if name in layout:
            await csr.write(reg, layout[name])
    for port, name, _ in tiers:
        for c in range(len(images.by_use(name))):
            await csr.write(f"{port}{c}_addr", PAGE)

    if p.get("bad_params"):
        report(bad_params_status=await refused_run(csr, lambda limits: run_once(dut, csr, limits, rams)))

    results, simulated, wall, cpu = [], 0, time.perf_counter(), time.process_time()
    for i, run in enumerate(p["runs"]):
        nq, k, stride = run["nq"], run["k"], run["stride"]
        io.write(layout[f"results{i}"], b"\xa5" * (nq * stride))
        await csr.write("nq", nq)
        await csr.write("nprobe", run["nprobe"])
        await csr.write("k", k)
        await csr.write("query_addr", layout["queries"] + run["first"] * p["query_stride"])
        await csr.write("result_addr", layout[f"results{i}"])
        try:
            sim_cycles = await run_once(dut, csr, p["limits"], rams)
        except Stuck as stuck:
            report(runs=results, stuck=f"run {i + 1} of {len(p['runs'])}: {stuck}")
            return
        row = check_run(run, io.read(layout[f"results{i}"], nq * stride))
        row |= {name: await csr.read(name) for name in RUN_REGISTERS} | {"sim_cycles": sim_cycles}
        results.append(row)
        simulated += sim_cycles
        report(
            runs=results,
            run_seconds=time.perf_counter() - wall,
            run_cpu_seconds=time.process_time() - cpu,
            run_cycles=simulated,
        )
    assert all(r["mismatched_keys"] == 0 for r in results), [r.get("first_bad") for r in results]
    assert all(r["status"] & 0b110 == 0 for r in results), [r["status"] for r in results]
