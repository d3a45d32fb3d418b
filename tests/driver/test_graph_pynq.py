"""The pynq backend of graph projects, checked without a board: which IPs it takes from a
generated project's `zynq/board_plan.json` and an overlay's `ip_dict` (data shaped like pynq's),
where each buffer goes on Alveo (HBM, DDR) and Zynq (PS DDR) boards, and that the register words
it writes for a batch are those the RTL simulation bench writes (`FalconRtl.run`, `FalconAcrossRtl.run`).
On a board (pynq installed, FANNS_GRAPH_BITSTREAM set) it searches and must match the reference."""

import importlib.util
import json
import os

import numpy as np
import pytest

import fanns.driver
from fanns.codegen.graph.hls import generate_graph_hls
from fanns.codegen.graph.rtl import TOP, generate_graph_rtl, read_project
from fanns.design.graph_hw import QppHw
from fanns.driver.graph_pynq import batch_registers, graph_buffers, graph_ips, graph_regmap, graph_writes
from fanns.driver.project import Bank, read_board_plan
from fanns.driver.pynq_overlay import place
from fanns.errors import FannsError
from fanns.index.graph import build_graph, graph_format_for
from fanns.model.graph.pinned import pinned_graph_design
from fanns.sim.graph.across_rtl import FalconAcrossRtl, bank_words
from fanns.sim.graph.rtl import FalconRtl, image_register, memory_words

NO_PYNQ = importlib.util.find_spec("pynq") is None


@pytest.fixture(scope="module")
def graph():
    base = np.random.default_rng(4).standard_normal((300, 16)).astype(np.float32)
    return build_graph(base, "hnsw", max_degree=16, fmt=graph_format_for(base)), base


@pytest.fixture(scope="module")
def make(graph, tmp_path_factory):
    """A generated graph project (face, board, mode, pipelines), made once per module."""
    made = {}

    def project(face: str, board: str, mode: str = "intra", pipelines: int = 1):
        key = (face, board, mode, pipelines)
        if key not in made:
            g, base = graph
            design = pinned_graph_design(
                g,
                board=board,
                mode=mode,
                pipelines=pipelines,
                units=1,
                channels=2,
                l_max=16,
                k_max=5,
                bloom=(2, 2048),
                limits=(2, 2),
            )
            out = tmp_path_factory.mktemp("graph-pynq") / "_".join(map(str, key))
            generate = generate_graph_rtl if face == "rtl" else generate_graph_hls
            generate(design, g, g.fmt.quantize(base[:4]), out)
            made[key] = out
        return made[key]

    return project


def ports_banks(path) -> dict[str, Bank]:
    """Buffer -> bank as the generator's rtl/ports.json wires the masters (an independent record)."""
    ports = json.loads((path / "rtl" / "ports.json").read_text())["ports"]
    io, lists, vecs = ports["m_axi_io"], ports["m_axi_list"], ports["m_axi_vec0"]
    out = {"queries": Bank(io["memory"], io["channel"]), "results": Bank(io["memory"], io["channel"])}
    for c, ch in enumerate(lists["channels"]):
        out[f"adjacency_{c}"] = Bank(lists["memory"], ch)
        out[f"vectors_{c}"] = Bank(vecs["memory"], vecs["channels"][c])
    return out


@pytest.mark.parametrize(
    "board,memories,name",
    [
        ("u55c", [f"HBM[{i}]" for i in range(32)], "HBM[{}]"),
        ("u55c", [f"HBM{i}" for i in range(32)], "HBM{}"),
        ("u250", [f"bank{i}" for i in range(4)], "bank{}"),
        ("u250", [f"DDR[{i}]" for i in range(4)], "DDR[{}]"),
    ],
)
def test_alveo_buffers_go_to_the_banks_ports_json_wires(make, board, memories, name):
    path = make("rtl", board)
    data = read_project(path)
    sizes = graph_buffers(data.design, data.images, 32)
    expected = ports_banks(path)
    assert {n: bank for n, (bank, _) in sizes.items()} == expected
    assert len({b.channel for b in expected.values()}) == 2  # the two graph channels really differ
    assert place({n: b for n, (b, _) in sizes.items()}, memories, board) == {
        n: name.format(b.channel) for n, b in expected.items()
    }
    io = data.images.io
    assert sizes["queries"][1] >= 32 * io.query_row_bytes and sizes["results"][1] >= 32 * io.result_row_bytes
    for img in data.images.images:
        assert sizes[img.name][1] >= img.nbytes and sizes[img.name][1] % 4096 == 0


def test_a_board_without_the_banks_is_refused_before_allocating(make):
    path = make("rtl", "u55c")
    data = read_project(path)
    banks = {n: b for n, (b, _) in graph_buffers(data.design, data.images, 8).items()}
    with pytest.raises(FannsError, match=r"no memory bank hbm\[") as err:
        place(banks, ["bank0", "bank1"], "u55c")
    assert "u55c" in err.value.hint


def test_zynq_buffers_all_go_to_the_ps_ddr(make):
    path = make("rtl", "zcu104")
    data = read_project(path)
    banks = {n: b for n, (b, _) in graph_buffers(data.design, data.images, 8).items()}
    assert {b.memory for b in banks.values()} == {"ps-ddr4"}
    assert place(banks, [], "zcu104") == dict.fromkeys(banks)  # pynq.allocate's default memory, no target


def overlay_of(plan: dict, shift: int = 0) -> dict:
    """An `ip_dict` as pynq builds it from a .hwh of this block design (plus the PS and a stray IP)."""
    ips = {i["name"]: {"phys_addr": i["base_address"] + shift, "registers": {}} for i in plan["instances"]}
    return ips | {"ps": {"phys_addr": None}, "axi_gpio_0": {"phys_addr": 0x41200000}}


@pytest.mark.parametrize("face", ["rtl", "hls"])
def test_zynq_ips_are_the_block_designs_instances_at_their_addresses(make, face):
    path = make(face, "zcu104", "across", 2)
    design = read_project(path).design
    plan = read_board_plan(path)
    regmap = graph_regmap(path, face, design)
    names = [i["name"] for i in plan["instances"]]
    assert names == [f"{TOP}_1", f"{TOP}_2"]
    assert plan["instances"][1]["base_address"] != plan["instances"][0]["base_address"]
    assert graph_ips(plan, overlay_of(plan), regmap, 2) == names
    with pytest.raises(FannsError, match="block design assigned"):
        graph_ips(plan, overlay_of(plan, 0x10000), regmap, 2)
    without = overlay_of(plan)
    del without[names[1]]
    with pytest.raises(FannsError, match=f"no IP {names[1]}"):
        graph_ips(plan, without, regmap, 2)
    other = QppHw(design).regmap if face == "hls" else graph_regmap(make("hls", "zcu104", "across", 2), "hls", design)
    with pytest.raises(FannsError, match="disagree on the register offsets"):
        graph_ips(plan, overlay_of(plan), other, 2)


def test_alveo_ips_are_the_compute_units(make):
    path = make("rtl", "u250", "across", 2)
    design = read_project(path).design
    regmap = graph_regmap(path, "rtl", design)
    ip_dict = {f"{TOP}_2": {}, f"{TOP}_1": {}, "axi_intc_0": {}}
    assert graph_ips(None, ip_dict, regmap, 2) == [f"{TOP}_1", f"{TOP}_2"]
    with pytest.raises(FannsError, match=f"1 IPs named {TOP}"):
        graph_ips(None, {f"{TOP}_1": {}}, regmap, 2)


class Recorder:
    """Stands in for the bench's simulator (`GraphBench`, fanns's own): records what `run` would
    program and returns zero result rows, so the bench's layout is read without a Verilator build."""

    def __init__(self, build_dir):
        self.build_dir = build_dir
        self.params = None

    def run(self, params):
        self.params = params
        np.save(params["out"], np.zeros(params["result"][1], dtype=np.uint8))
        several = isinstance(params["regs"], list)
        zero = [0] * len(params["regs"]) if several else 0
        return {"status": zero, "cycles": zero, "sim_cycles": 0}


def bench_words(params) -> list[dict[int, int]]:
    """The 32-bit words the bench's host writes (`fanns.sim.compiled.Csr.write`: a 64-bit register
    as low then high word), per QPP, computed from the offsets and widths the bench is given."""
    sets = params["regs"] if isinstance(params["regs"], list) else [params["regs"]]
    out = []
    for regs in sets:
        words = {}
        for name, value in regs.items():
            offset, width = params["offsets"][name]
            for i in range(0, width, 32):
                words[offset + i // 8] = (value >> i) & 0xFFFFFFFF
        out.append(words)
    return out


def addresses_of(regs: dict, images) -> dict[str, int]:
    """The buffer addresses the bench chose, read back from its registers."""
    out = {"queries": regs["query_addr"], "results": regs["result_addr"]}
    return out | {img.name: regs[image_register(img.name)] for img in images.images}


def test_the_board_gets_the_register_words_of_the_rtl_bench(make, tmp_path):
    path = make("rtl", "u55c")
    data = read_project(path)
    nq = len(data.queries_fx)
    rtl = FalconRtl(
        data.design, tmp_path, memory_words(data.images, nq), kernel=(path / "rtl" / f"{TOP}.v").read_text()
    )
    rtl.sim = Recorder(tmp_path)
    runtime = data.design.runtime
    rtl.run(data.images, data.queries_fx, runtime)
    bench = rtl.sim.params["regs"]
    ours = batch_registers(data.design, runtime, data.images, nq, addresses_of(bench, data.images))
    assert ours == [bench]
    assert bench["nq"] == nq and bench["l"] == runtime.l and bench["gie"] == 1
    regmap = graph_regmap(path, "rtl", data.design)
    assert [dict(graph_writes(regmap, regs)) for regs in ours] == bench_words(rtl.sim.params)


def test_across_units_get_the_registers_of_the_across_bench(make, tmp_path):
    path = make("rtl", "u55c", "across", 2)
    data = read_project(path)
    nq = len(data.queries_fx)
    rtl = FalconAcrossRtl(data.design, tmp_path, bank_words(data.images, nq))
    rtl.sim = Recorder(tmp_path)
    rtl.run(data.images, data.queries_fx, data.design.runtime)
    bench = rtl.sim.params["regs"]
    ours = batch_registers(data.design, data.design.runtime, data.images, nq, addresses_of(bench[0], data.images))
    assert ours == bench and [r["nq"] for r in ours] == [2, 2]
    regmap = graph_regmap(path, "rtl", data.design)
    assert [dict(graph_writes(regmap, regs)) for regs in ours] == bench_words(rtl.sim.params)


def test_hls_face_words_land_at_the_vitis_offsets_of_its_record(make):
    """The HLS kernel's argument names and offsets (zynq/board_plan.json records them) differ from
    the RTL face's; each value of the bench's registers goes to the HLS register of the same role."""
    path = make("hls", "zcu104")
    data = read_project(path)
    plan = read_board_plan(path)["registers"]
    addresses = {"queries": 0x1000, "results": 0x9000} | {
        img.name: 0x100000 * (i + 1) for i, img in enumerate(data.images.images)
    }
    (regs,) = batch_registers(data.design, data.design.runtime, data.images, 3, addresses)
    words = dict(graph_writes(graph_regmap(path, "hls", data.design), regs))
    assert words[plan["queries"]] == 0x1000 and words[plan["queries"] + 4] == 0
    assert words[plan["results"]] == 0x9000
    assert words[plan["adj_1"]] == addresses["adjacency_1"] and words[plan["vec_0"]] == addresses["vectors_0"]
    assert words[plan["nq"]] == 3 and words[plan["mc"]] == data.design.runtime.mc
    assert words[0x04] == 1 and words[0x08] == 1  # GIE, IER of the ap_ctrl_hs block


def test_fewer_queries_than_units_leave_the_last_unit_idle(make):
    data = read_project(make("rtl", "u250", "across", 2))
    addresses = {"queries": 0, "results": 0x1000} | {img.name: 0 for img in data.images.images}
    (only,) = batch_registers(data.design, data.design.runtime, data.images, 1, addresses)
    assert only["nq"] == 1


@pytest.mark.skipif(not NO_PYNQ, reason="pynq is installed here")
def test_graph_pynq_without_pynq_names_the_extra(make):
    with pytest.raises(FannsError, match="needs the pynq package and a board") as err:
        fanns.driver.open(make("rtl", "zcu104"), backend="pynq")
    assert "pip install fanns[pynq]" in err.value.hint


def test_a_graph_root_without_a_built_face_says_which_to_build(make, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "rtl").symlink_to(make("rtl", "zcu104"), target_is_directory=True)
    with pytest.raises(FannsError, match="no face has a built bitstream"):
        fanns.driver.open(root, backend="pynq")


@pytest.mark.skipif(
    NO_PYNQ, reason="pynq is not installed (pip install fanns[pynq]) and the pynq backend needs a board"
)
def test_graph_pynq_on_a_board(make):  # pragma: no cover - needs hardware
    project = os.environ.get("FANNS_GRAPH_PROJECT")
    if not project:
        pytest.skip("set FANNS_GRAPH_PROJECT to a graph project whose bitstream was built for this board")
    data = read_project(project)
    queries = data.queries_fx.astype(np.float32) / data.design.fmt.scale  # the test queries, as the user has them
    with fanns.driver.open(project, backend="pynq") as acc:
        assert np.array_equal(acc.quantize(queries), data.queries_fx)
        assert np.array_equal(acc.search_keys(queries), data.keys)  # the DST reference, recorded by the generator
