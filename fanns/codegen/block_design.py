"""The road of a generated accelerator to a Zynq board: the block-design record
(`zynq/board_plan.json`), the Vivado block-design Tcl script and, for an HLS face, the
`vitis_hls` Tcl script that exports the kernel to the IP catalogue.

Why one record: the instance name of the accelerator in the block design, the base address
`assign_bd_address` gives its control port, the register offsets, the HP port every memory port
is wired to and the clock are decided here, once, and written to `board_plan.json`; the Tcl
templates (`templates/zynq/`) print only the record's values, the project Makefile takes the
bitstream name from it, the driver's pynq backend finds the IP by the record's instance name and
checks its address, and the tests compare the design the Tcl builds with the same record. Both
accelerators (IVF-PQ, graph) and both faces (HLS, RTL) use it; the board's part of it (board
part, PS, HP ports, PL clock) comes from the board file's `block_design:`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fanns.boards import Board
from fanns.checks import IDENTIFIER, check_name
from fanns.codegen.project_files import json_bytes
from fanns.errors import FannsError
from fanns.hdl.regmap import RegMap
from fanns.templating import environment

PLAN_FILE = "zynq/board_plan.json"
"""The record, relative to the folder of the face (an HLS project's root, an RTL face's folder)."""
CONTROL_RANGE = 0x10000
"""Address range of each accelerator's control port (64 KiB, Vivado's smallest usual segment)."""
BD_NAME = "fanns_bd"
HLS_PROJECT = "build/vitis_hls"
HLS_SOLUTION = "sol"
HLS_VENDOR = "fanns.org"
HLS_LIBRARY = "hls"
RTL_LIBRARY = "fanns"
TOOL_VERSION = "2022.2"
"""The Vivado / Vitis HLS release the scripts are written for (and later ones)."""


@dataclass(frozen=True)
class MemoryPort:
    """One AXI4 master of the accelerator and the board memory channel it must reach."""

    interface: str
    memory: str
    channel: int
    args: tuple[str, ...]


def _hp_port(board: Board, port: MemoryPort) -> str:
    bd = board.block_design
    ports = bd.hp_ports.get(port.memory)
    if ports is None:
        raise FannsError(
            f"{port.interface} reads {port.memory}[{port.channel}], but the block design of {board.name} "
            f"reaches only {', '.join(sorted(bd.hp_ports))} through HP ports",
            hint=f"place every image in {', '.join(sorted(bd.hp_ports))} (re-run the DSE for {board.name})",
        )
    if port.channel >= len(ports):
        raise FannsError(
            f"{port.interface} is on {port.memory}[{port.channel}], but {board.name} has {len(ports)} such HP ports",
            hint="re-run the DSE for this board",
        )
    return ports[port.channel]


def board_plan(
    board: Board,
    *,
    face: str,
    top: str,
    clock_mhz: float,
    memory_ports: list[MemoryPort],
    regmap: RegMap,
    control: str,
    instances: int = 1,
    ip_repo: str,
) -> dict:
    """The record of the block design of `top` on `board` (see the module docstring)."""
    bd = board.block_design
    if bd is None:
        raise FannsError(
            f"board {board.name} has no block_design in its board file",
            hint="add block_design: (board_part, ps, pl_clock, control_port, hp_ports) as boards/zcu104.yaml has",
        )
    if face not in ("hls", "rtl"):
        raise FannsError(f"face {face!r} has no block design", hint="hls or rtl")
    for name in (top, control, *(p.interface for p in memory_ports)):
        check_name(name, "an interface of the accelerator", IDENTIFIER)
    if (1 << regmap.addr_width) > CONTROL_RANGE:
        raise FannsError(f"the register map of {top} spans 2^{regmap.addr_width} bytes, beyond the control range")
    kind = bd.kind
    master = kind.masters[bd.control_port]
    enable, freq, actual, reset = kind.clocks[bd.pl_clock]
    hp_used: dict[str, dict] = {}
    ports = []
    for port in memory_ports:
        hp = _hp_port(board, port)
        group = next(g for g in board.memory if g.kind == port.memory)
        spec = kind.hp_ports[hp]
        hp_used[hp] = {
            "enable": spec.enable,
            "width_property": spec.width,
            "width": group.port_bits,
            "clock": spec.clock,
        }
        ports.append(
            {
                "interface": port.interface,
                "memory": port.memory,
                "channel": port.channel,
                "hp_port": hp,
                "args": list(port.args),
            }
        )
    library = HLS_LIBRARY if face == "hls" else RTL_LIBRARY
    names = [f"{top}_{i + 1}" for i in range(instances)]
    interconnects = [
        {
            "name": f"sc_{hp.lower()}",
            "hp_port": hp,
            "masters": [f"{inst}/{p['interface']}" for inst in names for p in ports if p["hp_port"] == hp],
        }
        for hp in sorted(hp_used)
    ]
    return {
        "tool_version": TOOL_VERSION,
        "board": board.name,
        "part": board.part,
        "board_part": bd.board_part,
        "face": face,
        "top": top,
        "ip_vlnv": f"{HLS_VENDOR}:{library}:{top}:1.0",
        "ip_repo": ip_repo,
        "design": BD_NAME,
        "vivado_project": "build/vivado",
        "clock_mhz": float(clock_mhz),
        "ps": {
            "instance": "ps",
            "ip": bd.ps,
            "vlnv": kind.vlnv,
            "preset_rule": kind.preset_rule,
            "clock_pin": bd.pl_clock,
            "clock_enable": enable,
            "clock_property": freq,
            "clock_actual": actual,
            "reset_pin": reset,
            "control_port": bd.control_port,
            "control_enable": master.enable,
            "control_clock": master.clock,
            "hp": dict(sorted(hp_used.items())),
        },
        "control": {"interface": control, "range": CONTROL_RANGE},
        "instances": [{"name": n, "base_address": master.window + i * CONTROL_RANGE} for i, n in enumerate(names)],
        "memory_ports": ports,
        "interconnects": interconnects,
        "clock_pin": "ap_clk",
        "reset_pin": "ap_rst_n",
        "registers": {r.name: r.offset for r in regmap.registers},
        "bitstream": f"build/{top}.bit",
        "hwh": f"build/{top}.hwh",
    }


def hls_memory_ports(args: list) -> list[MemoryPort]:
    """The m_axi interfaces of an HLS kernel (one per bundle, `m_axi_<bundle>`) from its arguments."""
    bundles: dict[str, list] = {}
    for a in args:
        bundles.setdefault(a.bundle, []).append(a)
    return [
        MemoryPort(f"m_axi_{b}", group[0].memory, group[0].channel, tuple(a.name for a in group))
        for b, group in sorted(bundles.items())
    ]


def hls_plan(board: Board, top: str, clock_mhz: float, args: list, regmap: RegMap, instances: int = 1) -> dict:
    """The record of an HLS kernel (`fanns.codegen.platform.KernelArg`s) exported by vitis_hls."""
    return board_plan(
        board,
        face="hls",
        top=top,
        clock_mhz=clock_mhz,
        memory_ports=hls_memory_ports(args),
        regmap=regmap,
        control="s_axi_control",
        instances=instances,
        ip_repo=f"{HLS_PROJECT}/{HLS_SOLUTION}/impl/ip",
    )


RTL_CONTROL = "s_axi_control"
"""The control interface of the packaged RTL kernel (Xilinx's RTL-kernel name, rtl/scripts/package_ip.tcl)."""


def rtl_plan(
    board: Board,
    top: str,
    clock_mhz: float,
    ports: dict,
    regmap: RegMap,
    control: str = RTL_CONTROL,
    instances: int = 1,
) -> dict:
    """The record of an RTL face (a `fanns generate-rtl` or `generate-graph-rtl` folder) packaged
    as IP by its `rtl/scripts/package_ip.tcl` (VLNV fanns.org:fanns:<top>:1.0 into rtl/build/ip),
    `instances` times: its AXI4 masters and their channels come from `ports.json` (`ports`:
    {"ports": {name: {"memory", "channel" or "channels", "args", ...}}}), the register offsets
    from its register map."""
    memory_ports = []
    spread = 0
    for name, p in sorted(ports["ports"].items()):
        if not name.startswith("m_axi"):
            continue
        channels = p.get("channels", [p.get("channel")])
        # Every HP port reaches the whole PS DDR, so a master that reads the images of several
        # channels (a graph's list and vector masters) is wired to one of their HP ports, the
        # masters spread over them one by one.
        channel = channels[spread % len(channels)]
        spread += len(channels) > 1
        memory_ports.append(MemoryPort(name, p["memory"], int(channel), tuple(p.get("args", [name]))))
    return board_plan(
        board,
        face="rtl",
        top=top,
        clock_mhz=clock_mhz,
        memory_ports=memory_ports,
        regmap=regmap,
        control=control,
        instances=instances,
        ip_repo="rtl/build/ip",
    )


def zynq_files(plan: dict, sources: list[str] | None = None) -> dict[str, bytes]:
    """`zynq/board_plan.json`, `zynq/block_design.tcl` and, for an HLS face, `zynq/vitis_hls.tcl`
    (compiling `sources`, paths relative to the face's folder)."""
    env = environment("zynq")
    files = {PLAN_FILE: json_bytes(plan)}
    values = {"plan": plan, "hex": lambda v: f"0x{v:08X}"}
    files["zynq/block_design.tcl"] = env.get_template("block_design.tcl.j2").render(values).encode()
    if plan["face"] == "hls":
        hls = {
            "project": HLS_PROJECT,
            "solution": HLS_SOLUTION,
            "vendor": HLS_VENDOR,
            "library": HLS_LIBRARY,
            "sources": sources or [],
            "period_ns": round(1000.0 / plan["clock_mhz"], 3),
        }
        files["zynq/vitis_hls.tcl"] = env.get_template("vitis_hls.tcl.j2").render(values, hls=hls).encode()
    return files
