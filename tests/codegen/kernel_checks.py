"""Checks of an RTL face's kernel road that hold for every accelerator (IVF-PQ: test_rtl_kernel.py,
graph: test_graph_roads.py), without vendor tools.

- kernel.xml: ap_ctrl_hs, every argument at regmap.json's offset (from 0x10, in order), a 32-bit
  scalar on the control port or a 64-bit pointer on the master ports.json says serves it, and the
  control block at 0x00-0x0C of the RTL-kernel convention.
- package_xo.tcl (which sources package_ip.tcl) runs to its end under a real Tcl interpreter
  against the stand-ins of tests/tcl/ipx_standins.tcl; the IP it builds (VLNV, bus interfaces
  with their port maps and parameters, clock, reset, interrupt, memory map) is ports.json's, the
  design's clock and the Verilog's own port list.
- On a Zynq board: package_ip.tcl and the block design run against the stand-ins, and the design
  built is the one `zynq/board_plan.json` records.
- The Verilog passes `verilator --lint-only -Wall` with the project's waiver file, every waiver
  with its reason.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from fanns.boards import load_board
from fanns.codegen.block_design import PLAN_FILE, rtl_plan
from fanns.hdl.regmap import RegMap
from fanns.tools.verilator import lint
from tests.tcl.run_tcl import PackagedIp, packaged_ip, run_script
from tests.tcl_standins import VIVADO, BlockDesignRecord, run_tcl

option = PackagedIp.option
PORT = re.compile(r"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?(\w+)\s*;", re.M)
INTERPRETERS = ["tclsh", "tkinter"]


def master_drives(logical: str) -> bool:
    """Whether an AXI master drives the signal (address and write channels, and the response readies)."""
    if logical in ("AWREADY", "WREADY", "ARREADY"):
        return False
    return logical in ("BREADY", "RREADY") or logical.startswith(("AW", "W", "AR"))


def top_ports(verilog: str, top: str) -> dict[str, tuple[str, int]]:
    """Port -> (direction, bits) of module `top` (its declarations up to its endmodule)."""
    start = verilog.index(f"module {top}(")
    body = verilog[start : verilog.index("endmodule", start)]
    return {name: (d, int(msb) + 1 if msb else 1) for d, msb, name in PORT.findall(body)}


def kernel_xml(root: Path) -> ET.Element:
    return ET.parse(root / "rtl" / "kernel.xml").getroot().find("kernel")


def check_kernel_xml(root: Path, top: str) -> tuple[ET.Element, dict, dict]:
    """kernel.xml against regmap.json and ports.json; returns (kernel, registers by name, ports.json)."""
    kernel = kernel_xml(root)
    regmap = {r["name"]: r for r in json.loads((root / "rtl" / "regmap.json").read_text())["registers"]}
    ports = json.loads((root / "rtl" / "ports.json").read_text())
    assert kernel.get("hwControlProtocol") == "ap_ctrl_hs" and kernel.get("vlnv") == ports["vlnv"]
    assert kernel.get("vlnv") == f"fanns.org:fanns:{top}:1.0" and kernel.get("name") == top
    args = kernel.find("args").findall("arg")
    assert [int(a.get("id")) for a in args] == list(range(len(args)))
    offsets = [int(a.get("offset"), 16) for a in args]
    assert offsets == sorted(offsets) and offsets[0] == 0x10  # arguments from 0x10, in order
    for a in args:
        name, offset, size = a.get("name"), int(a.get("offset"), 16), int(a.get("size"), 16)
        reg = regmap[name]
        assert reg["offset"] == offset and reg["access"] == "RW" and reg["width"] == 8 * size
        pointer = a.get("addressQualifier") == "1"
        assert (a.get("port") != "s_axi_control") == pointer and (size == 8) == pointer
        assert name in ports["ports"][a.get("port")]["args"]
    names = {a.get("name") for a in args}
    assert all(r["offset"] < 0x10 or r["name"] in names or r["access"] == "RO" for r in regmap.values())
    for p in kernel.find("ports").findall("port"):
        assert int(p.get("dataWidth")) == ports["ports"][p.get("name")]["data_bits"]
    ctrl = regmap["ap_start"]
    assert (ctrl["offset"], ctrl["bit"], regmap["ap_done"]["bit"], regmap["ap_idle"]["bit"]) == (0, 0, 1, 2)
    assert (regmap["ap_ready"]["bit"], regmap["auto_restart"]["bit"]) == (3, 7)
    assert [regmap[n]["offset"] for n in ("gie", "ier", "isr")] == [0x4, 0x8, 0xC]
    assert regmap["ap_done"]["access"] == "COR" and regmap["isr"]["access"] == "TOW"
    return kernel, regmap, ports


def check_packaging(root: Path, top: str, design, via: str) -> PackagedIp:
    """Run package_xo.tcl against the stand-ins and compare the IP with ports.json, the regmap,
    the design's clock and part, and the Verilog's ports."""
    ports = json.loads((root / "rtl" / "ports.json").read_text())
    xo = root / "build" / f"{top}.xo"
    ip = packaged_ip(run_script(root / "rtl" / "scripts" / "package_xo.tcl", [str(xo)], via=via))
    assert ip.vlnv == ports["vlnv"] == f"fanns.org:fanns:{top}:1.0"
    assert ip.core["sdx_kernel"] == "true" and ip.core["sdx_kernel_type"] == "rtl"
    board = design.target_board()
    assert option(ip.first("create_project"), "-part") == board.part
    assert [Path(f).resolve() for f in ip.first("add_files") if not f.startswith("-")] == [
        (root / "rtl" / f"{top}.v").resolve()
    ]
    verilog = top_ports((root / "rtl" / f"{top}.v").read_text(), top)

    # every Verilog port is mapped by exactly one bus interface, to the right logical signal
    mapped = [p for b in ip.bus_interfaces.values() for p in b.port_maps.values()]
    assert sorted(mapped) == sorted(verilog)
    assert set(ip.bus_interfaces) == {"ap_clk", "ap_rst_n", "interrupt"} | set(ports["ports"])
    clk, rst = ip.bus_interfaces["ap_clk"], ip.bus_interfaces["ap_rst_n"]
    assert clk.port_maps == {"CLK": "ap_clk"} and rst.port_maps == {"RST": "ap_rst_n"}
    assert rst.parameters["POLARITY"] == "ACTIVE_LOW" and clk.parameters["ASSOCIATED_RESET"] == "ap_rst_n"
    assert int(clk.parameters["FREQ_HZ"]) == round(design.clock_mhz * 1e6) == ports["clock_hz"]
    assert sorted(clk.parameters["ASSOCIATED_BUSIF"].split(":")) == sorted(ports["ports"])
    assert ip.bus_interfaces["interrupt"].port_maps == {"INTERRUPT": "interrupt"}
    for name, spec in ports["ports"].items():
        bus = ip.bus_interfaces[name]
        assert bus.clock == "ap_clk" and bus.properties["bus_type_vlnv"] == "xilinx.com:interface:aximm:1.0"
        assert bus.port_maps == spec["signals"]
        assert bus.properties["interface_mode"] == ("slave" if spec["bus"] == "axi4-lite" else "master")
        assert int(bus.parameters["DATA_WIDTH"]) == spec["data_bits"] == verilog[bus.port_maps["RDATA"]][1]
        for logical, physical in bus.port_maps.items():
            expect = "output" if master_drives(logical) == (spec["bus"] != "axi4-lite") else "input"
            assert verilog[physical][0] == expect, (name, logical)
        if spec["bus"] == "axi4-lite":
            regs = json.loads((root / "rtl" / "regmap.json").read_text())["registers"]
            last = max(w["offset"] for r in regs for w in r["words"])
            assert int(ip.memory_maps[name]["range"], 16) == 1 << spec["addr_bits"] > last
        else:
            assert bus.parameters["READ_WRITE_MODE"] == ("READ_WRITE" if spec["bus"] == "axi4" else "READ_ONLY")
            assert ip.address_spaces[name]["width"] == "64"

    xo_args = ip.first("package_xo")
    assert Path(option(xo_args, "-xo_path")) == xo.resolve() and option(xo_args, "-kernel_name") == top
    assert Path(option(xo_args, "-kernel_xml")) == (root / "rtl" / "kernel.xml").resolve()
    assert option(xo_args, "-ip_directory") == option(ip.first("ipx::package_project"), "-root_dir")
    assert Path(option(xo_args, "-ip_directory")) == (root / "rtl" / "build" / "ip").resolve()
    assert [c["cmd"] for c in ip.calls][-2:] == ["close_project", "package_xo"]
    return ip


def check_lint(root: Path, top: str) -> None:
    """`verilator --lint-only -Wall` of the kernel with the project's waivers: clean, and every
    waiver scoped to the kernel's file with its reason on the comment line(s) above it."""
    verilog = root / "rtl" / f"{top}.v"
    status, output = lint([root / "rtl" / "lint_waivers.vlt", verilog], top)
    assert status == 0, output[-3000:]
    assert "%Warning" not in output and "%Error" not in output
    waivers = (root / "rtl" / "lint_waivers.vlt").read_text().splitlines()
    for i, line in enumerate(waivers):
        if line.startswith("lint_off"):
            assert "-file" in line and f"{top}.v" in line
            above = [w for w in waivers[:i] if not w.startswith("lint_off")]
            assert above[-1].startswith("//")


def check_rtl_block_design(root: Path, top: str, clock_mhz: float, instances: int = 1) -> BlockDesignRecord:
    """The Zynq road of an RTL face as its generator writes it: a Makefile whose `ip` runs
    rtl/scripts/package_ip.tcl (run here against the ipx stand-ins) and whose `bit` runs the block
    design, which finds that IP in rtl/build/ip (here a stand-in's record of the interfaces the
    packaging declares: s_axi_control and one AXI4 master per ports.json port) and wires every
    instance: each master to the HP port of its channel in the record, the control port at the
    recorded address, the register offsets those of regmap.json."""
    ports = json.loads((root / "rtl" / "ports.json").read_text())
    regmap = RegMap.from_json((root / "rtl" / "regmap.json").read_text())
    board = load_board(json.loads((root / PLAN_FILE).read_text())["board"])
    plan = rtl_plan(board, top, clock_mhz, ports, regmap, instances=instances)
    assert json.loads((root / PLAN_FILE).read_text()) == plan  # the generator wrote the Zynq road
    assert not (root / "zynq" / "vitis_hls.tcl").exists() and not (root / "connectivity.cfg").exists()
    makefile = (root / "Makefile").read_text()
    assert "-source rtl/scripts/package_ip.tcl" in makefile and "-source zynq/block_design.tcl" in makefile
    assert f"BIT := {plan['bitstream']}\n" in makefile and f"HWH := {plan['hwh']}\n" in makefile
    ip = packaged_ip(run_script(root / "rtl" / "scripts" / "package_ip.tcl"))
    assert ip.vlnv == plan["ip_vlnv"] == f"fanns.org:fanns:{top}:1.0" and plan["ip_repo"] == "rtl/build/ip"
    masters = sorted(n for n in ports["ports"] if n.startswith("m_axi"))
    assert set(ip.bus_interfaces) == {"ap_clk", "ap_rst_n", "interrupt", "s_axi_control", *masters}
    ip_dir = root / "rtl" / "build" / "ip"  # what `make ip` leaves for the block design (a stand-in's record)
    ip_dir.mkdir(parents=True, exist_ok=True)
    (ip_dir / "standin_ip.tcl").write_text(
        f"::sd::register_ip {plan['ip_vlnv']} {{s_axi_control {' '.join(masters)}}} {{ap_clk ap_rst_n interrupt}}\n"
    )
    bd = BlockDesignRecord(run_tcl(VIVADO, root / "zynq" / "block_design.tcl"))
    names = [inst["name"] for inst in plan["instances"]]
    assert (
        [c for c, v in bd.cells.items() if v == plan["ip_vlnv"]]
        == names
        == [f"{top}_{i + 1}" for i in range(instances)]
    )
    b = board.block_design
    by_port = {p["interface"]: p for p in plan["memory_ports"]}
    assert sorted(by_port) == masters
    for inst in names:
        for name in masters:
            port = ports["ports"][name]
            channel = by_port[name]["channel"]
            assert channel in port.get("channels", [port.get("channel")])
            assert bd.reaches(f"{inst}/{name}", f"ps/{b.hp_ports[port['memory']][channel]}"), (inst, name)
        assert bd.reaches(f"ps/{b.control_port}", f"{inst}/s_axi_control")
    assert bd.addresses == [
        ("ps/Data", f"{inst['name']}/s_axi_control", inst["base_address"], "64K") for inst in plan["instances"]
    ]
    assert plan["registers"] == {r.name: r.offset for r in regmap.registers}
    assert plan["clock_mhz"] == clock_mhz
    assert (root / plan["bitstream"]).is_file() and (root / plan["hwh"]).is_file()
    return bd
