"""The CLI as a user runs it (issue 18): `python -m fanns.cli` in a child process, under a memory
limit and a timeout, on a few representative bad inputs of every class. Each must exit non-zero
with one `fanns: error:` line (and its hint) on stderr naming the input, no traceback, within the
time and memory bounds (a dataset header claiming 10^12 vectors must not be allocated), and must
leave no output folder behind.

Why a child process: the in-process suites cannot see a native abort (faiss), an out-of-memory
kill, a hang, or a traceback printed by a subprocess of ours; the exit code and stderr here are
exactly what a user gets.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import numpy.lib.format as npy_format
import pytest
import yaml

from fanns.cli import main
from tests.hostile.helpers import child_env
from tests.hostile.inputs import board_data, dataset_folder, replaced, write_yaml
from tests.hostile.test_projects import EXPLORE, _design

MEMORY_LIMIT = 3 << 30
"""Address space of the child (bytes): far below what 10^12 vectors or a 10^9-deep FIFO would take."""
TIMEOUT = 120
"""Seconds a refused input may take (the checks run before any real work)."""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_cli(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`fanns ARGV` in a child process with its cache in `cwd`, bounded in memory and time."""
    return subprocess.run(
        [sys.executable, "-m", "fanns.cli", *argv],
        env=child_env(cwd / "cache"),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        preexec_fn=_limit_memory,
    )


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A dataset, its exploration, a pinned design and its HLS and RTL projects, and the hostile
    files of the table below."""
    root = tmp_path_factory.mktemp("battery")
    ds = dataset_folder(root / "ds")
    assert main(["explore", str(ds), *EXPLORE, "--out", str(root / "ex")]) == 0
    design = _design(root, root / "ex")
    for face in ("hls", "rtl"):
        argv = [f"generate-{face}", str(design), "--index", "ex", "--dataset", "ds", "--queries", "4"]
        assert main([*argv[:3], str(root / "ex"), *argv[4:5], str(ds), *argv[6:], "--out", str(root / face)]) == 0
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2040, 16)).astype(np.float32)
    late_nan = x[:2000].copy()
    late_nan[1500, 3] = np.nan
    dataset_folder(root / "nan", base=late_nan, queries=x[2000:])
    dataset_folder(root / "tiny", base=x[:30], queries=x[2000:])
    dataset_folder(root / "huge", base=x[:2000] * 1e29, queries=x[2000:] * 1e29)
    dataset_folder(root / "u8", base=rng.integers(0, 255, (2000, 16)).astype(np.uint8), queries=x[2000:] * 100)
    (root / "hdr").mkdir()
    with open(root / "hdr" / "base.fbin", "wb") as f:  # claims 4e9 x 16 floats, holds 10
        f.write(np.array([4_000_000_000, 16], dtype="<u4").tobytes() + bytes(640))
    np.save(root / "hdr" / "query.npy", x[2000:])
    (root / "npy").mkdir()
    with open(root / "npy" / "base.npy", "wb") as f:  # claims 10^12 x 16 floats
        npy_format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (10**12, 16)})
        f.write(bytes(64))
    np.save(root / "npy" / "query.npy", x[2000:])
    (root / "outside").mkdir()
    for name in ("base.npy", "query.npy"):
        (root / "outside" / name).write_bytes((ds / name).read_bytes())
    (root / "outside" / "dataset.yaml").write_text("base: /etc/passwd\nquery: query.npy\n")
    data = yaml.safe_load(design.read_text())
    for name, key, value in [
        ("d_nan", "format.scale", float("nan")),
        ("d_fifo", "fifo_depth", 10**9),
        ("d_channel", "memory.0.channel", 99),
        ("d_board", "board", "../../x"),
        ("d_goal", "goal", "R@10=0.8\nx"),
    ]:
        write_yaml(root / f"{name}.yaml", replaced(data, key, value))
    write_yaml(root / "bw0.yaml", replaced(board_data(), "memory.0.bandwidth_gbps", 0))
    write_yaml(root / "ch0.yaml", replaced(board_data(), "memory.0.count", 0))
    np.save(root / "far.npy", np.load(ds / "query.npy") * 100)
    np.save(root / "gt_ids.npy", np.full((40, 10), 10**8, dtype=np.int32))
    broken = root / "broken"
    broken.mkdir()
    (broken / "fanns_project.json").write_text("[1]")
    return root


GEN = ["--index", "ex", "--dataset", "ds", "--out", "o"]
EXP = ["--recall", "R@10=0.5", "--nlist", "8", "--m", "4", "--no-opq", "--out", "o"]
DSE = ["dse", "ex", "--board", "u55c", "--recall", "R@10=0.5", "--out", "o"]
CASES = {
    # datasets: NaN past the first rows, too few vectors for a PQ, values near 1e30 (a faiss
    # abort), queries outside the number format, headers claiming 10^12 vectors, reading outside
    "nan late": (["explore", "nan", *EXP], "non-finite"),
    "too few vectors": (["explore", "tiny", *EXP], "30 base vectors"),
    "near 1e30": (["explore", "huge", *EXP], "magnitude"),
    "queries x100": (["explore", "u8", *EXP], "number format"),
    "fbin header 4e9": (["explore", "hdr", *EXP], "base.fbin"),
    "npy header 1e12": (["explore", "npy", *EXP], "base.npy"),
    "dataset.yaml outside": (["explore", "outside", *EXP], "/etc/passwd"),
    # options
    "clock inf": ([*DSE, "--clock", "inf"], "--clock"),
    "util nan": ([*DSE, "--util", "nan"], "--util"),
    "goal newline": (["explore", "ds", *EXP, "--recall", "R@10=0.5\n"], "recall goal"),
    "goal over 1": ([*DSE[:5], "R@10=1.5", *DSE[6:]], "R@10=1.5"),
    "platform newline": (["generate-hls", "design-u55c.yaml", *GEN, "--platform", "a\nb"], "--platform"),
    "pause 2": (["sim", "rtl", "--pause", "2"], "--pause"),
    "latency -1": (["sim", "rtl", "--latency", "-1"], "--latency"),
    "queries 10^12": (["sim", "rtl", "--queries", str(10**12)], "--queries"),
    "first past the end": (["sim", "hls", "--backend", "csim", "--first", "4"], "--first 4"),
    # board files
    "bandwidth 0": ([*DSE[:3], "bw0.yaml", *DSE[4:]], "bandwidth_gbps"),
    "zero channels": ([*DSE[:3], "ch0.yaml", *DSE[4:]], "count"),
    # design.yaml
    "scale nan": (["generate-hls", "d_nan.yaml", *GEN], "scale"),
    "fifo 1e9": (["generate-hls", "d_fifo.yaml", *GEN], "fifo_depth"),
    "channel 99": (["generate-rtl", "d_channel.yaml", *GEN], "channel 99"),
    "board outside": (["generate-hls", "d_board.yaml", *GEN], "board"),
    "goal in design": (["generate-hls", "d_goal.yaml", *GEN], "goal"),
    # projects and the driver
    "csim on RTL": (["sim", "rtl", "--backend", "csim"], "--backend csim"),
    "rtl on HLS": (["sim", "hls", "--backend", "rtl"], "--backend rtl"),
    "record not an object": (["run", "broken", "--queries", "far.npy"], "fanns_project.json"),
    "run queries x100": (["run", "hls", "--queries", "far.npy"], "number format"),
    "run gt ids": (["run", "hls", "--queries", "ds/query.npy", "--groundtruth", "gt_ids.npy"], "gt_ids.npy"),
    "run batch 10^12": (["run", "hls", "--queries", "ds/query.npy", "--batch", str(10**12)], "batch"),
}


@pytest.mark.parametrize("case", CASES)
def test_refused_in_a_child_process(work, case):
    argv, fragment = CASES[case]
    out = run_cli(argv, work)
    assert out.returncode not in (0, -6, -9, 134, 137), (out.returncode, out.stderr[-2000:])
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    assert "Traceback" not in out.stderr, out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("fanns: error: ")]
    assert len(errors) == 1, out.stderr
    assert fragment in errors[0], (fragment, errors[0])
    assert not (work / "o").exists()


def test_the_battery_runs_what_works(work):
    """The bounds themselves leave room for real work: the same child runs a search."""
    out = run_cli(["run", "hls", "--queries", os.path.join("ds", "query.npy")], work)
    assert out.returncode == 0, out.stderr
    assert "40 queries" in out.stdout
