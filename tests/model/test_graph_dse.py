"""Graph DSE: objectives, recall goal, resource budget, the written design, and the CLI."""

import json

import faiss
import numpy as np
import pytest

from fanns.boards import load_board
from fanns.cli import main
from fanns.design.graph import GraphDesign
from fanns.errors import FannsError
from fanns.index.graph import build_graph, graph_format_for
from fanns.model.graph.dse import GraphPoint, GraphSpace, design_for, design_resources, explore_graph
from fanns.resources import Resources

SPACE = GraphSpace(
    units=(1, 2),
    pipelines=(2, 4),
    queue=(16, 32),
    dst=((1, 1), (4, 2)),
    bloom_bits=(2 * 2**12,),
    bloom_h=2,
    channels=(1, 4),
)


@pytest.fixture(scope="module")
def small(synthetic):
    g = synthetic["graphs"]["hnsw"]
    qs = synthetic["queries"][:40]
    gt = faiss.knn(qs, synthetic["base"], 10)[1]
    return g, g.fmt.quantize(qs), gt


@pytest.fixture(scope="module")
def runs(small):
    g, q, gt = small
    board = load_board("u250")
    return {obj: explore_graph(g, q, gt, board, 0.8, obj, latency_cycles=80, space=SPACE) for obj in ("latency", "qps")}


def test_every_combination_is_evaluated(runs):
    points = runs["latency"].points
    assert len(points) == (2 + 2) * 2 * 2 * 2  # shapes x queues x dst x channels
    for p in points:
        assert 0 <= p.recall <= 1 and p.latency_us > 0 and p.qps > 0 and p.fits


def test_objectives_pick_the_extremes_among_feasible_designs(runs):
    lat, qps = runs["latency"], runs["qps"]
    ok = [p for p in lat.points if p.recall >= 0.8 and p.fits]
    assert lat.best.latency_us == min(p.latency_us for p in ok)
    assert qps.best.qps == max(p.qps for p in ok)
    assert qps.best.mode == "across" and qps.best.pipelines == 4
    assert lat.best.mg * lat.best.mc > 1  # DST beats BFS at batch 1


def test_written_design_is_valid_and_matches_its_point(runs, tmp_path):
    best, design = runs["latency"].best, runs["latency"].design
    design.save(tmp_path / "design.yaml")
    back = GraphDesign.load(tmp_path / "design.yaml")
    assert back == design
    assert (back.bfc_units, back.pipelines, back.channels, back.queues.l_max) == (
        best.units,
        best.pipelines,
        best.channels,
        best.l,
    )
    assert (back.runtime.mg, back.runtime.mc) == (best.mg, best.mc)
    assert back.prediction["recall"] == pytest.approx(best.recall, abs=1e-6)
    assert design_resources(design, "xcup").lut == pytest.approx(best.resources.lut)


def test_resources_grow_with_units_and_bloom(small):
    from fanns.model.graph.pinned import pinned_graph_design

    g = small[0]
    r1 = design_resources(pinned_graph_design(g, units=1, bloom=(3, 3 * 2**14)), "xcup")
    r2 = design_resources(pinned_graph_design(g, units=2, bloom=(3, 3 * 2**14)), "xcup")
    r3 = design_resources(pinned_graph_design(g, units=2, bloom=(3, 3 * 2**17)), "xcup")
    assert r2.lut > r1.lut and r2.dsp > r1.dsp
    assert r3.bram18 > r2.bram18


def test_across_query_designs_count_one_control_split(small):
    """P QPPs cost P times one QPP plus the AXI4-Lite split in front of their register files."""
    from fanns.design.graph_hw import CSR_ADDR_BITS, across_addr_bits
    from fanns.model.graph.pinned import pinned_graph_design
    from fanns.pe.axil_split import AxilSplit

    g = small[0]
    one = design_resources(pinned_graph_design(g, mode="across", pipelines=1), "xcup")
    for p in (2, 4):
        many = design_resources(pinned_graph_design(g, mode="across", pipelines=p), "xcup")
        split = AxilSplit(p, across_addr_bits(p), CSR_ADDR_BITS).resources("xcup")
        assert split.lut > 0 and split.ff > 0
        assert many.lut == pytest.approx(p * one.lut + split.lut)
        assert many.ff == pytest.approx(p * one.ff + split.ff)


def test_unreachable_goal_and_tight_budget(small, runs):
    g, q, gt = small
    board = load_board("u250")
    top = max(p.recall for p in runs["latency"].points)
    if top < 1.0:
        assert explore_graph(g, q, gt, board, top + 1e-9, space=SPACE).best is None
    tight = explore_graph(g, q, gt, board, 0.5, util=0.001, space=SPACE)
    assert tight.best is None and not any(p.fits for p in tight.points)


def test_cli_graph_dse(tmp_path, capsys):
    ex, out = tmp_path / "ex", tmp_path / "dse"
    assert (
        main(
            [
                "explore",
                "builtin:sift-10k",
                "--graph",
                "hnsw",
                "--max-degree",
                "16",
                "--graph-queries",
                "30",
                "--mg",
                "1,2",
                "--mc",
                "1",
                "--out",
                str(ex),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "dse",
                str(ex),
                "--graph",
                "hnsw",
                "--board",
                "u250",
                "--recall",
                "R@10=0.5",
                "--objective",
                "qps",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    design = GraphDesign.load(out / "design.yaml")
    data = json.loads((out / "dse.json").read_text())
    assert data["best"]["qps"] == pytest.approx(design.prediction["qps"], rel=1e-6) and data["evaluated"] > 100
    argv = ["dse", str(ex), "--graph", "nsg", "--board", "u250", "--recall", "R@10=0.5", "--out", str(out)]
    assert main(argv) == 2  # an earlier DSE result is replaced only with --force
    assert "already exists" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 2
    assert "graph_nsg.json is missing" in capsys.readouterr().err
    assert GraphDesign.load(out / "design.yaml") == design  # the earlier result is still whole


def test_a_graph_whose_keys_exceed_64_bits_is_refused():
    """16-bit elements give distances of over 32 bits at any d: with 32-bit ids the selection keys
    exceed the queues' 64 bits, refused where the design is made (the design fuzz found it crash
    code generation)."""
    base = np.random.default_rng(0).standard_normal((128, 12)).astype(np.float32)
    graph = build_graph(base, "nsg", max_degree=8, fmt=graph_format_for(base, 16))
    board = load_board("zcu104")
    point = GraphPoint("intra", 1, 1, 1, 16, 1, 1, 3 * 2**14, 0.0, 0.0, 0.0, Resources(), False)
    with pytest.raises(FannsError, match="graph.vec_bits.*key of 68 bits"):
        design_for(graph, board, point, GraphSpace(dst=((1, 1),)), 200.0, 0.6)
