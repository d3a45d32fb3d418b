"""Interrupts and concurrent runs, in real child processes: SIGINT, SIGTERM and SIGHUP in the middle
of a folder-writing command leave no staging folder, no lock and no output (and an earlier output
whole); two explorations into one folder take turns and leave one run's consistent result."""

import json
import signal
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from fanns.cli import main
from fanns.datasets import load_dataset
from fanns.datasets.dataset import exact_knn
from fanns.errors import FannsError
from fanns.explore import ivfpq_cache
from fanns.explore.ivfpq import ExploreConfig
from fanns.explore.ivfpq_reuse import ensure_exploration
from fanns.index.goals import parse_goal
from fanns.model.ivfpq.workload import workloads_from_explore
from fanns.outputs import foreign_files, read_manifest
from tests.hostile.helpers import EXPLORE, assert_clean_error, make_dataset, snapshot, start_cli
from tests.tiers import slow_params

LONG_GRID = ["--recall", "R@10=0.5", "--nlist", "4,8,16,32", "--m", "2,4,8,16", "--both"]
"""32 indexes: long enough that the signal arrives while the staging folder is being filled."""
TIMEOUT = 120


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    folder = make_dataset(tmp_path_factory.mktemp("data") / "ds")
    load_dataset(str(folder)).groundtruth(10)  # exact neighbours cached once, beside the data
    return folder


def wait_for_staging(proc: subprocess.Popen, parent: Path, name: str) -> None:
    """Return once `.NAME.*.tmp` exists in `parent` (the run is writing); fail if it ends first."""
    deadline = time.monotonic() + TIMEOUT
    while not list(parent.glob(f".{name}.*.tmp")):
        if proc.poll() is not None:
            raise AssertionError(f"the run ended ({proc.returncode}) before staging: {proc.communicate()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("no staging folder appeared")
        time.sleep(0.01)


def leftovers(parent: Path, name: str) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


# SIGHUP takes SIGTERM's road (fanns.cli.TERMINATING): the slow tier runs it
@pytest.mark.parametrize(
    "sig", slow_params([signal.SIGTERM, signal.SIGHUP, signal.SIGINT], fast={"SIGTERM", "SIGINT"}, ids=lambda s: s.name)
)
def test_a_signal_mid_run_leaves_nothing(dataset, tmp_path, sig):
    out = tmp_path / "work" / "ex"
    proc = start_cli(["explore", str(dataset), *LONG_GRID, "--out", str(out)], tmp_path / "cache")
    wait_for_staging(proc, out.parent, "ex")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == (130 if sig == signal.SIGINT else 128 + sig), err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("fanns: "), err
    assert not out.parent.exists()  # not even the parent folder the run made for it


# SIGHUP takes SIGTERM's road (fanns.cli.TERMINATING): the slow tier runs it
@pytest.mark.parametrize("sig", slow_params([signal.SIGTERM, signal.SIGHUP], fast={"SIGTERM"}, ids=lambda s: s.name))
def test_a_signal_during_force_keeps_the_earlier_output_whole(dataset, tmp_path, sig):
    out = tmp_path / "ex"
    assert main(["explore", str(dataset), *EXPLORE, "--out", str(out)]) == 0
    (out / "NOTES.txt").write_text("mine")
    before = snapshot(out)
    proc = start_cli(["explore", str(dataset), *LONG_GRID, "--out", str(out), "--force"], tmp_path / "cache")
    wait_for_staging(proc, tmp_path, "ex")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 128 + sig and "Traceback" not in err, err
    assert snapshot(out) == before and leftovers(tmp_path, "ex") == []


def run_two(argvs: list[list[str]], cache: Path) -> list[tuple[int, str]]:
    """Start both commands at once; (exit code, stderr) of each."""
    procs = [start_cli(argv, cache) for argv in argvs]
    results = []
    for p in procs:
        _, err = p.communicate(timeout=4 * TIMEOUT)
        results.append((p.returncode, err))
    return results


def test_two_explorations_into_one_folder_take_turns(dataset, tmp_path):
    """Different query counts, so files of the two runs cannot be mixed unnoticed."""
    out = tmp_path / "ex"
    grid = ["--recall", "R@10=0.5", "--nlist", "4,8,16", "--m", "4", "--both", "--out", str(out), "--force"]
    argvs = [["explore", str(dataset), *grid, "--queries", str(q)] for q in (20, 40)]
    results = run_two(argvs, tmp_path / "cache")
    assert [code for code, _ in results] == [0, 0], results  # the second waited, then replaced the first's
    manifest = read_manifest(out)
    assert manifest["what"] == "exploration" and foreign_files(out, manifest) == ([], [])
    workloads, unreachable = workloads_from_explore(out, parse_goal("R@10=0.5"))  # explore.json agrees with its files
    assert len(workloads) + len(unreachable) == 6
    assert len({w.queries for w in workloads}) == 1 and leftovers(tmp_path, "ex") == []


def test_two_explorations_without_force_one_wins(dataset, tmp_path):
    out = tmp_path / "ex"
    results = run_two([["explore", str(dataset), *EXPLORE, "--out", str(out)]] * 2, tmp_path / "cache")
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    assert_clean_error(next(err for code, err in results if code == 2), str(out), "already exists")
    assert workloads_from_explore(out, parse_goal("R@10=0.5"))[0] and leftovers(tmp_path, "ex") == []


def test_reusing_commands_share_one_exploration_folder(dataset, tmp_path):
    """`generate` and `sweep` reuse or extend an exploration folder (their cache): two at once,
    asking for different goals, take turns, and the folder ends up answering both."""
    ds = load_dataset(str(dataset))
    folder, errors = tmp_path / "explore", []

    def run(goal: str) -> None:
        cfg = ExploreConfig(goals=[parse_goal(goal)], nlists=[4, 8], ms=[4], opq=(False,), qps_min_seconds=0.0)
        try:
            ensure_exploration(ds, cfg, folder)
        except BaseException as exc:  # reported below: a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(g,)) for g in ("R@10=0.5", "R@10=0.6")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert errors == []
    data = json.loads((folder / "explore.json").read_text())
    assert sorted(g["text"] for g in data["goals"]) == ["R@10=0.5", "R@10=0.6"]
    assert foreign_files(folder, read_manifest(folder)) == ([], []) and leftovers(tmp_path, "explore") == []


def test_two_runs_filling_one_dataset_cache(tmp_path):
    """Both compute the exact neighbours of a fresh dataset at once: one whole cache entry results."""
    data = make_dataset(tmp_path / "ds")
    argvs = [["explore", str(data), *EXPLORE, "--out", str(tmp_path / name)] for name in ("a", "b")]
    results = run_two(argvs, tmp_path / "cache")
    assert [code for code, _ in results] == [0, 0], results
    ds = load_dataset(str(data))
    (entry,) = (p.name for p in ds.cache_dir.iterdir() if not p.is_dir())  # one entry, no temporary files
    assert entry.startswith("gt-") and entry.endswith(".npy")
    assert np.array_equal(ds.groundtruth(10), exact_knn(np.asarray(ds.base), np.asarray(ds.queries), 10, "l2"))


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_during_generate_leaves_nothing(dataset, tmp_path, sig):
    """The issue's case: `fanns generate` stopped while its project is staged (and simulated in C)."""
    out = tmp_path / "p"
    argv = ["generate", str(dataset), "--recall", "R@10=0.5", "--board", "u55c", "--nlist", "8", "--m", "4"]
    argv += ["--no-opq", "--backend", "hls", "--sim", "--test-queries", "8", "--sim-queries", "8"]
    argv += ["--explore-dir", str(tmp_path / "ex"), "--build-dir", str(tmp_path / "build"), "--out", str(out)]
    proc = start_cli(argv, tmp_path / "cache")
    wait_for_staging(proc, tmp_path, "p")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 128 + sig and "Traceback" not in err, err
    assert not out.exists() and leftovers(tmp_path, "p") == []


def test_a_cache_entry_from_an_older_fanns_is_explored_again(dataset, tmp_path, monkeypatch):
    """The dataset's cache folder is fanns's own: an exploration there without a manifest (written
    before manifests existed) is removed and explored again beside it (`fanns.explore.ivfpq_cache`);
    the same folder given as --explore-dir is refused."""
    monkeypatch.setenv("FANNS_CACHE", str(tmp_path / "cache"))
    ds = load_dataset(str(dataset))
    cfg = ExploreConfig(goals=[parse_goal("R@10=0.5")], nlists=[4], ms=[4], opq=(False,), qps_min_seconds=0.0)
    old = ds.cache_dir / ivfpq_cache.LEGACY
    (old / "indexes").mkdir(parents=True)
    (old / "explore.json").write_text(json.dumps({"version": 1, "indexes": []}))
    with pytest.raises(FannsError, match="not an exploration written by fanns"):
        ensure_exploration(ds, cfg, old)
    folder, explore, reused = ensure_exploration(ds, cfg, None)
    assert not old.exists() and folder.parent == ivfpq_cache.root_of(ds)
    assert not reused and explore["indexes"] and read_manifest(folder) is not None
