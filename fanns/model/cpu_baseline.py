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
