"""The recall sweep ends past the nprobe the goals need (`SWEEP_FACTOR`, `SWEEP_MIN`): what it
records is the full sweep's prefix, a goal it cannot meet still sweeps every nprobe, and a goal
the short sweep never reached is explained as such, not as out of reach."""

import faiss
import numpy as np
import pytest

from fanns.datasets import load_dataset
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.explore.ivfpq_record import SWEEP_FACTOR, SWEEP_MIN
from fanns.index.goals import parse_goal
from fanns.index.ivfpq import host_vectors
from fanns.index.ivfpq_recall import recall_hits
from fanns.model.ivfpq.no_fit import unreachable_text
from fanns.model.ivfpq.workload import workloads_from_explore

NLIST = 256


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    ds = load_dataset("builtin:sift-10k")
    out = tmp_path_factory.mktemp("horizon")
    easy = parse_goal("R@10=0.3")
    cfg = ExploreConfig(goals=[easy], nlists=[NLIST], ms=[16], opq=(False,), qps_min_seconds=0.01)
    result = IvfPqExplorer(ds, cfg, out).run()
    return ds, out, result


def test_sweep_stops_past_the_goal_and_keeps_the_full_prefix(explored):
    ds, out, result = explored
    rec = result["indexes"][0]
    p = rec["goals"]["R@10=0.3"]["nprobe"]
    swept = min(NLIST, max(SWEEP_MIN, SWEEP_FACTOR * p))
    assert swept < NLIST, "the easy goal must leave part of the sweep out, or this test shows nothing"
    assert rec["curve"]["nprobe"] == list(range(1, swept + 1))
    assert all(len(c) == swept for c in rec["selection_curve"].values())
    index = faiss.read_index(str(out / rec["path"]))
    queries = host_vectors(ds.queries, ds.metric)
    full = recall_hits(index, queries, ds.groundtruth(10), [(10, 10)], NLIST)[(10, 10)]
    assert full.shape[1] == NLIST
    assert rec["curve"]["R@10"] == [round(float(r), 6) for r in full.mean(0)[:swept] / 10]


def test_unreachable_goal_sweeps_every_nprobe(tmp_path):
    ds = load_dataset("builtin:sift-10k")
    cfg = ExploreConfig(
        goals=[parse_goal("R@10=0.3"), parse_goal("R@10=0.999")],
        nlists=[NLIST],
        ms=[16],
        opq=(False,),
        qps_min_seconds=0.01,
    )
    rec = IvfPqExplorer(ds, cfg, tmp_path / "out").run()["indexes"][0]
    assert not rec["goals"]["R@10=0.999"]["reached"]
    assert rec["curve"]["nprobe"] == list(range(1, NLIST + 1))


def test_goal_beyond_the_short_sweep_says_to_explore_it(explored):
    _, out, result = explored
    rec = result["indexes"][0]
    held = np.array(rec["holdout_curve"]["R@10"])
    goal = parse_goal(f"R@10={min(0.999, round(float(held.max()) + 0.01, 3))}")  # above all the short sweep saw
    workloads, unreachable = workloads_from_explore(out, goal)
    assert workloads == [] and unreachable[0]["swept_nprobe"] == len(held)
    text = " ".join(unreachable_text(goal.text, unreachable))
    assert "re-run `fanns explore`" in text and f"--recall {goal.text}" in text
