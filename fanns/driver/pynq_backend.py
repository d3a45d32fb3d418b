"""The `pynq` backend: a generated accelerator on a real board through the PYNQ API.

What it executes (every value comes from `fanns.driver.plan`, as for the simulators):
1. `pynq.Overlay(bitstream)` — an xclbin on Alveo (XRT), or a .bit with its .hwh on a Zynq board
   (default: the project's build, `build/hw/fanns_ivfpq.xclbin` or the `bitstream` of
   `zynq/board_plan.json`); the IP is the kernel's compute unit (`fanns_ivfpq_1`, HLS or RTL kernel), on a Zynq
   build the instance `zynq/board_plan.json` names, checked at the base address the block design
   assigned (`zynq_ip`), or the one IP named `fanns_ivfpq*`, or `ip=`.
2. Placement: every buffer is allocated with `pynq.allocate(shape, "u1", target=<memory>)` in the
   bank `connectivity.cfg` / `rtl/ports.json` assigns it — HBM[i] as the overlay's memory `HBM[i]` /
   `HBM<i>`, DDR[i] as `DDR[i]` / `DDR<i>` / `bank<i>`; Zynq PS DDR (one memory) without a target.
   A board whose overlay lacks a needed bank is refused before anything is allocated
   (`placement`, a pure function the tests check without a board).
3. For an HLS kernel, the register offsets of the plan (Vitis `s_axilite` layout) are checked
   against the overlay's register map (`ip_dict[ip]["registers"]`) before use.
4. Buffers: numpy copies then `sync_to_device()` / `sync_from_device()`; registers: `ip.write(offset,
   word)` / `ip.read(offset)`; start by writing the control word, then poll `ap_done`.
pynq is imported only here, when the backend is opened.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from fanns.driver.backend import Backend
from fanns.driver.plan import Buffer, Interface
from fanns.driver.project import BITSTREAM
from fanns.errors import FannsError

PS_MEMORY = ("ps-ddr3", "ps-ddr4")
"""Board memory groups that are the Zynq processing system's DDR: pynq.allocate's default memory."""


def bank_names(memory: str, channel: int) -> list[str]:
    """The names an overlay may give the bank (memory kind, channel), most specific first."""
    if memory == "hbm":
        return [f"HBM[{channel}]", f"HBM{channel}"]
    return [f"DDR[{channel}]", f"DDR{channel}", f"bank{channel}"]


def placement(iface: Interface, memories: list[str]) -> dict[str, str | None]:
    """Buffer -> the overlay memory it is allocated in (None: the default PS DDR), for the
    overlay's memory names `memories` (`Overlay.mem_dict`); a clear error if a bank is missing."""
    out: dict[str, str | None] = {}
    missing = {}
    for name, bank in sorted(iface.banks.items()):
        if bank.memory in PS_MEMORY:
            out[name] = None
            continue
        found = next((m for m in bank_names(bank.memory, bank.channel) if m in memories), None)
        if found is None:
            missing.setdefault(str(bank), []).append(name)
        out[name] = found
    if missing:
        need = "; ".join(f"{bank} for {', '.join(names)}" for bank, names in sorted(missing.items()))
        raise FannsError(
            f"the board's overlay has no memory bank {need} (it has: {', '.join(sorted(memories)) or 'none'})",
            hint=(
                f"use a board with these banks ({iface.project.board.name}, as the "
                "design was made for) and the bitstream built from this project"
            ),
        )
    return out


def attribute(memory: str) -> str:
    """The Overlay attribute of a memory name (`HBM[3]` -> `HBM3`)."""
    return re.sub(r"\W", "", memory)


def zynq_ip(plan: dict, ip_dict: dict, regmap) -> str:
    """The overlay IP of a Zynq build: the instance the block-design record names, at the base
    address it assigned, with the register offsets the driver writes (a pure function: the tests
    check it without a board). A clear error if the overlay is not this project's build."""
    inst = plan["instances"][0]
    name = inst["name"]
    if name not in ip_dict:
        raise FannsError(
            f"the overlay has no IP {name} (it has: {', '.join(sorted(ip_dict)) or 'none'})",
            hint="load the .bit/.hwh built from this project (make ip bit), or pass ip=",
        )
    addr = ip_dict[name].get("phys_addr")
    if addr != inst["base_address"]:
        raise FannsError(
            f"the overlay's {name} is at {addr!r}, the block design assigned 0x{inst['base_address']:x}",
            hint="the .hwh was not built from this project's zynq/block_design.tcl; rebuild it",
        )
    ours = {r.name: r.offset for r in regmap.registers}
    if plan["registers"] != ours:
        raise FannsError(
            "zynq/board_plan.json and the driver disagree on the register offsets",
            hint="regenerate the project with this fanns version",
        )
    return name


def default_bitstream(project) -> Path:
    """The bitstream `make` builds in the project: the block design's .bit on a Zynq board, else the
    xclbin of `make hw` (the HLS kernel's, or the RTL kernel's)."""
    if project.board_plan is not None:
        return project.path / project.board_plan["bitstream"]
    return project.path / BITSTREAM


class PynqBackend(Backend):
    """See the module docstring. `bitstream`: xclbin or .bit (default: the HLS build's xclbin);
    `device`: a pynq Device (default: the first); `ip`: the IP's name in the overlay."""

    name = "pynq"
    default_batch = 4096
    has_cycles = True

    def __init__(self, bitstream: str | Path | None = None, device=None, ip: str | None = None):
        self.bitstream, self.device, self.ip_name = bitstream, device, ip
        self._buffers: dict[str, object] = {}
        self.overlay = None

    def attach(self, project, iface) -> None:
        super().attach(project, iface)
        try:
            import pynq  # optional dependency: only on a board
        except ImportError:
            raise FannsError(
                "the pynq backend needs the pynq package and a board",
                hint=(
                    "pip install fanns[pynq] on the host of a PYNQ-supported board (Alveo "
                    "with XRT, or Zynq); without a board use backend model, c-sim or rtl-sim"
                ),
            ) from None
        self.has_cycles = iface.kind == "rtl"
        bitstream = Path(self.bitstream) if self.bitstream else default_bitstream(project)
        if not bitstream.is_file():
            raise FannsError(
                f"bitstream {bitstream} not found",
                hint="build it (make hw in an Alveo project, make ip bit on a Zynq board) or pass bitstream=",
            )
        self.pynq = pynq
        self.overlay = pynq.Overlay(str(bitstream), device=self.device) if self.device else pynq.Overlay(str(bitstream))
        self.targets = placement(iface, list(self.overlay.mem_dict))
        plan = project.board_plan
        if self.ip_name:
            name = self.ip_name
        elif plan is not None:
            name = zynq_ip(plan, self.overlay.ip_dict, iface.regmap)
        else:
            name = self._find_ip()
        self.ip = getattr(self.overlay, name)
        if iface.kind == "hls":
            self._check_registers(self.overlay.ip_dict[name].get("registers", {}))

    def _find_ip(self) -> str:
        names = [n for n in self.overlay.ip_dict if n.split(":")[-1].startswith("fanns_ivfpq")]
        if len(names) != 1:
            raise FannsError(
                f"the overlay has {len(names)} IPs named fanns_ivfpq* ({', '.join(names) or 'none'})",
                hint="pass ip= the accelerator's name",
            )
        return names[0]

    def _check_registers(self, registers: dict) -> None:
        """The plan's HLS offsets must be the xclbin's (the kernel's real register map)."""
        for reg in self.iface.regmap.registers:
            if reg.name.startswith("ap_"):
                continue
            got = registers.get(reg.name, {}).get("address_offset")
            if got != reg.offset:
                raise FannsError(
                    f"the overlay's register {reg.name} is at {got!r}, the driver expects 0x{reg.offset:x}",
                    hint="the xclbin was not built from this project; rebuild it or regenerate the project",
                )

    def allocate(self, buf: Buffer) -> int:
        target = self.targets[buf.name]
        kwargs = {"target": getattr(self.overlay, attribute(target))} if target else {}
        arr = self.pynq.allocate(shape=(buf.alloc_bytes,), dtype=np.uint8, **kwargs)
        self._buffers[buf.name] = arr
        return int(arr.device_address)

    def write_buffer(self, buf: Buffer, data: bytes) -> None:
        arr = self._buffers[buf.name]
        arr[: len(data)] = np.frombuffer(data, dtype=np.uint8)
        arr.sync_to_device()

    def read_buffer(self, buf: Buffer, nbytes: int) -> bytes:
        arr = self._buffers[buf.name]
        arr.sync_from_device()
        return bytes(arr[:nbytes])

    def write_register(self, offset: int, word: int) -> None:
        self.ip.write(offset, word)

    def read_register(self, offset: int) -> int:
        return int(self.ip.read(offset))

    def close(self) -> None:
        for arr in self._buffers.values():
            arr.freebuffer()
        self._buffers.clear()
        free = getattr(self.overlay, "free", None)  # XRT overlays release the device; Zynq ones have nothing to free
        if free is not None:
            free()
        self.overlay = None
