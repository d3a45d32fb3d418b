"""How long an IVF-PQ exploration will take, said before it starts.

A cost model counts the work of each phase of each index of the grid (the formulas are in
`index_cost`) in four units, and one short calibration on this machine, at the dataset's d and
m, measures each unit's rate: faiss's exhaustive L2 search (multiply-adds: IVF k-means, coarse
assignment, OPQ rotation, exact ground truth), one k-means round of a PQ (point-rounds: PQ and
OPQ training, whose small sub-spaces run far below the multiply-add rate), PQ encoding (vectors
encoded) and a scan of a small IVF-PQ index (PQ-code lookups: the recall sweep). The same
costs are the units of the per-index progress bar, so its ETA is the model corrected by the
speed actually seen.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import faiss
import numpy as np

from fanns.index.ivfpq import OPQ_NITER, OPQ_NITER_PQ0, blas_distances

IVF_NITER, PQ_NITER = 10, 25
"""faiss's k-means iterations of the coarse quantizer (`IndexIVF.cp.niter`) and of each PQ
sub-quantizer (`ProductQuantizer.cp.niter`), as `faiss.index_factory` sets them."""
OPQ_NITER_PQ = 4
"""faiss's PQ iterations inside each OPQ round (`OPQMatrix.niter_pq`)."""
PQ_CENTROIDS = 256
CALIBRATION_SECONDS = 0.2


UNITS = ("madds", "pq_rounds", "encoded", "lookups")


@dataclass(frozen=True)
class Rates:
    """Measured speeds of this machine, per second: multiply-adds, PQ k-means point-rounds,
    vectors PQ-encoded, PQ-code lookups."""

    madds: float
    pq_rounds: float
    encoded: float
    lookups: float

    def to_dict(self) -> dict:
        return {f"{unit}_per_s": round(getattr(self, unit)) for unit in UNITS}


def _timed(fn, min_seconds: float) -> float:
    """Median seconds of `fn` over repeats filling `min_seconds` (at least 3)."""
    times = []
    start = time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


@functools.lru_cache(maxsize=64)
def calibrate(d: int, m: int, seed: int = 0, min_seconds: float = CALIBRATION_SECONDS) -> Rates:
    """Measure `Rates` on random data of dimension `d` (about a second on two cores), once per
    process and shape: a session that explores one dataset several times estimates from one
    measurement."""
    rng = np.random.default_rng(seed)
    xb = rng.standard_normal((4096, d)).astype(np.float32)
    xq = rng.standard_normal((1024, d)).astype(np.float32)
    flat = faiss.IndexFlatL2(d)
    flat.add(xb)
    madds = xq.shape[0] * xb.shape[0] * d / _timed(lambda: flat.search(xq, 16), min_seconds)
    pq = faiss.ProductQuantizer(d, m, 8)
    pq.cp.niter, pq.cp.min_points_per_centroid = 2, 1
    with blas_distances():  # as fanns trains (`fanns.index.ivfpq.blas_distances`)
        pq_rounds = xb.shape[0] * pq.cp.niter / _timed(lambda: pq.train(xb), min_seconds)
    encoded = xb.shape[0] / _timed(lambda: pq.compute_codes(xb), min_seconds)
    nlist, n = 16, 32768
    base = rng.standard_normal((n, m)).astype(np.float32)  # m-d vectors: PQ with 1-d sub-spaces trains fast
    quantizer = faiss.IndexFlatL2(m)
    ivf = faiss.IndexIVFPQ(quantizer, m, nlist, m, 8)
    ivf.do_polysemous_training = False
    ivf.cp.niter = ivf.pq.cp.niter = 4
    ivf.cp.min_points_per_centroid = ivf.pq.cp.min_points_per_centroid = 1  # no sample-size warning
    ivf.train(base[:8192])
    ivf.add(base)
    ivf.nprobe = nlist
    queries = base[:64]
    lookups = queries.shape[0] * n * m / _timed(lambda: ivf.search(queries, 10), min_seconds)
    return Rates(madds=madds, pq_rounds=pq_rounds, encoded=encoded, lookups=lookups)


def index_cost(
    n: int,
    d: int,
    nq: int,
    nlist: int,
    m: int,
    opq: bool,
    train_n: int,
    opq_points: int,
    coarse_shared: bool = False,
    rotation_shared: bool = False,
    swept: int | None = None,
) -> dict[str, dict[str, float]]:
    """Per phase, the work (in `UNITS`) of training and exploring one index.

    train: k-means of `train_n` points on `nlist` centroids (`IVF_NITER` rounds, multiply-adds)
    and of the PQ (`PQ_NITER` point-rounds per point); with OPQ, `OPQ_NITER` rounds of a short
    PQ (`OPQ_NITER_PQ` point-rounds, `OPQ_NITER_PQ0` in the first) and a d x d rotation update
    on `opq_points` points. add: coarse assignment (and the rotation) of every base vector,
    and its PQ encoding. sweep: distance tables of every probed cell and a scan of every code
    (nprobe up to `swept`, default nlist; a cell holds n / nlist codes on average). An OPQ index
    that reuses the plain index's coarse quantizer (`coarse_shared`) skips the k-means and the
    coarse assignment; one that reuses a rotation trained for another nlist (`rotation_shared`)
    skips the OPQ training (`fanns.index.ivfpq_shared`).
    """
    rotate = d * d if opq else 0
    coarse = 0 if coarse_shared else nlist * d
    probed = nlist if swept is None else min(swept, nlist)
    train = {"madds": float(train_n) * (IVF_NITER * coarse + rotate), "pq_rounds": float(train_n) * PQ_NITER}
    if opq and not rotation_shared:
        train["madds"] += float(opq_points) * OPQ_NITER * 2 * d * d
        train["pq_rounds"] += float(opq_points) * (OPQ_NITER * OPQ_NITER_PQ + OPQ_NITER_PQ0)
    return {
        "train": train,
        "add": {"madds": float(n) * (coarse + rotate), "encoded": float(n)},
        "sweep": {
            "madds": float(nq) * (nlist * d + probed * PQ_CENTROIDS * d + rotate),
            "lookups": float(nq) * n * m * probed / nlist,
        },
    }


def seconds(cost: dict[str, float], rates: Rates) -> float:
    """Seconds a cost (work per unit of `UNITS`) takes at `rates`."""
    return sum(work / getattr(rates, unit) for unit, work in cost.items())


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
