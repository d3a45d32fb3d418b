"""How long an IVF-PQ exploration will take, said before it starts.

A cost model counts the arithmetic of each phase of each index of the grid (the formulas are in
`index_cost`), and one short calibration on this machine turns counts into seconds: faiss's
exhaustive L2 search of random vectors of the dataset's dimension (the kernel under k-means,
coarse assignment, PQ encoding and exact ground truth) gives multiply-adds per second, and a
scan of a small IVF-PQ index gives PQ-code lookups per second (the recall sweep). The same
costs are the units of the per-index progress bar, so its ETA is the model corrected by the
speed actually seen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import faiss
import numpy as np

from fanns.index.ivfpq import OPQ_NITER, OPQ_NITER_PQ0

KMEANS_NITER = 25
"""faiss's default k-means iterations (`faiss.ClusteringParameters().niter`), for IVF and PQ."""
OPQ_NITER_PQ = 4
"""faiss's PQ iterations inside each OPQ round (`OPQMatrix.niter_pq`)."""
PQ_CENTROIDS = 256
CALIBRATION_SECONDS = 0.2


@dataclass(frozen=True)
class Rates:
    """Measured speeds of this machine: multiply-adds per second, PQ-code lookups per second."""

    madds: float
    lookups: float

    def to_dict(self) -> dict:
        return {"madds_per_s": round(self.madds), "lookups_per_s": round(self.lookups)}


def _timed(fn, min_seconds: float) -> float:
    """Median seconds of `fn` over repeats filling `min_seconds` (at least 3)."""
    times = []
    start = time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def calibrate(d: int, m: int, seed: int = 0, min_seconds: float = CALIBRATION_SECONDS) -> Rates:
    """Measure `Rates` on random data of dimension `d` (about a second on two cores)."""
    rng = np.random.default_rng(seed)
    xb = rng.standard_normal((4096, d)).astype(np.float32)
    xq = rng.standard_normal((1024, d)).astype(np.float32)
    flat = faiss.IndexFlatL2(d)
    flat.add(xb)
    madds = xq.shape[0] * xb.shape[0] * d / _timed(lambda: flat.search(xq, 16), min_seconds)
    nlist, n = 16, 32768
    base = rng.standard_normal((n, m)).astype(np.float32)  # m-d vectors: PQ with 1-d sub-spaces trains fast
    quantizer = faiss.IndexFlatL2(m)
    ivf = faiss.IndexIVFPQ(quantizer, m, nlist, m, 8)
    ivf.do_polysemous_training = False
    ivf.cp.niter = ivf.pq.cp.niter = 4
    ivf.train(base[:8192])
    ivf.add(base)
    ivf.nprobe = nlist
    queries = base[:64]
    lookups = queries.shape[0] * n * m / _timed(lambda: ivf.search(queries, 10), min_seconds)
    return Rates(madds=madds, lookups=lookups)


def index_cost(
    n: int, d: int, nq: int, nlist: int, m: int, opq: bool, train_n: int, opq_points: int
) -> dict[str, tuple[float, float]]:
    """Per phase, (multiply-adds, PQ-code lookups) of training and exploring one index.

    train: k-means of `train_n` points on `nlist` centroids and of the PQ (256 centroids per
    sub-space, all sub-spaces together cost one d-dimensional k-means), `KMEANS_NITER` rounds
    each; with OPQ, `OPQ_NITER` rounds of a short PQ and a d x d rotation on `opq_points` points.
    add: coarse assignment and PQ encoding of every base vector (and its rotation).
    sweep: distance tables of every probed cell and a scan of every code (nprobe up to nlist).
    """
    rotate = d * d if opq else 0
    train = KMEANS_NITER * train_n * (nlist + PQ_CENTROIDS) * d + train_n * rotate
    if opq:
        rounds = OPQ_NITER * OPQ_NITER_PQ + OPQ_NITER_PQ0
        train += opq_points * (rounds * PQ_CENTROIDS * d + OPQ_NITER * 2 * d * d)
    return {
        "train": (float(train), 0.0),
        "add": (float(n) * ((nlist + PQ_CENTROIDS) * d + rotate), 0.0),
        "sweep": (float(nq) * (nlist * d + nlist * PQ_CENTROIDS * d + rotate), float(nq) * n * m),
    }


def seconds(cost: tuple[float, float], rates: Rates) -> float:
    """Seconds a (multiply-adds, lookups) cost takes at `rates`."""
    return cost[0] / rates.madds + cost[1] / rates.lookups


def groundtruth_seconds(n: int, d: int, nq: int, rates: Rates) -> float:
    """Seconds of the exact ground truth (a flat search of every query against the base)."""
    return float(n) * nq * d / rates.madds


def format_seconds(s: float) -> str:
    """'42 s', '3.5 min' or '1.2 h'."""
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"
