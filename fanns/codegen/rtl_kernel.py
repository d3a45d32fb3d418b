"""The board roads of an RTL face, shared by both accelerators: the Verilog as a Vitis RTL kernel
(Alveo) and as a packaged IP inside a Zynq block design.

Why one module: the kernel's interfaces (`kernel_interfaces`: every AXI interface with its port
map and bus parameters) and its arguments (`kernel_args`: the register map's kernel arguments
with the port each pointer goes through) are computed once, from the Amaranth component's
signature and the register map (`fanns.hdl.regmap.kernel_control_block`: ap_ctrl_hs at 0x00,
arguments from 0x10), and every file of the road reads them: `rtl/ports.json` (the record the
tests and the driver read), `rtl/kernel.xml`, `rtl/scripts/package_ip.tcl` (the IP, VLNV
`fanns.org:fanns:<top>:1.0`, which a Zynq block design also instantiates),
`rtl/scripts/package_xo.tcl`, `rtl/lint_waivers.vlt`, `connectivity.cfg` and the `Makefile`
(Alveo: xo, hw_emu, hw, run; Zynq: ip, bit, with `zynq/` from `fanns.codegen.block_design`).
The IVF-PQ (`fanns.codegen.ivfpq.rtl_kernel`) and graph (`fanns.codegen.graph.rtl`) faces add
only their XRT host.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from amaranth import Shape
from amaranth.lib import wiring

from fanns.boards import Board
from fanns.checks import IDENTIFIER, NAME, check_name
from fanns.codegen.block_design import RTL_CONTROL, rtl_plan, zynq_files
from fanns.codegen.platform import VITIS_MEMORY, alveo, vitis_platform
from fanns.errors import FannsError
from fanns.hdl.regmap import RegMap
from fanns.hdl.verilog import KERNEL_CLOCK, KERNEL_RESET, kernel_port_name
from fanns.templating import environment

VENDOR, LIBRARY, VERSION = "fanns.org", "fanns", "1.0"
CONTROL = RTL_CONTROL
"""The AXI4-Lite control interface of a kernel, as v++ names it (the component's `s_axil`)."""
INTERRUPT = "interrupt"
IP_FILES = {
    "rtl/kernel.xml": "kernel.xml.j2",
    "rtl/lint_waivers.vlt": "lint_waivers.vlt.j2",
    "rtl/scripts/package_ip.tcl": "package_ip.tcl.j2",
    "rtl/scripts/package_xo.tcl": "package_xo.tcl.j2",
}
"""The IP and .xo packaging (project path -> template in `templates/rtl/`): written for every board
(a Zynq block design instantiates the IP of package_ip.tcl)."""
ALVEO_FILES = {"connectivity.cfg": "connectivity.cfg.j2", "Makefile": "Makefile.j2"}
"""The Vitis build (the accelerator adds its XRT host): written for boards with a Vitis platform."""
ZYNQ_FILES = {"Makefile": "Makefile_zynq.j2"}
"""The Makefile of the Zynq road (`make ip`, `make bit`), beside `fanns.codegen.block_design.zynq_files`:
written for boards without a platform whose board file has a `block_design:`."""


def vlnv(top: str) -> str:
    """The IP's VLNV (vendor:library:name:version), by which a block design instantiates it."""
    return f"{VENDOR}:{LIBRARY}:{top}:{VERSION}"


@dataclass(frozen=True)
class KernelInterface:
    """One AXI interface of the kernel: its name as v++ sees it, slave or master, and the Verilog
    port of each AXI signal (logical name in upper case, as the IP packager maps them)."""

    name: str
    mode: str  # "slave" (the control interface) or "master"
    role: str
    data_bits: int
    addr_bits: int
    signals: tuple[tuple[str, str], ...]  # (logical, physical)
    params: tuple[tuple[str, str], ...]  # bus parameters of the IP
    range: str = ""  # the slave's address range (hex)


def kernel_interfaces(
    signature: wiring.Signature, roles: dict[str, str], bursts: Callable[[str], tuple[int, int]]
) -> list[KernelInterface]:
    """The kernel's AXI interfaces: `CONTROL` (the component's `s_axil`) and every `m_axi_*`
    member, in the component's member order; `roles` says what each one carries (ports.json),
    `bursts(member)` its largest burst (beats) and the reads it keeps outstanding."""
    out = []
    for member, port in signature.members.items():
        if not port.is_signature:  # single ports (interrupt)
            continue
        sig = port.signature.members
        signals = tuple((name.upper(), kernel_port_name((member, name), {"s_axil": CONTROL})) for name in sig)
        data_bits, addr_bits = Shape.cast(sig["rdata"].shape).width, Shape.cast(sig["araddr"].shape).width
        if member == "s_axil":
            params = (("PROTOCOL", "AXI4LITE"), ("DATA_WIDTH", str(data_bits)), ("ADDR_WIDTH", str(addr_bits)))
            out.append(
                KernelInterface(
                    CONTROL, "slave", roles[CONTROL], data_bits, addr_bits, signals, params, f"0x{1 << addr_bits:x}"
                )
            )
            continue
        writes = "awvalid" in sig
        burst, outstanding = bursts(member)
        params = (
            ("PROTOCOL", "AXI4"),
            ("DATA_WIDTH", str(data_bits)),
            ("ADDR_WIDTH", str(addr_bits)),
            ("ID_WIDTH", str(Shape.cast(sig["arid"].shape).width)),
            ("READ_WRITE_MODE", "READ_WRITE" if writes else "READ_ONLY"),
            ("MAX_BURST_LENGTH", str(max(2, burst))),
            ("NUM_READ_OUTSTANDING", str(outstanding)),
            ("NUM_WRITE_OUTSTANDING", str(outstanding if writes else 0)),
        )
        out.append(KernelInterface(member, "master", roles[member], data_bits, addr_bits, signals, params))
    return out


def kernel_args(regmap: RegMap, pointers: dict[str, str]) -> list[dict]:
    """kernel.xml's arguments: every kernel argument of the register map in offset order, a
    32-bit scalar (address qualifier 0, on the control port) or a 64-bit pointer (qualifier 1,
    on the AXI master `pointers` names)."""
    out = []
    for i, reg in enumerate(regmap.kernel_args()):
        if reg.width not in (32, 64) or reg.bit or (reg.width == 64) != (reg.name in pointers):
            raise FannsError(f"register {reg.name}: a kernel argument is a 32-bit scalar or a 64-bit pointer")
        pointer = reg.name in pointers
        out.append(
            {
                "name": reg.name,
                "id": i,
                "offset": f"0x{reg.offset:03x}",
                "size": "0x8" if pointer else "0x4",
                "qualifier": 1 if pointer else 0,
                "port": pointers[reg.name] if pointer else CONTROL,
                "type": "void*" if pointer else "uint",
            }
        )
    return out


def port_args(regmap: RegMap, pointers: dict[str, str], port: str) -> list[str]:
    """The kernel arguments `port` serves (ports.json's `args`): the scalars on the control port,
    the buffers on the masters."""
    return [
        r.name
        for r in regmap.kernel_args()
        if pointers.get(r.name) == port or (port == CONTROL and r.name not in pointers)
    ]


def port_signals(interfaces: list[KernelInterface]) -> dict[str, dict[str, str]]:
    """Interface name -> {logical AXI signal: Verilog port} (ports.json's `signals`)."""
    return {b.name: dict(b.signals) for b in interfaces}


def vitis_bank(memory: str, channels: list[int]) -> str:
    """The `sp=` target of a master reading `channels` of `memory` (`DDR[1]`, `HBM[0:3]`)."""
    if memory not in VITIS_MEMORY:
        raise FannsError(
            f"memory {memory!r} is not addressable by Vitis connectivity",
            hint=f"the Alveo road serves {', '.join(sorted(VITIS_MEMORY))} channels",
        )
    lo, hi = min(channels), max(channels)
    if sorted(channels) != list(range(lo, hi + 1)):
        raise FannsError(
            f"a master reads {memory} channels {channels}: v++ connects a port to one channel or a range",
            hint="place the graph in consecutive channels (design.yaml: memory.channels)",
        )
    return f"{VITIS_MEMORY[memory]}[{lo}]" if lo == hi else f"{VITIS_MEMORY[memory]}[{lo}:{hi}]"


@dataclass(frozen=True)
class Kernel:
    """What the board roads need of an RTL face: its top module and generator command, the
    component's signature, register map and pointer ports, its `rtl/ports.json` record, the
    largest burst and outstanding reads of each master, the board, the clock, the compute units
    (instances: an across-query graph design runs one QPP kernel per pipeline) and a one-line
    description of the IP."""

    top: str
    command: str
    description: str
    signature: wiring.Signature
    regmap: RegMap
    pointers: dict[str, str]
    ports: dict
    bursts: Callable[[str], tuple[int, int]]
    board: Board
    clock_mhz: float
    instances: int = 1
    slr: str | None = None
    extra: dict = field(default_factory=dict)  # more template values (the accelerator's host)

    def interfaces(self) -> list[KernelInterface]:
        roles = {name: p["role"] for name, p in self.ports["ports"].items()}
        return kernel_interfaces(self.signature, roles, self.bursts)

    def masters(self) -> list[dict]:
        """Every AXI master with the `sp=` bank of the channels ports.json gives it."""
        out = []
        for name, p in self.ports["ports"].items():
            if name.startswith("m_axi_"):
                out.append({"name": name, "bank": vitis_bank(p["memory"], p.get("channels", [p.get("channel")]))})
        return out


def road_files(
    kernel: Kernel, platform: str | None, hosts: dict[str, tuple[str, str, dict]] | None = None
) -> dict[str, bytes]:
    """Every file of the board roads of `kernel` (IP_FILES; ALVEO_FILES and `hosts` on a board
    with a Vitis platform, else the Zynq block design and ZYNQ_FILES on a board with a
    `block_design:`). `hosts`: project path -> (template folder, template, values) of the
    accelerator's XRT host, rendered on the Alveo road only."""
    board = kernel.board
    top = check_name(kernel.top, "kernel name", IDENTIFIER)
    interfaces = kernel.interfaces()
    values = {
        "top": top,
        "kernel": top,
        "command": kernel.command,
        "ip_description": kernel.description,
        "vlnv": vlnv(top),
        "vendor": VENDOR,
        "library": LIBRARY,
        "version": VERSION,
        "verilog": f"{top}.v",
        "part": check_name(board.part, f"part of board {board.name}", NAME),
        "board": board.name,
        "clock": KERNEL_CLOCK,
        "reset": KERNEL_RESET,
        "interrupt": INTERRUPT,
        "control": CONTROL,
        "clock_hz": kernel.ports["clock_hz"],
        "associated_busif": ":".join(b.name for b in interfaces),
        "interfaces": interfaces,
        "args": kernel_args(kernel.regmap, kernel.pointers),
        "cus": kernel.instances,
        **kernel.extra,
    }
    templates, zynq = dict(IP_FILES), {}
    hosts = dict(hosts or {})
    if alveo(board, platform):
        templates |= ALVEO_FILES
        values |= {
            "platform": vitis_platform(board, platform),
            "masters": kernel.masters(),
            "arg_names": ", ".join(r.name for r in kernel.regmap.kernel_args()),
            "slr": kernel.slr,
        }
    elif board.block_design is not None:
        plan = rtl_plan(board, top, kernel.clock_mhz, kernel.ports, kernel.regmap, CONTROL, kernel.instances)
        zynq = zynq_files(plan)
        templates |= ZYNQ_FILES
        values["zynq"] = plan
        hosts = {}
    else:
        hosts = {}
    env = environment("rtl", shared=["hls_common", "hls"])
    files = {path: env.get_template(template).render(values).encode() for path, template in templates.items()}
    for path, (folder, template, more) in hosts.items():
        files[path] = (
            environment(folder, shared=["hls_common", "hls"]).get_template(template).render(values | more).encode()
        )
    return files | zynq
