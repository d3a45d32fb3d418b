"""`fanns generate --graph`: the options only one kind of design takes, and a graph project
written in one command (fast: a tiny set and a small DSE space); slow: builtin:sift-10k end to
end with --sim on u55c and zcu104, both faces bit-exact against the DST reference."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

import fanns.explore.graph_choice
from fanns.cli import main
from fanns.design.graph import GraphDesign
from fanns.driver.project import face_folder
from fanns.model.graph.dse import GraphSpace


def _small_space(k: int) -> GraphSpace:
    """Four designs: 1 or 2 BFC units, (mg, mc) (1, 1) or (2, 1); one queue, filter and channel count."""
    return GraphSpace(
        k=k, units=(1, 2), pipelines=(1,), queue=(16,), dst=((1, 1), (2, 1)), bloom_bits=(3 * 2**14,), channels=(1,)
    )


@pytest.fixture(scope="module")
def tiny_set(tmp_path_factory):
    """1,500 x 16 float32 Gaussian vectors and 24 queries, as a user's dataset folder (one blob: a
    graph's base layer alone does not cross between well-separated ones)."""
    folder = tmp_path_factory.mktemp("tiny") / "tiny"
    folder.mkdir()
    rng = np.random.default_rng(50)
    x = rng.standard_normal((1524, 16))
    np.save(folder / "base.npy", x[:1500].astype(np.float32))
    np.save(folder / "query.npy", x[1500:].astype(np.float32))
    return folder


def _argv(data, out, *extra):
    return ["generate", str(data), "--recall", "R@10=0.2", "--board", "zcu104", "--out", str(out), *extra]


@pytest.mark.parametrize(
    "extra, message",
    [
        (("--graph", "hnsw", "--nlist", "16"), "--nlist applies to IVF-PQ designs, not to --graph hnsw"),
        (("--graph", "nsg", "--m", "8", "--top", "2"), "--m, --top applies to IVF-PQ designs"),
        (("--graph", "hnsw", "--no-opq"), "--opq/--no-opq/--both applies to IVF-PQ designs"),
        (("--graph", "hnsw", "--explore-dir", "x"), "--explore-dir applies to IVF-PQ designs"),
        (
            (
                "--max-degree",
                "16",
            ),
            "--max-degree applies to graph designs only",
        ),
        (("--objective", "qps", "--vec-bits", "8"), "--vec-bits, --objective applies to graph designs only"),
    ],
)
def test_options_of_the_other_kind_are_refused(tmp_path, capsys, extra, message):
    assert main(_argv("builtin:sift-10k", tmp_path / "p", *extra)) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


def test_a_graph_goal_is_r_at_k(tmp_path, capsys):
    argv = ["generate", "builtin:sift-10k", "--graph", "hnsw", "--recall", "1-R@10=0.9", "--board", "u55c"]
    assert main([*argv, "--out", str(tmp_path / "p")]) == 2
    assert "graph designs take an R@k goal, got 1-R@10=0.9" in capsys.readouterr().err


def test_generate_graph_writes_the_project(tiny_set, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(fanns.explore.graph_choice, "GraphSpace", _small_space)
    out = tmp_path / "p"
    extra = (
        "--graph",
        "hnsw",
        "--max-degree",
        "8",
        "--ef-construction",
        "16",
        "--test-queries",
        "4",
        "--sim-queries",
        "2",
    )
    assert main(_argv(tiny_set, out, *extra)) == 0
    printed = capsys.readouterr().out
    assert "held-out queries" in printed and "chosen: HNSW graph of 1,500 nodes (max degree 8" in printed
    design = GraphDesign.load(out / "design.yaml")
    assert design.graph.kind == "hnsw" and design.graph.n == 1500 and design.bfc_units in (1, 2)
    for face in ("hls", "rtl"):
        assert GraphDesign.load(out / face / "design.yaml") == design
        assert json.loads((out / face / "fanns_project.json").read_text())["kind"] == "graph"
        assert (out / face / "data" / "reference_keys.bin").stat().st_size == 4 * design.queues.k_max * 8
    assert (out / "rtl" / "rtl" / "fanns_falcon_qpp.v").is_file() and (out / "hls" / "src" / "kernel.cpp").is_file()
    assert face_folder(out, "rtl-sim") == out / "rtl" and face_folder(out, "c-sim") == out / "hls"
    summary = json.loads((out / "report" / "summary.json").read_text())
    r = summary["recall"]
    assert r["selection_queries"] + r["held_out_queries"] == 24 and r["held_out_queries"] == 12
    assert r["held_out_interval"][0] <= r["held_out"] <= r["held_out_interval"][1]
    assert r["selection_bound"] >= 0.2 and r["selection"] > r["selection_bound"] and summary["simulation"] == []
    dse = json.loads((out / "report" / "dse.json").read_text())
    assert dse["evaluated"] == 4 and dse["best"]["l"] == design.runtime.l == 16
    readme = (out / "README.md").read_text()
    assert f"R@10 = {r['held_out']:.3f}" in readme and "No simulation was run" in readme
    assert main(_argv(tiny_set, out, *extra)) == 2  # an existing project is replaced only with --force
    assert "already exists" in capsys.readouterr().err


def test_no_design_that_fits_leaves_no_folder(tiny_set, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(fanns.explore.graph_choice, "GraphSpace", _small_space)
    out = tmp_path / "p"
    argv = _argv(tiny_set, out, "--graph", "nsg", "--max-degree", "8", "--util", "0.001", "--test-queries", "4")
    assert main([*argv, "--sim-queries", "2"]) == 2
    err = capsys.readouterr().err
    assert "no graph design on zcu104 can be promised R@10=0.2: no design fits the board" in err
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.parametrize("board", ["u55c", "zcu104"])
def test_generate_graph_sim_end_to_end(board, tmp_path, capsys):
    """The one command on the smallest built-in set: explore (the graph), DSE, both faces, --sim."""
    out = tmp_path / "p"
    argv = ["generate", "builtin:sift-10k", "--graph", "hnsw", "--recall", "R@10=0.9", "--board", board]
    argv += ["--out", str(out), "--test-queries", "16", "--sim-queries", "8", "--sim"]
    start, cpu = time.perf_counter(), time.process_time()
    assert main(argv) == 0
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    printed = capsys.readouterr().out
    summary = json.loads((out / "report" / "summary.json").read_text())
    sims = {s["face"]: s for s in summary["simulation"]}
    assert set(sims) == {"hls", "rtl"}
    for s in sims.values():
        assert s["queries"] == 8 and s["mismatched_queries"] == 0 and s["passed"]
    assert abs(sims["rtl"]["max_query_error_pct"]) <= 10
    assert "0 differ from the DST reference" in printed and "cycles/query measured vs" in printed
    print(f"generate --graph hnsw --sim on {board}: {wall:.0f} s wall, {cpu:.0f} s CPU (this process)")
