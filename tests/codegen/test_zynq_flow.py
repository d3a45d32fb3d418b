"""The Zynq road of the HLS faces (IVF-PQ and graph) on every Zynq board: the generated
vitis_hls and Vivado block-design scripts run to their end under a real Tcl interpreter against
the stand-ins of tests/tcl/, and the design they build is the one `zynq/board_plan.json` records
and the driver uses — every memory port on the HP port of its channel, the control port at the
address and with the register offsets the pynq backend checks, every clock at the DSE's clock.
No vendor tool runs here: this checks the scripts' logic and names, not Vivado's acceptance."""

import json
import re
import sys
import types

import numpy as np
import pytest

from fanns.boards import list_boards, load_board, parse_board
from fanns.codegen.block_design import PLAN_FILE, MemoryPort, board_plan
from fanns.codegen.graph.hls import generate_graph_hls
from fanns.codegen.graph.rtl import read_project
from fanns.codegen.ivfpq.hls import TestQueries, generate_hls
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.driver.graph_pynq import graph_buffers, graph_ips, graph_regmap
from fanns.driver.ivfpq.accelerator import Accelerator
from fanns.driver.ivfpq.plan import Interface
from fanns.driver.ivfpq.project import Project
from fanns.driver.ivfpq.pynq_backend import PynqBackend, zynq_ip
from fanns.driver.project import Bank
from fanns.driver.pynq_overlay import place
from fanns.errors import FannsError
from fanns.hdl.regmap import vitis_hls_regmap
from fanns.index.graph import build_graph, graph_format_for
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.graph.pinned import pinned_graph_design
from fanns.model.ivfpq.pinned import pinned_design
from fanns.processing_systems import PS_KINDS
from tests.codegen.kernel_checks import check_rtl_block_design
from tests.tcl_standins import VITIS_HLS, VIVADO, BlockDesignRecord, interpreters, run_tcl

ZYNQ = sorted(b.name for b in list_boards() if b.platform is None)


def ivfpq_project(board, root):
    data = random_index(d=32, m=8, opq=True, seed=3)
    design = pinned_design(
        data, random_format(32, 8), board=board, nprobe=4, k=7, ivf=(3, 8, "bram"), lut=(2, 8, "bram"), pq=(5, 2)
    )
    rng = np.random.default_rng(3)
    test = TestQueries(rng.standard_normal((8, 32)).astype(np.float32), np.zeros((8, 7), np.int64))
    generate_hls(design, data, test, root)
    return design


def graph_project(board, root, mode="intra", pipelines=1):
    base = np.random.default_rng(4).standard_normal((300, 16)).astype(np.float32)
    graph = build_graph(base, "hnsw", max_degree=16, fmt=graph_format_for(base))
    design = pinned_graph_design(
        graph, board=board, mode=mode, pipelines=pipelines, channels=2, l_max=32, k_max=5, bloom=(2, 2048)
    )
    generate_graph_hls(design, graph, graph.fmt.quantize(base[:4]), root)
    return design


CASES = [(b, "ivfpq") for b in ZYNQ] + [("zcu104", "graph"), ("pynq-z2", "graph"), ("kv260", "graph-across")]
IVFPQ_CASES = pytest.mark.parametrize(
    "built", [c for c in CASES if c[1] == "ivfpq"], ids=lambda c: f"{c[0]}-{c[1]}", indirect=True
)
"""The IVF-PQ driver's tests run on the IVF-PQ cases only; the graph driver's on the graph cases."""
GRAPH_CASES = pytest.mark.parametrize(
    "built", [c for c in CASES if c[1] != "ivfpq"], ids=lambda c: f"{c[0]}-{c[1]}", indirect=True
)


@pytest.fixture(scope="module", params=CASES, ids=[f"{b}-{k}" for b, k in CASES])
def built(request, tmp_path_factory):
    """A project, its plan, and the records of its two scripts run one after the other."""
    board, kind = request.param
    root = tmp_path_factory.mktemp(f"zynq-{board}-{kind}") / "p"
    if kind == "ivfpq":
        design = ivfpq_project(board, root)
    else:
        design = graph_project(board, root, *(("across", 2) if kind == "graph-across" else ()))
    plan = json.loads((root / PLAN_FILE).read_text())
    hls = run_tcl(VITIS_HLS, root / "zynq" / "vitis_hls.tcl")
    bd = BlockDesignRecord(run_tcl(VIVADO, root / "zynq" / "block_design.tcl"))
    return {
        "kind": kind,
        "root": root,
        "design": design,
        "board": load_board(board),
        "plan": plan,
        "hls": hls,
        "bd": bd,
    }


def test_zynq_boards_carry_a_block_design():
    assert set(ZYNQ) == {"kv260", "pynq-z2", "zcu102", "zcu104"}
    for name in ZYNQ:
        b = load_board(name)
        bd = b.block_design
        assert bd is not None and bd.ps in PS_KINDS, name
        assert {g.kind for g in b.memory if g.kind.startswith("ps-")} == set(bd.hp_ports), name
        assert any(bd.board_part in s for s in b.sources), f"{name}: the board part's source is not recorded"
    assert load_board("u55c").block_design is None


@pytest.mark.parametrize(
    "key,value,message",
    [
        ("ps", "zynq_ps9", "block_design.ps"),
        ("board_part", "xilinx.com:zcu104 ; rm", "block_design.board_part"),
        ("pl_clock", "FCLK_CLK0", "block_design.pl_clock"),
        ("control_port", "M_AXI_GP0", "block_design.control_port"),
        ("hp_ports", {"ps-ddr4": ["S_AXI_HP0_FPD"]}, "must list 4 HP ports"),
        ("hp_ports", {"ps-ddr4": ["S_AXI_HP0_FPD"] * 4}, "uses an HP port twice"),
        ("hp_ports", {"pl-ddr4": ["S_AXI_HP0_FPD"]}, "names no memory group"),
        ("hp_ports", {"ps-ddr4": ["S_AXI_HP0", "S_AXI_HP1", "S_AXI_HP2", "S_AXI_HP3"]}, "not a port of"),
    ],
)
def test_bad_block_design_entries_are_refused(key, value, message, tmp_path):
    spec = json.loads(json.dumps(load_board("zcu104").spec))
    spec["block_design"][key] = value
    with pytest.raises(FannsError, match=re.escape(message)):
        parse_board(tmp_path / "b.yaml", spec)


def test_vitis_hls_script_exports_the_kernel_at_the_dse_clock(built):
    plan, facts, design = built["plan"], built["hls"], built["design"]
    got = {f[0]: f[1:] for f in facts}
    assert got["top"] == [plan["top"]]
    assert got["solution"][1] == "vivado"
    assert got["part"] == [built["board"].part]
    assert float(got["clock"][0]) == pytest.approx(1000.0 / design.clock_mhz)
    assert got["export"] == [plan["ip_vlnv"]]
    assert [f[0] for f in facts][-1] == "exit"
    # the interfaces Vitis HLS would give the IP (read from the kernel's pragmas) are the plan's
    interfaces = set(got["csynth"][1:])
    assert interfaces == {p["interface"] for p in plan["memory_ports"]} | {plan["control"]["interface"]}


def test_block_design_wires_every_memory_port_to_the_hp_port_of_its_channel(built):
    plan, bd, board = built["plan"], built["bd"], built["board"]
    assert bd.cells[plan["ps"]["instance"]].startswith(PS_KINDS[board.block_design.ps].vlnv)
    insts = [i["name"] for i in plan["instances"]]
    assert [c for c, v in bd.cells.items() if v == plan["ip_vlnv"]] == insts
    assert len(insts) == (2 if built["kind"] == "graph-across" else 1)
    for inst in insts:
        for port in plan["memory_ports"]:
            hp = board.block_design.hp_ports[port["memory"]][port["channel"]]
            assert port["hp_port"] == hp
            assert bd.reaches(f"{inst}/{port['interface']}", f"ps/{hp}"), (inst, port)
            other = set(board.block_design.hp_ports[port["memory"]]) - {hp}
            assert not any(bd.reaches(f"{inst}/{port['interface']}", f"ps/{o}") for o in other)
    # every memory channel the design uses has its HP port enabled at the group's width
    widths = {g.kind: g.port_bits for g in board.memory}
    for port in plan["memory_ports"]:
        spec = PS_KINDS[board.block_design.ps].hp_ports[port["hp_port"]]
        assert bd.config["ps"][spec.enable] == "1"
        assert bd.config["ps"][spec.width] == str(widths[port["memory"]])


@IVFPQ_CASES
def test_block_design_memory_ports_are_where_the_driver_places_the_buffers(built):
    iface = Interface(Project.open(built["root"]))
    for port in built["plan"]["memory_ports"]:
        for arg in port["args"]:
            assert iface.banks[arg] == Bank(port["memory"], port["channel"])
    assert set(iface.banks) == {a for p in built["plan"]["memory_ports"] for a in p["args"]}
    assert built["plan"]["registers"] == {r.name: r.offset for r in iface.regmap.registers}


def test_control_port_is_at_the_address_the_driver_checks(built):
    plan, bd, board = built["plan"], built["bd"], built["board"]
    ctrl = plan["control"]["interface"]
    master = board.block_design.control_port
    window = PS_KINDS[board.block_design.ps].masters[master].window
    assert bd.config["ps"][PS_KINDS[board.block_design.ps].masters[master].enable] == "1"
    recorded = {seg.split("/")[0]: (space, offset, rng) for space, seg, offset, rng in bd.addresses}
    for i, inst in enumerate(plan["instances"]):
        assert bd.reaches(f"ps/{master}", f"{inst['name']}/{ctrl}")
        space, offset, rng = recorded[inst["name"]]
        assert (space, offset, rng) == ("ps/Data", window + i * 0x10000, "64K")
        assert offset == inst["base_address"]
    assert "assign_all" in bd.kinds()  # every memory master gets the PS DDR segments
    # the driver's check of a built overlay accepts exactly what the script assigned
    regs = vitis_hls_regmap(plan["top"], [], [])
    plan_regs = {**plan, "registers": {r.name: r.offset for r in regs.registers}}
    first = plan["instances"][0]["name"]
    overlay = {first: {"phys_addr": recorded[first][1]}}
    assert zynq_ip(plan_regs, overlay, regs) == first
    with pytest.raises(FannsError, match="block design assigned"):
        zynq_ip(plan_regs, {first: {"phys_addr": recorded[first][1] + 0x10000}}, regs)


def test_block_design_clocks_and_resets(built):
    plan, bd, design = built["plan"], built["bd"], built["design"]
    ps = plan["ps"]
    assert float(bd.config["ps"][ps["clock_property"]]) == design.clock_mhz
    assert bd.config["ps"][ps["clock_enable"]] == "1"
    clock_net = set(bd.net_of(f"ps/{ps['clock_pin']}"))
    for cell, vlnv in bd.cells.items():
        if vlnv == plan["ip_vlnv"]:
            assert f"{cell}/ap_clk" in clock_net
            assert f"{cell}/ap_rst_n" in bd.net_of("rst_ps/peripheral_aresetn")
        if "smartconnect" in vlnv:
            assert f"{cell}/aclk" in clock_net and f"{cell}/aresetn" in bd.net_of("rst_ps/interconnect_aresetn")
    for hp in ps["hp"].values():
        assert f"ps/{hp['clock']}" in clock_net
    assert f"ps/{ps['control_clock']}" in clock_net
    assert f"ps/{ps['reset_pin']}" in bd.net_of("rst_ps/ext_reset_in")


def test_block_design_ends_with_the_bitstream_and_hwh_side_by_side(built):
    plan, bd, root = built["plan"], built["bd"], built["root"]
    kinds = bd.kinds()
    for step in ("assign_all", "validate", "save", "wrapper", "launch", "wait"):
        assert step in kinds
    assert kinds.index("validate") < kinds.index("launch")
    assert ["impl_1", "write_bitstream"] in [f[1:] for f in bd.facts if f[0] == "launch"]
    bit, hwh = root / plan["bitstream"], root / plan["hwh"]
    assert bit.is_file() and hwh.is_file() and bit.parent == hwh.parent and bit.stem == hwh.stem == plan["top"]
    makefile = (root / "Makefile").read_text()
    assert f"BIT := {plan['bitstream']}\n" in makefile and f"HWH := {plan['hwh']}\n" in makefile
    assert f"IP := {plan['ip_repo']}/component.xml\n" in makefile
    assert re.search(r"^ip: \$\(IP\)$", makefile, re.M) and re.search(r"^bit bitstream: ", makefile, re.M)
    assert "v++" not in makefile and not (root / "connectivity.cfg").exists()


def test_every_tcl_interpreter_builds_the_same_design(built, tmp_path):
    """tclsh and Python's tkinter.Tcl run the scripts alike (CI may have only one of them)."""
    found = interpreters()
    if len(found) < 2:
        pytest.skip(f"only {found[0]} here")
    records = [run_tcl(VIVADO, built["root"] / "zynq" / "block_design.tcl", i) for i in found]
    assert records[0] == records[1] == built["bd"].facts


def test_the_standins_catch_a_wrong_property_and_a_missing_ip(built, tmp_path):
    """The checks can fail: an HP port enabled under a wrong CONFIG name leaves the PS without
    that port; an IP repository without the exported kernel has no accelerator to instantiate."""
    script = (built["root"] / "zynq" / "block_design.tcl").read_text()
    port = built["plan"]["memory_ports"][0]["hp_port"]
    spec = PS_KINDS[built["board"].block_design.ps].hp_ports[port]
    bad = built["root"] / "zynq" / "bad_property.tcl"
    bad.write_text(script.replace(f"CONFIG.{spec.enable} {{1}}", f"CONFIG.{spec.enable}X {{1}}"))
    with pytest.raises(AssertionError, match=f"has no (interface )?pin ({port}|{spec.clock});"):
        run_tcl(VIVADO, bad)
    missing = built["root"] / "zynq" / "bad_repo.tcl"
    missing.write_text(script.replace(built["plan"]["ip_repo"], "build/elsewhere"))
    with pytest.raises(AssertionError, match="holds no exported IP"):
        run_tcl(VIVADO, missing)


def test_a_memory_without_hp_port_is_refused():
    board = load_board("zcu102")
    regs = vitis_hls_regmap("k", ["a"], [])
    with pytest.raises(FannsError, match="reaches only ps-ddr4 through HP ports"):
        board_plan(
            board,
            face="hls",
            top="k",
            clock_mhz=100,
            memory_ports=[MemoryPort("m_axi_x", "pl-ddr4", 0, ("a",))],
            regmap=regs,
            control="s_axi_control",
            ip_repo="ip",
        )
    with pytest.raises(FannsError, match="has no block_design"):
        board_plan(
            load_board("u55c"),
            face="hls",
            top="k",
            clock_mhz=100,
            memory_ports=[],
            regmap=regs,
            control="s_axi_control",
            ip_repo="ip",
        )


@IVFPQ_CASES
def test_pynq_backend_opens_the_zynq_build_by_its_instance_name(built, monkeypatch):
    """The backend with a stand-in pynq module on the stand-in build: it loads the .bit the block
    design wrote, reaches the IP by the plan's instance name at the assigned address, allocates in
    the PS DDR (no target), and refuses an overlay whose IP sits elsewhere."""
    plan = built["plan"]
    inst = plan["instances"][0]
    regs = {
        r.name: {"address_offset": r.offset}
        for r in Interface(Project.open(built["root"])).regmap.registers
        if not r.name.startswith("ap_")
    }
    loaded, targets = [], []

    class FakeBuffer(np.ndarray):
        device_address = 0x1000

    def allocate(shape, dtype, **kwargs):
        targets.append(kwargs.get("target"))
        return np.zeros(shape, dtype).view(FakeBuffer)

    for addr, ok in ((inst["base_address"], True), (inst["base_address"] + 0x10000, False)):

        def overlay(path, addr=addr):
            loaded.append(path)
            return types.SimpleNamespace(
                mem_dict={},
                ip_dict={inst["name"]: {"phys_addr": addr, "registers": regs}},
                **{inst["name"]: types.SimpleNamespace()},
            )

        monkeypatch.setitem(sys.modules, "pynq", types.SimpleNamespace(Overlay=overlay, allocate=allocate))
        if not ok:
            with pytest.raises(FannsError, match="block design assigned"):
                Accelerator(Project.open(built["root"]), PynqBackend())
            continue
        acc = Accelerator(Project.open(built["root"]), PynqBackend(), batch=4)
        for buf, _ in acc.plan():
            acc.backend.allocate(buf)
        assert targets and all(t is None for t in targets)
    assert loaded[0] == str(built["root"] / plan["bitstream"])


@pytest.mark.parametrize(
    ("ivf", "pq"), [((2, 16, "bram"), (4, 2)), ((2, 4, "stream"), (4, 1))], ids=["on-chip", "streamed"]
)
@pytest.mark.parametrize("board", ["pynq-z2"])  # the Zynq-7000 PS; the MPSoC is covered by the HLS cases
def test_rtl_face_block_design_instantiates_the_packaged_ip(board, ivf, pq, tmp_path):
    """The RTL face's Zynq road as `generate-rtl` writes it: a Makefile whose `ip` runs
    rtl/scripts/package_ip.tcl and whose `bit` runs the block design, which finds that IP in
    rtl/build/ip (here a stand-in's record of the interfaces the packaging declares: s_axi_control
    and one AXI4 master per ports.json port) and wires it as it wires an HLS kernel; with streamed
    IVF centroids, their `m_axi_ivf0` master too."""
    data = random_index(d=32, m=8, seed=6)
    design = pinned_design(data, random_format(32, 8), board=board, nprobe=3, k=5, ivf=ivf, pq=pq)
    test = TestQueries(np.zeros((2, 32), np.float32), np.zeros((2, 5), np.int64))
    root = tmp_path / "p"
    generate_rtl(design, data, test, root)
    check_rtl_block_design(root, "fanns_ivfpq", design.clock_mhz)
    masters = json.loads((root / "rtl" / "ports.json").read_text())["ports"]
    assert ("m_axi_ivf0" in masters) == (ivf[2] == "stream")


@GRAPH_CASES
def test_graph_driver_reaches_every_instance_where_the_script_put_it(built):
    """The graph driver's pynq backend accepts exactly the instances and base addresses the block
    design script assigned (every compute unit of an across-query design), with the register
    offsets of the record, and places every buffer in the PS DDR the memory ports reach."""
    plan, bd, root, design = built["plan"], built["bd"], built["root"], built["design"]
    recorded = {seg.split("/")[0]: offset for _, seg, offset, _ in bd.addresses}
    names = [inst["name"] for inst in plan["instances"]]
    overlay = {name: {"phys_addr": recorded[name]} for name in names}
    regmap = graph_regmap(root, "hls", design)
    assert graph_ips(plan, overlay, regmap, len(names)) == names
    moved = {**overlay, names[-1]: {"phys_addr": recorded[names[-1]] + 0x10000}}
    with pytest.raises(FannsError, match="block design assigned"):
        graph_ips(plan, moved, regmap, len(names))
    buffers = {name: bank for name, (bank, _) in graph_buffers(design, read_project(root).images, 8).items()}
    hls_arg = {"queries": "queries", "results": "results", "adjacency": "adj", "vectors": "vec"}
    for name, bank in buffers.items():
        kind, _, c = name.partition("_")
        arg = f"{hls_arg[kind]}_{c}" if c else kind
        (port,) = [p for p in plan["memory_ports"] if arg in p["args"]]
        assert (port["memory"], port["channel"]) == (bank.memory, bank.channel), name
    assert place(buffers, [], plan["board"]) == dict.fromkeys(buffers)
