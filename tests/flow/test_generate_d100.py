"""Issue 46's case: a user's own 20,000 x 100 float32 set (d not a power of two, m = 20 or 25:
sub-vectors of 5 or 4) through `fanns generate DATA --recall 1-R@10=0.8 --board u55c --m 20,25
--sim`, and the design the DSE gave that user (IVFDist 256 PEs x 4 lanes, HSMPQG over 256 streams,
144 BuildLUT PEs, 2 PQDist PEs on 2 HBM channels), which ended `generate` and `generate-rtl` in
Amaranth's RecursionError until the IVFDist array stopped rippling its ready through every PE.
Both generate both faces and simulate them bit-exact, the RTL within the fuzz's cycle tolerance."""

import dataclasses
import json

import numpy as np
import pytest

from fanns.cli import main
from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.project import layout
from fanns.datasets.loader import load_dataset
from fanns.flow.design_fuzz import CYCLE_TOLERANCE
from fanns.flow.ivfpq_inputs import index_record, load_index
from fanns.flow.ivfpq_project_sim import simulate_csim, simulate_rtl
from fanns.index.goals import parse_goal
from fanns.index.ivfpq import host_vectors
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.workload import workloads_from_explore

GOAL = "1-R@10=0.8"
SIM_QUERIES = 16
ISSUE_INDEX = "IVF512,PQ20"
ISSUE_DSUB_HW = 8
"""The issue's design padded its 5-wide sub-vectors to 8 (4 IVFDist and BuildLUT lanes divide 8, not 5)."""


def _own_set(folder, n=20_000, nq=400, d=100, seed=46):
    """A user's set: 200 Gaussian blobs of unequal spread in 100 dimensions, float32 .npy files."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((200, d)) * 3
    x = centres[rng.integers(0, 200, n + nq)] + rng.standard_normal((n + nq, d)) * rng.uniform(0.5, 1.5, (n + nq, 1))
    folder.mkdir()
    np.save(folder / "base.npy", x[:n].astype(np.float32))
    np.save(folder / "query.npy", x[n:].astype(np.float32))
    return folder


@pytest.fixture(scope="module")
def generated(tmp_path_factory, build_root):
    root = tmp_path_factory.mktemp("d100")
    data = _own_set(root / "data")
    argv = ["generate", str(data), "--recall", GOAL, "--board", "u55c", "--m", "20,25", "--sim"]
    argv += ["--sim-queries", str(SIM_QUERIES), "--explore-dir", str(root / "explore")]
    code = main([*argv, "--build-dir", str(build_root / "d100"), "--out", str(root / "project")])
    return {"code": code, "data": data, "explore": root / "explore", "project": root / "project", "root": root}


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_generate_on_the_users_d100_set_simulates_bit_exact(generated):
    assert generated["code"] == 0
    summary = json.loads((generated["project"] / "report" / "summary.json").read_text())
    assert summary["dataset"]["d"] == 100 and summary["design"]["m"] in (20, 25)
    sims = {s["backend"]: s for s in summary["simulation"]}
    assert sorted(sims) == ["hls", "rtl"]
    assert all(s["mismatched_queries"] == 0 and s["queries"] == SIM_QUERIES for s in sims.values()), sims
    assert abs(sims["rtl"]["cycle_error_pct"]) <= 100 * CYCLE_TOLERANCE, sims["rtl"]


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_the_design_the_dse_gave_the_user_builds_and_is_bit_exact(generated, build_root):
    """The issue's design on the same kind of set: 256 IVFDist PEs in one 1-D array."""
    explore, ds = generated["explore"], load_dataset(str(generated["data"]))
    workloads, _ = workloads_from_explore(explore, parse_goal(GOAL))
    w = next(w for w in workloads if w.index == ISSUE_INDEX)
    record = json.loads((explore / "explore.json").read_text())
    data = load_index(explore, next(r for r in record["indexes"] if r["index"] == ISSUE_INDEX), ds.metric)
    design = pinned_design(
        data,
        dataclasses.replace(w.fmt, dsub_hw=ISSUE_DSUB_HW),
        nprobe=w.nprobe,
        k=10,
        ivf=(256, 4, "bram"),
        lut=(144, 4, "bram"),
        pq=(2, 2),
        sel_cells="hsmpqg",
    )
    assert index_record(record, explore, design)["index"] == ISSUE_INDEX
    queries = host_vectors(np.asarray(ds.queries)[:SIM_QUERIES], ds.metric)
    test = TestQueries(queries=queries, groundtruth=ds.groundtruth(10)[:SIM_QUERIES])
    project = generated["root"] / "issue-design"
    layout(design, data, test, ("hls", "rtl")).write(project)
    hls = simulate_csim(project / "hls", SIM_QUERIES, build_root)
    rtl = simulate_rtl(project / "rtl", SIM_QUERIES, build_root)
    assert hls["mismatched_queries"] == rtl["mismatched_queries"] == 0, (hls, rtl)
    assert abs(rtl["cycle_error_pct"]) <= 100 * CYCLE_TOLERANCE, rtl
