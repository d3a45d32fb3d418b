"""`fanns explore` on a large synthetic set: wall time per phase, the up-front estimate beside it,
and peak memory against the dataset's size.

The set (N x D float32 unit vectors of 1,000 clusters, the mixture of
`fanns.datasets.synthetic.clustered`; queries drawn from the same mixture) is written once, a
chunk at a time, as base.fbin / query.fbin under --data and reused by later runs. `fanns
explore` then runs as a child process, so its peak RSS
(`resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`: memory-mapped pages of the base it touched
count too) is its own, not the writer's. Extra arguments go to `fanns explore` (e.g. a narrower
grid: --nlist 1024 --no-opq). Times depend on the machine and on what else runs on it: quote
them with its load.

The load average before and after and the child's CPU time (user + system) are printed and,
with --json PATH, recorded beside the wall time (`benchmarks/record.py`).

    PYTHONPATH=. python benchmarks/explore_scale.py [--n 1000000] [--d 768] [--nq 1000] [--data DIR]
        [--json PATH] [-- explore args]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from record import command_line, write_result

CLUSTERS = 1000
LATENT, NOISE = 16, 0.25
CHUNK = 65536


class Mixture:
    """The two-scale mixture of `fanns.datasets.synthetic.clustered` (super-clusters, clusters
    on a decaying spectrum, each a rank-16 Gaussian plus isotropic noise; unit vectors), drawn a
    chunk at a time: `clustered` draws the whole set at once in float64."""

    def __init__(self, d: int, seed: int):
        rng = np.random.default_rng(seed)
        spectrum = 1.0 / np.sqrt(1.0 + np.arange(d) / 8.0)
        supers = rng.standard_normal((CLUSTERS // 20, d)) * spectrum
        parent = rng.integers(0, supers.shape[0], CLUSTERS)
        self.centres = (supers[parent] + 0.6 * rng.standard_normal((CLUSTERS, d)) * spectrum).astype(np.float32)
        self.spread = (0.6 * rng.lognormal(0.0, 0.4, CLUSTERS)).astype(np.float32)
        weights = rng.lognormal(0.0, 1.0, CLUSTERS)
        self.weights = weights / weights.sum()
        latent = min(LATENT, d)
        self.bases = (rng.standard_normal((CLUSTERS, latent, d)) / np.sqrt(latent)).astype(np.float32)

    def draw(self, rng: np.random.Generator, rows: int) -> np.ndarray:
        labels = rng.choice(CLUSTERS, size=rows, p=self.weights)
        d = self.centres.shape[1]
        x = rng.standard_normal((rows, d), dtype=np.float32) * np.float32(NOISE)
        for c in np.unique(labels):
            here = labels == c
            z = rng.standard_normal((int(here.sum()), self.bases.shape[1]), dtype=np.float32)
            x[here] = self.centres[c] + self.spread[c] * (z @ self.bases[c] + x[here])
        x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        return x


def _write_fbin(path: Path, n: int, mixture: Mixture, seed: int) -> None:
    """n rows of the mixture, a chunk at a time (never the whole set in memory)."""
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as f:
        np.array([n, mixture.centres.shape[1]], dtype="<u4").tofile(f)
        for start in range(0, n, CHUNK):
            rng = np.random.default_rng([seed, start])
            mixture.draw(rng, min(CHUNK, n - start)).astype("<f4").tofile(f)
    tmp.replace(path)


def write_set(folder: Path, n: int, d: int, nq: int, seed: int = 0) -> None:
    """base.fbin and query.fbin of the mixture in `folder`, unless already there with this shape."""
    folder.mkdir(parents=True, exist_ok=True)
    base, query = folder / "base.fbin", folder / "query.fbin"
    if base.is_file() and base.stat().st_size == 8 + 4 * n * d and query.is_file():
        return
    mixture = Mixture(d, seed)
    _write_fbin(query, nq, mixture, seed + 1)
    _write_fbin(base, n, mixture, seed + 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="base vectors (default 1,000,000)")
    ap.add_argument("--d", type=int, default=768, help="dimension (default 768)")
    ap.add_argument("--nq", type=int, default=1000, help="queries (default 1000)")
    ap.add_argument("--data", default="/tmp/fanns-scale", help="folder of the set, written once")
    ap.add_argument("--out", default="work/explore-scale", help="exploration output folder")
    ap.add_argument("--recall", default="1-R@10=0.8", help="recall goal (default 1-R@10=0.8)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    ap.add_argument("explore_args", nargs="*", help="further `fanns explore` arguments (after --)")
    args = ap.parse_args()
    data = Path(args.data) / f"mix-n{args.n}-d{args.d}-q{args.nq}"
    start = time.perf_counter()
    write_set(data, args.n, args.d, args.nq)
    print(
        f"set: {data} ({args.n:,} x {args.d} float32, {4 * args.n * args.d / 2**30:.2f} GiB), "
        f"ready in {time.perf_counter() - start:.0f} s"
    )
    cmd = [
        sys.executable,
        "-m",
        "fanns.cli",
        "explore",
        str(data),
        "--recall",
        args.recall,
        "--out",
        args.out,
        "--force",
        *args.explore_args,
    ]
    env = {**os.environ, "FANNS_NO_PROGRESS": "1"}
    print("running:", " ".join(cmd), flush=True)
    load_before = os.getloadavg()
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    wall = time.perf_counter() - start
    load_after = os.getloadavg()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = usage.ru_maxrss * 1024
    cpu = usage.ru_utime + usage.ru_stime
    size = 4 * args.n * args.d
    result = json.loads((Path(args.out) / "explore.json").read_text())
    timing = result["timing"]
    print(f"\nload average (1, 5, 15 min) before: {load_before}, after: {load_after} on {os.cpu_count()} cores")
    print(f"CPU time of fanns explore (user + system): {cpu:.0f} s over {wall:.0f} s wall")
    print(f"rates measured by the calibration: {timing['rates']}")
    print(f"{'phase':<24}{'expected s':>12}{'measured s':>12}")
    for phase, seconds in timing["seconds"].items():
        print(f"{phase:<24}{timing['expected_s'].get(phase, 0):>12.1f}{seconds:>12.1f}")
    print(f"{'total (wall)':<24}{sum(timing['expected_s'].values()):>12.1f}{wall:>12.1f}")
    print(f"peak RSS {peak / 2**30:.2f} GiB = {peak / size:.2f} x the dataset ({size / 2**30:.2f} GiB)")
    figures = {
        "n": args.n,
        "d": args.d,
        "nq": args.nq,
        "explore_args": args.explore_args,
        "indexes": [r["index"] for r in result["indexes"]],
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in load_after],
        "expected_s": timing["expected_s"],
        "seconds": timing["seconds"],
        "peak_rss_bytes": peak,
        "dataset_bytes": size,
        "goals": {r["index"]: r["goals"] for r in result["indexes"]},
        "best": result["best"],
    }
    write_result(args.json, "explore_scale", command_line(), figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    n, d = figures["n"], figures["d"]
    figure = f"`fanns explore` on {n:,} x {d} float32 ({len(figures['indexes'])} indexes, {figures['nq']:,} queries)"
    gt = figures["seconds"].get("groundtruth", 0.0)
    value = (
        f"{figures['wall_s'] / 60:.1f} min wall ("
        + ("exact ground truth cached from an earlier run" if gt < 1 else f"exact ground truth {gt:.0f} s")
        + f"; {figures['cpu_s'] / 60:.1f} min CPU; load before "
        f"{figures['load_before'][0]}, after {figures['load_after'][0]}), estimated up front "
        f"{sum(figures['expected_s'].values()) / 60:.1f} min; peak RSS "
        f"{figures['peak_rss_bytes'] / figures['dataset_bytes']:.2f}x the dataset"
    )
    return figure, value


if __name__ == "__main__":
    main()
