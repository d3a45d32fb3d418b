"""Simulate a generated across-query accelerator (`fanns.arch.graph.across.FalconAcross`): P QPPs
on different queries, sharing the memory channels.

`FalconAcrossRtl(design, build_dir, bank_words)` builds the bench once (`FalconAcrossBench`: every
QPP master on one `SimMemory` of one bank per graph channel, `shared` set, so each channel moves
one beat per cycle among all masters, as the board's memory does); `run(images, queries_fx,
runtime)` splits the queries into P contiguous blocks (QPP p takes block p, the way a host splits
a batch between compute units), lays out bank c with graph channel c's adjacency and vector
images (the I/O buffers first in the bank of `memory.io_channel`), programs every QPP's
registers, starts them all, waits for every interrupt and decodes the result rows.

Timing: every QPP's `cycles` statistic per query, its run counter, and `sim_cycles` from the
first `ap_start` write to the last interrupt (the accelerator's time for the whole batch).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fanns.arch.graph.across import QPP_WINDOW, FalconAcross, across_addr_bits, qpp_masters
from fanns.design.graph import GraphDesign, Runtime
from fanns.design.graph_hw import QppHw
from fanns.errors import FannsError
from fanns.hdl.bus import axil_signature
from fanns.hdl.verilog import to_verilog
from fanns.images.graph import GraphImages
from fanns.index.graph import WORD_BYTES
from fanns.sim.axi_memory import SimMemory, connect_slave, ram_sources, zero_init_loops
from fanns.sim.graph.bench import DEFAULT_HARNESS, GraphBench
from fanns.sim.graph.rtl import align, drive_memory, memory_ports, run_registers


class FalconAcrossBench(wiring.Component):
    """The P QPPs of `design` with every master on one simulated memory of `banks` banks of
    `bank_words` x `WORD_BYTES` bytes (in words of the graph's port width)."""

    def __init__(self, design: GraphDesign, bank_words: int):
        self.design, self.hw = design, QppHw(design)
        self.banks = design.channels
        self.depth = bank_words * WORD_BYTES // self.hw.port_bytes * self.banks  # in words of the port width
        bits = self.hw.port_bits
        super().__init__(
            {
                "s_axil": In(axil_signature(across_addr_bits(design.pipelines))),
                "interrupt": Out(design.pipelines),
                **memory_ports(self.depth, bits),
                "shared": In(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        hw, pipes = self.hw, self.design.pipelines
        m.submodules.acc = acc = FalconAcross(hw, pipes)
        roles = qpp_masters(hw)
        reads = [f"p{p}_{r}" for p in range(pipes) for r in roles]
        m.submodules.mem = mem = SimMemory(
            hw.port_bits, self.depth, reads, [f"p{p}_io_w" for p in range(pipes)], banks=self.banks
        )
        wiring.connect(m, wiring.flipped(self.s_axil), acc.s_axil)
        for p in range(pipes):
            for r in roles:
                connect_slave(m, getattr(acc, f"m_axi_p{p}_{r}"), getattr(mem, f"p{p}_{r}"))
            connect_slave(m, getattr(acc, f"m_axi_p{p}_io"), getattr(mem, f"p{p}_io_w"))
        m.d.comb += [
            self.interrupt.eq(acc.interrupt),
            *drive_memory(self, mem),
            mem.shared.eq(self.shared),
        ]
        return m


@dataclass
class AcrossRun:
    keys: np.ndarray  # uint64 [nq, k_max], in query order
    stats: dict[str, np.ndarray]  # per query: cycles, hops, checks, visited, groups
    qpp: np.ndarray  # per query: the QPP that served it
    status: list[int]  # per QPP
    run_cycles: list[int]  # per QPP: its run counter (ap_start to done)
    sim_cycles: int  # first ap_start write to the last interrupt
    timed_out: bool = False


def bank_words(images: GraphImages, nq: int) -> int:
    """Words (of `WORD_BYTES`) of one memory bank for `nq` queries (a power of two): the largest channel's images,
    plus the I/O buffers in the bank that holds them."""
    io = images.io
    per = {}
    for img in images.images:
        c = int(img.name.split("_")[1])
        per[c] = per.get(c, 0) + align(img.nbytes)
    total = max(per.values()) + align(nq * io.query_row_bytes) + align(nq * io.result_row_bytes)
    words = -(-total // WORD_BYTES)
    return 1 << max(10, (words - 1).bit_length())


def split_queries(nq: int, pipelines: int) -> list[tuple[int, int]]:
    """(first, count) of each QPP's contiguous block of the batch (sizes differ by at most one)."""
    base, extra = divmod(nq, pipelines)
    out, first = [], 0
    for p in range(pipelines):
        n = base + (p < extra)
        out.append((first, n))
        first += n
    return out


class FalconAcrossRtl:
    """One Verilator build of an across-query design in its bench; runs any number of batches."""

    def __init__(
        self,
        design: GraphDesign,
        build_dir: Path,
        bank_words: int,
        harness: str = DEFAULT_HARNESS,
        trace: Path | None = None,
    ):
        """`harness`: "fast" (compiled) or "cocotb" (`fanns.sim.graph.bench`); `trace`: a VCD file
        every run writes its waveforms to (`GraphBench`)."""
        if design.mode != "across":
            raise FannsError(
                f"the design is in {design.mode!r} mode", hint="FalconAcrossRtl simulates across-query designs"
            )
        self.design, self.hw = design, QppHw(design)
        self.bank_words = bank_words
        verilog = zero_init_loops(to_verilog(FalconAcrossBench(design, bank_words), "falcon_across_bench"))
        sources = {"falcon_across_bench.v": verilog, **ram_sources()}
        self.sim = GraphBench(sources, "falcon_across_bench", Path(build_dir), self.hw.regmap, harness, trace)

    def build(self) -> None:
        self.sim.build()

    def run(
        self,
        images: GraphImages,
        queries_fx: np.ndarray,
        runtime: Runtime,
        latency: int = 100,
        shared: bool = True,
        timeout_cycles: int = 50_000_000,
    ) -> AcrossRun:
        design, io = self.design, images.io
        nq, pipes = len(queries_fx), design.pipelines
        blocks = split_queries(nq, pipes)
        if min(n for _, n in blocks) < 1:
            raise FannsError(f"{nq} queries for {pipes} QPPs", hint="give every QPP at least one query")
        bank_bytes = self.bank_words * WORD_BYTES
        mem = bytearray(bank_bytes * design.channels)
        if design.memory.io_channel not in design.memory.channels:
            raise FannsError(
                f"I/O channel {design.memory.io_channel} holds no graph image",
                hint="the bench puts the I/O buffers in a graph channel",
            )
        io_bank = design.memory.channels.index(design.memory.io_channel)
        used = [0] * design.channels
        q_addr = io_bank * bank_bytes
        r_addr = q_addr + align(nq * io.query_row_bytes)
        used[io_bank] = r_addr + align(nq * io.result_row_bytes) - q_addr
        qbytes = io.pack_queries(queries_fx)
        mem[q_addr : q_addr + len(qbytes)] = qbytes
        mem[r_addr : r_addr + nq * io.result_row_bytes] = b"\xa5" * (nq * io.result_row_bytes)  # must be overwritten
        image_addrs = {}
        for img in images.images:
            c = img.name.split("_")[1]
            addr = int(c) * bank_bytes + used[int(c)]
            if used[int(c)] + img.nbytes > bank_bytes:
                raise FannsError(
                    f"memory bank {c} of {self.bank_words} words is too small", hint="build with bank_words(images, nq)"
                )
            image_addrs[img.name] = addr
            mem[addr : addr + img.nbytes] = img.data
            used[int(c)] += align(img.nbytes)
        regs = [
            run_registers(
                design,
                runtime,
                n,
                q_addr + first * io.query_row_bytes,
                r_addr + first * io.result_row_bytes,
                image_addrs,
            )
            for first, n in blocks
        ]
        build = self.sim.build_dir
        image_path, out_path = build / "image.npy", build / "results.npy"
        np.save(image_path, np.frombuffer(bytes(mem), dtype=np.uint8))
        offsets = {r.name: (r.offset, r.width) for r in self.hw.regmap.registers}
        rep = self.sim.run(
            {
                "image": str(image_path),
                "words": len(mem) // WORD_BYTES,
                "word_bytes": self.hw.port_bytes,
                "regs": regs,
                "window": QPP_WINDOW,
                "offsets": offsets,
                "latency": latency,
                "stall": 0,
                "shared": int(shared),
                "result": [r_addr, nq * io.result_row_bytes],
                "out": str(out_path),
                "timeout_cycles": timeout_cycles,
            },
        )
        keys, stats = io.unpack_results(np.load(out_path).tobytes(), nq)
        qpp = np.concatenate([np.full(n, p, dtype=np.int64) for p, (_, n) in enumerate(blocks)])
        return AcrossRun(
            keys=keys,
            stats=stats,
            qpp=qpp,
            status=[int(s) for s in rep["status"]],
            run_cycles=[int(c) for c in rep["cycles"]],
            sim_cycles=int(rep["sim_cycles"]),
            timed_out=bool(rep.get("timed_out", False)),
        )
