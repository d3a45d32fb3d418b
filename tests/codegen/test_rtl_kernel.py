"""The Alveo road of an IVF-PQ RTL project, checked without vendor tools.

- kernel.xml parses, and every argument's offset is regmap.json's and the one the driver writes;
  every pointer argument goes through the AXI master that serves its buffer's memory bank.
- package_ip.tcl and package_xo.tcl run to their end under a real Tcl interpreter (tclsh, and
  Python's own Tcl through tkinter) against stand-ins of the Vivado commands
  (tests/tcl/ipx_standins.tcl); the IP they build (VLNV, bus interfaces with their port maps and
  parameters, clock, reset, memory map) is compared with ports.json, regmap.json, the design's
  clock and the Verilog's own port list.
- The kernel's Verilog passes `verilator --lint-only -Wall` with the project's waiver file.
- The XRT host calls the kernel with one value per kernel argument, in kernel.xml's order.
What this does NOT show: that Vivado accepts the scripts (they have not run in Vivado here).
"""

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.driver.plan import Interface
from fanns.driver.project import Project
from fanns.tools.verilator import lint
from tests.codegen.test_tiers import skewed  # noqa: F401  (a tiered design)
from tests.driver.conftest import projects  # noqa: F401  (one HLS and one RTL project of one design)
from tests.tcl.run_tcl import PackagedIp, TclError, interpreter, interpreters, packaged_ip, run_script

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


@pytest.fixture(scope="module", params=["plain", "tiered"])
def rtl(request, tmp_path_factory):
    """A copy of an RTL project (the scripts make build folders): the driver tests' design, and a
    tiered design (`m_axi_hot<c>` ports, the `tiers_addr` and `hot<c>_addr` arguments)."""
    dest = tmp_path_factory.mktemp("kernel") / "rtl"
    if request.param == "plain":
        shutil.copytree(request.getfixturevalue("projects").rtl, dest, symlinks=True)
    else:
        skewed = request.getfixturevalue("skewed")
        test = TestQueries(skewed["queries"](4, 2), np.zeros((4, 10), np.int64))
        generate_rtl(skewed["tiered"], skewed["data"], test, dest)
    return dest


def kernel_xml(rtl: Path) -> ET.Element:
    return ET.parse(rtl / "rtl" / "kernel.xml").getroot().find("kernel")


def test_kernel_xml_offsets_are_the_register_maps_and_the_drivers(rtl):
    kernel = kernel_xml(rtl)
    regmap = {r["name"]: r for r in json.loads((rtl / "rtl" / "regmap.json").read_text())["registers"]}
    ports = json.loads((rtl / "rtl" / "ports.json").read_text())
    assert kernel.get("hwControlProtocol") == "ap_ctrl_hs" and kernel.get("vlnv") == ports["vlnv"]
    assert kernel.get("vlnv") == "fanns.org:fanns:fanns_ivfpq:1.0"
    iface = Interface(Project.open(rtl))
    args = kernel.find("args").findall("arg")
    assert [int(a.get("id")) for a in args] == list(range(len(args)))
    offsets = [int(a.get("offset"), 16) for a in args]
    assert offsets == sorted(offsets) and offsets[0] == 0x10  # arguments from 0x10, in order
    written = set()
    for a in args:
        name, offset, size = a.get("name"), int(a.get("offset"), 16), int(a.get("size"), 16)
        reg = regmap[name]
        assert reg["offset"] == offset and reg["access"] == "RW" and reg["width"] == 8 * size
        assert [off for off, _ in iface.encode(name, 1)] == [offset + 4 * i for i in range(size // 4)]
        pointer = a.get("addressQualifier") == "1"
        assert (a.get("port") != "s_axi_control") == pointer and (size == 8) == pointer
        assert name in ports["ports"][a.get("port")]["args"]
        channel = re.fullmatch(r"(pq|hot)(\d+)_addr", name)
        assert a.get("port") == (f"m_axi_{channel[1]}{channel[2]}" if channel else a.get("port"))
        written.add(name)
    # every register the driver programs is a kernel argument; the rest are read-only or control
    for buf, _ in [(b.name, b) for b in iface.image_buffers() + iface.io_buffers(1)]:
        reg = iface.address_register(buf)
        assert reg in written
        port = next(a.get("port") for a in args if a.get("name") == reg)
        bank = iface.banks[buf]
        assert (ports["ports"][port]["memory"], ports["ports"][port]["channel"]) == (bank.memory, bank.channel)
    assert set(iface.run_values(1, 1, 1, load=False)) <= written
    assert all(r["offset"] < 0x10 or r["name"] in written or r["access"] == "RO" for r in regmap.values())
    for p in kernel.find("ports").findall("port"):
        assert int(p.get("dataWidth")) == ports["ports"][p.get("name")]["data_bits"]
    ctrl = regmap["ap_start"]
    assert (ctrl["offset"], ctrl["bit"], regmap["ap_done"]["bit"], regmap["ap_idle"]["bit"]) == (0, 0, 1, 2)
    assert (regmap["ap_ready"]["bit"], regmap["auto_restart"]["bit"]) == (3, 7)
    assert [regmap[n]["offset"] for n in ("gie", "ier", "isr")] == [0x4, 0x8, 0xC]
    assert regmap["ap_done"]["access"] == "COR" and regmap["isr"]["access"] == "TOW"


@pytest.mark.parametrize("via", INTERPRETERS)
def test_packaging_scripts_run_to_the_end_and_build_the_ports_of_ports_json(rtl, via):
    if via not in interpreters():
        pytest.skip(f"no {via} on this machine (Debian packages: tcl for tclsh, python3-tk for tkinter)")
    ports = json.loads((rtl / "rtl" / "ports.json").read_text())
    xo = rtl / "build" / "fanns_ivfpq.xo"
    ip = packaged_ip(run_script(rtl / "rtl" / "scripts" / "package_xo.tcl", [str(xo)], via=via))
    assert ip.vlnv == ports["vlnv"] == "fanns.org:fanns:fanns_ivfpq:1.0"
    assert ip.core["sdx_kernel"] == "true" and ip.core["sdx_kernel_type"] == "rtl"
    design = Project.open(rtl).design
    board = design.target_board()
    assert option(ip.first("create_project"), "-part") == board.part
    assert [Path(f).resolve() for f in ip.first("add_files") if not f.startswith("-")] == [
        (rtl / "rtl" / "fanns_ivfpq.v").resolve()
    ]
    verilog = top_ports((rtl / "rtl" / "fanns_ivfpq.v").read_text(), "fanns_ivfpq")

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
            regs = json.loads((rtl / "rtl" / "regmap.json").read_text())["registers"]
            top = max(w["offset"] for r in regs for w in r["words"])
            assert int(ip.memory_maps[name]["range"], 16) == 1 << spec["addr_bits"] > top
        else:
            assert bus.parameters["READ_WRITE_MODE"] == ("READ_WRITE" if spec["bus"] == "axi4" else "READ_ONLY")
            assert ip.address_spaces[name]["width"] == "64"

    xo_args = ip.first("package_xo")
    assert Path(option(xo_args, "-xo_path")) == xo.resolve() and option(xo_args, "-kernel_name") == "fanns_ivfpq"
    assert Path(option(xo_args, "-kernel_xml")) == (rtl / "rtl" / "kernel.xml").resolve()
    assert option(xo_args, "-ip_directory") == option(ip.first("ipx::package_project"), "-root_dir")
    assert Path(option(xo_args, "-ip_directory")) == (rtl / "rtl" / "build" / "ip").resolve()
    assert [c["cmd"] for c in ip.calls][-2:] == ["close_project", "package_xo"]


def test_standins_stop_a_script_that_vivado_would_stop(tmp_path):
    if not interpreters():
        pytest.skip("no Tcl interpreter: neither tclsh (Debian: tcl) nor Python's tkinter (Debian: python3-tk)")
    bad = tmp_path / "bad.tcl"
    bad.write_text("create_project p . -part xcu55c\nadd_files -norecurse missing.v\n")
    with pytest.raises(TclError, match="missing.v does not exist"):
        run_script(bad, via=interpreter())
    bad.write_text("ipx::package_project -root_dir ip -vendor v -library l -taxonomy /x\nipx::frobnicate\n")
    with pytest.raises(TclError, match="invalid command name"):
        run_script(bad, via=interpreter())
    bad.write_text("set_property physical_name x [ipx::add_port_map CLK busif:nowhere]\n")
    with pytest.raises(TclError, match="no object busif:nowhere"):
        run_script(bad, via=interpreter())


def test_xrt_host_calls_the_kernel_in_kernel_xml_order(rtl):
    names = [a.get("name") for a in kernel_xml(rtl).find("args").findall("arg")]
    host = (rtl / "src" / "host.cpp").read_text()
    common = (rtl / "src" / "host_common.h").read_text()
    calls = re.findall(r"= krnl\(([^;]*)\);", host)
    assert len(calls) == 2 and all(len(c.split(", ")) == len(names) for c in calls)
    load, run = (c.split(", ") for c in calls)
    assert load[names.index("nq")] == "0u" and run[names.index("nq")] == "n"
    assert run[names.index("query_addr")] == "query_bo" and run[names.index("result_addr")] == "result_bo"
    assert f"krnl.group_id({names.index('query_addr')})" in host
    image_args = [int(v) for v in re.search(r"IMAGE_ARGS\[\d+\] = \{([^}]*)\}", common).group(1).split(",")]
    manifest = json.loads((rtl / "images" / "manifest.json").read_text())["images"]
    iface = Interface(Project.open(rtl))
    for i, img in enumerate(manifest):
        assert names[image_args[i]] == iface.address_register(img["name"])
        assert run[image_args[i]] == f"images[{i}]"
    cfg = (rtl / "connectivity.cfg").read_text()
    ports = json.loads((rtl / "rtl" / "ports.json").read_text())["ports"]
    for name, spec in ports.items():
        if name.startswith("m_axi_"):
            assert f"sp=fanns_ivfpq_1.{name}:{spec['memory'].upper()}[{spec['channel']}]" in cfg


def test_xrt_host_passes_gcc_checks(rtl):
    """The RTL face's XRT host against the XRT API subset it uses (tests/codegen/xrt_api: XRT is
    not installed here), as tests/codegen/test_hls_project.py checks the HLS face's."""
    xrt = Path(__file__).parent / "xrt_api"
    cmd = ["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{xrt}", f"-I{rtl / 'src'}"]
    check = subprocess.run([*cmd, str(rtl / "src" / "host.cpp")], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr


def test_verilog_passes_verilator_lint_with_the_waivers(rtl):
    verilog = rtl / "rtl" / "fanns_ivfpq.v"
    status, output = lint([rtl / "rtl" / "lint_waivers.vlt", verilog], "fanns_ivfpq")
    assert status == 0, output[-3000:]
    assert "%Warning" not in output and "%Error" not in output
    waivers = (rtl / "rtl" / "lint_waivers.vlt").read_text().splitlines()
    for i, line in enumerate(waivers):  # every waiver has its reason on the comment line(s) above it
        if line.startswith("lint_off"):
            assert "-file" in line and "fanns_ivfpq.v" in line
            above = [w for w in waivers[:i] if not w.startswith("lint_off")]
            assert above[-1].startswith("//")
