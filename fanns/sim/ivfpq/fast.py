"""The fast IVF-PQ harness: the project's accelerator and its memories in one compiled Verilated model.

`IvfPqBench` instantiates the project's own Verilog (`rtl/fanns_ivfpq.v`, as an `Instance`, so the
hardware under test is the file users get, not a re-elaboration of `design.yaml`) and serves every
AXI master of it (an RTL kernel: `ap_clk`, `ap_rst_n`, `s_axi_control_*`, `m_axi_<name>_*`) with a
`fanns.sim.axi_memory.SimMemory`: `m_axi_io` (read and write), every
`m_axi_pq<c>`, in a tiered design every `m_axi_hot<c>`, with streamed IVF centroids every
`m_axi_ivf<c>`, each port on a memory of its own
(the old harness's `LatencyAxiRam`s are independent too). The ports are taken from the project's
`rtl/ports.json`. `FastBench` compiles the bench with the clock loop in C++ (`fanns.tools.vmodel`)
and drives it from Python (`fanns.sim.compiled`): it loads the memories' word arrays in place
(no clock cycle), programs registers, polls `ap_done` and `progress` every `POLL_CYCLES` and reads the results
back, so no Python runs while the accelerator works, and no cocotb at all.

Memory timing is the old harness's (`sim/fanns_tb/axi.py::LatencyAxiRam`) and the cycle model's:
the first read beat `latency` cycles after the AR handshake, then one beat per cycle; a write
answered `latency` cycles after its last beat. The `m_axi_pq<c>` memories share one metered link
(`METERED_TIERS`, `link_rate`): unlimited by default, the board file's host link in a host-memory
design (`RtlProjectSim.host_memory`). Random pauses become SimMemory stalls (an LFSR
drops each ready/valid with probability `stall`/256, not cocotbext's pause generator, so with
pauses the cycles differ from the old harness while the keys must not). A `frozen` port never
accepts a request (the watchdog's fault). Per port the bench shows the bursts in flight and
whether a request waits (`<port>_reads`, `<port>_ar_wait`, `io_writes`, `io_aw_wait`), for the
watchdog's report.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth import ClockSignal, Instance, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fanns.arch.ivfpq.hw import IMAGE_REGISTERS, WATCHED_STREAMS
from fanns.codegen.ivfpq.rtl import CONTROL, TOP
from fanns.errors import FannsError
from fanns.hdl.bus import axi4_signature, axil_signature
from fanns.hdl.regmap import RegMap
from fanns.hdl.verilog import to_verilog
from fanns.images.ivfpq import IoLayout, MemoryImages
from fanns.sim.axi_memory import SimMemory, meter_link, ram_sources, zero_init_loops
from fanns.sim.compiled import AxilHost, Csr, load, read, reset
from fanns.sim.ivfpq.results import BAD_PARAMS_LIMITS, RUN_REGISTERS, check_run, stuck_text
from fanns.tools.vbuild import BuildOptions
from fanns.tools.verilator import SimulationFailed
from fanns.tools.verilogcache import VerilogModuleCache
from fanns.tools.vmodel import DEFAULT_BUILD, Model, ModelBuild

POLL_CYCLES = 1024
"""Cycles between two polls of `ap_done` and `progress` (the watchdog's granularity)."""
PAGE = 4096
"""Every buffer and image starts on a 4 KiB page, as in the cocotb harness (`sim/tb_ivfpq.py`)."""
QUEUE_DEPTH = 256
"""Read requests each simulated memory holds in flight (the old harness's queues are unbounded;
the accelerator's readers keep far fewer than this outstanding, so it never back-pressures AR)."""
COUNT_BITS = 16
ADDR_BITS = 64
TIER_IMAGES = {
    "pq": "pq_codes",
    "hot": "pq_hot",
    "cache": "pq_cache",
    "ivf": "ivf_centroids",
    "lutc": "lut_centroids",
    "opq": "opq_matrix",
}
"""The images (`<name>_<c>`) behind the ports `m_axi_pq<c>`, `m_axi_hot<c>`, `m_axi_cache<c>` (a
host-memory design's cache region, read and written) and `m_axi_ivf<c>`,
`lut_centroids` behind `m_axi_lutc` and a streamed `opq_matrix` behind `m_axi_opq`."""
LATENCY_TIERS = {"io": "io", "pq": "pq", "hot": "hot", "cache": "hot", "ivf": "pq", "lutc": "pq", "opq": "pq"}
"""Which latency input times a port: a centroid or matrix channel is a data channel like a PQ one; a
cache region is timed as the fast tier (in a host-memory design `pq` times the host memory)."""
METERED_TIERS = ("pq",)
"""Ports whose memories share one link of `link_rate` / 256 beats a cycle (0: no limit): the
`m_axi_pq<c>` ports, which in a host-memory design all read host memory over the one PCIe link
(`fanns.sim.axi_memory.meter_link`)."""
WRITTEN_TIERS = ("cache",)
"""Ports besides `m_axi_io` that write their memory."""


def align(n: int) -> int:
    return -(-n // PAGE) * PAGE


def pow2_words(nbytes: int, word_bytes: int) -> int:
    """Words of a memory holding `nbytes` (a power of two, at least 1024)."""
    words = -(-nbytes // word_bytes)
    return 1 << max(10, (words - 1).bit_length())


@dataclass(frozen=True)
class Port:
    """One AXI master of the accelerator and the memory serving it."""

    name: str  # e.g. "m_axi_pq0"
    data_bits: int
    write: bool
    tier: str  # "io", "pq", "hot" or "ivf" (`LATENCY_TIERS`: which latency input times it)
    depth: int  # words of its memory
    image: str | None = (
        None  # the image it serves at PAGE (pq_codes_<c>, pq_hot_<c>, ivf_centroids_<c>); None: m_axi_io
    )

    @property
    def short(self) -> str:
        return self.name.removeprefix("m_axi_")


@dataclass(frozen=True)
class BenchLayout:
    """Where everything sits: the I/O memory's byte offsets (ROM images, `queries`, `results`)
    and each PQ / hot-tier image at `PAGE` of its own memory."""

    ports: tuple[Port, ...]
    io: dict[str, int]
    csr_addr_bits: int

    @classmethod
    def of(
        cls,
        ports_json: dict,
        images: MemoryImages,
        query_bytes: int,
        result_bytes: int,
        cell_bytes: int = 0,
        descriptor_bytes: int = 0,
    ) -> BenchLayout:
        """The layout for a project (`rtl/ports.json`, its images, the bytes of all its test queries,
        of the results of all of them and of their cell lists, and of a prefetch run's descriptors);
        a step-wise run's buffers (`step_queries`, `cells`, `seeds`) follow the results, then the
        `descriptors` of a host-memory design."""
        spec = ports_json["ports"]
        io_bytes = spec["m_axi_io"]["data_bits"] // 8
        io, offset = {}, PAGE
        for img in images.by_use("rom"):
            io[img.name] = offset
            offset += align(img.nbytes)
        io["queries"] = offset
        offset += align(query_bytes)
        io["results"] = offset
        offset += align(result_bytes)
        for name, nbytes in (("step_queries", query_bytes), ("cells", cell_bytes), ("seeds", result_bytes)):
            io[name] = offset
            offset += align(nbytes) if cell_bytes else 0
        io["descriptors"] = offset
        offset += align(descriptor_bytes)
        ports = [Port("m_axi_io", spec["m_axi_io"]["data_bits"], True, "io", pow2_words(offset, io_bytes))]
        for name in sorted(spec, key=_port_order):
            tier = name.removeprefix("m_axi_").rstrip("0123456789")
            if tier in TIER_IMAGES:
                bits = spec[name]["data_bits"]
                c = name.removeprefix("m_axi_" + tier)
                img = images.get(TIER_IMAGES[tier] + (f"_{c}" if c else ""))
                depth = pow2_words(PAGE + align(img.nbytes), bits // 8)
                ports.append(Port(name, bits, tier in WRITTEN_TIERS, tier, depth, img.name))
        return cls(tuple(ports), io, spec[CONTROL]["addr_bits"])


def _port_order(name: str) -> tuple:
    head = name.rstrip("0123456789")
    return (head, int(name[len(head) :]) if name != head else -1)


class IvfPqBench(wiring.Component):
    """The project's `fanns_ivfpq` module with every AXI master on a `SimMemory` (module docstring)."""

    def __init__(self, layout: BenchLayout, top: str):
        self.layout, self.top = layout, top
        ports = layout.ports
        members = {
            "s_axil": In(axil_signature(layout.csr_addr_bits)),
            "latency_io": In(16),
            "latency_pq": In(16),
            "latency_hot": In(16),
            "link_rate": In(16),
            "stall": In(8),
            "frozen": In(len(ports)),
        }
        for p in ports:
            members[f"{p.short}_reads"] = Out(COUNT_BITS)
            members[f"{p.short}_ar_wait"] = Out(1)
            if p.write:
                members[f"{p.short}_writes"] = Out(COUNT_BITS)
                members[f"{p.short}_aw_wait"] = Out(1)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        # the project's module is an RTL kernel: ap_clk, active-low ap_rst_n, single-underscore ports
        conns: dict[str, object] = {"i_ap_clk": ClockSignal(), "i_ap_rst_n": ~ResetSignal()}
        for name, member in self.s_axil.signature.members.items():
            # the bench's s_axil is the slave view: what the host drives is an input of the accelerator
            conns[f"{'i' if member.flow == In else 'o'}_{CONTROL}_{name}"] = getattr(self.s_axil, name)
        frozen_ports = Signal.like(self.frozen)
        m.d.sync += frozen_ports.eq(self.frozen)  # registered, as SimMemory's settings
        link_rate = Signal.like(self.link_rate)
        m.d.sync += link_rate.eq(self.link_rate)
        metered = []
        for i, p in enumerate(self.layout.ports):
            bus = axi4_signature(ADDR_BITS, p.data_bits, write=p.write).create(path=(p.name,))
            for name, member in bus.signature.members.items():
                conns[f"{'o' if member.flow == Out else 'i'}_{p.name}_{name}"] = getattr(bus, name)
            writes = ["w"] if p.write else []
            mem = SimMemory(
                p.data_bits,
                p.depth,
                ["r"],
                writes,
                queue_depth=QUEUE_DEPTH,
                seed=0x1234567 + 7919 * i,
                metered=p.tier in METERED_TIERS,
            )
            m.submodules[f"mem_{p.short}"] = mem
            if mem.metered:
                metered.append(mem)
            frozen = frozen_ports[i]
            _serve(m, bus, mem.r, frozen)
            if p.write:
                _serve(m, bus, mem.w, frozen)
            m.d.comb += [
                mem.latency.eq(getattr(self, f"latency_{LATENCY_TIERS[p.tier]}")),
                mem.stall.eq(self.stall),
            ]
            self._in_flight(m, p, bus)
        if metered:
            meter_link(m, metered, link_rate)
        m.submodules.accelerator = Instance(self.top, **conns)
        return m

    def _in_flight(self, m: Module, p: Port, bus) -> None:
        """Bursts requested and not finished (reads) or not answered (writes) on port `p`."""
        reads = getattr(self, f"{p.short}_reads")
        ar, r_end = bus.arvalid & bus.arready, bus.rvalid & bus.rready & bus.rlast
        m.d.sync += reads.eq(reads + ar - r_end)
        m.d.comb += getattr(self, f"{p.short}_ar_wait").eq(bus.arvalid & ~bus.arready)
        if p.write:
            writes = getattr(self, f"{p.short}_writes")
            aw, b = bus.awvalid & bus.awready, bus.bvalid & bus.bready
            m.d.sync += writes.eq(writes + aw - b)
            m.d.comb += getattr(self, f"{p.short}_aw_wait").eq(bus.awvalid & ~bus.awready)


def _serve(m: Module, master, slave, frozen: Signal) -> None:
    """Wire the members `slave` (a read or write half of a SimMemory port) has to the accelerator's
    master; a `frozen` port never takes a request (AR/AW valid hidden, ready held low)."""
    for name, member in slave.signature.members.items():
        s, mst = getattr(slave, name), getattr(master, name)
        if member.flow == In:
            m.d.comb += s.eq(mst & ~frozen if name in ("arvalid", "awvalid") else mst)
        else:
            m.d.comb += mst.eq(s & ~frozen if name in ("arready", "awready") else s)


BENCH_TOP = "fanns_ivfpq_bench"


def bench_verilog(layout: BenchLayout, top: str) -> str:
    """Verilog of the bench (module `fanns_ivfpq_bench`); the accelerator's module comes from the
    project. Kept by (layout, top) in the converted-Verilog cache (`fanns.tools.verilogcache`, keyed
    by fanns's own code too): its conversion took 7-11 s of a 784-d design's `fanns sim`."""
    cache, key = VerilogModuleCache(), repr((layout, top))
    text = cache.get(BENCH_TOP, key)
    if text is None:
        text = zero_init_loops(to_verilog(IvfPqBench(layout, top), BENCH_TOP))
        cache.put(BENCH_TOP, key, text)
    return text


def check_timing(rate: float, what: str) -> None:
    """The fast harness's memories move one beat per cycle: refuse a slower simulated memory."""
    if rate != 1.0:
        raise FannsError(
            f"{what}: the fast harness simulates memories of one beat per cycle, not a rate of {rate}",
            hint="use the cocotb harness (harness='cocotb', fanns sim --harness cocotb) for a slower memory",
        )


class FastBench:
    """A project's accelerator in its `IvfPqBench`, compiled as `options` say (None: the build with
    the least expected build and run time for runs of `run_cycles` cycles after the memories are
    loaded; `fanns.tools.vmodel`);
    `run` serves a request of `RtlProjectSim.run`, with its files under `build_root`. With `trace`
    (a VCD path) the model is built with Verilator's tracing and every run writes every signal's
    waveform there."""

    def __init__(
        self,
        project: Path,
        record: dict,
        text: str,
        build_root: Path,
        options: BuildOptions | None = DEFAULT_BUILD,
        trace: Path | None = None,
        run_cycles: int = 0,
    ):
        self.project = project
        self.trace = trace
        images = MemoryImages.read(project / "images")
        self.images = images
        io = record["io"]
        self.query_stride = io["query_beats"] * io["port_bits"] // 8
        result_stride = io["result_beats"] * io["port_bits"] // 8
        queries = (project / "data" / "queries.bin").stat().st_size
        ports = json.loads((project / "rtl" / "ports.json").read_text())
        nq = int(record["test"]["nq"])
        cell_stride = IoLayout.from_dict(io).cell_beats(int(record["nprobe"])) * io["port_bits"] // 8
        host_tier = "pq_cache" in {img.use for img in images.images}
        nlist = images.by_use("pq_codes")[0].layout["nlist"]
        self.descriptor_bytes = 2 * nlist * 16 if host_tier else 0  # an eviction and a copy per list
        self.layout = BenchLayout.of(
            ports, images, queries, nq * result_stride, nq * cell_stride, self.descriptor_bytes
        )
        sources = {f"{TOP}.v": text, f"{BENCH_TOP}.v": bench_verilog(self.layout, TOP), **ram_sources()}
        tag = hashlib.sha256("".join(sources.values()).encode()).hexdigest()[:16]
        self.sim = ModelBuild(
            sources,
            BENCH_TOP,
            Path(build_root) / f"ivfpq_compiled_{tag}",
            options=options,
            trace=trace is not None,
            cycles=None if options else run_cycles,  # the images load without clock cycles
        )
        self.regmap = RegMap.from_json((project / "rtl" / "regmap.json").read_text())

    def _memories(self) -> list[bytes]:
        """Every memory's initial bytes, in port order."""
        out = []
        for p in self.layout.ports:
            if p.tier == "io":
                data = bytearray(self.layout.io["results"])
                for img in self.images.by_use("rom"):
                    data[self.layout.io[img.name] : self.layout.io[img.name] + img.nbytes] = img.data
                queries = (self.project / "data" / "queries.bin").read_bytes()
                data[self.layout.io["queries"] : self.layout.io["queries"] + len(queries)] = queries
            else:
                data = bytearray(PAGE) + bytearray(self.images.get(p.image).data)
            out.append(bytes(data))
        return out

    def run(
        self,
        runs: list[dict],
        latency: dict[str, int],
        stall: int,
        bad_params: bool,
        frozen: tuple[str, ...],
        limits: dict,
        link_rate: int = 0,
    ) -> dict:
        """Run `runs` (`RtlProjectSim.run`'s specs) on a fresh model: load the memories, program the
        image addresses, then per run the queries' registers, start, wait under the watchdog
        (`limits`), read the results back and check them (`fanns.sim.ivfpq.results.check_run`).
        `latency` per tier (io, pq, hot); `stall`: 0..255, a memory's ready/valid drops with
        probability stall/256; `link_rate`: the `m_axi_pq<c>` memories' shared link in 1/256 beats a
        cycle (0: each port a beat a cycle). Returns the report of `sim/tb_ivfpq.py`."""
        names = [p.name for p in self.layout.ports]
        unknown = sorted(set(frozen) - set(names))
        if unknown:
            raise FannsError(f"no memory port {', '.join(unknown)}", hint=f"the ports are {', '.join(names)}")
        m = self.sim.open()
        try:
            if self.trace:
                m.trace(self.trace)
            m.poke("link_rate", link_rate)
            return self._run(m, runs, latency, stall, bad_params, frozen, limits)
        finally:
            m.close()

    def _run(self, m: Model, runs, latency, stall, bad_params, frozen, limits) -> dict:
        for tier, value in latency.items():
            m.poke(f"latency_{tier}", value)
        reset(m)
        for port, image in zip(self.layout.ports, self._memories()):
            load(m, image, port.data_bits // 8, memory=f"mem_{port.short}")
        m.poke("stall", stall)
        m.poke("frozen", sum(1 << i for i, p in enumerate(self.layout.ports) if p.name in frozen))
        csr = Csr(AxilHost(m), self.regmap)
        regs = {reg: self.layout.io[img] for img, reg in IMAGE_REGISTERS.items() if img in self.layout.io}
        regs |= {f"{p.short}_addr": PAGE for p in self.layout.ports if p.tier != "io"}
        for name, value in regs.items():
            csr.write(name, value)
        out: dict = {}
        wall, cpu = time.perf_counter(), time.process_time()
        if bad_params:
            csr.write("nq", 1)
            csr.write("nprobe", 0)
            self._run_once(m, csr, BAD_PARAMS_LIMITS)
            out["bad_params_status"] = csr.read("status")
            if not out["bad_params_status"] & 0b10:
                raise SimulationFailed("nprobe = 0 was not refused", hint="the generated control logic is wrong")
        io_bytes, io_mem = self.layout.ports[0].data_bits // 8, f"mem_{self.layout.ports[0].short}"
        results, simulated = [], 0
        for i, run in enumerate(runs):
            for short, at, raw in run.get("pokes", ()):  # e.g. a corrupted cache beat
                port = next(p for p in self.layout.ports if p.short == short)
                load(m, raw, port.data_bits // 8, (PAGE + at) // (port.data_bits // 8), False, f"mem_{short}")
            if "prefetch" in run:
                try:
                    sim_cycles = self._prefetch(m, csr, run, limits)
                except Stuck as stuck:
                    return out | {"runs": results, "stuck": f"run {i + 1} of {len(runs)}: {stuck}"}
                simulated += sim_cycles
                results.append({name: csr.read(name) for name in RUN_REGISTERS} | {"sim_cycles": sim_cycles})
                continue
            nq, stride = run["nq"], run["stride"]
            load(m, b"\xa5" * (nq * stride), io_bytes, self.layout.io["results"] // io_bytes, False, io_mem)
            regs = {
                "nq": nq,
                "nprobe": run["nprobe"],
                "k": run["k"],
                "query_addr": self.layout.io["queries"] + run["first"] * self.query_stride,
                "result_addr": self.layout.io["results"],
            }
            if self.regmap.has("mode"):
                regs |= self._step_buffers(m, run.get("step"))
            for name, value in regs.items():
                csr.write(name, value)
            try:
                sim_cycles = self._run_once(m, csr, limits)
            except Stuck as stuck:
                return out | {"runs": results, "stuck": f"run {i + 1} of {len(runs)}: {stuck}"}
            simulated += sim_cycles
            row = check_run(run, read(m, io_bytes, self.layout.io["results"], nq * stride, io_mem))
            row |= {name: csr.read(name) for name in RUN_REGISTERS} | {"sim_cycles": sim_cycles}
            results.append(row)
        out |= {
            "runs": results,
            "run_seconds": time.perf_counter() - wall,
            "run_cpu_seconds": time.process_time() - cpu,
            "run_cycles": simulated,
        }
        out["memories"] = {
            p.short: read(m, p.data_bits // 8, PAGE, self.images.get(p.image).nbytes, f"mem_{p.short}")
            for p in self.layout.ports
            if p.write and p.image is not None
        }  # what the runs wrote (a host-memory design's cache regions)
        bad = [r.get("first_bad") for r in results if r.get("mismatched_keys")]
        if bad or any(r["status"] & 0b110 for r in results):
            raise SimulationFailed(
                f"{self.project.name}: the accelerator returned wrong keys or an error status: "
                f"{bad[:1] or [r['status'] for r in results]}",
                hint="the generated hardware disagreed with its reference model; report it with design.yaml",
            )
        return out

    def _prefetch(self, m: Model, csr: Csr, run: dict, limits: dict) -> int:
        """A prefetch run (`mode` 2 of a host-memory design): its descriptors written to the I/O
        memory, `cells_addr` pointing at them; the cycles spent."""
        io_bytes, io_mem = self.layout.ports[0].data_bits // 8, f"mem_{self.layout.ports[0].short}"
        raw = run["prefetch"]
        if len(raw) > self.descriptor_bytes:
            raise FannsError(f"{len(raw) // 16} prefetch descriptors: the bench holds {self.descriptor_bytes // 16}")
        load(m, raw, io_bytes, self.layout.io["descriptors"] // io_bytes, False, io_mem)
        regs = {"nq": len(raw) // 16, "nprobe": run["nprobe"], "k": run["k"], "mode": 2}
        for name, value in (regs | {"cells_addr": self.layout.io["descriptors"]}).items():
            csr.write(name, value)
        return self._run_once(m, csr, limits)

    def _step_buffers(self, m: Model, step: dict | None) -> dict[str, int]:
        """A step-wise run's buffers written to the I/O memory, and the registers pointing at
        them; a normal run's `mode` 0."""
        if step is None:
            return {"mode": 0}
        io_bytes, io_mem = self.layout.ports[0].data_bits // 8, f"mem_{self.layout.ports[0].short}"
        for name, buf in (("step_queries", "queries"), ("cells", "cells"), ("seeds", "seeds")):
            load(m, step[buf], io_bytes, self.layout.io[name] // io_bytes, False, io_mem)
        io = self.layout.io
        return {"mode": 1, "query_addr": io["step_queries"], "cells_addr": io["cells"], "seeds_addr": io["seeds"]}

    def _run_once(self, m: Model, csr: Csr, limits: dict) -> int:
        """Start a run and poll ap_done every `POLL_CYCLES` under the watchdog, by the register
        map's block protocol (`RegMap.control`, as the driver does); the cycles spent."""
        ctrl = csr.regmap.control()
        if ctrl.clear is not None:
            csr.write_word(ctrl.offset, ctrl.clear)
        t0, wall0 = m.cycles, time.monotonic()
        csr.write_word(ctrl.offset, ctrl.start)
        progress, moved = -1, t0
        while not csr.read_word(ctrl.offset) & ctrl.done:
            now = m.cycles
            seen = csr.read("progress")
            if seen != progress:
                progress, moved = seen, now
            elif now - moved > limits["stall"]:
                raise self._stuck(m, csr, f"no progress for {now - moved:,} cycles (run at cycle {now - t0:,})")
            if now - t0 > limits["cycles"]:
                raise self._stuck(m, csr, f"no ap_done after {limits['cycles']:,} cycles")
            if time.monotonic() - wall0 > limits["seconds"]:
                raise self._stuck(m, csr, f"no ap_done after {limits['seconds']:,.0f} s ({now - t0:,} cycles)")
            m.step(POLL_CYCLES)
        return m.cycles - t0

    def _stuck(self, m: Model, csr: Csr, why: str) -> Stuck:
        return Stuck(stuck_text(why, csr.read("streams"), list(WATCHED_STREAMS), self.port_states(m)))

    def port_states(self, m: Model) -> dict[str, str]:
        """Each memory port's requests in flight, worded as `sim/fanns_tb/axi.py::LatencyAxiRam.outstanding`."""
        out = {}
        for port in self.layout.ports:
            s, parts = port.short, []
            if m.peek(f"{s}_ar_wait"):
                parts.append("a read request not accepted")
            if port.write and m.peek(f"{s}_aw_wait"):
                parts.append("a write request not accepted")
            reads = m.peek(f"{s}_reads")
            if reads:
                parts.append(f"{reads} read burst(s) not finished")
            if port.write and m.peek(f"{s}_writes"):
                parts.append(f"{m.peek(f'{s}_writes')} write burst(s) not answered")
            out[port.name] = ", ".join(parts) or "idle"
        return out


class Stuck(Exception):
    """The watchdog stopped a run; the message says where the design stands."""
