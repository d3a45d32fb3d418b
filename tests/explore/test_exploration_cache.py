"""Explorations of one dataset side by side in its cache (issue 47): keyed by how they were made,
reused by any run they cover (a larger grid answers for a smaller one, restricted to it), trained
indexes shared between them, the most recently used kept, concurrent runs safe.

A 2,000 x 16 dataset folder of the test's own (`tests.hostile.helpers.make_dataset`; its cache
sits beside it), one m and no OPQ unless a test needs more: each exploration takes a second or so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from fanns.datasets import load_dataset
from fanns.explore import ivfpq_cache
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.explore.ivfpq_indexes import IndexFiles
from fanns.explore.ivfpq_reuse import covers, ensure_exploration, index_names, request, view
from fanns.index.goals import parse_goal
from fanns.model.ivfpq.workload import workloads_from_explore
from fanns.outputs import read_manifest
from tests.hostile.helpers import make_dataset

GOAL = "R@10=0.5"


@pytest.fixture
def ds(tmp_path):
    yield load_dataset(str(make_dataset(tmp_path / "ds")))
    ivfpq_cache.release_all()  # the entries this test held: the next test's process state starts clean


def config(nlists=(8,), goals=(GOAL,), opq=(False,), **kw) -> ExploreConfig:
    return ExploreConfig(
        goals=[parse_goal(g) for g in goals], nlists=list(nlists), ms=[4], opq=opq, qps_min_seconds=0.0, **kw
    )


def _measured(rec: dict) -> dict:
    """The parts of an index record that do not depend on the machine's speed (CPU QPS does)."""
    goals = {
        t: {k: g[k] for k in ("nprobe", "recall", "hw_recall", "codes_per_query")} for t, g in rec["goals"].items()
    }
    return {"index": rec["index"], "format": rec["format"], "curve": rec["curve"], "goals": goals}


def test_a_larger_exploration_answers_beside_a_smaller_one(ds):
    """The demo's case: `--nlist 32` then `--nlist 32,64` no longer replace each other, the second
    trains only what the first did not, and either answers a later `--nlist 32` as it would."""
    small, explored, reused = ensure_exploration(ds, config([8]))
    assert not reused and [r["index"] for r in explored["indexes"]] == ["IVF8,PQ4"]
    large, both, reused = ensure_exploration(ds, config([8, 16]))
    assert not reused and large != small and small.is_dir()
    assert index_names(both) == ["IVF8,PQ4", "IVF16,PQ4"]
    trained = [IndexFiles.paths(folder, "IVF8,PQ4")[0] for folder in (small, large)]
    assert os.path.samefile(*trained)  # IVF8 was taken from the first exploration, not trained again

    again, answer, reused = ensure_exploration(ds, config([8]))
    assert reused and again == large  # the most recently used exploration that covers the question
    assert index_names(answer) == ["IVF8,PQ4"] and answer["settings"]["nlists"] == [8]
    assert answer["best"][GOAL]["index"] == "IVF8,PQ4"
    assert _measured(answer["indexes"][0]) == _measured(explored["indexes"][0])
    for names, expected in ((index_names(answer), ["IVF8,PQ4"]), (None, ["IVF8,PQ4", "IVF16,PQ4"])):
        workloads, unreachable = workloads_from_explore(again, parse_goal(GOAL), names)
        assert sorted(w.index for w in workloads) + sorted(u["index"] for u in unreachable) == sorted(expected)


def test_other_settings_do_not_answer_and_goals_join(ds):
    """Another number format, query count or lists on disk is another exploration; a new goal on the same
    grid explores again over both goals (trained indexes reused), so both are answered after."""
    first, _, _ = ensure_exploration(ds, config([8]))
    for other in (config([8], vec_bits=12), config([8], max_queries=20), config([8], lists_on_disk=True)):
        folder, _, reused = ensure_exploration(ds, other)
        assert not reused and folder != first
    joined, data, reused = ensure_exploration(ds, config([8], goals=("R@10=0.6",)))
    assert not reused and sorted(g["text"] for g in data["goals"]) == [GOAL, "R@10=0.6"]
    assert os.path.samefile(IndexFiles.paths(first, "IVF8,PQ4")[0], IndexFiles.paths(joined, "IVF8,PQ4")[0])
    for goal in (GOAL, "R@10=0.6"):
        folder, _, reused = ensure_exploration(ds, config([8], goals=(goal,)))
        assert reused and folder == joined


def test_the_grid_covers_by_subsets_every_other_setting_by_equality(ds):
    """`covers` on records alone (no exploration runs): OPQ choices are a grid like nlists and
    ms; any other recorded setting (here the training spread another rule may set) must be equal."""
    _, have, _ = ensure_exploration(ds, config([8]))
    opq = {**have["indexes"][0], "index": "OPQ4,IVF8,PQ4", "opq": True}
    both = {**have, "settings": {**have["settings"], "opq": [False, True]}, "indexes": [*have["indexes"], opq]}
    assert covers(both, request(ds, config([8], opq=(True,))))
    assert index_names(view(both, request(ds, config([8], opq=(True,))))) == ["OPQ4,IVF8,PQ4"]
    assert not covers(have, request(ds, config([8], opq=(True,))))
    assert not covers(both, request(ds, config([8], opq=(True,), training_sd=0.05)))
    assert not covers({**both, "settings": {**both["settings"], "new_rule": 1}}, request(ds, config([8])))
    assert not covers(both, request(ds, config([8], goals=("R@10=0.6",))))


HOLDER = """\
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_SH)
print("held", flush=True)
sys.stdin.read()
"""
"""Another run still reading an entry: a process holding the shared lock on its use file."""


def test_the_most_recently_used_are_kept_and_a_held_one_is_not_evicted(ds, monkeypatch):
    monkeypatch.setattr(ivfpq_cache, "KEEP", 2)
    folders = []
    for queries in (20, 24, 28):  # three explorations (not seeds: each would time the cost model again)
        folders.append(ensure_exploration(ds, config([8], max_queries=queries))[0])
        ivfpq_cache.release_all()  # as if each ran in a process of its own
    assert not folders[0].exists() and all(f.is_dir() for f in folders[1:])  # the least recently used went
    assert ensure_exploration(ds, config([8], max_queries=24))[2]  # reused: now the most recently used
    ivfpq_cache.release_all()
    root = ivfpq_cache.root_of(ds)
    assert ivfpq_cache.entries(root, ds.content_hash()) == [folders[1], folders[2]]
    use = root / f".{folders[2].name}.use"
    with subprocess.Popen([sys.executable, "-c", HOLDER, str(use)], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as p:
        assert p.stdout.readline() == b"held\n"
        ensure_exploration(ds, config([8], max_queries=32))
        ivfpq_cache.release_all()
        assert all(f.is_dir() for f in folders[1:])  # the least recently used is held: kept beyond the limit
        p.stdin.close()
    ensure_exploration(ds, config([8], max_queries=36))
    names = {p.name for p in root.iterdir()}
    assert not (set(names) & {folders[1].name, folders[2].name}) and len([n for n in names if n[0] != "."]) == 2
    assert len([n for n in names if n.endswith(".use")]) == 2  # use files go with their entries


def test_concurrent_runs_asking_the_same_explore_once(ds):
    results, errors = [], []

    def run() -> None:
        try:
            results.append(ensure_exploration(ds, config([8, 16])))
        except BaseException as exc:  # reported below: a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == [] and len(results) == 2
    assert len({folder for folder, _, _ in results}) == 1 and sorted(r for _, _, r in results) == [False, True]
    entries = [p for p in ivfpq_cache.root_of(ds).iterdir() if not p.name.startswith(".")]
    assert entries == [results[0][0]] and read_manifest(entries[0]) is not None


def test_an_exploration_cached_by_an_earlier_fanns_is_moved_in(ds):
    """fanns before side-by-side explorations kept one per dataset folder in `explore/`."""
    legacy = ds.cache_dir / ivfpq_cache.LEGACY
    written = IvfPqExplorer(ds, config([8]), legacy).run()
    folder, data, reused = ensure_exploration(ds, config([8]))
    assert reused and not legacy.exists() and folder.parent == ivfpq_cache.root_of(ds)
    assert json.loads((folder / "explore.json").read_text()) == written
    assert data["indexes"] == written["indexes"]
