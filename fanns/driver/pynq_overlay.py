"""What every pynq backend does with a board, whatever the accelerator: open the overlay, find the
kernel's IP, place buffers in the banks the project assigns, move bytes and register words.

Why shared: the IVF-PQ driver (`fanns.driver.ivfpq.pynq_backend`) and the graph driver
(`fanns.driver.graph_pynq`) reach a board the same way; only what they write differs.
- The bitstream: an xclbin on Alveo (XRT, `make hw`), or a .bit with its .hwh on a Zynq board,
  named by `zynq/board_plan.json` (`make ip bit`).
- The IP: on a Zynq build every instance the block-design record names, each checked at the base
  address the block design assigned (`board_instances`); on Alveo the compute units named
  `<kernel>_<i>` (`named_ips`); or the caller's names.
- Placement: a buffer is `pynq.allocate`d in the overlay memory of its bank — HBM[i] as `HBM[i]` /
  `HBM<i>`, DDR[i] as `DDR[i]` / `DDR<i>` / `bank<i>`; Zynq PS DDR (one memory) without a target. A
  board lacking a bank is refused before anything is allocated (`place`).
The pure functions take the overlay's `ip_dict` / `mem_dict` as data, so the tests check them
without a board. pynq is imported only when a board is opened (`import_pynq`).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from fanns.boards import HOST_MEMORY
from fanns.driver.project import Bank
from fanns.errors import FannsError

PS_MEMORY = ("ps-ddr3", "ps-ddr4")
"""Board memory groups that are the Zynq processing system's DDR: pynq.allocate's default memory."""


def bank_names(memory: str, channel: int) -> list[str]:
    """The names an overlay may give the bank (memory kind, channel), most specific first."""
    if memory == "hbm":
        return [f"HBM[{channel}]", f"HBM{channel}"]
    if memory == HOST_MEMORY:  # host memory the kernel reads over PCIe (XRT's host-only buffers)
        return [f"HOST[{channel}]", f"HOST{channel}"]
    return [f"DDR[{channel}]", f"DDR{channel}", f"bank{channel}"]


def place(banks: dict[str, Bank], memories: list[str], board: str) -> dict[str, str | None]:
    """Buffer -> the overlay memory it is allocated in (None: the default PS DDR), for the
    overlay's memory names `memories` (`Overlay.mem_dict`); a clear error if a bank is missing."""
    out: dict[str, str | None] = {}
    missing: dict[str, list[str]] = {}
    for name, bank in sorted(banks.items()):
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
                f"use a board with these banks ({board}, as the design was made for) and the "
                "bitstream built from this project"
            ),
        )
    return out


def attribute(memory: str) -> str:
    """The Overlay attribute of a memory name (`HBM[3]` -> `HBM3`)."""
    return re.sub(r"\W", "", memory)


def board_instances(plan: dict, ip_dict: dict, registers: dict[str, int]) -> list[str]:
    """The overlay IPs of a Zynq build: every instance the block-design record `plan` names, at the
    base address it assigned, the record's register offsets being `registers` (the driver's). A
    clear error if the overlay is not this project's build."""
    if plan["registers"] != registers:
        raise FannsError(
            "zynq/board_plan.json and the driver disagree on the register offsets",
            hint="regenerate the project with this fanns version",
        )
    names = []
    for inst in plan["instances"]:
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
        names.append(name)
    return names


def named_ips(ip_dict: dict, prefix: str, count: int) -> list[str]:
    """The `count` IPs of the overlay whose name (after any `<hierarchy>:`) starts with `prefix`,
    in name order (compute units `<kernel>_1`, `<kernel>_2`, ...)."""
    names = sorted(n for n in ip_dict if n.split(":")[-1].startswith(prefix))
    if len(names) != count:
        raise FannsError(
            f"the overlay has {len(names)} IPs named {prefix}* ({', '.join(names) or 'none'}), the project has {count}",
            hint="load the bitstream built from this project, or pass ip= the accelerator's name",
        )
    return names


def check_registers(registers: dict, expected: dict[str, int]) -> None:
    """The overlay's register map of an IP (`ip_dict[ip]["registers"]`: the kernel's real offsets)
    must hold every argument register at the offset the driver writes."""
    for name, offset in expected.items():
        got = registers.get(name, {}).get("address_offset")
        if got != offset:
            raise FannsError(
                f"the overlay's register {name} is at {got!r}, the driver expects 0x{offset:x}",
                hint="the bitstream was not built from this project; rebuild it or regenerate the project",
            )


def import_pynq():
    """The pynq module, or the error saying how to get it."""
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
    return pynq


class Board:
    """An opened overlay: its buffers by name, each in the memory `place` chose."""

    def __init__(self, bitstream: Path, banks: dict[str, Bank], board: str, device=None):
        self.pynq = import_pynq()
        if not bitstream.is_file():
            raise FannsError(
                f"bitstream {bitstream} not found",
                hint="build it (make hw in an Alveo project, make ip bit on a Zynq board) or pass bitstream=",
            )
        pynq = self.pynq
        self.overlay = pynq.Overlay(str(bitstream), device=device) if device else pynq.Overlay(str(bitstream))
        self.targets = place(banks, list(self.overlay.mem_dict), board)
        self.buffers: dict[str, np.ndarray] = {}

    def ip(self, name: str):
        return getattr(self.overlay, name)

    def allocate(self, name: str, nbytes: int) -> int:
        """Allocate buffer `name` in its memory; its device address."""
        target = self.targets[name]
        kwargs = {"target": getattr(self.overlay, attribute(target))} if target else {}
        arr = self.pynq.allocate(shape=(nbytes,), dtype=np.uint8, **kwargs)
        self.buffers[name] = arr
        return int(arr.device_address)

    def write(self, name: str, data: bytes) -> None:
        arr = self.buffers[name]
        arr[: len(data)] = np.frombuffer(data, dtype=np.uint8)
        arr.sync_to_device()

    def read(self, name: str, nbytes: int) -> bytes:
        arr = self.buffers[name]
        arr.sync_from_device()
        return bytes(arr[:nbytes])

    def close(self) -> None:
        for arr in self.buffers.values():
            arr.freebuffer()
        self.buffers.clear()
        free = getattr(self.overlay, "free", None)  # XRT overlays release the device; Zynq ones have nothing to free
        if free is not None:
            free()
        self.overlay = None
