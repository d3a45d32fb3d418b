"""Simulate a generated Falcon QPP (RTL) on real queries: Verilator, memory in RTL.

`FalconRtl(design, build_dir)` builds the bench once (`FalconBench`: the project's QPP kernel
Verilog, its AXI ports on one `SimMemory`), compiled (the fast harness) or under cocotb
(`fanns.sim.graph.bench`); `run(images, queries_fx, runtime)` lays the device images and the
query buffer out in the simulated memory (one flat address space: I/O buffers first, then every graph
channel's adjacency and vector images, each 4 KiB aligned — the QPP reads channel c's images
at the addresses in its `adj_addr<c>` / `vec_addr<c>` registers, as a host would program the
buffers it allocated), runs the bench and returns the result rows decoded by the
packer's `GraphIo`.

The simulated memory answers a read `latency` cycles after its AR handshake; the cycle model of
the same QPP is ``QppConfig.of_design(design, latency)`` (its read masters add their own
`falcon_model.READER_CYCLES`). A run that gets no interrupt within `timeout_cycles` returns with
``timed_out`` set.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from amaranth import ClockSignal, Instance, Module, ResetSignal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fanns.arch.graph.across import qpp_masters
from fanns.codegen.graph.rtl import CONTROL, TOP, verilog
from fanns.design.graph import GraphDesign, Runtime
from fanns.design.graph_hw import ADDR_BITS, CSR_ADDR_BITS, QppHw
from fanns.errors import FannsError
from fanns.hdl.bus import axi4_signature, axil_signature
from fanns.hdl.regmap import kernel_control_block
from fanns.hdl.verilog import to_verilog
from fanns.images.graph import GraphImages
from fanns.index.graph import WORD_BYTES
from fanns.sim.axi_memory import SimMemory, connect_slave, ram_sources, zero_init_loops
from fanns.sim.graph.bench import DEFAULT_HARNESS, GraphBench

ALIGN = 4096


def memory_ports(depth: int, port_bits: int) -> dict:
    """The bench's ports into its `SimMemory` (back door for the testbench, latency and stalls),
    shared by the single-QPP and across-query benches so one testbench drives both."""
    return {
        "bd_addr": In(range(depth)),
        "bd_wdata": In(port_bits),
        "bd_we": In(1),
        "bd_rdata": Out(port_bits),
        "latency": In(16),
        "stall": In(8),
    }


def drive_memory(bench: wiring.Component, mem: SimMemory) -> list:
    """The statements connecting the `memory_ports` of `bench` to `mem`."""
    return [
        mem.bd_addr.eq(bench.bd_addr),
        mem.bd_wdata.eq(bench.bd_wdata),
        mem.bd_we.eq(bench.bd_we),
        bench.bd_rdata.eq(mem.bd_rdata),
        mem.latency.eq(bench.latency),
        mem.stall.eq(bench.stall),
    ]


class FalconBench(wiring.Component):
    """The project's QPP kernel (module `fanns_falcon_qpp`, the Verilog `fanns generate-graph-rtl`
    writes, instantiated as an `Instance`: ports `ap_clk`, `ap_rst_n`, `s_axi_control_*`,
    `m_axi_<role>_*`, `interrupt`) with every AXI master on one simulated memory of `depth` words."""

    def __init__(self, hw: QppHw, depth: int):
        self.hw, self.depth = hw, depth
        super().__init__(
            {
                "s_axil": In(axil_signature(CSR_ADDR_BITS)),
                "interrupt": Out(1),
                **memory_ports(depth, hw.port_bits),
            }
        )

    def elaborate(self, platform):

        hw = self.hw
        m = Module()
        roles = qpp_masters(hw)
        m.submodules.mem = mem = SimMemory(hw.port_bits, self.depth, roles, ["io_w"])
        conns: dict[str, object] = {
            "i_ap_clk": ClockSignal(),
            "i_ap_rst_n": ~ResetSignal(),
            "o_interrupt": self.interrupt,
        }
        for name, member in self.s_axil.signature.members.items():
            # the bench's s_axil is the slave view: what the host drives is an input of the kernel
            conns[f"{'i' if member.flow == In else 'o'}_{CONTROL}_{name}"] = getattr(self.s_axil, name)
        for role in roles:
            port = f"m_axi_{role}"
            bus = axi4_signature(ADDR_BITS, hw.port_bits, write=role == "io").create(path=(port,))
            for name, member in bus.signature.members.items():
                conns[f"{'o' if member.flow == Out else 'i'}_{port}_{name}"] = getattr(bus, name)
            connect_slave(m, bus, getattr(mem, role))
            if role == "io":
                connect_slave(m, bus, mem.io_w)
        m.submodules.qpp = Instance(TOP, **conns)
        m.d.comb += drive_memory(self, mem)
        return m


CONTROL_BLOCK = {r.name: r for r in kernel_control_block()}
INTERRUPTS = {"gie": 1, "ier": 1}
"""What a host writes before a run to be interrupted when it finishes (GIE, IER bit 0: ap_done);
the benches wait for the `interrupt` pin as the board's driver waits for the interrupt."""


def align(n: int) -> int:
    """`n` bytes rounded up to the 4 KiB the benches place every buffer and image on."""
    return -(-n // ALIGN) * ALIGN


@dataclass
class RtlRun:
    keys: np.ndarray  # uint64 [nq, k_max]
    stats: dict[str, np.ndarray]  # per query: cycles, hops, checks, visited, groups
    status: int
    cycles: int  # the run's cycle counter (ap_start to done)
    sim_cycles: int  # ap_start write to interrupt, measured by the bench
    timed_out: bool = False  # no interrupt within the timeout (the results are whatever was written)
    seconds: float = 0.0  # wall time of the run in the bench (memory loading and simulator start excluded)
    cpu_seconds: float | None = None  # the bench's processor time for it
    protocol: dict | None = None  # the control words the bench read (`run(..., protocol=True)`)


def image_register(image: str) -> str:
    """The base-address register of a graph image (`adjacency_<c>` -> `adj_addr<c>`, `vectors_<c>`
    -> `vec_addr<c>`)."""
    kind, c = image.split("_")
    return f"{'adj' if kind == 'adjacency' else 'vec'}_addr{c}"


def run_registers(
    design: GraphDesign, runtime: Runtime, nq: int, query_addr: int, result_addr: int, image_addrs: dict[str, int]
) -> dict[str, int]:
    """Every register a host writes for one run of a QPP, by name (`QppHw.regmap`): the interrupt
    enables, `nq` queries at `query_addr` with their results at `result_addr`, each graph image at
    its address (`image_addrs`: image name -> address), the graph and the run-time parameters.
    Why one function: the benches and the board's driver (`fanns.driver.graph_pynq`) program the
    same words, so the simulation checks what the board runs."""
    regs = INTERRUPTS | {
        "nq": nq,
        "query_addr": query_addr,
        "result_addr": result_addr,
        "nodes": design.graph.n,
        "entry": design.graph.entry,
        "l": runtime.l,
        "k": runtime.k,
        "mg": runtime.mg,
        "mc": runtime.mc,
    }
    for image, addr in image_addrs.items():
        regs[image_register(image)] = addr
    return regs


def memory_words(images: GraphImages, nq: int) -> int:
    """Size of the flat simulated memory for `nq` queries, in words of `WORD_BYTES` (the images'
    alignment; a power of two). The bench's memory is as many bytes in words of the graph's port
    width (`FalconRtl`)."""
    io = images.io
    total = (
        align(nq * io.query_row_bytes)
        + align(nq * io.result_row_bytes)
        + sum(align(img.nbytes) for img in images.images)
    )
    words = -(-total // WORD_BYTES)
    return 1 << max(10, (words - 1).bit_length())


class FalconRtl:
    """One Verilator build of `design`'s QPP in its bench; runs any number of query batches."""

    def __init__(
        self,
        design: GraphDesign,
        build_dir: Path,
        depth_words: int,
        harness: str = DEFAULT_HARNESS,
        kernel: str | None = None,
        trace: Path | None = None,
    ):
        """`harness`: "fast" (compiled) or "cocotb" (`fanns.sim.graph.bench`). `kernel`: the kernel's
        Verilog (a project's `rtl/fanns_falcon_qpp.v`), by default the one `design` generates;
        `trace`: a VCD file every run writes its waveforms to (`GraphBench`)."""
        self.design = design
        self.hw = QppHw(design)
        self.depth = depth_words
        bench = FalconBench(self.hw, depth_words * WORD_BYTES // self.hw.port_bytes)
        bench = zero_init_loops(to_verilog(bench, "falcon_bench"))
        sources = {f"{TOP}.v": kernel or verilog(self.hw), "falcon_bench.v": bench, **ram_sources()}
        self.sim = GraphBench(sources, "falcon_bench", Path(build_dir), self.hw.regmap, harness, trace)

    def build(self) -> None:
        self.sim.build()

    def run(
        self,
        images: GraphImages,
        queries_fx: np.ndarray,
        runtime: Runtime,
        latency: int = 100,
        stall: int = 0,
        timeout_cycles: int = 50_000_000,
        protocol: bool = False,
    ) -> RtlRun:
        """`protocol`: also observe the ap_ctrl_hs block (`sim/tb_falcon.py`, `RtlRun.protocol`)."""
        io = images.io
        nq = len(queries_fx)
        q_addr = 0
        r_addr = align(nq * io.query_row_bytes)
        addr = r_addr + align(nq * io.result_row_bytes)
        mem = bytearray(self.depth * WORD_BYTES)
        if addr + sum(align(img.nbytes) for img in images.images) > len(mem):
            raise FannsError(
                f"the bench memory of {self.depth} words is too small for {nq} queries and the graph",
                hint="build FalconRtl with memory_words(images, nq) words",
            )
        qbytes = io.pack_queries(queries_fx)
        mem[q_addr : q_addr + len(qbytes)] = qbytes
        mem[r_addr : r_addr + nq * io.result_row_bytes] = b"\xa5" * (nq * io.result_row_bytes)  # must be overwritten
        image_addrs = {}
        for img in images.images:
            image_addrs[img.name] = addr
            mem[addr : addr + img.nbytes] = img.data
            addr += align(img.nbytes)
        regs = run_registers(self.design, runtime, nq, q_addr, r_addr, image_addrs)
        build = self.sim.build_dir
        image_path, out_path = build / "image.npy", build / "results.npy"
        used = -(-addr // WORD_BYTES)
        np.save(image_path, np.frombuffer(bytes(mem[: used * WORD_BYTES]), dtype=np.uint8))
        offsets = {r.name: (r.offset, r.width) for r in self.hw.regmap.registers}
        rep = self.sim.run(
            {
                "image": str(image_path),
                "words": used,
                "word_bytes": self.hw.port_bytes,
                "regs": regs,
                "offsets": offsets,
                "latency": latency,
                "stall": stall,
                "result": [r_addr, nq * io.result_row_bytes],
                "out": str(out_path),
                "timeout_cycles": timeout_cycles,
                **({"control": {n: [r.offset, r.bit] for n, r in CONTROL_BLOCK.items()}} if protocol else {}),
            },
        )
        raw = np.load(out_path).tobytes()
        keys, stats = io.unpack_results(raw, nq)
        return RtlRun(
            keys=keys,
            stats=stats,
            status=int(rep["status"]),
            cycles=int(rep["cycles"]),
            sim_cycles=int(rep["sim_cycles"]),
            timed_out=bool(rep.get("timed_out", False)),
            seconds=float(rep.get("seconds", 0.0)),
            cpu_seconds=rep.get("cpu_seconds"),
            protocol=rep.get("protocol") or None,
        )
