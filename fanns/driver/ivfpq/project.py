"""A generated IVF-PQ project as the host driver sees it: what kind of device (HLS kernel or RTL core),
its number formats, its memory images and where every buffer must live.

Why one reader: the HLS and RTL generators write the same folder layout (`images/`, `data/`,
`design.yaml`, `fanns_project.json`) and differ only in the device's control interface —
`connectivity.cfg` and the kernel arguments for HLS, `rtl/regmap.json` and `rtl/ports.json` for
RTL. Everything a backend executes is derived from this one object, so every backend (a board,
a simulator, the model) is programmed from the same facts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from fanns import __version__
from fanns.boards import HOST_MEMORY, Board
from fanns.codegen.block_design import PLAN_FILE
from fanns.codegen.ivfpq.driver_files import PROJECT_VERSION
from fanns.codegen.project_files import HLS_SOURCES, PROJECT_FILE, check_sources, read_record
from fanns.design.ivfpq import IvfPqDesign
from fanns.driver.project import Bank, read_board_plan
from fanns.errors import FannsError
from fanns.images.ivfpq import IoLayout, MemoryImages
from fanns.numerics import IvfPqFormat

VITIS_BANK = re.compile(r"^(HBM|DDR|HOST)\[(\d+)\]$")
SP_LINE = re.compile(r"^sp=(\w+)\.(\w+):(\S+)$")
MEMORY_OF_VITIS = {"HBM": ("hbm",), "DDR": ("ddr", "ddr4", "pl-ddr4")}
"""Vitis bank -> the board memory groups it may name (HOST: host memory, `HOST_MEMORY`)."""


RTL_FILES = ("rtl/regmap.json", "rtl/ports.json")
"""The files of an RTL face the driver opens (the register map and the kernel's ports)."""


def parse_connectivity(text: str, board: Board) -> dict[str, Bank]:
    """Kernel argument -> bank of a Vitis connectivity file (`sp=<cu>.<arg>:HBM[i]|DDR[i]|HOST[0]`)."""
    out = {}
    kinds = {g.kind for g in board.memory}
    for line in text.splitlines():
        m = SP_LINE.match(line.strip())
        if not m:
            continue
        bank = VITIS_BANK.match(m.group(3))
        if not bank:
            raise FannsError(
                f"connectivity.cfg: bank {m.group(3)!r} of {m.group(2)} is not HBM[i] or DDR[i]",
                hint="regenerate the project",
            )
        if bank.group(1) == "HOST":
            if board.host is None:
                raise FannsError(
                    f"connectivity.cfg: {m.group(3)} but board {board.name} has no host link (`host` figures)",
                    hint="regenerate the project",
                )
            out[m.group(2)] = Bank(HOST_MEMORY, int(bank.group(2)))
            continue
        kind = next((k for k in MEMORY_OF_VITIS[bank.group(1)] if k in kinds), None)
        if kind is None:
            raise FannsError(
                f"connectivity.cfg: {m.group(3)} but board {board.name} has no {bank.group(1)} memory",
                hint="regenerate the project",
            )
        out[m.group(2)] = Bank(kind, int(bank.group(2)))
    return out


@dataclass(frozen=True)
class Project:
    """A generated IVF-PQ project (HLS or RTL); see the module docstring."""

    path: Path
    kind: str  # "hls" or "rtl"
    record: dict
    design: IvfPqDesign
    board: Board

    @classmethod
    def open(cls, path: Path | str) -> Project:
        path = Path(path)
        if not path.is_dir():
            raise FannsError(
                f"project folder {path} does not exist",
                hint="pass the folder written by `fanns generate-hls` or `fanns generate-rtl`",
            )
        rec_path = path / PROJECT_FILE
        if not rec_path.is_file():
            raise FannsError(
                f"{path} is not a generated project (no {PROJECT_FILE}, and no hls/ or rtl/ face with one)",
                hint="pass the folder `fanns generate`, `fanns generate-hls` or `fanns generate-rtl` wrote",
            )
        record = read_record(path)
        version = record.get("project_version")
        if version != PROJECT_VERSION:
            which = "no project version" if version is None else f"project version {version}"
            raise FannsError(
                f"{path} was written by {record.get('generator', 'an unknown generator')} ({which}); "
                f"this driver (fanns {__version__}) reads project version {PROJECT_VERSION}",
                hint="regenerate the project with this fanns version",
            )
        if "rtl" in record:
            kind = "rtl"
            for rel in RTL_FILES:
                if not (path / rel).is_file():
                    raise FannsError(
                        f"{path}: {rel} is missing", hint="regenerate the project with `fanns generate-rtl`"
                    )
        elif "kernel" in record and "args" in record:
            kind = "hls"
            if not (path / "connectivity.cfg").is_file() and not (path / PLAN_FILE).is_file():
                raise FannsError(
                    f"{path}: connectivity.cfg (Alveo) or {PLAN_FILE} (Zynq) is missing",
                    hint="regenerate the project with `fanns generate-hls`",
                )
        else:
            raise FannsError(f"{rec_path}: neither an HLS nor an RTL project", hint="regenerate the project")
        try:
            IvfPqFormat.from_dict(record["format"])
        except (KeyError, TypeError, FannsError) as exc:
            raise FannsError(f"{rec_path}: bad number format ({exc})", hint="regenerate the project") from None
        design = IvfPqDesign.load(path / "design.yaml")
        check_sources(path, *(("rtl", RTL_FILES) if kind == "rtl" else ("src", HLS_SOURCES)))
        return cls(path, kind, record, design, design.target_board())

    # -- formats -------------------------------------------------------------------------------
    @property
    def format(self) -> IvfPqFormat:
        return IvfPqFormat.from_dict(self.record["format"])

    @property
    def metric(self) -> str:
        return self.record["metric"]

    @property
    def k(self) -> int:
        """K: the most results per query the device returns."""
        return int(self.record["k"])

    @property
    def nprobe(self) -> int:
        """The design's nprobe (the most cells a query probes)."""
        return int(self.record["nprobe"])

    @property
    def d(self) -> int:
        return self.format.d

    @cached_property
    def images(self) -> MemoryImages:
        """The memory images (sizes and sha256 checked against the manifest)."""
        return MemoryImages.read(self.path / "images")

    @cached_property
    def io(self) -> IoLayout:
        io = self.record["io"]
        return IoLayout.from_dict(io)

    @property
    def io_bank(self) -> Bank:
        io = self.record["io"]
        return Bank(io["memory"], int(io["channel"]))

    # -- the device's interface ------------------------------------------------------------------
    @cached_property
    def ports(self) -> dict:
        """RTL: ports.json (every AXI port and the bank it is wired to)."""
        return json.loads((self.path / "rtl" / "ports.json").read_text())

    @cached_property
    def board_plan(self) -> dict | None:
        """The Zynq block-design record (instance names, addresses, HP ports), None without one."""
        return read_board_plan(self.path)

    @cached_property
    def connectivity(self) -> dict[str, Bank]:
        """HLS: kernel argument -> bank, from the project's connectivity.cfg (Alveo) or the memory
        ports of its block-design record (Zynq)."""
        cfg = self.path / "connectivity.cfg"
        if cfg.is_file() or self.board_plan is None:
            return parse_connectivity(cfg.read_text(), self.board)
        return {arg: Bank(p["memory"], int(p["channel"])) for p in self.board_plan["memory_ports"] for arg in p["args"]}
