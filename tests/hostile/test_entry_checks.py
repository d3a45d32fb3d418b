"""Inputs checked where they enter (issue 18): a graph project's files before `fanns sim`, the
dataset of a graph DSE against the one explored, and driver queries against the number format."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

import fanns.driver
from fanns.cli import main
from fanns.errors import FannsError
from tests.hostile.inputs import dataset_folder, refused
from tests.hostile.test_projects import projects  # noqa: F401  (an explored dataset, its design and both faces)

GRAPH_EXPLORE = ["--graph", "hnsw", "--max-degree", "8", "--queue", "16", "--mg", "1,2", "--mc", "1"]
GRAPH_EXPLORE += ["--bfc-units", "1", "--pipelines", "1"]


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    """A graph exploration and a graph HLS project of a 2,000 x 16 dataset."""
    root = tmp_path_factory.mktemp("graph")
    ds = dataset_folder(root / "ds")
    assert main(["explore", str(ds), *GRAPH_EXPLORE, "--out", str(root / "gex")]) == 0
    project = ["generate-graph-hls", str(ds), "--nodes", "500", "--max-degree", "8", "--queries", "4"]
    assert main([*project, "--out", str(root / "ghls")]) == 0
    return root


def _copy(graph: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(graph / "ghls", tmp_path / "ghls"))


@pytest.mark.parametrize("size", [None, 0, 7])
@pytest.mark.parametrize("name", ["queries.bin", "reference_keys.bin", "reference_stats.bin", "groundtruth.bin"])
def test_graph_sim_checks_the_data_files_first(capsys, graph, tmp_path, name, size):
    project = _copy(graph, tmp_path)
    path = project / "data" / name
    if size is None:
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:size])
    refused(capsys, ["sim", str(project)], name, "expected")


@pytest.mark.parametrize(
    ("record", "fragment"),
    [('{"kind": "graph"}', "test.nq"), ('{"kind": "graph", "test": {"nq": 1e12}}', "test.nq")],
)
def test_graph_sim_checks_the_record(capsys, graph, tmp_path, record, fragment):
    project = _copy(graph, tmp_path)
    (project / "fanns_project.json").write_text(record)
    refused(capsys, ["sim", str(project)], "fanns_project.json", fragment)


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--queries", "5"], "--queries 5"),
        (["--first", "4"], "--first 4"),
        (["--first", "3", "--queries", "2"], "--queries 2 from --first 3"),
        (["--backend", "rtl"], "graph HLS project"),
        (["--runtime", "1,1,1,1"], "l=1"),
    ],
)
def test_graph_sim_checks_its_options(capsys, graph, options, fragment):
    refused(capsys, ["sim", str(graph / "ghls"), *options], fragment)


def test_graph_dse_takes_the_explored_dataset_only(capsys, graph, tmp_path):
    """The exploration's dataset is no built-in: --dataset is required, and other data is refused
    (by content, not by name)."""
    dse = ["dse", str(graph / "gex"), "--graph", "hnsw", "--board", "u250", "--recall", "R@10=0.5"]
    refused(capsys, [*dse, "--out", str(tmp_path / "a")], "not a built-in")
    other = dataset_folder(tmp_path / "ds", base=np.load(graph / "ds" / "base.npy")[:1500])
    refused(capsys, [*dse, "--dataset", str(other), "--out", str(tmp_path / "b")], "is not the one explored")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    capsys.readouterr()
    assert main([*dse, "--dataset", str(graph / "ds"), "--out", str(tmp_path / "c")]) == 0
    assert (tmp_path / "c" / "design.yaml").is_file()


def test_ivfpq_dse_refuses_dataset(capsys, tmp_path):
    refused(
        capsys,
        [
            "dse",
            str(tmp_path),
            "--board",
            "u55c",
            "--recall",
            "R@10=0.5",
            "--dataset",
            "x",
            "--out",
            str(tmp_path / "o"),
        ],
        "--dataset",
    )


def test_driver_refuses_queries_outside_the_number_format(projects):  # noqa: F811
    """Queries scaled x100 would be clipped to the format's range and answered as other queries."""
    q = np.load(projects / "ds" / "query.npy")
    with fanns.driver.open(projects / "hls", backend="model") as acc:
        with pytest.raises(FannsError, match=r"of the elements lie outside the number format's range"):
            acc.search(q * 100)
        acc.search(q)
        assert acc.stats()["clipped"] == 0.0
        one = q.copy()
        one[0, 0] *= 100  # one element of 640: tolerated, and counted
        acc.search(one)
        assert acc.stats()["clipped"] == pytest.approx(1 / (2 * q.size))


def test_fanns_run_refuses_and_reports_clipping(capsys, projects, tmp_path):  # noqa: F811
    q = np.load(projects / "ds" / "query.npy")
    np.save(tmp_path / "far.npy", q * 100)
    refused(capsys, ["run", str(projects / "hls"), "--queries", str(tmp_path / "far.npy")], "number format")
    one = q.copy()
    one[0, 0] *= 100
    np.save(tmp_path / "one.npy", one)
    capsys.readouterr()
    assert main(["run", str(projects / "hls"), "--queries", str(tmp_path / "one.npy")]) == 0
    assert "were clipped" in capsys.readouterr().out


def test_the_design_carries_its_goal_typed(projects, tmp_path):  # noqa: F811
    """design.yaml's goal is parsed where the file enters (a RecallGoal, measure included) and
    written back as the same text; a goal that does not parse is refused naming the key."""
    from fanns.design.ivfpq import IvfPqDesign
    from fanns.index.goals import parse_goal

    design = IvfPqDesign.load(projects / "design-u55c.yaml")
    typed = dataclasses.replace(design, goal=parse_goal("1-R@10=80%"))
    typed.save(tmp_path / "d.yaml")
    again = IvfPqDesign.load(tmp_path / "d.yaml")
    assert again.goal == parse_goal("1-R@10=0.8") and again.goal.truth == 1
    assert "goal: 1-R@10=0.8" in (tmp_path / "d.yaml").read_text()
    (tmp_path / "bad.yaml").write_text((tmp_path / "d.yaml").read_text().replace("1-R@10=0.8", "R@10=2"))
    with pytest.raises(FannsError, match="design: goal: recall goal 'R@10=2'"):
        IvfPqDesign.load(tmp_path / "bad.yaml")
