"""The `pynq` backend: a generated accelerator on a real board through the PYNQ API.

What it executes (every value comes from `fanns.driver.ivfpq.plan`, as for the simulators):
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
The board side (overlay, IP lookup, placement, buffers) is `fanns.driver.pynq_overlay`, shared with
the graph driver; pynq is imported only when the backend is opened.
"""

from __future__ import annotations

from pathlib import Path

from fanns.driver.ivfpq.backend import Backend
from fanns.driver.ivfpq.plan import Buffer, Interface
from fanns.driver.project import built_bitstream
from fanns.driver.pynq_overlay import Board, board_instances, check_registers, named_ips, place


def placement(iface: Interface, memories: list[str]) -> dict[str, str | None]:
    """Buffer -> the overlay memory it is allocated in (None: the default PS DDR), for the
    overlay's memory names `memories` (`Overlay.mem_dict`); a clear error if a bank is missing."""
    return place(iface.banks, memories, iface.project.board.name)


def zynq_ip(plan: dict, ip_dict: dict, regmap) -> str:
    """The overlay IP of a Zynq build: the instance the block-design record names, at the base
    address it assigned, with the register offsets the driver writes (a pure function: the tests
    check it without a board). A clear error if the overlay is not this project's build."""
    ours = {r.name: r.offset for r in regmap.registers}
    return board_instances({**plan, "instances": plan["instances"][:1]}, ip_dict, ours)[0]


class PynqBackend(Backend):
    """See the module docstring. `bitstream`: xclbin or .bit (default: the HLS build's xclbin);
    `device`: a pynq Device (default: the first); `ip`: the IP's name in the overlay."""

    name = "pynq"
    default_batch = 4096
    has_cycles = True

    def __init__(self, bitstream: str | Path | None = None, device=None, ip: str | None = None):
        self.bitstream, self.device, self.ip_name = bitstream, device, ip
        self.board: Board | None = None

    def attach(self, project, iface) -> None:
        super().attach(project, iface)
        self.has_cycles = iface.kind == "rtl"
        bitstream = Path(self.bitstream) if self.bitstream else built_bitstream(project.path)
        self.board = Board(bitstream, iface.banks, project.board.name, self.device)
        self.overlay, self.targets = self.board.overlay, self.board.targets
        plan = project.board_plan
        if self.ip_name:
            name = self.ip_name
        elif plan is not None:
            name = zynq_ip(plan, self.overlay.ip_dict, iface.regmap)
        else:
            name = named_ips(self.overlay.ip_dict, "fanns_ivfpq", 1)[0]
        self.ip = self.board.ip(name)
        if iface.kind == "hls":
            args = {r.name: r.offset for r in iface.regmap.registers if not r.name.startswith("ap_")}
            check_registers(self.overlay.ip_dict[name].get("registers", {}), args)

    def allocate(self, buf: Buffer) -> int:
        return self.board.allocate(buf.name, buf.alloc_bytes)

    def write_buffer(self, buf: Buffer, data: bytes) -> None:
        self.board.write(buf.name, data)

    def read_buffer(self, buf: Buffer, nbytes: int) -> bytes:
        return self.board.read(buf.name, nbytes)

    def write_register(self, offset: int, word: int) -> None:
        self.ip.write(offset, word)

    def read_register(self, offset: int) -> int:
        return int(self.ip.read(offset))

    def close(self) -> None:
        if self.board is not None:
            self.board.close()
            self.board = self.overlay = None
