"""Tracebacks, crashes, hangs, memory and silent wrong answers (issue 18): hostile numbers in every
numeric field of every input surface — CLI options, board files, design.yaml, explore.json,
datasets — are refused where they enter with one clear message naming the input; recall goals
are matched on their measure."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fanns.index.goals import parse_goal
from fanns.model.ivfpq.workload import workloads_from_explore
from tests.arch.test_design_schema import make_design
from tests.hostile.inputs import (
    GOALS,
    HOSTILE_NUMBERS,
    board_data,
    dataset_folder,
    explore_folder,
    refused,
    replaced,
    write_yaml,
)

# -- CLI options -------------------------------------------------------------------------------
DSE = ["dse", "ex", "--board", "u55c", "--recall", "R@10=0.8", "--out", "out"]
SIM = ["sim", "p"]
GEN = ["generate", "builtin:sift-10k", "--recall", "R@10=0.8", "--board", "u55c", "--out", "out"]
CLI_NUMBERS = [
    (DSE, "--clock", ["inf", "nan", "-1", "0", "1e30", "x"]),
    (DSE, "--util", ["0", "1.5", "nan", "-0.5"]),
    (DSE, "--top", ["-1", "1e9", "2.5"]),
    (DSE, "--queries", ["0", "-3"]),
    (DSE, "--load", ["0", "inf", "nan", "-1"]),
    (GEN, "--clock", ["inf", "-inf", "0"]),
    (GEN, "--test-queries", ["0", "-1", "10000000"]),
    (GEN, "--sim-queries", ["1", "-1"]),
    (SIM, "--pause", ["1", "2", "-0.1", "nan", "inf"]),
    (SIM, "--latency", ["-1", "1000000000", "nan"]),
    (SIM, "--queries", ["0", "-1"]),
    (SIM, "--first", ["-1"]),
    (["run", "p", "--queries", "q.npy"], "--k", ["0", "-1"]),
    (["run", "p", "--queries", "q.npy"], "--nprobe", ["0"]),
    (["run", "p", "--queries", "q.npy"], "--batch", ["0", "-5"]),
    (["explore", "builtin:sift-10k", "--out", "o"], "--seed", ["-1", "99999999999"]),
    (["explore", "builtin:sift-10k", "--out", "o"], "--queries", ["0"]),
    (["explore", "builtin:sift-10k", "--out", "o"], "--train-size", ["0"]),
    (["explore", "builtin:sift-10k", "--out", "o"], "--pq-vec-bits", ["1", "99"]),
    (["explore", "builtin:sift-10k", "--out", "o"], "--pq-lut-bits", ["0", "99"]),
    (["explore", "builtin:sift-10k", "--out", "o"], "--faiss-threads", ["0", "-1"]),
    (["explore", "builtin:sift-10k", "--graph", "hnsw", "--out", "o"], "--k", ["0", "-1"]),
    (["explore", "builtin:sift-10k", "--graph", "hnsw", "--out", "o"], "--threads", ["0"]),
    (["explore", "builtin:sift-10k", "--graph", "hnsw", "--out", "o"], "--freq-mhz", ["0", "inf", "nan"]),
    (["explore", "builtin:sift-10k", "--graph", "hnsw", "--out", "o"], "--vec-bits", ["0", "99"]),
    (["explore", "builtin:sift-10k", "--graph", "hnsw", "--out", "o"], "--max-degree", ["0", "100000"]),
]
CLI_CASES = [(cmd, opt, v) for cmd, opt, values in CLI_NUMBERS for v in values]


@pytest.mark.parametrize(("command", "option", "value"), CLI_CASES, ids=[f"{c[0]}{o}={v}" for c, o, v in CLI_CASES])
def test_numeric_options_are_checked_where_they_enter(capsys, tmp_path, monkeypatch, command, option, value):
    monkeypatch.chdir(tmp_path)
    refused(capsys, [*command, option, value], option)
    assert not any(tmp_path.iterdir())


# -- board files -------------------------------------------------------------------------------
BOARD_NUMBERS = [
    ("clock_mhz", [*HOSTILE_NUMBERS, 0]),
    ("memory.0.bandwidth_gbps", [*HOSTILE_NUMBERS, 0]),
    ("memory.0.capacity_gb", [*HOSTILE_NUMBERS, 0]),
    ("memory.0.count", [*HOSTILE_NUMBERS, 0, 2.5]),
    ("memory.0.port_bits", [*HOSTILE_NUMBERS, 0, 4]),
    ("slrs.SLR0.lut", [*HOSTILE_NUMBERS, 1.5]),
    ("shell.SLR1.dsp", HOSTILE_NUMBERS),
    ("host.bandwidth_gbps", [*HOSTILE_NUMBERS, 0]),
    ("host.latency_us", HOSTILE_NUMBERS),
]
BOARD_CASES = [(k, v) for k, values in BOARD_NUMBERS for v in values]


@pytest.mark.parametrize(("key", "value"), BOARD_CASES, ids=[f"{k}={v}" for k, v in BOARD_CASES])
def test_board_numbers(capsys, tmp_path, key, value):
    path = write_yaml(tmp_path / "b.yaml", replaced(board_data(), key, value))
    refused(capsys, ["boards", str(path)], str(path), key.split(".")[-1])


# -- design.yaml -------------------------------------------------------------------------------
DESIGN_NUMBERS = [
    ("format.scale", [*HOSTILE_NUMBERS, 0], "scale"),
    ("format.ivf_shift", [-1, 99, 1.5], "ivf_shift"),
    ("clock_mhz", [*HOSTILE_NUMBERS, 0], "clock_mhz"),
    ("util", [float("nan"), float("inf"), 0, 1.5], "util"),
    ("fifo_depth", [1_000_000_000, 1, -1, 2.5], "fifo_depth"),
    ("stages.pq_dist.pes", [1_000_000_000, 0], "pq_dist"),
    ("stages.ivf_dist.lanes", [1_000_000_000, 0], "ivf_dist.lanes"),
    ("memory.1.channel", [99, 32, -1], "memory[1]"),
    ("nprobe", [0, -1, 10**9], "nprobe"),
    ("k", [0, -1], "k"),
    ("index.n", [0, 10**30], "index.n"),
]
DESIGN_CASES = [(k, v, frag) for k, values, frag in DESIGN_NUMBERS for v in values]


@pytest.mark.parametrize(("key", "value", "fragment"), DESIGN_CASES, ids=[f"{k}={v}" for k, v, _ in DESIGN_CASES])
def test_design_numbers(capsys, tmp_path, key, value, fragment):
    design = write_yaml(tmp_path / "design.yaml", replaced(make_design().to_dict(), key, value))
    explore_folder(tmp_path / "ex")
    refused(
        capsys,
        ["generate-hls", str(design), "--index", str(tmp_path / "ex"), "--out", str(tmp_path / "out")],
        str(design),
        fragment,
    )


# -- explore.json ------------------------------------------------------------------------------
EXPLORE_NUMBERS = [
    ("nlist", [-1, 0, 1e30, "16", 2.5]),
    ("m", [0, -1, 1e30]),
    ("opq", [0, "yes"]),
    ("goals", [{"R@10=0.8": {"reached": True, "nprobe": v}} for v in (0, -1, 1.5, None)]),
]
EXPLORE_CASES = [(k, v) for k, values in EXPLORE_NUMBERS for v in values]


@pytest.mark.parametrize(("key", "value"), EXPLORE_CASES, ids=[f"{k}={v}" for k, v in EXPLORE_CASES])
def test_explore_numbers(capsys, tmp_path, key, value):
    ex = explore_folder(tmp_path / "ex", {key: value})
    refused(capsys, ["dse", str(ex), *DSE[2:6], "--out", str(tmp_path / "out")], "explore.json", key)


@pytest.mark.parametrize("curve", [[float("nan")] * 16, [2.0] * 16, "x", [[0.5]]])
def test_explore_curves(capsys, tmp_path, curve):
    ex = explore_folder(tmp_path / "ex", {"goals": {}, "selection_curve": {"R@10": curve}})
    refused(capsys, ["dse", str(ex), *DSE[2:6], "--out", str(tmp_path / "out")], "selection_curve.R@10")


# -- the recall goal's measure -----------------------------------------------------------------
@pytest.mark.parametrize(("goal", "nprobe"), [(g, p) for g, p in GOALS.items()] + [("R@10=80%", GOALS["R@10=0.8"])])
def test_goal_measure_picks_its_own_nprobe(tmp_path, goal, nprobe):
    found, _ = workloads_from_explore(explore_folder(tmp_path / "ex"), parse_goal(goal))
    assert [w.nprobe for w in found] == [nprobe]


@pytest.mark.parametrize(("goal", "nprobe"), [("R@10=0.5", 6), ("1-R@10=0.5", 2), ("1-R@10=0.2", 1)])
def test_goal_without_an_answer_reads_its_own_curve(tmp_path, goal, nprobe):
    """By the explorer's rule: R@10 = 0.5 is the mean at nprobe 5, its lower bound passes at 6."""
    found, _ = workloads_from_explore(explore_folder(tmp_path / "ex", {"goals": {}}), parse_goal(goal))
    assert [w.nprobe for w in found] == [nprobe]


def test_goal_without_its_curve_is_an_error(capsys, tmp_path):
    ex = explore_folder(tmp_path / "ex", {"goals": {}, "selection_curve": {"R@10": [1.0] * 16}})
    refused(capsys, ["dse", str(ex), "--board", "u55c", "--recall", "1-R@10=0.5", "--out", "o"], "1-R@10")


# -- datasets ----------------------------------------------------------------------------------
def _with(row: int, value: float, n: int = 2000) -> np.ndarray:
    x = np.random.default_rng(1).standard_normal((n, 16)).astype(np.float32)
    x[row, 5] = value
    return x


EXPLORE = ["--recall", "R@10=0.5", "--nlist", "4", "--m", "4", "--no-opq"]
DATA_CASES = [
    ("base", _with(1000, np.nan), "base"),
    ("base", _with(1000, np.inf), "base"),
    ("base", _with(1000, 1e30), "base"),
    ("base", _with(1999, -1e30), "base"),
    ("queries", _with(20, 1e30, 40), "queries"),
    ("queries", _with(39, -np.inf, 40), "query"),
]


@pytest.mark.parametrize(
    ("role", "array", "fragment"), DATA_CASES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(DATA_CASES)]
)
def test_dataset_values_are_finite_and_bounded_in_every_row(capsys, tmp_path, role, array, fragment):
    ds = dataset_folder(tmp_path / "ds", **{role: array})
    refused(capsys, ["explore", str(ds), *EXPLORE, "--out", str(tmp_path / "out")], fragment)


def test_too_few_training_vectors(capsys, tmp_path):
    ds = dataset_folder(tmp_path / "ds", base=_with(0, 0.0, n=30))
    refused(capsys, ["explore", str(ds), *EXPLORE, "--out", str(tmp_path / "out")], "30 base vectors", "256")


def test_queries_outside_the_number_format(capsys, tmp_path):
    rng = np.random.default_rng(0)
    base = rng.integers(0, 256, (2000, 16)).astype(np.uint8)
    ds = dataset_folder(tmp_path / "ds", base=base, queries=base[:40].astype(np.float32) * 100)
    msg = refused(capsys, ["explore", str(ds), *EXPLORE, "--out", str(tmp_path / "out")], "outside the number format")
    assert "% of the elements" in msg


def test_explore_json_written_by_a_clean_run_is_accepted(tmp_path):
    """The fixtures above are refused for their hostile value only: the untouched one loads."""
    found, unreachable = workloads_from_explore(explore_folder(tmp_path / "ex"), parse_goal("R@10=0.8"))
    assert len(found) == 1 and not unreachable
    assert json.loads((tmp_path / "ex" / "explore.json").read_text())["indexes"][0]["nlist"] == 16
