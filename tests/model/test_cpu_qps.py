"""The repeated CPU QPS measurement: its structure and clocks, never its values."""

from __future__ import annotations

import itertools

import faiss
import numpy as np
import pytest

from fanns.errors import FannsError
from fanns.model import cpu_baseline as cb
from fanns.model.cpu_baseline import cpu_qps
from fanns.report.tables import summary_table


@pytest.fixture(scope="module")
def index():
    rng = np.random.default_rng(0)
    xb = rng.standard_normal((2000, 16)).astype(np.float32)
    idx = faiss.index_factory(16, "IVF16,PQ4")
    idx.do_polysemous_training = False  # its annealing is 6.5 of the 6.6 CPU-s training here; search never uses it
    idx.train(xb)
    idx.add(xb)
    return idx, rng.standard_normal((20, 16)).astype(np.float32)


def _fake_clock(monkeypatch, name: str, step: float) -> None:
    ticks = itertools.count()
    monkeypatch.setattr(cb.time, name, lambda: next(ticks) * step)


def test_one_thread_uses_the_thread_cpu_clock(index, monkeypatch):
    idx, q = index
    # each reading of the thread CPU clock advances 0.5 s: one search per window, 20 / 0.5 QPS
    _fake_clock(monkeypatch, "thread_time", 0.5)
    got = cb.measure_qps(idx, q, 2, 5, threads=1, repeats=5, window_seconds=0.1)
    assert got.clock == "cpu" and got.threads == 1
    assert got.samples.shape == (5,) and np.all(got.samples == 40.0) and got.fastest == 40.0
    rec = got.as_dict()
    assert rec["windows"] == [40.0] * 5 and rec["fastest_batch"] == 40.0 and rec["cpu_share"] >= 0


def test_all_cores_use_the_wall_clock_and_the_threads_asked_for(index, monkeypatch):
    idx, q = index
    seen = []
    search = type(idx).search

    def spy(self, x, k, *a, **kw):
        seen.append(faiss.omp_get_max_threads())
        return search(self, x, k, *a, **kw)

    monkeypatch.setattr(type(idx), "search", spy)
    _fake_clock(monkeypatch, "perf_counter", 0.25)
    before = faiss.omp_get_max_threads()
    got = cb.measure_qps(idx, q, 3, 5, threads=2, repeats=3, window_seconds=0.1)
    assert got.clock == "wall" and set(seen) == {2}
    assert np.all(got.samples == 80.0)
    assert faiss.omp_get_max_threads() == before  # restored
    assert faiss.extract_index_ivf(idx).nprobe == 1  # restored (faiss default)


def test_median_and_spread_of_the_windows():
    s = cb.CpuQps("x", 1, 1, 1, "cpu", np.array([10.0, 50.0, 20.0, 30.0, 1000.0]))
    rec = s.as_dict()
    assert rec["qps"] == 30.0 == s.median  # one slow or fast window does not move the figure
    assert (rec["min"], rec["max"], rec["repeats"]) == (10.0, 1000.0, 5)
    assert (rec["q1"], rec["q3"]) == (20.0, 50.0)
    assert "IQR 20-50" in cb.spread_text(rec) and "5 runs" in cb.spread_text(rec)


def test_real_measurement_and_explore_wrapper(index):
    idx, q = index
    rec = cpu_qps(idx, q, 2, 5, min_seconds=0.02, threads=1)
    assert rec["repeats"] == cb.QPS_REPEATS and rec["threads"] == 1 and rec["clock"] == "cpu"
    assert rec["min"] <= rec["q1"] <= rec["qps"] <= rec["q3"] <= rec["max"] and rec["min"] > 0
    both = cb.qps_both(idx, q, 2, 5, repeats=3, window_seconds=0.01)
    assert both["1"]["threads"] == 1 and both["all"]["threads"] == cb.all_threads()
    assert both["all"]["clock"] == ("cpu" if cb.all_threads() == 1 else "wall")


def test_cpu_clock_needs_one_thread(index):
    idx, q = index
    with pytest.raises(FannsError, match="thread"):
        cb.measure_qps(idx, q, 2, 5, threads=2, clock="cpu")
    with pytest.raises(FannsError):
        cb.measure_qps(idx, q, 2, 5, repeats=0)


def test_sweep_summary_shows_the_median_and_its_spread():
    spread = {"qps": 300.0, "q1": 250.0, "q3": 320.0, "min": 200.0, "max": 400.0, "repeats": 7, "threads": 2}
    one = {**spread, "qps": 90.0, "q1": 85.0, "q3": 95.0, "threads": 1, "clock": "cpu"}
    basis = cb.cpu_basis({"1": one, "all": spread})
    cpu = {"index": "IVF8,PQ4", "nprobe": 2, "k": 10, "qps": 300.0, "spread": spread, "one_thread": one, "basis": basis}
    data = {"summary": [{"goal": "R@10=0.5", "board": "u55c", "design": None, "cpu": cpu, "speedup": None}]}
    cols, rows = summary_table(data)
    row = dict(zip(cols, rows[0], strict=True))
    assert row["CPU QPS all cores (measured, median)"] == 300 and row["CPU QPS IQR"] == "250-320"
    assert row["CPU QPS 1 thread (median)"] == 90 and row["FPGA / CPU against"] == "2 threads"
