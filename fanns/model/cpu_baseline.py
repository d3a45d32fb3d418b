"""The CPU baseline's latency distribution, measured here with faiss.

Why: the scale-out comparison needs a CPU's per-query latency distribution (its tail grows the
distributed latency), measured the way a server answers one query at a time: batch 1, each
query searched alone with `index.search`, timed with `time.perf_counter_ns`, on `threads` OpenMP
threads (default 1: one query per core is how a CPU server scales out queries). The first
`warmup` queries are searched but not recorded (caches, page faults). Wall-clock numbers: they
vary with the machine and its load, so tests check shapes and ordering, never values.

Each query is also timed on the calling thread's CPU clock (`time.thread_time_ns`). With one
OpenMP thread faiss runs the search on the calling thread, so that clock counts the query's own
work and not the time the operating system gave to other processes: on a shared machine its tail
is what an idle server would see (wall-clock P99 there is mostly preemption). With more threads
the workers' time is not on the caller's clock, so `cpu_us` is recorded only for `threads == 1`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import faiss
import numpy as np

from fanns.errors import FannsError


@dataclass(frozen=True)
class CpuLatency:
    """Per-query latencies in microseconds of one faiss index at one nprobe."""

    index: str
    nprobe: int
    k: int
    threads: int
    latencies_us: np.ndarray
    cpu_us: np.ndarray | None = None
    """Per-query time on the calling thread's CPU clock (one thread only; module docstring)."""

    def percentiles(self, clock: str = "wall") -> dict[str, float]:
        """P50/P95/P99 in microseconds of the wall clock or (`clock="cpu"`) the thread CPU clock."""
        values = self.times(clock)
        return {f"p{p}_us": round(float(np.percentile(values, p)), 3) for p in (50, 95, 99)}

    def times(self, clock: str = "wall") -> np.ndarray:
        if clock == "wall":
            return self.latencies_us
        if clock == "cpu" and self.cpu_us is not None:
            return self.cpu_us
        raise FannsError(
            f"no {clock!r} clock in this measurement", hint="clock is 'wall', or 'cpu' for one-thread measurements"
        )


def measure(
    index,
    queries: np.ndarray,
    nprobe: int,
    k: int,
    *,
    threads: int = 1,
    repeat: int = 1,
    warmup: int = 10,
    label: str = "",
) -> CpuLatency:
    """Search every query alone `repeat` times (see the module docstring)."""

    if nprobe < 1 or k < 1:
        raise FannsError(f"nprobe={nprobe}, k={k}: both must be at least 1")
    q = np.ascontiguousarray(queries, dtype=np.float32)
    if q.ndim != 2 or q.shape[0] < 1:
        raise FannsError(f"queries must be a non-empty [nq, d] array, got shape {q.shape}")
    ivf = faiss.extract_index_ivf(index)
    old_threads, old_nprobe = faiss.omp_get_max_threads(), ivf.nprobe
    faiss.omp_set_num_threads(threads)
    ivf.nprobe = nprobe
    try:
        for i in range(min(warmup, q.shape[0])):
            index.search(q[i : i + 1], k)
        out = np.empty(q.shape[0] * repeat, dtype=np.float64)
        cpu = np.empty_like(out)
        for r in range(repeat):
            for i in range(q.shape[0]):
                c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
                index.search(q[i : i + 1], k)
                t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
                out[r * q.shape[0] + i] = (t1 - t0) / 1e3
                cpu[r * q.shape[0] + i] = (c1 - c0) / 1e3
    finally:
        faiss.omp_set_num_threads(old_threads)
        ivf.nprobe = old_nprobe
    return CpuLatency(label, nprobe, k, threads, out, cpu if threads == 1 else None)


# -- throughput ---------------------------------------------------------------------------------
QPS_REPEATS = 7
"""Measurement windows per CPU QPS figure: one window's mean spread 2-2.5x between runs on the
shared 2-core development machine (issue 20), so the figure is the median of several."""
QPS_WINDOW_SECONDS = 0.05
"""Minimum length of one window (whole-batch searches repeated until it has passed)."""


@dataclass(frozen=True)
class CpuQps:
    """faiss-cpu queries per second, one sample per measurement window, at a fixed thread count.

    `clock` is "cpu" (the calling thread's CPU clock: with one OpenMP thread faiss searches on
    the calling thread, so preemption by other processes is not counted) or "wall"."""

    index: str
    nprobe: int
    k: int
    threads: int
    clock: str
    samples: np.ndarray

    @property
    def median(self) -> float:
        return float(np.median(self.samples))

    def quartiles(self) -> tuple[float, float]:
        q1, q3 = np.percentile(self.samples, [25, 75])
        return float(q1), float(q3)

    def as_dict(self) -> dict:
        """JSON record: median (the figure to compare against), quartiles, range, settings."""
        q1, q3 = self.quartiles()
        return {
            "qps": round(self.median, 1),
            "q1": round(q1, 1),
            "q3": round(q3, 1),
            "min": round(float(self.samples.min()), 1),
            "max": round(float(self.samples.max()), 1),
            "repeats": int(self.samples.size),
            "threads": self.threads,
            "clock": self.clock,
        }


def all_threads() -> int:
    """The cores this process may run on (the "all cores" thread count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def measure_qps(
    index,
    queries: np.ndarray,
    nprobe: int,
    k: int,
    *,
    threads: int = 1,
    repeats: int = QPS_REPEATS,
    window_seconds: float = QPS_WINDOW_SECONDS,
    clock: str | None = None,
    label: str = "",
) -> CpuQps:
    """Whole-batch search QPS in `repeats` windows of at least `window_seconds` each (at most 50
    searches a window), on `threads` OpenMP threads, after a warm-up. `clock`: "cpu" (default
    for one thread) or "wall" (default, and the only valid clock, for more than one)."""
    clock = clock or ("cpu" if threads == 1 else "wall")
    if clock not in ("cpu", "wall") or (clock == "cpu" and threads != 1):
        raise FannsError(
            f"clock {clock!r} with {threads} thread(s)",
            hint="the thread CPU clock counts one thread's work: use clock='cpu' only with threads=1",
        )
    if threads < 1 or repeats < 1 or nprobe < 1 or k < 1:
        raise FannsError(f"threads={threads}, repeats={repeats}, nprobe={nprobe}, k={k}: each must be at least 1")
    q = np.ascontiguousarray(queries, dtype=np.float32)
    if q.ndim != 2 or q.shape[0] < 1:
        raise FannsError(f"queries must be a non-empty [nq, d] array, got shape {q.shape}")
    now = time.thread_time if clock == "cpu" else time.perf_counter
    ivf = faiss.extract_index_ivf(index)
    old_threads, old_nprobe = faiss.omp_get_max_threads(), ivf.nprobe
    faiss.omp_set_num_threads(threads)
    ivf.nprobe = nprobe
    try:
        index.search(q[:10], k)  # warm-up
        samples = np.empty(repeats, dtype=np.float64)
        for r in range(repeats):
            n, start = 0, now()
            while True:
                index.search(q, k)
                n += 1
                elapsed = now() - start
                if (elapsed >= window_seconds or n >= 50) and elapsed > 0:
                    break
            samples[r] = n * q.shape[0] / elapsed
    finally:
        faiss.omp_set_num_threads(old_threads)
        ivf.nprobe = old_nprobe
    return CpuQps(label, nprobe, k, threads, clock, samples)


def qps_both(index, queries: np.ndarray, nprobe: int, k: int, **kw) -> dict[str, dict]:
    """`measure_qps` on one thread (thread CPU clock) and on all cores (wall clock), as records
    keyed "1" and "all"."""
    return {
        "1": measure_qps(index, queries, nprobe, k, threads=1, **kw).as_dict(),
        "all": measure_qps(index, queries, nprobe, k, threads=all_threads(), **kw).as_dict(),
    }


def spread_text(rec: dict) -> str:
    """'12,345 QPS (IQR 11,000-13,000, range 9,000-14,000, 7 runs, 1 thread, cpu clock)'."""
    return (
        f"{rec['qps']:,.0f} QPS (IQR {rec['q1']:,.0f}-{rec['q3']:,.0f}, range {rec['min']:,.0f}-{rec['max']:,.0f}, "
        f"{rec['repeats']} runs, {rec['threads']} thread(s), {rec['clock']} clock)"
    )


def cpu_qps(
    index, queries: np.ndarray, nprobe: int, k: int, min_seconds: float = 0.2, threads: int | None = None
) -> dict:
    """faiss-cpu's measured QPS on `queries` (host vectors) at `nprobe` on `threads` OpenMP
    threads (default: faiss's configured count, all cores unless `--faiss-threads` set it): the
    median of `QPS_REPEATS` windows sharing `min_seconds`, with its quartiles and range
    (`fanns.model.cpu_baseline.measure_qps`; the thread CPU clock on one thread)."""
    threads = threads or faiss.omp_get_max_threads()
    window = min_seconds / QPS_REPEATS
    return measure_qps(index, queries, nprobe, k, threads=threads, window_seconds=window).as_dict()


def cpu_fields(cpu: dict[str, dict]) -> dict:
    """A goal record's CPU fields: `cpu_qps` (all cores, median of the windows), its thread
    count, and both measurements with their spread under `cpu`."""
    return {"cpu_qps": cpu["all"]["qps"], "cpu_threads": cpu["all"]["threads"], "cpu": cpu}
