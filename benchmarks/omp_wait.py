"""faiss under GNU OpenMP's default wait (spinning) and under the passive wait fanns sets
(fanns/__init__.py), on a quiet machine, beside one competing busy process and beside another faiss
process.

Two tasks, each in a fresh interpreter per measurement (libgomp reads its policy once, when faiss
loads it):

- OPQ training: `faiss.OPQMatrix(d, m)` on `--opq-points` clustered vectors, `--opq-iters`
  iterations, on all cores (what `fanns explore` runs for every OPQ index);
- search: faiss-cpu QPS of IVF64,PQ16 on a 10,000 x 128 clustered set, nprobe 2, K 10, 200
  queries per whole-batch search, on all cores (`fanns.model.cpu_baseline.measure_qps`: the median
  of its windows, wall clock) and on one thread (thread CPU clock, which no other process moves).

The default wait is had by loading faiss before fanns; the passive one by importing fanns first.
The competing process is a pure-Python busy loop (one core's worth of other work: a Verilator
build, a simulation), or another process running faiss with its threads spinning (a second pytest
worker, an exploration beside a test suite). Each cell is the median of `--repeats` fresh runs, with their range.

    PYTHONPATH=. python benchmarks/omp_wait.py [--repeats 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from record import command_line, write_result

POLICIES = ("spin", "passive")
"""spin: libgomp's default (faiss loaded before fanns); passive: fanns's default."""
LOADS = ("quiet", "busy", "faiss")
"""quiet: nothing else running (as far as this script controls); busy: one competing busy process
(pure Python, one core); faiss: a competing process training OPQ in a loop on all cores with
libgomp's default wait (another faiss user: a second pytest worker, an exploration). Each
competitor stops when the process that started it is gone."""
HOGS = {
    "quiet": None,
    "busy": [sys.executable, "-c", "import os\nparent = os.getppid()\nwhile os.getppid() == parent: pass"],
    "faiss": [sys.executable, __file__, "--worker", "spin", "hog"],
}


# faiss and fanns are imported in the worker only, after `worker` has chosen which loads libgomp first.
def _opq_seconds(d: int, m: int, points: int, iters: int) -> float:
    """Seconds of one OPQ training (`d`, `m`, `points` clustered vectors, `iters` iterations)."""
    import faiss

    from fanns.datasets.synthetic import clustered

    base, _ = clustered(points, 1, d, seed=0)
    opq = faiss.OPQMatrix(d, m)
    opq.niter = iters
    start = time.perf_counter()
    opq.train(np.ascontiguousarray(base, dtype=np.float32))
    return time.perf_counter() - start


def _search_qps() -> dict[str, float]:
    """faiss-cpu QPS medians of the search task on all cores ("all") and one thread ("1")."""
    import faiss

    from fanns.datasets.synthetic import clustered
    from fanns.model.cpu_baseline import all_threads, measure_qps

    base, queries = clustered(10_000, 200, 128, seed=0)
    index = faiss.index_factory(128, "IVF64,PQ16")
    index.train(base)
    index.add(base)
    return {
        "all": measure_qps(index, queries, 2, 10, threads=all_threads()).median,
        "1": measure_qps(index, queries, 2, 10, threads=1).median,
    }


def worker(policy: str, task: str, args: argparse.Namespace) -> None:
    """One measurement in this (fresh) interpreter, printed as JSON."""
    if policy == "spin":
        import faiss  # noqa: F401  - loads libgomp with its default wait before fanns can set one
    import fanns  # noqa: F401  - sets the passive wait when faiss is not loaded yet

    if task == "opq":
        print(json.dumps({"seconds": _opq_seconds(args.opq_d, args.opq_m, args.opq_points, args.opq_iters)}))
    elif task == "hog":  # until the benchmark that started it is gone
        parent = os.getppid()
        while os.getppid() == parent:
            _opq_seconds(args.opq_d, args.opq_m, args.opq_points, args.opq_iters)
    else:
        print(json.dumps(_search_qps()))


def _measure(policy: str, task: str, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--worker", policy, task, *_shape_args(args)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=_env()).stdout
    return json.loads(out.strip().splitlines()[-1])


def _env() -> dict[str, str]:
    """This environment without a wait policy (each worker chooses its own), the checkout importable."""
    root = str(Path(__file__).resolve().parent.parent)
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _shape_args(args: argparse.Namespace) -> list[str]:
    return [
        f"--opq-d={args.opq_d}",
        f"--opq-m={args.opq_m}",
        f"--opq-points={args.opq_points}",
        f"--opq-iters={args.opq_iters}",
    ]


def _summary(values: list[float]) -> dict:
    return {"median": float(np.median(values)), "min": min(values), "max": max(values), "runs": len(values)}


def run(args: argparse.Namespace) -> dict:
    cells: dict[str, dict] = {}
    for load in LOADS:
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        hog = subprocess.Popen(HOGS[load], env=_env(), **quiet) if HOGS[load] else None
        try:
            time.sleep(1.0 if hog else 0.0)
            for policy in POLICIES:
                opq = [_measure(policy, "opq", args)["seconds"] for _ in range(args.repeats)]
                search = [_measure(policy, "search", args) for _ in range(args.repeats)]
                cells[f"{load}/{policy}"] = {
                    "opq_seconds": _summary(opq),
                    "qps_all": _summary([s["all"] for s in search]),
                    "qps_1": _summary([s["1"] for s in search]),
                }
                print(load, policy, json.dumps(cells[f"{load}/{policy}"]), flush=True)
        finally:
            if hog:
                hog.kill()
                hog.wait()
    return {
        "opq": {"d": args.opq_d, "m": args.opq_m, "points": args.opq_points, "iterations": args.opq_iters},
        "cells": cells,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="fresh runs per cell (default 3)")
    ap.add_argument("--opq-d", type=int, default=512, help="OPQ dimension (default 512)")
    ap.add_argument("--opq-m", type=int, default=16, help="OPQ sub-quantizers (default 16)")
    ap.add_argument("--opq-points", type=int, default=2500, help="OPQ training vectors (default 2,500)")
    ap.add_argument("--opq-iters", type=int, default=2, help="OPQ iterations (default 2)")
    ap.add_argument("--worker", nargs=2, metavar=("POLICY", "TASK"), help=argparse.SUPPRESS)
    ap.add_argument("--json", help="record the figures as JSON here")
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker, args)
        return
    figures = run(args)
    write_result(args.json, "omp_wait", command_line(), figures)
    if not args.json:
        print(json.dumps(figures, indent=1))


def _cell(c: dict, key: str, fmt: str) -> str:
    s = c[key]
    return f"{format(s['median'], fmt)} ({format(s['min'], fmt)}–{format(s['max'], fmt)})"


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    o, cells = figures["opq"], figures["cells"]
    runs = next(iter(cells.values()))["opq_seconds"]["runs"]
    figure = (
        "faiss under OpenMP's default spinning wait vs the passive wait fanns sets (fanns/__init__.py), quiet, "
        "beside one busy process and beside another faiss process; "
        f"medians of {runs} fresh runs (range): OPQ training {o['d']}-d m {o['m']}, "
        f"{o['points']:,} vectors, {o['iterations']} iterations, all cores; faiss-cpu QPS, IVF64,PQ16 on "
        "10,000 x 128, nprobe 2, K 10, 200-query batches, all cores (wall clock) and one thread (its CPU clock)"
    )
    parts = []
    for load in LOADS:
        for policy in POLICIES:
            c = cells[f"{load}/{policy}"]
            parts.append(
                f"{load}, {policy}: OPQ {_cell(c, 'opq_seconds', '.1f')} s, all cores {_cell(c, 'qps_all', ',.0f')} "
                f"QPS, one thread {_cell(c, 'qps_1', ',.0f')} QPS"
            )
    for load in LOADS[1:]:
        spin, passive = cells[f"{load}/spin"], cells[f"{load}/passive"]
        ratio = spin["opq_seconds"]["median"] / passive["opq_seconds"]["median"]
        qps = passive["qps_all"]["median"] / spin["qps_all"]["median"]
        parts.append(f"{load}: passive trains OPQ {ratio:.1f}x and searches on all cores {qps:.1f}x as fast as spin")
    return figure, "; ".join(parts)


if __name__ == "__main__":
    main()
