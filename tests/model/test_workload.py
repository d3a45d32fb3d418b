"""Workloads: the synthetic published-scale workload, and reading an exploration folder."""

import json

import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.index.goals import parse_goal
from fanns.model.ivfpq.no_fit import no_design_hint, unreachable_text
from fanns.model.ivfpq.workload import (
    EXPLORE_VERSION,
    size_biased_probes,
    synthetic_list_sizes,
    synthetic_workload,
    workloads_from_explore,
)


def test_synthetic_list_sizes_sum_and_imbalance():
    rng = np.random.default_rng(0)
    for imbalance in (1.0, 1.2, 1.6):
        sizes = synthetic_list_sizes(10**8, 8192, imbalance, rng)
        assert sizes.sum() == 10**8 and sizes.min() >= 0
        measured = len(sizes) * (sizes.astype(float) ** 2).sum() / float(sizes.sum()) ** 2
        assert measured == pytest.approx(imbalance, rel=0.05)
    with pytest.raises(FannsError, match="must be >= 1"):
        synthetic_list_sizes(100, 10, 0.5, rng)


def test_probes_are_distinct_and_size_biased():
    rng = np.random.default_rng(1)
    sizes = np.array([1000, 1000, 4000, 4000, 10, 10] * 5)
    probes = size_biased_probes(sizes, 3, 20000, rng)
    assert probes.shape == (20000, 3)
    assert all(len(set(row)) == 3 for row in probes[:500].tolist())
    first = np.bincount(probes[:, 0], minlength=len(sizes)) / len(probes)
    # the first probe is a single draw proportional to size
    assert first == pytest.approx(sizes / sizes.sum(), abs=0.01)


def test_synthetic_workload_is_deterministic():
    a = synthetic_workload(10**6, 128, 16, 256, 8, 10, True, queries=50, seed=3)
    b = synthetic_workload(10**6, 128, 16, 256, 8, 10, True, queries=50, seed=3)
    assert (a.probed == b.probed).all() and (a.list_sizes == b.list_sizes).all()
    assert a.index == "OPQ16,IVF256,PQ16" and a.probed.shape == (50, 8)
    assert a.with_queries(10).queries == 10


def write_explore(folder, goals, curve, probes_depth=6, nlist=16, held=None, training_sd=0.0):
    """A minimal exploration folder in the format `fanns explore` writes (explore.json + .npy):
    100 selection and 100 held-out queries whose per-query R@10 spreads by 0.1."""
    idx = folder / "indexes"
    idx.mkdir(parents=True)
    rng = np.random.default_rng(0)
    sizes = rng.integers(0, 50, nlist)
    np.save(idx / "IVF16_PQ4.list_sizes.npy", sizes)
    np.save(
        idx / "IVF16_PQ4.probes.npy", np.argsort(rng.random((20, nlist)), axis=1)[:, :probes_depth].astype(np.int32)
    )
    fmt = {
        "d": 16,
        "m": 4,
        "scale": 2.0,
        "ivf_shift": 0,
        "lut_shift": 0,
        "vec_bits": 16,
        "opq_frac_bits": 14,
        "ivf_dist_bits": 32,
        "lut_bits": 16,
        "source": {},
    }
    rec = {
        "index": "IVF16,PQ4",
        "nlist": nlist,
        "m": 4,
        "opq": False,
        "path": "indexes/IVF16_PQ4.faissindex",
        "list_sizes": "indexes/IVF16_PQ4.list_sizes.npy",
        "probes": "indexes/IVF16_PQ4.probes.npy",
        "probes_nprobe": probes_depth,
        "format": fmt,
        "curve": {"nprobe": list(range(1, nlist + 1)), "R@10": curve},
        "sd_curve": {"R@10": [0.1] * len(curve)},
        "selection_curve": {"R@10": curve},
        "selection_sd_curve": {"R@10": [0.1] * len(curve)},
        "holdout_curve": {"R@10": [r - 0.01 for r in curve] if held is None else held},
        "goals": goals,
    }
    split = {"selection_queries": 100, "holdout_queries": 100, "training_sd": training_sd}
    head = {"version": EXPLORE_VERSION, "recall_split": split}
    (folder / "explore.json").write_text(json.dumps({**head, "indexes": [rec]}))
    return sizes


def test_reads_the_goal_entry_and_the_probed_sizes(tmp_path):
    curve = [0.3, 0.5, 0.7, 0.8, 0.85, 0.9] + [0.95] * 10
    goals = {"R@10=0.8": {"reached": True, "nprobe": 4, "recall": 0.82, "hw_recall": 0.81}}
    sizes = write_explore(tmp_path, goals, curve)
    (w,), unreachable = workloads_from_explore(tmp_path, parse_goal("R@10=0.8"))
    probes = np.load(tmp_path / "indexes" / "IVF16_PQ4.probes.npy")
    assert unreachable == [] and w.nprobe == 4 and w.k == 10 and w.hw_recall == 0.81
    assert (w.probed == sizes[probes[:, :4]]).all()
    assert w.index_path == tmp_path / "indexes" / "IVF16_PQ4.faissindex"
    # a goal the explorer was not asked for comes from the curves by the same rule: the selection
    # queries' lower bound must reach it (0.85 at nprobe 5 is a mean, its bound is below 0.85)
    (w2,), _ = workloads_from_explore(tmp_path, parse_goal("R@10=0.85"))
    assert w2.nprobe == 6 and w2.hw_recall is None
    assert w2.selection_recall == 0.9 and w2.recall == pytest.approx(0.89)  # the held-out curve's
    assert 0.85 <= w2.selection_bound < 0.9
    # deeper than the recorded probes: a clear error
    with pytest.raises(FannsError, match="needs nprobe=7"):
        workloads_from_explore(tmp_path, parse_goal("R@10=0.9"))


def test_a_reached_entry_below_the_goal_on_held_out_queries_is_refused(tmp_path):
    """No design is ever chosen at a point whose held-out recall is below the goal: an entry that
    says reached but holds such a recall did not come from this explorer."""
    goals = {"R@10=0.8": {"reached": True, "nprobe": 4, "recall": 0.82, "hw_recall": 0.79}}
    write_explore(tmp_path, goals, [0.9] * 16)
    with pytest.raises(FannsError, match="held-out hw_recall 0.79 is below 0.8") as err:
        workloads_from_explore(tmp_path, parse_goal("R@10=0.8"))
    assert "re-run `fanns explore`" in err.value.hint


def test_unreachable_goal_reports_the_best_recall_and_why(tmp_path):
    curve = [0.3, 0.5] + [0.6] * 14
    entry = {"reached": False, "best_recall": 0.6, "best_nprobe": 3, "reason": "below", "at_nprobe": 3}
    write_explore(tmp_path, {"R@10=0.8": entry}, curve)
    found, unreachable = workloads_from_explore(tmp_path, parse_goal("R@10=0.8"))
    named = {"index": "IVF16,PQ4", "m": 4, "opq": False, "d": 16}
    assert found == [] and unreachable == [{**named, **{k: v for k, v in entry.items() if k != "reached"}}]
    found, unreachable = workloads_from_explore(tmp_path, parse_goal("R@10=0.9"))
    assert found == [] and unreachable[0]["best_recall"] == pytest.approx(0.6)
    assert unreachable[0]["reason"] == "below"


def test_unreachable_goal_names_the_m_that_divide_d():
    """Recall is bounded by the PQ codes: the advice names the next m dividing d, and neither a
    board nor --util (which cannot change recall)."""
    u = [{"index": "IVF32,PQ10", "m": 10, "opq": False, "d": 100, "best_recall": 0.61, "best_nprobe": 32}]
    _, advice = unreachable_text("R@10=0.9", u)
    assert "m must divide d = 100: 20, 25, 50)" in advice and "OPQ" in advice
    assert "board and --util do not change recall" in advice
    hint = no_design_hint(reachable=False)
    assert "another board" not in hint and "higher --util" not in hint and "another board" in no_design_hint(True)
    _, advice = unreachable_text("R@10=0.9", [{**u[0], "m": 50, "opq": True}])
    assert "no m between the explored 50 and d = 100" in advice and "OPQ" not in advice


def test_goal_from_the_curves_follows_the_promise_rule(tmp_path):
    curve = [0.3, 0.5, 0.7, 0.8, 0.85, 0.9] + [0.95] * 10
    write_explore(tmp_path, {}, curve)
    (w,), _ = workloads_from_explore(tmp_path, parse_goal("R@10=0.8"))
    assert w.nprobe == 5  # the bound of 0.85 (100 queries, spread 0.1) is 0.808
    # the training spread widens the bound: 0.85 no longer passes at 0.8, 0.9 does
    write_explore(tmp_path / "trained", {}, curve, training_sd=0.03)
    (w,), _ = workloads_from_explore(tmp_path / "trained", parse_goal("R@10=0.8"))
    assert w.nprobe == 6 and w.selection_recall == 0.9
    # held-out queries below the goal where the selection bound passes: nprobe rises until they agree
    held = [0.3, 0.5, 0.7, 0.8, 0.79, 0.9] + [0.95] * 10
    write_explore(tmp_path / "held", {}, curve, held=held)
    (w,), _ = workloads_from_explore(tmp_path / "held", parse_goal("R@10=0.8"))
    assert w.nprobe == 6 and w.recall == 0.9


def test_an_exploration_by_an_older_rule_is_refused(tmp_path):
    write_explore(tmp_path, {"R@10=0.8": {"reached": True, "nprobe": 4, "recall": 0.8}}, [0.9] * 16)
    explore = json.loads((tmp_path / "explore.json").read_text())
    for version, rule in ((None, "same queries it chose nprobe on"), (2, "goal \\+ 0.04")):
        if version is None:
            del explore["version"]
        else:
            explore["version"] = version
        (tmp_path / "explore.json").write_text(json.dumps(explore))
        with pytest.raises(FannsError, match=rule) as err:
            workloads_from_explore(tmp_path, parse_goal("R@10=0.8"))
        assert "re-run `fanns explore`" in err.value.hint


def test_bad_exploration_folders(tmp_path):
    with pytest.raises(FannsError, match="run `fanns explore"):
        workloads_from_explore(tmp_path, parse_goal("R@10=0.8"))
    (tmp_path / "explore.json").write_text("{not json")
    with pytest.raises(FannsError, match="not valid JSON"):
        workloads_from_explore(tmp_path, parse_goal("R@10=0.8"))
    (tmp_path / "explore.json").write_text(json.dumps({"indexes": []}))
    with pytest.raises(FannsError, match="no IVF-PQ index records"):
        workloads_from_explore(tmp_path, parse_goal("R@10=0.8"))
    with pytest.raises(FannsError, match="cannot parse recall goal"):
        workloads_from_explore(tmp_path, parse_goal("recall 0.8"))
