"""The roads of a graph project's RTL face to a board, checked without vendor tools (the HLS face's
Zynq road: tests/codegen/test_zynq_flow.py; the simulation of the same kernel Verilog:
tests/sim/test_falcon_rtl.py).

- Alveo (u250): kernel.xml against the register map (ap_ctrl_hs at 0x00, arguments from 0x10),
  package_xo.tcl run to its end against the ipx stand-ins under every Tcl interpreter here, the
  packaged IP against ports.json and the Verilog, the connectivity of every compute unit, and the
  XRT host (the HLS face's) calling the kernel with kernel.xml's argument order, which is the HLS
  kernel's; the Verilog passes Verilator lint with the waivers.
- Zynq (zcu104: MPSoC; pynq-z2: Zynq-7000): package_ip.tcl and the block design run to their end
  against the stand-ins, and the design built is `zynq/board_plan.json`'s (every master on an HP
  port of a channel it reads, the control port at the recorded address, the registers at
  regmap.json's offsets); an across-query design gets one instance per pipeline.
What this does NOT show: that Vivado or v++ accept the scripts (they have not run in them here).
"""

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fanns.codegen.graph.hls import SCALARS, kernel_args
from fanns.codegen.graph.rtl import TOP, generate_graph_rtl
from fanns.design.graph_hw import QppHw
from fanns.index.graph import build_graph, graph_format_for
from fanns.model.graph.pinned import pinned_graph_design
from tests.codegen.kernel_checks import (
    INTERPRETERS,
    check_kernel_xml,
    check_lint,
    check_packaging,
    check_rtl_block_design,
)
from tests.tcl.run_tcl import interpreters


def graph_rtl(board: str, root: Path, mode: str = "intra", pipelines: int = 1, units: int = 2):
    base = np.random.default_rng(4).standard_normal((300, 16)).astype(np.float32)
    graph = build_graph(base, "hnsw", max_degree=16, fmt=graph_format_for(base))
    design = pinned_graph_design(
        graph,
        board=board,
        mode=mode,
        pipelines=pipelines,
        units=1 if mode == "across" else units,
        channels=2,
        l_max=32,
        k_max=5,
        bloom=(2, 2048),
    )
    generate_graph_rtl(design, graph, graph.fmt.quantize(base[:4]), root)
    return design


@pytest.fixture(scope="module")
def alveo(tmp_path_factory):
    root = tmp_path_factory.mktemp("graph-alveo") / "p"
    return root, graph_rtl("u250", root)


def test_kernel_xml_is_the_register_map_in_the_hls_kernels_argument_order(alveo):
    root, design = alveo
    kernel, regmap, ports = check_kernel_xml(root, TOP)
    names = [a.get("name") for a in kernel.find("args").findall("arg")]
    hls = [a.name for a in kernel_args(design, design.target_board())] + list(SCALARS)
    assert len(names) == len(hls)
    for rtl_name, hls_name in zip(names, hls):  # query_addr ~ queries, adj_addr0 ~ adj_0, nq ~ nq, ...
        assert re.sub(r"_?addr", "", rtl_name).rstrip("0123456789") in hls_name.replace("ies", "y").replace("_", "")
    pointers = QppHw(design).pointer_ports()
    for a in kernel.find("args").findall("arg"):
        assert a.get("port") == pointers.get(a.get("name"), "s_axi_control")
    assert ports["compute_units"] == 1 and set(ports["ports"]) == {
        "s_axi_control",
        "m_axi_io",
        "m_axi_list",
        "m_axi_vec0",
        "m_axi_vec1",
    }


@pytest.mark.parametrize("via", INTERPRETERS)
def test_packaging_scripts_run_to_the_end_and_build_the_ports_of_ports_json(alveo, via):
    if via not in interpreters():
        pytest.skip(f"no {via} on this machine (Debian packages: tcl for tclsh, python3-tk for tkinter)")
    root, design = alveo
    ip = check_packaging(root, TOP, design, via)
    assert "Falcon" in ip.core["description"]


def test_alveo_build_files_link_every_master_and_call_the_kernel_in_order(alveo):
    root, design = alveo
    ports = json.loads((root / "rtl" / "ports.json").read_text())["ports"]
    cfg = (root / "connectivity.cfg").read_text()
    assert f"nk={TOP}:1:{TOP}_1\n" in cfg and f"freqHz={round(design.clock_mhz * 1e6)}:{TOP}_1" in cfg
    assert "sp=fanns_falcon_qpp_1.m_axi_io:DDR[0]" in cfg
    for name in ("m_axi_list", "m_axi_vec0", "m_axi_vec1"):
        assert ports[name]["channels"] == [0, 1] and f"sp={TOP}_1.{name}:DDR[0:1]" in cfg
    makefile = (root / "Makefile").read_text()
    for target in ("xo", "hw_emu hw", "xclbin", "host", "run"):
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert "-source rtl/scripts/package_xo.tcl" in makefile and "--config connectivity.cfg" in makefile
    host = (root / "src" / "host.cpp").read_text()
    call = re.search(r"runs\.push_back\(krnl\(([^;]*)\)\);", host).group(1).split(", ")
    assert len(call) == len(check_kernel_xml(root, TOP)[0].find("args").findall("arg"))
    assert f'xrt::kernel krnl(device, uuid, "{TOP}")' in host
    readme = (root / "README.md").read_text()
    for command in ("make xo", "make hw_emu", "make run TARGET=hw_emu", "make hw", "make run TARGET=hw"):
        assert command in readme
    assert "have not run in Vivado" in readme


def test_xrt_host_passes_gcc_checks(alveo):
    """The graph RTL face's XRT host against the XRT API subset it uses (tests/codegen/xrt_api)."""
    root, _ = alveo
    xrt = Path(__file__).parent / "xrt_api"
    cmd = ["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{xrt}", f"-I{root / 'src'}"]
    check = subprocess.run([*cmd, str(root / "src" / "host.cpp")], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr


def test_verilog_passes_verilator_lint_with_the_waivers(alveo):
    check_lint(alveo[0], TOP)


@pytest.mark.parametrize(
    "board,mode,pipelines", [("zcu104", "intra", 1), ("pynq-z2", "intra", 1), ("zcu104", "across", 2)]
)
def test_zynq_block_design_instantiates_the_packaged_kernel(board, mode, pipelines, tmp_path):
    if not interpreters():
        pytest.skip("no Tcl interpreter: neither tclsh (Debian: tcl) nor Python's tkinter (Debian: python3-tk)")
    root = tmp_path / "p"
    design = graph_rtl(board, root, mode, pipelines)
    check_rtl_block_design(root, TOP, design.clock_mhz, pipelines)
    assert not (root / "src" / "host.cpp").exists()
    readme = (root / "README.md").read_text()
    assert "make ip" in readme and "make bit" in readme and "have not run in Vivado" in readme
