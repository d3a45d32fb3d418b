"""The IVF-PQ explorer on a built-in set: recall against an independent brute force, exact
smallest nprobe, monotone curves, hardware work, unreachable goals, caching, CLI errors."""

import json

import faiss
import numpy as np
import pytest

from fanns.cli import main
from fanns.datasets import load_dataset
from fanns.errors import FannsError
from fanns.explore import ivfpq_config, ivfpq_training
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.explore.ivfpq_reuse import ensure_exploration
from fanns.explore.ivfpq_training import default_ms, default_nlists
from fanns.index.goals import RecallGoal, parse_goal
from fanns.index.holdout import TRAINING_SD, lower_bound
from fanns.model.ivfpq.workload import EXPLORE_VERSION
from fanns.numerics import IvfPqFormat
from tests.hostile.inputs import dataset_folder

GOALS = [RecallGoal(1, 0.99), RecallGoal(10, 0.5), RecallGoal(100, 0.6), RecallGoal(10, 0.8, truth=1)]
MONOTONE_TOL = 0.005 + 1e-9
"""PQ recall need not be monotone in nprobe (more candidates can push a true neighbour out of
the top k); over 200 queries a drop larger than 0.5 percentage points (one query's hit; the
1e-9 absorbs the float difference of two rounded curve values) would be a bug."""


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    ds = load_dataset("builtin:sift-10k")
    out = tmp_path_factory.mktemp("explore")
    cfg = ExploreConfig(goals=GOALS, nlists=[32], opq=(False, True), qps_min_seconds=0.01)
    result = IvfPqExplorer(ds, cfg, out).run()
    return ds, out, result


def _squared_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Every row of `a` against every row of `b`, float64, as |a|^2 - 2 a.b + |b|^2: one matrix
    product instead of a [len(a), len(b), d] difference array (2 GB for 200 x 10,000 x 128)."""
    return (a * a).sum(1)[:, None] - 2.0 * (a @ b.T) + (b * b).sum(1)[None, :]


def _brute_force_curve(ds, index, nprobes, k):
    """Independent: decode every code to a vector, rank by exact float64 distance in numpy."""
    ivf = faiss.extract_index_ivf(index)
    ivf.make_direct_map()
    recon = ivf.reconstruct_n(0, ds.n).astype(np.float64)  # centroid + decoded residual (rotated space)
    from faiss.contrib.inspect_tools import get_invlist

    from fanns.index.ivfpq import apply_pretransform

    q = apply_pretransform(index, np.asarray(ds.queries, np.float32)).astype(np.float64)
    cents = ivf.quantizer.reconstruct_n(0, ivf.nlist).astype(np.float64)
    cell_of = np.empty(ds.n, dtype=np.int64)
    for c in range(ivf.nlist):
        cell_of[get_invlist(ivf.invlists, c)[0]] = c
    exact = _squared_distances(np.asarray(ds.queries, np.float64), np.asarray(ds.base, np.float64))
    gt = np.argsort(exact, axis=1, kind="stable")[:, :k]
    cell_rank = np.argsort(_squared_distances(q, cents), axis=1, kind="stable")
    approx = _squared_distances(q, recon)
    out = {}
    for p in nprobes:
        allowed = np.zeros((ds.nq, ivf.nlist), bool)
        np.put_along_axis(allowed, cell_rank[:, :p], True, axis=1)
        masked = np.where(allowed[:, cell_of], approx, np.inf)
        top = np.argsort(masked, axis=1, kind="stable")[:, :k]
        out[p] = (
            np.mean([len(set(top[i]) & set(gt[i])) / k for i in range(ds.nq)]),
            np.mean([gt[i, 0] in set(top[i]) for i in range(ds.nq)]),
        )
    return out


def test_recall_matches_brute_force(explored):
    ds, out, result = explored
    for rec in result["indexes"]:
        index = faiss.read_index(str(out / rec["path"]))
        brute = _brute_force_curve(ds, index, [1, 2, 4, 8, 32], 10)
        curve, curve1 = rec["curve"]["R@10"], rec["curve"]["1-R@10"]
        for p, (r, r1) in brute.items():
            assert curve[p - 1] == pytest.approx(r, abs=0.004), (rec["index"], p)
            assert curve1[p - 1] == pytest.approx(r1, abs=0.006), (rec["index"], p)


def test_smallest_nprobe_is_exact_and_curves_monotone(explored):
    _, _, result = explored
    for rec in result["indexes"]:
        assert rec["curve"]["nprobe"] == list(range(1, 33))
        for key in ("R@1", "R@10", "R@100", "1-R@10"):
            c = np.array(rec["curve"][key])
            assert np.all(np.diff(c) >= -MONOTONE_TOL), (rec["index"], key)
        n_sel = result["recall_split"]["selection_queries"]
        for g in GOALS:
            r = rec["goals"][g.text]
            curve = np.array(rec["curve"][g.name])
            chosen = np.array(rec["selection_curve"][g.name])
            bound = lower_bound(chosen, np.array(rec["selection_sd_curve"][g.name]), n_sel)
            held = np.array(rec["holdout_curve"][g.name])
            if r["reached"]:
                p = r["nprobe"]
                # the smallest nprobe whose selection bound and held-out recall reach the goal
                ok = (bound >= g.target - 1e-6) & (held >= g.target - 1e-9)
                assert ok[p - 1] and not ok[: p - 1].any()
                assert r["selection_recall"] == pytest.approx(chosen[p - 1])
                assert r["selection_bound"] == pytest.approx(bound[p - 1], abs=1e-5)
                assert r["recall"] == pytest.approx(held[p - 1]) and r["recall"] >= g.target
                assert min(r["hw_recall"], r["all_queries_recall"], r["all_queries_hw_recall"]) >= g.target
                assert r["all_queries_recall"] == pytest.approx(curve[p - 1])
                lo, hi = r["recall_interval"]
                assert lo <= r["recall"] <= hi and hi - lo > 0
            else:
                assert not ((bound >= g.target - 1e-6) & (held >= g.target - 1e-9)).any()
                assert r["best_recall"] == pytest.approx(curve.max()) and r["reason"] in ("below", "training")


def test_selection_and_held_out_queries_split_the_sample(explored):
    ds, _, result = explored
    split = result["recall_split"]
    assert split["selection_queries"] + split["holdout_queries"] == ds.nq == result["dataset"]["queries_used"]
    assert split["training_sd"] == TRAINING_SD and "bootstrap" in split["interval"]
    for rec in result["indexes"]:
        for name, curve in rec["curve"].items():
            if name == "nprobe":
                continue
            # the whole sample's recall is the query-weighted mean of its two parts
            parts = split["selection_queries"] * np.array(rec["selection_curve"][name])
            parts += split["holdout_queries"] * np.array(rec["holdout_curve"][name])
            assert np.allclose(parts / ds.nq, curve, atol=2e-6)


def test_unreachable_goal_reported(explored):
    _, _, result = explored
    best = result["best"]["R@1=0.99"]
    assert best["reached"] is False and 0 < best["best_recall"] < 0.99


def test_hardware_work_and_files(explored):
    ds, out, result = explored
    saved = json.loads((out / "explore.json").read_text())
    assert saved["indexes"][0]["index"] == "IVF32,PQ16" and saved["indexes"][1]["index"] == "OPQ16,IVF32,PQ16"
    for rec in saved["indexes"]:
        sizes = np.load(out / rec["list_sizes"])
        probes = np.load(out / rec["probes"])
        assert sizes.shape == (32,) and sizes.sum() == ds.n
        fmt = IvfPqFormat.from_dict(rec["format"])
        assert fmt.m == 16 and fmt.source["nprobe"] == rec["probes_nprobe"]
        reached = [r for r in rec["goals"].values() if r["reached"]]
        assert reached
        assert probes.shape == (ds.nq, max(r["nprobe"] for r in reached))
        assert np.all(np.sort(probes, axis=1)[:, 1:] != np.sort(probes, axis=1)[:, :-1])  # distinct cells
        for r in reached:
            codes = sizes[probes[:, : r["nprobe"]]].sum(1)
            assert r["codes_per_query"]["mean"] == pytest.approx(codes.mean(), abs=1e-3)
            assert r["codes_per_query"]["p99"] == pytest.approx(np.percentile(codes, 99))
            assert r["bytes_per_query"]["mean"] == pytest.approx(codes.mean() * 20, abs=0.1)
            assert abs(r["hw_recall"] - r["recall"]) <= 0.02  # both on the held-out queries
            assert r["hw_recall_interval"][0] <= r["hw_recall"] <= r["hw_recall_interval"][1]
            assert r["cpu_qps"] > 0


def test_an_exploration_by_the_older_rule_is_explored_again(tmp_path, monkeypatch):
    """An explore.json fanns wrote under the earlier rule (format 2: selection mean >= goal + 0.04)
    is not reused as if it followed the promise rule: the command explores again, into the same
    folder, with the trained indexes reused."""
    ds = load_dataset(str(dataset_folder(tmp_path / "ds")))
    cfg = ExploreConfig(goals=[parse_goal("R@10=0.5")], nlists=[8], ms=[4], opq=(False,), qps_min_seconds=0.0)
    with monkeypatch.context() as m:
        m.setattr(ivfpq_config, "EXPLORE_VERSION", 2)
        _, old, _ = ensure_exploration(ds, cfg, tmp_path / "ex")
    assert old["version"] == 2

    def no_training(*a, **k):
        raise AssertionError("index retrained although cached")

    monkeypatch.setattr(ivfpq_training, "train_index", no_training)
    _, new, reused = ensure_exploration(ds, cfg, tmp_path / "ex")
    assert not reused and new["version"] == EXPLORE_VERSION == 3
    assert new["indexes"][0]["curve"] == old["indexes"][0]["curve"]  # the same index, measured again
    assert "selection_bound" in new["indexes"][0]["goals"]["R@10=0.5"] and "rule" in new["recall_split"]


def test_rerun_reuses_trained_indexes(explored, monkeypatch):
    ds, out, result = explored

    def no_training(*a, **k):
        raise AssertionError("index retrained although cached")

    monkeypatch.setattr(ivfpq_training, "train_index", no_training)
    monkeypatch.setattr(ivfpq_training, "train_shared_index", no_training)
    cfg = ExploreConfig(goals=GOALS, nlists=[32], opq=(False, True), qps_min_seconds=0.01)
    again = IvfPqExplorer(ds, cfg, out).run()
    for a, b in zip(again["indexes"], result["indexes"]):
        assert a["curve"] == b["curve"] and a["format"] == b["format"]


def test_defaults():
    assert default_nlists(100_000) == [128, 256, 512, 1024]
    assert default_nlists(10_000) == [32, 64, 128, 256]
    # below 256-d one m (16, or the largest divisor of d under it); from 256-d on also about d/8
    assert default_ms(128) == [16] and default_ms(50) == [10] and default_ms(96) == [16]
    assert default_ms(384) == [16, 48] and default_ms(768) == [16, 96] and default_ms(784) == [16, 98]
    assert default_ms(1024) == [16, 128] and default_ms(1536) == [16, 128] and default_ms(300) == [15, 30]
    for d in range(1, 2049):
        ms = default_ms(d)
        assert all(d % m == 0 and 1 <= m <= 128 for m in ms), d


def test_goal_syntax():
    assert parse_goal("R@10=0.8") == RecallGoal(10, 0.8)
    assert parse_goal("r@100=95%") == RecallGoal(100, 0.95)
    assert parse_goal("1-R@10=0.8") == parse_goal("R1@10=80%") == RecallGoal(10, 0.8, truth=1)
    assert parse_goal("1-R@10=0.8").text == "1-R@10=0.8" and RecallGoal(10, 0.8).text == "R@10=0.8"
    for bad in ("R10=0.8", "R@10=1.5", "R@0=0.5", "recall"):
        with pytest.raises(FannsError):
            parse_goal(bad)


def test_cli_errors(capsys, tmp_path):
    assert main(["explore", "builtin:sift-10k", "--recall", "R@10", "--out", str(tmp_path)]) == 2
    assert "R@k=x" in capsys.readouterr().err
    assert main(["explore", "builtin:sift-10k", "--recall", "R@10=0.5", "--m", "7", "--out", str(tmp_path)]) == 2
    assert "does not divide" in capsys.readouterr().err
    rng = np.random.default_rng(0)
    from fanns.datasets import write_vectors

    write_vectors(tmp_path / "base.fvecs", rng.standard_normal((500, 8)).astype(np.float32))
    write_vectors(tmp_path / "query.fvecs", rng.standard_normal((5, 8)).astype(np.float32))
    (tmp_path / "dataset.yaml").write_text("metric: ip\n")
    assert main(["explore", str(tmp_path), "--recall", "R@1=0.5", "--out", str(tmp_path / "o")]) == 2
    assert "not supported" in capsys.readouterr().err


def test_opq_with_fewer_vectors_than_dimensions_is_refused(capsys, tmp_path):
    """faiss's OPQ training corrupts the heap (an abort) on fewer training vectors than d: the
    explorer refuses such a grid before any work, and the trainers refuse such a sample."""
    from fanns.datasets import write_vectors
    from fanns.index.ivfpq_shared import train_rotation

    rng = np.random.default_rng(0)
    base = rng.standard_normal((600, 1024)).astype(np.float32)
    write_vectors(tmp_path / "base.fvecs", base)
    write_vectors(tmp_path / "query.fvecs", base[:5])
    out = tmp_path / "o"
    assert main(["explore", str(tmp_path), "--recall", "R@1=0.5", "--nlist", "16", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "OPQ" in err and "600" in err and "--no-opq" in err and "Traceback" not in err
    assert not out.exists()
    with pytest.raises(FannsError, match="at least d = 1024"):
        train_rotation(base[:300], 8)


def test_cli_reports_unreachable(capsys, tmp_path):
    code = main(
        [
            "explore",
            "builtin:sift-10k",
            "--recall",
            "R@1=0.999",
            "--nlist",
            "32",
            "--no-opq",
            "--queries",
            "50",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "not reachable" in out and "best recall seen" in out
