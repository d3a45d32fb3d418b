"""The pynq backend of a graph (Falcon) project: its QPP kernel on a board, programmed with the
registers and buffers the RTL simulation bench programs (`fanns.sim.graph.rtl.run_registers`), so
the simulation checks what the board runs.

What it executes (the board side is `fanns.driver.pynq_overlay`, shared with the IVF-PQ driver):
1. `pynq.Overlay` of the project's bitstream: the xclbin of `make hw` (`build/hw/fanns_falcon_qpp.xclbin`,
   either face) on Alveo, the .bit/.hwh `zynq/board_plan.json` names on a Zynq board.
2. The IPs: one per compute unit (an across-query design has one per pipeline) — on a Zynq build
   the instances of `zynq/board_plan.json`, each at the base address the block design assigned,
   on Alveo the compute units `fanns_falcon_qpp_<i>`; the register offsets are the kernel's
   (`graph_regmap`: the RTL face's `QppHw.regmap`, the HLS face's Vitis `s_axilite` layout of its
   recorded arguments) and are checked against the overlay's map (HLS) or the record (Zynq).
3. Buffers (`graph_buffers`): the query and result buffers in the I/O channel's bank, each graph
   channel's adjacency and vector images in that channel's bank (`design.memory`), placed by
   `pynq_overlay.place`; the images are written once.
4. A batch: the queries are split into one contiguous block per compute unit (as the across-query
   bench does), every unit gets `run_registers` for its block (`graph_writes`: name -> 32-bit
   words at the kernel's offsets), is started by its control word and polled for `ap_done`; then
   the result rows are read, and a non-zero `status` (RTL face) is an error.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from fanns.codegen.graph.hls import KERNEL
from fanns.codegen.graph.rtl import TOP, compute_units
from fanns.codegen.project_files import read_record
from fanns.design.graph import GraphDesign, Runtime
from fanns.design.graph_hw import QppHw
from fanns.driver.project import Bank, built_bitstream, read_board_plan
from fanns.driver.pynq_overlay import Board, board_instances, check_registers, named_ips
from fanns.errors import FannsError
from fanns.hdl.regmap import RegMap, kernel_control_block, vitis_hls_regmap
from fanns.images.graph import GraphImages
from fanns.sim.graph.across_rtl import split_queries
from fanns.sim.graph.rtl import align, run_registers

XCLBIN = f"build/hw/{TOP}.xclbin"
"""The xclbin `make hw` builds in either face of a graph project (kernel `fanns_falcon_qpp`)."""
QUERIES, RESULTS = "queries", "results"
HLS_NAMES = {"query_addr": "queries", "result_addr": "results", "adj_addr": "adj_", "vec_addr": "vec_"}
"""The RTL face's argument registers -> the HLS kernel's argument names (same order, same roles)."""
CONTROL = {r.name: r for r in kernel_control_block()}


def graph_regmap(path: Path, face: str, design: GraphDesign) -> RegMap:
    """The kernel's register map: the RTL face's `QppHw.regmap`, or the Vitis HLS layout of the
    arguments the HLS face's record lists (`hls.args`, `hls.scalars`)."""
    if face == "rtl":
        return QppHw(design).regmap
    hls = read_record(path)["hls"]
    return vitis_hls_regmap(
        KERNEL, [a["name"] for a in hls["args"]], [(s, f"scalar argument {s}") for s in hls["scalars"]]
    )


def hls_name(name: str) -> str:
    """The HLS kernel's name of an RTL-face register (`adj_addr1` -> `adj_1`; scalars keep theirs)."""
    for rtl, hls in HLS_NAMES.items():
        if name.startswith(rtl):
            return hls + name[len(rtl) :] if hls.endswith("_") else hls
    return name


def graph_writes(regmap: RegMap, regs: dict[str, int]) -> list[tuple[int, int]]:
    """(offset, 32-bit word) of every register in `regs` (named as `run_registers` names them) on
    the kernel of `regmap`, as a host writes them (a 64-bit address as its low, then its high word);
    the interrupt enables are the ap_ctrl_hs block's, which every Vitis kernel has."""
    out = []
    for name, value in regs.items():
        for candidate in (name, hls_name(name)):
            if regmap.has(candidate):
                reg = regmap[candidate]
                break
        else:
            if name not in CONTROL:
                raise FannsError(f"the kernel's register map {regmap.name} has no register {name}")
            reg = CONTROL[name]
        for offset, wbit, rbit, bits in reg.word_slices():
            out.append((offset, ((int(value) >> rbit) & ((1 << bits) - 1)) << wbit))
    return out


def graph_buffers(design: GraphDesign, images: GraphImages, batch: int) -> dict[str, tuple[Bank, int]]:
    """Buffer name -> (bank, bytes): the I/O buffers for `batch` queries in the I/O channel, every
    graph image (`adjacency_<c>`, `vectors_<c>`) in its graph channel's bank."""
    mem, io = design.memory, images.io
    out = {
        QUERIES: (Bank(mem.kind, mem.io_channel), align(batch * io.query_row_bytes)),
        RESULTS: (Bank(mem.kind, mem.io_channel), align(batch * io.result_row_bytes)),
    }
    for img in images.images:
        out[img.name] = (Bank(mem.kind, mem.channels[int(img.name.split("_")[1])]), align(img.nbytes))
    return out


def batch_registers(
    design: GraphDesign, runtime: Runtime, images: GraphImages, nq: int, addresses: dict[str, int]
) -> list[dict[str, int]]:
    """The registers of each compute unit for a batch of `nq` queries whose buffers are at
    `addresses` (buffer name -> device address): unit p searches block p of the batch (a batch
    smaller than the units leaves the last ones idle: they get no registers)."""
    io, units = images.io, compute_units(design)
    images_at = {img.name: addresses[img.name] for img in images.images}
    return [
        run_registers(
            design,
            runtime,
            n,
            addresses[QUERIES] + first * io.query_row_bytes,
            addresses[RESULTS] + first * io.result_row_bytes,
            images_at,
        )
        for first, n in split_queries(nq, units)
        if n
    ]


def graph_ips(plan: dict | None, ip_dict: dict, regmap: RegMap, units: int) -> list[str]:
    """The overlay IP of each compute unit: the block design's instances on a Zynq build (`plan`),
    else the compute units `fanns_falcon_qpp_<i>` of the xclbin."""
    if plan is not None:
        return board_instances(plan, ip_dict, {r.name: r.offset for r in regmap.registers})
    return named_ips(ip_dict, TOP, units)


class GraphPynq:
    """A graph project's kernel on a board (see the module docstring); `ip`: the IP names, one per
    compute unit, when the overlay names them otherwise."""

    def __init__(
        self,
        path: Path,
        face: str,
        design: GraphDesign,
        images: GraphImages,
        batch: int,
        bitstream: str | Path | None = None,
        device=None,
        ip: list[str] | None = None,
        timeout: float = 60.0,
    ):
        self.design, self.images, self.batch, self.timeout = design, images, batch, timeout
        self.regmap = graph_regmap(path, face, design)
        self.units = compute_units(design)
        plan = read_board_plan(path)
        self.sizes = graph_buffers(design, images, batch)
        banks = {name: bank for name, (bank, _) in self.sizes.items()}
        self.board = Board(Path(bitstream) if bitstream else built_bitstream(path, XCLBIN), banks, design.board, device)
        ip_dict = self.board.overlay.ip_dict
        names = list(ip) if ip else graph_ips(plan, ip_dict, self.regmap, self.units)
        if face == "hls":
            args = {r.name: r.offset for r in self.regmap.kernel_args()}
            for name in names:
                check_registers(ip_dict[name].get("registers", {}), args)
        self.ips = [self.board.ip(name) for name in names]
        self.addresses = {name: self.board.allocate(name, nbytes) for name, (_, nbytes) in self.sizes.items()}
        for img in images.images:
            self.board.write(img.name, img.data)

    def run(self, q_fx: np.ndarray, runtime: Runtime) -> tuple[np.ndarray, int]:
        """The result keys of a batch of integer queries, and the device cycles (RTL face)."""
        io, nq = self.images.io, len(q_fx)
        if not 1 <= nq <= self.batch:
            raise FannsError(
                f"a batch of {nq} queries for buffers of {self.batch}", hint="search in batches of the buffers' size"
            )
        self.board.write(QUERIES, io.pack_queries(q_fx))
        ctrl = self.regmap.control()
        units = batch_registers(self.design, runtime, self.images, nq, self.addresses)
        for ip, regs in zip(self.ips, units):
            for offset, word in graph_writes(self.regmap, regs):
                ip.write(offset, word)
        busy = self.ips[: len(units)]
        for ip in busy:
            ip.write(ctrl.offset, ctrl.start)
        for ip in busy:
            self._wait(ip, ctrl.offset, ctrl.done)
        cycles = 0
        if self.regmap.has("status"):
            status = [self._read(ip, "status") for ip in busy]
            if any(status):
                raise FannsError(
                    f"the kernel ended with status {status}", hint="check the run-time parameters against rtl/regmap.md"
                )
            cycles = sum(self._read(ip, "cycles") for ip in busy)
        keys, _ = io.unpack_results(self.board.read(RESULTS, nq * io.result_row_bytes), nq)
        return keys, cycles

    def _read(self, ip, name: str) -> int:
        out = 0
        for offset, wbit, rbit, bits in self.regmap[name].word_slices():
            out |= ((int(ip.read(offset)) >> wbit) & ((1 << bits) - 1)) << rbit
        return out

    def _wait(self, ip, offset: int, mask: int) -> None:
        end = time.monotonic() + self.timeout
        while not int(ip.read(offset)) & mask:
            if time.monotonic() > end:
                raise FannsError(
                    f"pynq: the graph kernel did not finish within {self.timeout:g} s", hint="check the board"
                )
            time.sleep(1e-4)

    def close(self) -> None:
        self.board.close()
