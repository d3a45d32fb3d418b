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


def search_knob(index) -> tuple[object, str]:
    """(object, attribute) of the search setting a measurement fixes: an IVF index's nprobe, an
    HNSW index's efSearch (the `nprobe` argument of `measure` and `measure_qps` sets either)."""
    if isinstance(index, faiss.IndexHNSW):
        return index.hnsw, "efSearch"
    return faiss.extract_index_ivf(index), "nprobe"


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
    knob, name = search_knob(index)
    old_threads, old_nprobe = faiss.omp_get_max_threads(), getattr(knob, name)
    faiss.omp_set_num_threads(threads)
    setattr(knob, name, nprobe)
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
        setattr(knob, name, old_nprobe)
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
    the calling thread, so preemption by other processes is not counted) or "wall". `shares`: per
    window, the process's CPU time over `threads` x the wall time (how much of its cores it got);
    `others_cores`: the CPU time other processes used while the windows ran, in cores (from
    /proc/stat; None where the system does not say); `fastest`: the fastest single search."""

    index: str
    nprobe: int
    k: int
    threads: int
    clock: str
    samples: np.ndarray
    shares: np.ndarray | None = None
    others_cores: float | None = None
    fastest: float | None = None
    """The QPS of the fastest single search (one batch) of all windows: the least disturbed."""

    @property
    def median(self) -> float:
        return float(np.median(self.samples))

    def quartiles(self) -> tuple[float, float]:
        q1, q3 = np.percentile(self.samples, [25, 75])
        return float(q1), float(q3)

    def as_dict(self) -> dict:
        """JSON record: median (the figure to compare against), quartiles, range, the windows
        themselves, settings, and the load seen while they ran (`cpu_basis` reads it)."""
        q1, q3 = self.quartiles()
        rec = {
            "qps": round(self.median, 1),
            "q1": round(q1, 1),
            "q3": round(q3, 1),
            "min": round(float(self.samples.min()), 1),
            "max": round(float(self.samples.max()), 1),
            "repeats": int(self.samples.size),
            "threads": self.threads,
            "clock": self.clock,
            "windows": [round(float(v), 1) for v in self.samples],
        }
        if self.shares is not None:
            rec["cpu_share"] = round(float(np.median(self.shares)), 3)
        if self.others_cores is not None:
            rec["others_cores"] = round(self.others_cores, 2)
        if self.fastest is not None:
            rec["fastest_batch"] = round(self.fastest, 1)
        return rec


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
    knob, name = search_knob(index)
    old_threads, old_nprobe = faiss.omp_get_max_threads(), getattr(knob, name)
    faiss.omp_set_num_threads(threads)
    setattr(knob, name, nprobe)
    try:
        index.search(q[:10], k)  # warm-up
        samples = np.empty(repeats, dtype=np.float64)
        shares = np.empty(repeats, dtype=np.float64)
        fastest = 0.0
        busy0, own0, wall0 = busy_seconds(), time.process_time(), time.perf_counter()
        for r in range(repeats):
            own = time.process_time()
            n, start = 0, now()
            wall, previous = start if clock == "wall" else time.perf_counter(), start
            while True:
                index.search(q, k)
                n += 1
                reading = now()
                elapsed = reading - start
                if reading > previous:
                    fastest = max(fastest, q.shape[0] / (reading - previous))
                previous = reading
                if (elapsed >= window_seconds or n >= 50) and elapsed > 0:
                    break
            samples[r] = n * q.shape[0] / elapsed
            wall_elapsed = elapsed if clock == "wall" else time.perf_counter() - wall
            shares[r] = (time.process_time() - own) / (threads * max(wall_elapsed, 1e-9))
        busy1, own1, wall1 = busy_seconds(), time.process_time(), time.perf_counter()
    finally:
        faiss.omp_set_num_threads(old_threads)
        setattr(knob, name, old_nprobe)
    others = None
    if busy0 is not None and busy1 is not None and wall1 > wall0:
        others = max(0.0, (busy1 - busy0 - (own1 - own0)) / (wall1 - wall0))
    return CpuQps(label, nprobe, k, threads, clock, samples, shares, others, fastest or None)


def busy_seconds() -> float | None:
    """CPU time every process on the machine has used since boot, in seconds (Linux /proc/stat:
    user, nice, system, irq, softirq and steal, the last being time the hypervisor gave to other
    machines), or None where the system does not say. Counted in clock ticks (1/100 s): over a
    measurement of 0.2 s on 2 cores it resolves about a tenth of a core."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        ticks = [int(v) for v in fields[1:9]]
    except (OSError, ValueError):
        return None
    if not fields or fields[0] != "cpu" or len(ticks) < 8:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = ticks
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


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


# -- the figure a ratio divides by --------------------------------------------------------------
LOAD_SPREAD = 0.25
"""All-cores windows whose interquartile range is above a quarter of their median were measured
on a loaded machine: quiet, the development machine's all-cores windows spread 0.7 % and 7.5 % of
their median (benchmarks/results/cpu_baseline.json, load average 1.1), and under other work they
swing by several times (issue 20)."""
LOAD_OTHERS = 0.5
"""Other processes busy for half a core or more while the all-cores windows ran mean the machine
was loaded: every thread of a faiss search waits for the slowest at the end of each batch, so one
preempted thread holds up all of them. `busy_seconds` resolves about a tenth of a core over a
0.2 s measurement on 2 cores, so half a core is well above its noise."""


def load_reasons(one: dict | None, every: dict) -> list[str]:
    """Why the all-cores record `every` was measured on a loaded machine (empty: nothing says it
    was), from its own windows and, when given, the one-thread record `one` beside it: more
    threads measured slower than one; other processes busy while it ran (`LOAD_OTHERS`); its
    windows spread wide (`LOAD_SPREAD`)."""
    reasons = []
    threads = every["threads"]
    if threads < 2:
        return reasons
    if one is not None and every["qps"] < one["qps"]:
        reasons.append(f"{threads} threads measured {every['qps']:,.0f} QPS, fewer than 1 thread's {one['qps']:,.0f}")
    others = every.get("others_cores")
    if others is not None and others >= LOAD_OTHERS:
        reasons.append(f"other processes kept {others:.1f} cores busy while the {threads} threads were measured")
    spread = (every["q3"] - every["q1"]) / every["qps"] if every["qps"] > 0 else 0.0
    if spread > LOAD_SPREAD:
        reasons.append(
            f"the {threads}-thread windows spread {every['q1']:,.0f}-{every['q3']:,.0f} QPS "
            f"(IQR {100 * spread:.0f} % of the median)"
        )
    return reasons


def undisturbed(one: dict) -> float:
    """One thread's QPS undisturbed by other load: its fastest single search on the thread CPU
    clock (`CpuQps.fastest`; other processes only slow a search down, by taking its core or
    refilling its caches, never speed it up), or the median of its windows where a record has no
    fastest search. On the development machine beside 2 spinning processes (load average 19) the
    median of the windows fell 8 % while the fastest search stayed within 1 % (86,607 / 85,971 /
    86,494 QPS as it was, with the hogs, after: builtin:sift-10k, IVF64,PQ16, nprobe 2, 150
    searches of 200 queries each)."""
    return one.get("fastest_batch") or one["qps"]


def cpu_basis(cpu: dict[str, dict]) -> dict:
    """The CPU figure an FPGA / CPU ratio divides by, and why: a pure function of the recorded
    measurements `{"1": one thread, "all": all cores}` (records of `CpuQps.as_dict`).

    Quiet (no `load_reasons`), the all-cores median as measured (basis "all-cores", with its
    quartiles): the CPU serving queries on every core. Loaded, that wall-clock figure fell with
    the load and would inflate the ratio, so the figure is the larger of it and `threads` x the
    one thread's undisturbed QPS (`undisturbed`; basis "one-thread-scaled"): the cores at
    perfect scaling with no other load, at least what they reach quiet, so the ratio against it
    is not above the quiet one (`benchmarks/cpu_load.py` measures both); a bound has no spread
    (q1 = q3 = the figure). One thread alone is basis "one-thread"."""
    every, one = cpu["all"], cpu.get("1")
    threads = every["threads"]
    reasons = load_reasons(one, every)
    figure = {k: every[k] for k in ("qps", "q1", "q3")}
    basis = "one-thread" if threads == 1 else "all-cores"
    if reasons and one is not None and threads * undisturbed(one) > every["qps"]:
        bound = round(threads * undisturbed(one), 1)
        figure = {"qps": bound, "q1": bound, "q3": bound}
        basis = "one-thread-scaled"
    return {**figure, "threads": threads, "basis": basis, "loaded": bool(reasons), "reasons": reasons}


def basis_text(b: dict) -> str:
    """What a ratio against `cpu_basis`'s figure `b` is taken against, in words."""
    t = b["threads"]
    if b["basis"] == "one-thread":
        return "1 thread, its median on the thread CPU clock"
    why = "; ".join(b["reasons"])
    if b["basis"] == "one-thread-scaled":
        return (
            f"{t} x one thread's fastest search on its CPU clock ({t} cores at perfect scaling and undisturbed: at "
            f"least what they reach) instead of the {t}-thread measurement: the machine was loaded ({why}), which "
            f"lowers the {t}-thread figure and would inflate the ratio"
        )
    text = f"{t} threads, their median on the wall clock"
    if b["loaded"]:
        text += f" (the machine was loaded: {why}; with no lower bound to use instead, the ratio may be inflated)"
    return text


def basis_label(b: dict) -> str:
    """`basis_text` in a few words, for a table cell."""
    t = b["threads"]
    if b["basis"] == "one-thread":
        return "1 thread"
    if b["basis"] == "one-thread-scaled":
        return f"{t} x 1 thread (machine loaded)"
    return f"{t} threads" + (" (machine loaded)" if b["loaded"] else "")


def selection_qps(g: dict) -> float:
    """The figure the best CPU index for a goal is chosen by, from an explored goal record: one
    thread's undisturbed QPS (`undisturbed`), which other load does not move, so indexes measured
    at different moments compare fairly (the all-cores median of an exploration that did not
    record it)."""
    one = (g.get("cpu") or {}).get("1")
    return undisturbed(one) if one else g["cpu_qps"]


def cpu_fields(cpu: dict[str, dict]) -> dict:
    """A goal record's CPU fields: `cpu_qps` (the figure a ratio divides by, `cpu_basis`), its
    thread count and basis, and both measurements with their windows under `cpu`."""
    b = cpu_basis(cpu)
    return {"cpu_qps": b["qps"], "cpu_threads": b["threads"], "cpu_basis": b["basis"], "cpu": cpu}


def cpu_text(cpu: dict, fpga_qps: float | None = None) -> str:
    """With `fpga_qps`, the FPGA / CPU ratio against the CPU figure and what that figure is;
    then the measurements: all cores and, when measured, one thread, each median with its spread
    (the ratio against one thread beside it)."""
    b = cpu["basis"]
    head = f"{b['qps']:,.0f} QPS"
    if fpga_qps is not None:
        head = f"FPGA / CPU {fpga_qps / b['qps']:.1f}x against {head}"
    text = f"{head} ({b['text']}); measured: "
    text += spread_text(cpu["spread"]) if cpu.get("spread") else f"{cpu['qps']:,.0f} QPS ({cpu['threads']} thread(s))"
    one = cpu.get("one_thread")
    if one:
        text += "; 1 thread: " + spread_text(one)
        text += "" if fpga_qps is None else f" (FPGA / 1 thread {fpga_qps / one['qps']:.1f}x)"
    return text
