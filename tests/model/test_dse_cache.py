"""The DSE outcome cache (`fanns.model.ivfpq.dse_cache`): the same inputs give back the outcome the
DSE found, the same designs, without running it again; any other input (workload, board, goal,
clock, cap, designs kept) or other fanns code runs it anew."""

import dataclasses

import pytest

from fanns.boards import Clock, load_board
from fanns.model.ivfpq import dse, dse_cache, timing
from fanns.model.ivfpq.workload import synthetic_workload
from fanns.tools import codedigest


def workload(nprobe: int = 4, seed: int = 0):
    return synthetic_workload(10**5, 128, 16, 256, nprobe, 10, False, queries=64, seed=seed)


@pytest.fixture(scope="module")
def kv260():
    return load_board("kv260")


def test_the_same_inputs_give_back_the_same_outcome_without_a_dse(kv260, tmp_path, monkeypatch):
    first, kept = dse_cache.run([workload()], kv260, "R@10=0.8", None, 0.6, 2, None, root=tmp_path)
    assert not kept and first.best is not None

    def no_dse(*args, **kwargs):
        raise AssertionError("the DSE ran again")

    monkeypatch.setattr(timing, "run", no_dse)
    again, kept = dse_cache.run([workload()], kv260, "R@10=0.8", None, 0.6, 2, None, root=tmp_path)
    assert kept
    assert [p.stages for p in again.top] == [p.stages for p in first.top]
    assert [p.qps for p in again.top] == [p.qps for p in first.top]
    assert again.clock == first.clock and again.explain == first.explain


def test_any_other_input_or_code_runs_the_dse(kv260, tmp_path, monkeypatch):
    runs = []

    def counted(workloads, board, goal, clock, util, top, unreachable, llm_ms):
        runs.append(goal)
        return dse.Outcome.__new__(dse.Outcome)

    monkeypatch.setattr(timing, "run", counted)
    w = workload()
    base = ([w], kv260, "R@10=0.8", None, 0.6, 2, None)
    changed = [
        ([workload(nprobe=5)], *base[1:]),  # another workload (the exploration measured another nprobe)
        ([workload(seed=1)], *base[1:]),  # other measured list sizes
        ([w], load_board("zcu104"), *base[2:]),
        ([w], dataclasses.replace(kv260, clock_mhz=kv260.clock_mhz + 1), *base[2:]),  # an edited board file
        ([w], kv260, "R@10=0.9", *base[3:]),
        ([w], kv260, "R@10=0.8", Clock.user(150.0), *base[4:]),
        ([w], kv260, "R@10=0.8", None, 0.5, 2, None),
        ([w], kv260, "R@10=0.8", None, 0.6, 3, None),
        ([w], kv260, "R@10=0.8", None, 0.6, 2, [{"index": "IVF64,PQ16", "best_recall": 0.7}]),
    ]
    assert not dse_cache.run(*base, root=tmp_path)[1]
    assert dse_cache.run(*base, root=tmp_path)[1]
    for args in changed:
        assert not dse_cache.run(*args, root=tmp_path)[1]
    assert not dse_cache.run(*base, root=tmp_path, llm_ms=20.0)[1]  # another LLM time (it sizes a host-memory cache)
    assert len(runs) == 2 + len(changed)
    monkeypatch.setattr(codedigest, "source_digest", lambda: "edited fanns")
    assert not dse_cache.run(*base, root=tmp_path)[1]


def test_an_unreadable_entry_or_folder_runs_the_dse(kv260, tmp_path, monkeypatch):
    runs = []
    monkeypatch.setattr(timing, "run", lambda *args, **kw: runs.append(args) or dse.Outcome.__new__(dse.Outcome))
    args = ([workload()], kv260, "R@10=0.8", None, 0.6, 2, None)
    (tmp_path / f"{dse_cache.outcome_key(*args)}{dse_cache.SUFFIX}").write_bytes(b"not a pickle")
    assert not dse_cache.run(*args, root=tmp_path)[1]  # replaced by the DSE's outcome
    assert dse_cache.run(*args, root=tmp_path)[1]
    (tmp_path / "file").write_text("")
    assert not dse_cache.run(*args, root=tmp_path / "file" / "cache")[1]  # no folder can be made there
    assert len(runs) == 2
