"""The graph RTL project writer: deterministic files, data read back as written, port map matching
the Verilog, and input errors reported as FannsError (simulation: tests/sim/test_falcon_rtl.py)."""

import json

import numpy as np
import pytest

from fanns.cli import main
from fanns.codegen.graph.rtl import TOP, generate_graph_rtl, is_graph_project, read_project
from fanns.errors import FannsError
from fanns.images.graph import unpack
from fanns.model.graph.pinned import pinned_graph_design
from fanns.reference.graph import STATS, reference


@pytest.fixture(scope="module")
def small(synthetic):
    g = synthetic["graphs"]["nsg"]
    design = pinned_graph_design(
        g, units=2, channels=2, l_max=32, k_max=8, bloom=(2, 2 * 4096), limits=(4, 2), runtime=(24, 8, 4, 2)
    )
    return g, design, g.fmt.quantize(synthetic["queries"][:5])


def test_project_is_deterministic_and_reads_back(small, tmp_path):
    g, design, q = small
    a = generate_graph_rtl(design, g, q, tmp_path / "a")
    b = generate_graph_rtl(design, g, q, tmp_path / "b")
    assert a.files == b.files
    for rel in a.files:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    assert is_graph_project(tmp_path / "a") and not is_graph_project(tmp_path)
    data = read_project(tmp_path / "a")
    assert np.array_equal(data.queries_fx, q) and data.design == design and data.groundtruth is None
    back = unpack(data.images, design)
    assert np.array_equal(back.neighbors, g.neighbors) and np.array_equal(back.vectors, g.vectors)
    ref = reference(design, g, q)
    assert np.array_equal(data.keys, ref.keys)
    for s in STATS:
        assert np.array_equal(data.stats[s], ref.stats[s])
    assert np.all(data.keys[:, :8] != np.uint64(2**64 - 1))


def test_port_map_matches_the_verilog(small, tmp_path):
    g, design, q = small
    generate_graph_rtl(design, g, q, tmp_path / "p")
    verilog = (tmp_path / "p" / "rtl" / f"{TOP}.v").read_text()
    ports = json.loads((tmp_path / "p" / "rtl" / "ports.json").read_text())["ports"]
    assert set(ports) == {"s_axi_control", "m_axi_io", "m_axi_list", "m_axi_vec0", "m_axi_vec1"}
    header = verilog[verilog.index(f"module {TOP}(") : verilog.index(");")]
    for port in ports.values():
        for signal in port["signals"].values():
            assert f" {signal}" in header, signal
    assert "ap_clk" in header and "ap_rst_n" in header and "interrupt" in header
    regs = {r["name"] for r in json.loads((tmp_path / "p" / "rtl" / "regmap.json").read_text())["registers"]}
    assert {"l", "k", "mg", "mc", "adj_addr1", "vec_addr1", "nq"} <= regs


def test_existing_folder_needs_force(small, tmp_path):
    g, design, q = small
    generate_graph_rtl(design, g, q, tmp_path / "p")
    with pytest.raises(FannsError, match="already exists"):
        generate_graph_rtl(design, g, q, tmp_path / "p")
    generate_graph_rtl(design, g, q, tmp_path / "p", force=True)
    with pytest.raises(FannsError, match="test queries"):
        generate_graph_rtl(design, g, q[:, :3], tmp_path / "q")


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--nodes", "999999"], "base vectors"),
        (["--bloom", "3"], "--bloom takes 2"),
        (["--runtime", "64,10,1"], "--runtime takes 4"),
        (["--queries", "0"], "--queries 0"),
    ],
)
def test_cli_input_errors(tmp_path, capsys, extra, message):
    rc = main(["generate-graph-rtl", "builtin:sift-10k", "--nodes", "300", "--out", str(tmp_path / "p"), *extra])
    assert rc == 2 and message in capsys.readouterr().err


def test_across_design_is_p_compute_units_of_the_qpp_kernel(synthetic, tmp_path):
    """An across-query design of two pipelines: on the board, two compute units of the one-QPP
    kernel (as the HLS face's nk=), each with its own masters and register map; ports.json,
    regmap.md, connectivity.cfg and the record say so (simulation of P QPPs sharing the memory:
    tests/sim/test_falcon_across_rtl.py)."""
    g = synthetic["graphs"]["hnsw"]
    design = pinned_graph_design(
        g,
        mode="across",
        pipelines=2,
        units=1,
        channels=2,
        l_max=16,
        k_max=8,
        bloom=(2, 2 * 1024),
        limits=(2, 2),
        runtime=(16, 8, 2, 2),
    )
    project = generate_graph_rtl(design, g, g.fmt.quantize(synthetic["queries"][:2]), tmp_path / "p")
    assert f"rtl/{TOP}.v" in project.files
    ports = json.loads((tmp_path / "p" / "rtl" / "ports.json").read_text())
    assert ports["top"] == TOP and ports["compute_units"] == 2
    assert set(ports["ports"]) == {"s_axi_control", "m_axi_io", "m_axi_list", "m_axi_vec0"}
    assert "2 compute units of this kernel" in (tmp_path / "p" / "rtl" / "regmap.md").read_text()
    cfg = (tmp_path / "p" / "connectivity.cfg").read_text()
    assert f"nk={TOP}:2:{TOP}_1.{TOP}_2" in cfg
    for cu in (1, 2):
        assert f"sp={TOP}_{cu}.m_axi_list:DDR[0:1]" in cfg and f"sp={TOP}_{cu}.m_axi_io:DDR[0]" in cfg
    record = json.loads((tmp_path / "p" / "fanns_project.json").read_text())
    assert record["rtl"]["pipelines"] == 2 and read_project(tmp_path / "p").design == design


def test_cli_across_needs_one_unit(tmp_path, capsys):
    rc = main(
        [
            "generate-graph-rtl",
            "builtin:sift-10k",
            "--nodes",
            "300",
            "--pipelines",
            "2",
            "--units",
            "2",
            "--out",
            str(tmp_path / "p"),
        ]
    )
    assert rc == 2 and "one BFC unit per pipeline" in capsys.readouterr().err
