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
from pathlib import Path

import numpy as np
import pytest

from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.driver.ivfpq.plan import Interface
from fanns.driver.ivfpq.project import Project
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design
from tests.codegen.kernel_checks import INTERPRETERS, check_kernel_xml, check_lint, check_packaging, kernel_xml
from tests.codegen.test_tiers import skewed  # noqa: F401  (a tiered design)
from tests.driver.conftest import projects  # noqa: F401  (one HLS and one RTL project of one design)
from tests.tcl.run_tcl import TclError, interpreter, interpreters, run_script


@pytest.fixture(scope="module", params=["plain", "tiered", "streamed"])
def rtl(request, tmp_path_factory):
    """A copy of an RTL project (the scripts make build folders): the driver tests' design, a
    tiered design (`m_axi_hot<c>` ports, the `tiers_addr` and `hot<c>_addr` arguments) and a design
    with streamed IVF centroids on two channels (`m_axi_ivf<c>` ports, `ivf<c>_addr` arguments)."""
    dest = tmp_path_factory.mktemp("kernel") / "rtl"
    if request.param == "plain":
        shutil.copytree(request.getfixturevalue("projects").rtl, dest, symlinks=True)
    elif request.param == "streamed":
        data = random_index(nlist=40, n=600, d=32, m=8)
        design = pinned_design(data, random_format(32, 8), nprobe=3, k=10, ivf=(5, 4, "stream"), pq=(3, 2))
        assert [ch.use for ch in design.memory].count("ivf_centroids") == 2
        generate_rtl(design, data, TestQueries(np.zeros((4, 32), np.float32), np.zeros((4, 10), np.int64)), dest)
    else:
        skewed = request.getfixturevalue("skewed")
        test = TestQueries(skewed["queries"](4, 2), np.zeros((4, 10), np.int64))
        generate_rtl(skewed["tiered"], skewed["data"], test, dest)
    return dest


def test_kernel_xml_offsets_are_the_register_maps_and_the_drivers(rtl):
    kernel, regmap, ports = check_kernel_xml(rtl, "fanns_ivfpq")
    iface = Interface(Project.open(rtl))
    args = kernel.find("args").findall("arg")
    written = set()
    for a in args:
        name, offset, size = a.get("name"), int(a.get("offset"), 16), int(a.get("size"), 16)
        assert [off for off, _ in iface.encode(name, 1)] == [offset + 4 * i for i in range(size // 4)]
        channel = re.fullmatch(r"(pq|hot|ivf)(\d+)_addr", name)
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


@pytest.mark.parametrize("via", INTERPRETERS)
def test_packaging_scripts_run_to_the_end_and_build_the_ports_of_ports_json(rtl, via):
    if via not in interpreters():
        pytest.skip(f"no {via} on this machine (Debian packages: tcl for tclsh, python3-tk for tkinter)")
    check_packaging(rtl, "fanns_ivfpq", Project.open(rtl).design, via)


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
    check_lint(rtl, "fanns_ivfpq")
