"""The Alveo road of an IVF-PQ RTL project: the Verilog as a Vitis RTL kernel.

Why one module: the kernel's interfaces (`kernel_interfaces`: every AXI interface with its port
map and bus parameters, clock, reset, interrupt) and its arguments (`kernel_args`: the register
map's kernel arguments with the port each pointer goes through) are computed once, from the
Amaranth component's signature and `IvfPqHw.regmap`, and every file of the road reads them:
`rtl/ports.json` (the record the tests and the driver read), `rtl/kernel.xml`,
`rtl/scripts/package_ip.tcl` (the IP, VLNV `fanns.org:fanns:fanns_ivfpq:1.0`, which a Zynq block
design also instantiates), `rtl/scripts/package_xo.tcl`, `connectivity.cfg`, the `Makefile`
(targets xo, hw_emu, hw, run) and the XRT host (`src/host.cpp`, the HLS face's host with the
kernel's argument order).
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth import Shape

from fanns.arch.ivfpq.hw import IvfPqHw
from fanns.arch.ivfpq.top import MAX_BURST, OUTSTANDING, accelerator_signature
from fanns.checks import IDENTIFIER, NAME, check_name
from fanns.codegen.block_design import rtl_plan, zynq_files
from fanns.codegen.ivfpq.hls import vitis_platform
from fanns.codegen.ivfpq.hls_context import VITIS_MEMORY
from fanns.errors import FannsError
from fanns.hdl.verilog import KERNEL_CLOCK, KERNEL_RESET, kernel_port_name
from fanns.images.ivfpq import MemoryImages
from fanns.templating import environment

VENDOR, LIBRARY, VERSION = "fanns.org", "fanns", "1.0"
INTERRUPT = "interrupt"
IP_FILES = {
    "rtl/kernel.xml": "kernel.xml.j2",
    "rtl/lint_waivers.vlt": "lint_waivers.vlt.j2",
    "rtl/scripts/package_ip.tcl": "package_ip.tcl.j2",
    "rtl/scripts/package_xo.tcl": "package_xo.tcl.j2",
}
"""The IP and .xo packaging (project path -> template in `templates/rtl/`): written for every board
(a Zynq block design instantiates the IP of package_ip.tcl)."""
ALVEO_FILES = {
    "connectivity.cfg": "connectivity.cfg.j2",
    "Makefile": "Makefile.j2",
    "src/host.cpp": "host.cpp.j2",
    "src/host_common.h": "host_common.h.j2",
}
"""The Vitis build and XRT host: written for boards with a Vitis platform (Alveo)."""
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


def kernel_interfaces(hw: IvfPqHw, control: str, roles: dict[str, str]) -> list[KernelInterface]:
    """The kernel's AXI interfaces: `control` (the component's `s_axil`) and every `m_axi_*`
    member, in the component's member order; `roles` says what each one carries (ports.json)."""
    members = accelerator_signature(hw).members
    renames = {"s_axil": control}
    out = []
    for member, port in members.items():
        if not port.is_signature:  # single ports (interrupt)
            continue
        sig = port.signature.members
        signals = tuple((name.upper(), kernel_port_name((member, name), renames)) for name in sig)
        data_bits, addr_bits = Shape.cast(sig["rdata"].shape).width, Shape.cast(sig["araddr"].shape).width
        if member == "s_axil":
            params = (("PROTOCOL", "AXI4LITE"), ("DATA_WIDTH", str(data_bits)), ("ADDR_WIDTH", str(addr_bits)))
            out.append(
                KernelInterface(
                    control, "slave", roles[control], data_bits, addr_bits, signals, params, f"0x{1 << addr_bits:x}"
                )
            )
            continue
        writes = "awvalid" in sig
        params = (
            ("PROTOCOL", "AXI4"),
            ("DATA_WIDTH", str(data_bits)),
            ("ADDR_WIDTH", str(addr_bits)),
            ("ID_WIDTH", str(Shape.cast(sig["arid"].shape).width)),
            ("READ_WRITE_MODE", "READ_WRITE" if writes else "READ_ONLY"),
            ("MAX_BURST_LENGTH", str(MAX_BURST)),
            ("NUM_READ_OUTSTANDING", str(OUTSTANDING)),
            ("NUM_WRITE_OUTSTANDING", str(OUTSTANDING if writes else 0)),
        )
        out.append(KernelInterface(member, "master", roles[member], data_bits, addr_bits, signals, params))
    return out


def kernel_args(hw: IvfPqHw, control: str) -> list[dict]:
    """kernel.xml's arguments: every kernel argument of the register map in offset order, a
    32-bit scalar (address qualifier 0, on the control port) or a 64-bit pointer (qualifier 1,
    on the AXI master `IvfPqHw.pointer_ports` names)."""
    pointers = hw.pointer_ports()
    out = []
    for i, reg in enumerate(hw.regmap.kernel_args()):
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
                "port": pointers[reg.name] if pointer else control,
                "type": "void*" if pointer else "uint",
            }
        )
    return out


def _host_calls(hw: IvfPqHw, images: MemoryImages) -> tuple[list[dict], str, str, int, int]:
    """The XRT host's kernel calls by argument order: per image the argument holding its address,
    the index-load and per-batch argument lists, and the query / result buffers' argument indices."""
    args = [r.name for r in hw.regmap.kernel_args()]
    image_args = []
    for img in images.images:
        reg = hw.image_register(img.name)
        image_args.append({"image": img.name, "arg": args.index(reg), "vitis_bank": _bank(img.memory, img.channel)})
    by_reg = {args[a["arg"]]: f"images[{i}]" for i, a in enumerate(image_args)}
    values = {"nprobe": "uint32_t(host::NPROBE)", "k": "host::K", "query_addr": "query_bo", "result_addr": "result_bo"}
    load = [{"nq": "0u"}.get(a) or values.get(a) or by_reg[a] for a in args]
    run = [{"nq": "n"}.get(a) or values.get(a) or by_reg[a] for a in args]
    return image_args, ", ".join(load), ", ".join(run), args.index("query_addr"), args.index("result_addr")


def _bank(memory: str, channel: int) -> str:
    if memory not in VITIS_MEMORY:
        raise FannsError(
            f"memory {memory!r} is not addressable by Vitis connectivity",
            hint=f"the Alveo road serves {', '.join(sorted(VITIS_MEMORY))} channels",
        )
    return f"{VITIS_MEMORY[memory]}[{channel}]"


def kernel_files(
    hw: IvfPqHw, ports: dict, images: MemoryImages, test: dict, top: str, control: str, platform: str | None = None
) -> dict[str, bytes]:
    """Every file of the board roads (IP_FILES; ALVEO_FILES on a board with a platform, else the Zynq
    block design and ZYNQ_FILES on a board with a `block_design:`) for
    `hw`, whose `rtl/ports.json` is `ports`; `test`: the project record's test set (nq, gt_k)."""
    board = hw.design.target_board()
    check_name(top, "kernel name", IDENTIFIER)
    roles = {name: p["role"] for name, p in ports["ports"].items()}
    interfaces = kernel_interfaces(hw, control, roles)
    values = {
        "top": top,
        "kernel": top,
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
        "control": control,
        "clock_hz": ports["clock_hz"],
        "associated_busif": ":".join(b.name for b in interfaces),
        "interfaces": interfaces,
        "args": kernel_args(hw, control),
    }
    templates, zynq = dict(IP_FILES), {}
    if platform or board.platform:
        templates |= ALVEO_FILES
        image_args, call_load, call_run, query_arg, result_arg = _host_calls(hw, images)
        used = [name for name, groups in sorted(hw.design.slr.items()) if groups]
        values |= {
            "platform": vitis_platform(board, platform),
            "masters": [
                {"name": b.name, "bank": _bank(ports["ports"][b.name]["memory"], ports["ports"][b.name]["channel"])}
                for b in interfaces
                if b.mode == "master"
            ],
            "arg_names": ", ".join(r.name for r in hw.regmap.kernel_args()),
            "slr": used[0] if len(used) == 1 else None,
            "image_args": image_args,
            "call_load": call_load,
            "call_run": call_run,
            "query_arg": query_arg,
            "result_arg": result_arg,
            "k": hw.k,
            "nprobe": hw.nprobe,
            "query_beats": images.io.query_beats,
            "result_beats": images.io.result_beats,
            "io_bytes": images.io.port_bits // 8,
            "test": test,
        }
    elif board.block_design is not None:
        plan = rtl_plan(board, top, hw.design.clock_mhz, ports, hw.regmap, control)
        zynq = zynq_files(plan)
        templates |= ZYNQ_FILES
        values["zynq"] = plan
    env = environment("rtl", shared=["hls_common", "hls"])
    return {path: env.get_template(template).render(values).encode() for path, template in templates.items()} | zynq


def port_signals(interfaces: list[KernelInterface]) -> dict[str, dict[str, str]]:
    """Interface name -> {logical AXI signal: Verilog port} (ports.json's `signals`)."""
    return {b.name: dict(b.signals) for b in interfaces}
