"""Hostile graph projects and graph explorations (issue 50): `fanns sim`, `fanns run` and the
driver check a graph project's sources, design and images against what fanns wrote before any
simulator starts, as `check_project` does for IVF-PQ projects; the graph DSE checks every field
of `graph_<kind>.json` it uses (the `dataset` entry above all) before it reads any data. Each
refusal is one clear error naming the file, and nothing is written. `fanns generate --graph`
says why no design can be promised its goal, and writes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import fanns.driver
import fanns.explore.graph_choice
from fanns.cli import main
from fanns.errors import FannsError
from fanns.model.graph.dse import GraphSpace
from fanns.outputs import MANIFEST, write_manifest
from tests.hostile.inputs import CONTROL, cli, dataset_folder, files_below, refused

SOURCES = {"rtl": "rtl/fanns_falcon_qpp.v", "hls": "src/kernel.cpp"}
"""The kernel source each face's simulator compiles."""


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    """One small graph project per face (300 nodes of a 2,000 x 16 dataset, 4 test queries)."""
    root = tmp_path_factory.mktemp("graph-projects")
    ds = dataset_folder(root / "ds")
    common = [str(ds), "--nodes", "300", "--max-degree", "8", "--queries", "4"]
    for face in ("rtl", "hls"):
        assert main([f"generate-graph-{face}", *common, "--out", str(root / face)]) == 0
    return root


def _copy(graph: Path, face: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(graph / face, tmp_path / face))


def _sim(project: Path, tmp_path: Path) -> list[str]:
    return ["sim", str(project), "--build-dir", str(tmp_path / "build")]


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "delete":
        path.unlink()
    elif how == "truncate":
        path.write_bytes(data[: len(data) // 2])
    else:  # an edit that keeps the size
        path.write_bytes(data[:-2] + b"\n\n")


@pytest.mark.parametrize("how", ["delete", "truncate", "edit"])
@pytest.mark.parametrize("face", ["rtl", "hls"])
def test_graph_sim_refuses_a_changed_kernel_source(capsys, graph, tmp_path, face, how):
    project = _copy(graph, face, tmp_path)
    _damage(project / SOURCES[face], how)
    refused(capsys, _sim(project, tmp_path), SOURCES[face], "missing")
    assert not (tmp_path / "build").exists()  # refused before any simulator was built


@pytest.mark.parametrize("face", ["rtl", "hls"])
def test_graph_sim_needs_the_kernel_source_even_without_a_manifest(capsys, graph, tmp_path, face):
    project = _copy(graph, face, tmp_path)
    (project / MANIFEST).unlink()
    (project / SOURCES[face]).unlink()
    refused(capsys, _sim(project, tmp_path), SOURCES[face], "missing")
    shutil.copy(graph / face / SOURCES[face], project / SOURCES[face])
    (project / MANIFEST).write_text("{")  # a broken manifest is no manifest to skip
    refused(capsys, _sim(project, tmp_path), MANIFEST)
    assert not (tmp_path / "build").exists()


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        ("bfc_units: 2", "bfc_units: 1", "design.yaml missing or changed"),  # valid, but not the images' design
        ("bfc_units: 2", "bfc_units: '2; rm -rf x'", "bfc_units"),  # refused by the design's schema
        ("board: u250", 'board: "a\\nb"', "board"),
    ],
)
@pytest.mark.parametrize("face", ["rtl", "hls"])
def test_graph_sim_refuses_an_edited_design(capsys, graph, tmp_path, face, old, new, fragment):
    project = _copy(graph, face, tmp_path)
    design = project / "design.yaml"
    text = design.read_text()
    assert old in text
    design.write_text(text.replace(old, new))
    refused(capsys, _sim(project, tmp_path), "design.yaml", fragment)
    assert not (tmp_path / "build").exists()


@pytest.mark.parametrize("how", ["delete", "truncate", "edit"])
def test_graph_sim_refuses_a_damaged_image(capsys, graph, tmp_path, how):
    project = _copy(graph, "hls", tmp_path)
    _damage(project / "images" / "adjacency_0.bin", how)
    refused(capsys, _sim(project, tmp_path), "adjacency_0.bin")
    assert not (tmp_path / "build").exists()


def test_graph_sim_refuses_an_edited_record(capsys, graph, tmp_path):
    """A record that still parses and names the same query count, but is not the one fanns wrote."""
    project = _copy(graph, "rtl", tmp_path)
    record = json.loads((project / "fanns_project.json").read_text())
    record["runtime"]["l"] = 2
    (project / "fanns_project.json").write_text(json.dumps(record))
    refused(capsys, _sim(project, tmp_path), "fanns_project.json")


@pytest.mark.parametrize("backend", ["model", "rtl-sim"])
def test_graph_run_and_driver_refuse_a_changed_project(capsys, graph, tmp_path, backend):
    project = _copy(graph, "rtl", tmp_path)
    _damage(project / SOURCES["rtl"], "truncate")
    queries = tmp_path / "q.npy"
    np.save(queries, np.load(graph / "ds" / "query.npy")[:2])
    argv = ["run", str(project), "--backend", backend, "--queries", str(queries)]
    refused(capsys, [*argv, "--build-dir", str(tmp_path / "build")], SOURCES["rtl"])
    with pytest.raises(FannsError, match="fanns_falcon_qpp.v missing or changed"):
        fanns.driver.open(project, backend=backend)
    assert not (tmp_path / "build").exists()


# -- graph_<kind>.json of a graph exploration ---------------------------------------------------
def _exploration(folder: Path, **changes) -> Path:
    """A graph_hnsw.json as `fanns explore --graph hnsw` writes it (the fields the DSE reads; no
    manifest: a hand-made folder is read, and checked field by field), with `changes` applied."""
    record = {
        "dataset": {"name": "ds", "content_hash": "0" * 32, "n": 2000, "d": 16},
        "graph": "hnsw",
        "max_degree": 8,
        "build": {"efConstruction": 64},
        "number_format": {"vec_bits": 8, "signed": False, "scale": 1.0},
        "queries": 20,
    }
    record.update(changes)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "graph_hnsw.json").write_text(json.dumps(record))
    return folder


def _dse_refused(capsys, tmp_path: Path, graph: Path, record: dict, *fragments: str) -> None:
    ex = _exploration(tmp_path / "gex", **record)
    before = files_below(tmp_path)
    dse = ["dse", str(ex), "--graph", "hnsw", "--board", "u250", "--recall", "R@10=0.5"]
    refused(capsys, [*dse, "--dataset", str(graph / "ds"), "--out", str(tmp_path / "out")], *fragments)
    assert files_below(tmp_path) == before  # nothing written


@pytest.mark.parametrize(
    ("dataset", "fragment"),
    [
        *(({"name": name, "content_hash": "0" * 32}, "dataset.name") for name in CONTROL),
        ({"name": ["ds"], "content_hash": "0" * 32}, "dataset.name must be text"),
        ({"name": 7, "content_hash": "0" * 32}, "dataset.name must be text"),
        ({"name": "x" * 300, "content_hash": "0" * 32}, "1..255 characters"),
        ({"name": "", "content_hash": "0" * 32}, "1..255 characters"),
        ({"name": "ds"}, "dataset.content_hash"),
        ({"name": "ds", "content_hash": "../../etc/passwd"}, "dataset.content_hash"),
        ({"name": "ds", "content_hash": 12}, "dataset.content_hash"),
        (["ds"], "dataset entry must be a mapping"),
        ("builtin:sift-10k", "dataset entry must be a mapping"),
        (None, "dataset entry must be a mapping"),
    ],
)
def test_graph_dse_checks_the_dataset_entry(capsys, graph, tmp_path, dataset, fragment):
    _dse_refused(capsys, tmp_path, graph, {"dataset": dataset}, "graph_hnsw.json", fragment)


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"graph": "nsg"}, "exploration of graph 'nsg'"),
        ({"graph": ["hnsw"]}, "exploration of graph"),
        ({"max_degree": "8"}, "max_degree must be an integer"),
        ({"max_degree": 1e9}, "max_degree"),
        ({"build": {"efConstruction": -1}}, "build.efConstruction"),
        ({"build": [64]}, "incomplete graph exploration record"),
        ({"number_format": {"vec_bits": float("nan")}}, "number_format.vec_bits"),
        ({"number_format": None}, "incomplete graph exploration record"),
        ({"queries": True}, "queries must be an integer"),
    ],
)
def test_graph_dse_checks_the_settings_before_reading_data(capsys, graph, tmp_path, changes, fragment):
    _dse_refused(capsys, tmp_path, graph, changes, "graph_hnsw.json", fragment)


def test_graph_dse_refuses_an_exploration_changed_since(capsys, graph, tmp_path):
    """An exploration fanns wrote (with its manifest) is checked as a whole first: an edited
    graph_hnsw.json is refused even when each of its fields would pass."""
    ex = _exploration(tmp_path / "gex")
    write_manifest(ex, "exploration")
    _exploration(ex, dataset={"name": "other", "content_hash": "1" * 32})
    dse = ["dse", str(ex), "--graph", "hnsw", "--board", "u250", "--recall", "R@10=0.5", "--out", str(tmp_path / "o")]
    refused(capsys, dse, "graph_hnsw.json", "changed since")
    assert not (tmp_path / "o").exists()


def _tiny_space(k: int) -> GraphSpace:
    """Two designs (1 BFC unit, l 16, (mg, mc) (1, 1) or (2, 1)): the promise is what is tested."""
    return GraphSpace(k=k, units=(1,), pipelines=(1,), queue=(16,), dst=((1, 1), (2, 1)), bloom_bits=(3 * 2**14,))


@pytest.mark.parametrize(
    "goal, queries, words",
    [
        ("R@10=0.99", "40", ["can be promised R@10=0.99", "its recall stays below the goal"]),
        ("R@10=0.4", "6", ["can be promised R@10=0.4", "the query sample is too small to tell", "queries would tell"]),
    ],
)
def test_generate_graph_says_why_no_design_is_promised(capsys, tmp_path, monkeypatch, goal, queries, words):
    """A goal no design reaches, and a query sample too small to tell: one clear error with the
    reason (and the queries that would tell), no project folder."""
    monkeypatch.setattr(fanns.explore.graph_choice, "GraphSpace", _tiny_space)
    ds = dataset_folder(tmp_path / "ds")
    out = tmp_path / "p"
    argv = ["generate", str(ds), "--graph", "hnsw", "--recall", goal, "--board", "zcu104", "--out", str(out)]
    refused(
        capsys, [*argv, "--max-degree", "32", "--queries", queries, "--test-queries", "4", "--sim-queries", "2"], *words
    )
    if "queries would tell" in words:  # the hint says how many queries the dataset holds
        _, err = cli(capsys, [*argv, "--max-degree", "32", "--queries", queries])
        assert "up to the dataset's 40" in err, err
    assert not out.exists()
