"""The one register-map and memory-placement layer of the host driver, shared by every backend.

Why: a board, the RTL simulation, the C simulation and the model must be programmed by the same
code, so that a simulation exercises exactly what the board would run. This module turns a
project (`fanns.driver.ivfpq.project.Project`) into

* the **buffers** of the device and the bank each must live in — the memory images (sizes from
  manifest.json) and the host I/O buffers for a batch of queries — with the bank taken from the
  project's `connectivity.cfg` (HLS) or `rtl/ports.json` (RTL), never assumed;
* the **register map** (`fanns.hdl.regmap.RegMap`): the RTL kernel's own `rtl/regmap.json` (the
  Xilinx RTL-kernel layout: ap_ctrl_hs at 0x00, arguments from 0x10, see `kernel_control_block`), or for
  an HLS kernel the Vitis HLS `s_axilite` layout of its arguments (control word at 0x00, then
  every argument from 0x10: a 64-bit pointer takes two data words and a reserved word, a 32-bit
  scalar one data word and a reserved word);
* the **register values** of a run: buffer addresses, `nq`, and the run-time parameters the
  device has (the RTL core: `nprobe` and `k`; the HLS kernel: `load` and, where it has the
  step-wise mode of docs/stepwise.md, `mode`), encoded into 32-bit word
  writes by the register map, plus the control-word protocol (clear done, start, poll done).

Backends only execute: allocate a buffer in a bank, write/read a buffer, write/read a register
word, start and wait. The simulating backends (model, C simulation) decode the written words
back with `decode`, so a wrong address or value makes them fail as the device would.
"""

from __future__ import annotations

from dataclasses import dataclass

from fanns.arch.ivfpq.hw import IMAGE_REGISTERS
from fanns.boards import BUFFER_PAGE, HOST_MEMORY
from fanns.codegen.ivfpq.hls_context import KERNEL, SCALARS, STEPWISE_ARGS
from fanns.driver.ivfpq.project import Project
from fanns.driver.project import Bank
from fanns.errors import FannsError
from fanns.hdl.regmap import RegMap, vitis_hls_regmap

PAGE = BUFFER_PAGE
"""Alignment of every device buffer (a page; also a multiple of every memory beat)."""
HLS_CTRL = "control"
PQ_IMAGES = {"pq_codes": "pq", "pq_hot": "hot", "pq_cache": "cache", "ivf_centroids": "ivf"}
"""RTL: channel image use (PQ codes, hot-tier PQ codes, a host-memory design's cache regions,
streamed IVF centroids) -> the prefix of
its AXI port (m_axi_<prefix><c>) and register (<prefix><c>_addr)."""
PORT_IMAGES = {"lut_centroids": "lutc", "opq_matrix": "opq"}
"""RTL: an image read on a port of its own (BuildLUT's fetched centroids, a streamed OPQ matrix)
-> that port (m_axi_<head>); its register is `IMAGE_REGISTERS`'."""


@dataclass(frozen=True)
class Buffer:
    """One device buffer: `image` names the memory image it holds (None: a host I/O buffer)."""

    name: str
    bank: Bank
    nbytes: int
    image: str | None = None

    @property
    def alloc_bytes(self) -> int:
        """Bytes allocated: whole pages."""
        return max(PAGE, -(-self.nbytes // PAGE) * PAGE)


def align(n: int) -> int:
    return -(-n // PAGE) * PAGE


def hls_regmap(arg_names: list[str]) -> RegMap:
    """The Vitis HLS `s_axilite` register map of the kernel `fanns_ivfpq(args..., nq, load, mode)`
    (a kernel generated before the step-wise mode: no cells, seeds or mode)."""
    stepwise = set(STEPWISE_ARGS) <= set(arg_names)
    return vitis_hls_regmap(KERNEL, arg_names, [(n, why) for n, why in SCALARS.items() if stepwise or n != "mode"])


class Interface:
    """How the driver programs one project's device (see the module docstring)."""

    def __init__(self, project: Project):
        self.project = project
        self.kind = project.kind
        if self.kind == "rtl":
            self.regmap = RegMap.from_json((project.path / "rtl" / "regmap.json").read_text())
            self.banks = self._rtl_banks()
        else:
            self.regmap = hls_regmap([a["name"] for a in project.record["args"]])
            self.banks = dict(project.connectivity)
        self._check_banks()

    # -- capabilities ----------------------------------------------------------------------------
    @property
    def runtime_nprobe(self) -> bool:
        """Whether nprobe is a run-time register (RTL) or fixed in the kernel (HLS)."""
        return self.kind == "rtl"

    @property
    def stepwise(self) -> bool:
        """Whether the device has the step-wise mode (docs/stepwise.md): the `mode` register with
        its cells and seeds buffers (HLS kernels and RTL cores generated before it have none)."""
        return self._has("mode")

    @property
    def cycle_registers(self) -> tuple[str, ...]:
        """Registers counting device cycles (the HLS kernel has none)."""
        names = ("cycles", "load_cycles", "first_cycles", "last_cycles")
        return tuple(n for n in names if self._has(n))

    def _has(self, name: str) -> bool:
        try:
            self.regmap[name]
            return True
        except KeyError:
            return False

    # -- placement -------------------------------------------------------------------------------
    def _rtl_banks(self) -> dict[str, Bank]:
        """Buffer -> bank from ports.json: images and I/O buffers follow the port that reads them."""
        ports = self.project.ports["ports"]
        io = ports["m_axi_io"]
        io_bank = Bank(io["memory"], int(io["channel"]))
        out = {"queries": io_bank, "results": io_bank}
        if self._has("mode"):
            out |= {"cells": io_bank, "seeds": io_bank}
        for img in self.project.images.images:
            if img.use == "rom":
                out[img.name] = io_bank
            elif img.use in PQ_IMAGES or img.use in PORT_IMAGES:
                head = PORT_IMAGES.get(img.use) or f"{PQ_IMAGES[img.use]}{img.name.rsplit('_', 1)[1]}"
                port = ports.get(f"m_axi_{head}")
                if port is None:
                    raise FannsError(f"rtl/ports.json has no port for image {img.name}", hint="regenerate the project")
                out[img.name] = Bank(port["memory"], int(port["channel"]))
            else:
                raise FannsError(
                    f"image {img.name} ({img.use}) has no port in the RTL core", hint="regenerate the project"
                )
        return out

    def _check_banks(self) -> None:
        board = self.project.board
        for name in ["queries", "results"] + [img.name for img in self.project.images.images]:
            if name not in self.banks:
                raise FannsError(
                    f"{self.project.path}: no memory bank for buffer {name}", hint="regenerate the project"
                )
            bank = self.banks[name]
            if bank.memory == HOST_MEMORY and board.host is not None and bank.channel == 0:
                continue
            groups = [g for g in board.memory if g.kind == bank.memory]
            if not groups or bank.channel >= sum(g.count for g in groups):
                raise FannsError(
                    f"buffer {name} is placed in {bank}, which board {board.name} does not have",
                    hint="regenerate the project for this board",
                )

    def bank_capacity(self, bank: Bank) -> int:
        if bank.memory == HOST_MEMORY:
            return self.project.board.host.capacity_bytes
        return next(g.capacity_bytes for g in self.project.board.memory if g.kind == bank.memory)

    def image_buffers(self) -> list[Buffer]:
        """One buffer per memory image, in manifest order, in its bank."""
        return [Buffer(img.name, self.banks[img.name], img.nbytes, img.name) for img in self.project.images.images]

    def io_buffers(self, batch: int) -> list[Buffer]:
        """The query and result buffers of `batch` queries (layouts of `IoLayout`), and where the
        device has the step-wise mode its cell-list and seed-key buffers."""
        io, beat = self.project.io, self.project.io.port_bits // 8
        out = [
            Buffer("queries", self.banks["queries"], batch * io.query_beats * beat),
            Buffer("results", self.banks["results"], batch * io.result_beats * beat),
        ]
        if self.stepwise:
            out += [
                Buffer("cells", self.banks["cells"], batch * io.cell_beats(self.project.nprobe) * beat),
                Buffer("seeds", self.banks["seeds"], batch * io.result_beats * beat),
            ]
        return out

    def max_batch(self) -> int:
        """The most queries one run's I/O buffers can hold: the I/O bank's capacity left by the
        images placed there, and the 32-bit `nq` register."""
        bank = self.banks["queries"]
        used = sum(b.alloc_bytes for b in self.image_buffers() if b.bank == bank)
        per_query = sum(b.nbytes for b in self.io_buffers(1) if b.bank == bank)
        room = self.bank_capacity(bank) - used - len(self.io_buffers(1)) * PAGE
        return max(0, min(room // per_query, (1 << 32) - 1))

    # -- registers -------------------------------------------------------------------------------
    def address_register(self, buffer: str) -> str:
        """The register that holds the device address of `buffer`."""
        if self.kind == "hls":
            return buffer
        if buffer in ("queries", "results", "cells", "seeds"):
            return {"queries": "query_addr", "results": "result_addr", "cells": "cells_addr", "seeds": "seeds_addr"}[
                buffer
            ]
        for use, prefix in PQ_IMAGES.items():
            if buffer.startswith(f"{use}_"):
                return f"{prefix}{buffer.rsplit('_', 1)[1]}_addr"
        return IMAGE_REGISTERS[buffer]

    def run_values(self, nq: int, nprobe: int, k: int, load: bool, mode: int = 0) -> dict[str, int]:
        """The parameter registers of one run (addresses are written at `load()`, and the I/O
        buffers' before every run); `mode` 1: a step-wise run (only where `stepwise`)."""
        if self.kind == "rtl":  # the core loads the index at its first run
            return {"nq": nq, "nprobe": nprobe, "k": k} | ({"mode": mode} if self.stepwise else {})
        return {"nq": nq, "load": int(load)} | ({"mode": mode} if self.stepwise else {})

    def encode(self, name: str, value: int) -> list[tuple[int, int]]:
        """(byte offset, 32-bit word) writes that set register `name` to `value`."""
        reg = self.regmap[name]
        if not 0 <= value < (1 << reg.width):
            raise FannsError(f"register {name}: value {value} does not fit {reg.width} bits")
        return [(off, ((value >> rbit) & ((1 << n) - 1)) << wbit) for off, wbit, rbit, n in reg.word_slices()]

    def decode(self, words: dict[int, int], name: str) -> int:
        """The value of register `name` from 32-bit words by offset (missing words read 0)."""
        out = 0
        for off, wbit, rbit, n in self.regmap[name].word_slices():
            out |= ((words.get(off, 0) >> wbit) & ((1 << n) - 1)) << rbit
        return out

    def read_words(self, name: str) -> list[int]:
        """Word offsets to read for register `name`, lowest first (latches wide RO registers)."""
        return [off for off, *_ in self.regmap[name].word_slices()]

    # -- control ---------------------------------------------------------------------------------
    # The block protocol comes from the register map (`RegMap.control`), as in the testbenches.
    @property
    def control_offset(self) -> int:
        return self.regmap.control().offset

    @property
    def start_word(self) -> int:
        return self.regmap.control().start

    @property
    def done_mask(self) -> int:
        return self.regmap.control().done

    @property
    def clear_word(self) -> int | None:
        """Word that clears a sticky (W1C) ap_done before a start; None when reading clears it (the
        ap_ctrl_hs of an HLS kernel and of the RTL kernel)."""
        return self.regmap.control().clear

    def status_error(self, status: int) -> str | None:
        """What went wrong in a run, from the RTL status register."""
        if status & 0b10:
            return "the device refused the run's parameters (status.bad_params)"
        if status & 0b100:
            return "the device got an AXI error response (status.axi_error)"
        return None
