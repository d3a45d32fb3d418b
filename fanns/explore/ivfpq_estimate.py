"""How long an IVF-PQ exploration will take, said before it starts.

A cost model counts the work of each phase of each index of the grid (the formulas are in
`index_cost` and `record_cost`) in six units, and one short calibration on this machine, at the
dataset's d and m, measures each unit's rate: faiss's exhaustive L2 search (multiply-adds: IVF
k-means, coarse assignment, OPQ rotation, exact ground truth), one k-means round of a PQ
(point-rounds: PQ and OPQ training, whose small sub-spaces run far below the multiply-add rate),
PQ encoding (vectors encoded: adding, and every OPQ iteration), a scan of a small IVF-PQ index
(PQ-code lookups: the recall sweep and the CPU QPS windows), the bit-accurate reference model's
search of it (fixed-point operations: the number-format choice and the hardware-faithful recall)
and the d x d update that ends each OPQ iteration (rotation updates: LAPACK's full SVD and a
d x d product).

A query scans the cells it probes, and real cells are not equal: a query falls more often into
a large cell, so the codes it scans exceed nprobe x N / nlist (3-4x on the 1M-vector mixture of
docs/scale.md). `probed_codes` measures that bias before the exploration with a quick k-means
on a small sample, or `probed_codes_of` on an index an earlier exploration left in the cache.
The same costs are the units of the per-index progress bar, so its ETA is the model corrected
by the speed actually seen.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import faiss
import numpy as np

from fanns.index.ivfpq import OPQ_NITER, OPQ_NITER_PQ0, apply_pretransform, blas_distances, extract
from fanns.index.ivfpq_format import choose_format
from fanns.model.cpu_baseline import QPS_REPEATS
from fanns.reference.ivfpq import IvfPqReference

IVF_NITER, PQ_NITER = 10, 25
"""faiss's k-means iterations of the coarse quantizer (`IndexIVF.cp.niter`) and of each PQ
sub-quantizer (`ProductQuantizer.cp.niter`), as `faiss.index_factory` sets them."""
OPQ_NITER_PQ = 4
"""faiss's PQ iterations inside each OPQ round (`OPQMatrix.niter_pq`)."""
PQ_CENTROIDS = 256
CALIBRATION_SECONDS = 0.2
SKEW_POINTS_PER_CELL, SKEW_NITER = 16, 4
"""The quick k-means of `probed_codes`: 16 sample points per cell and 4 rounds estimated the
codes a query scans at nprobe 1-4 within 0.6-1.05x of the trained indexes' on the 1M x 768
mixture (nlist 256-2048; 1.2-5.6 s a nlist on 2 loaded cores); balanced cells said 0.26-0.9x."""


UNITS = ("madds", "pq_rounds", "encoded", "lookups", "fx_ops", "rotation_updates")


@dataclass(frozen=True)
class Rates:
    """Measured speeds of this machine, per second: multiply-adds, PQ k-means point-rounds,
    vectors PQ-encoded, PQ-code lookups, fixed-point operations of the reference model, OPQ
    rotation updates at the dataset's d (infinite when not measured: no OPQ rotation to train)."""

    madds: float
    pq_rounds: float
    encoded: float
    lookups: float
    fx_ops: float
    rotation_updates: float

    def to_dict(self) -> dict:
        rates = {unit: getattr(self, unit) for unit in UNITS}
        return {f"{unit}_per_s": round(r, 3) if math.isfinite(r) else None for unit, r in rates.items()}


def _timed(fn, min_seconds: float, least: int = 3) -> float:
    """Median seconds of `fn` over repeats filling `min_seconds` (at least `least`)."""
    times = []
    start = time.perf_counter()
    while len(times) < least or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


@functools.lru_cache(maxsize=64)
def calibrate(d: int, m: int, seed: int = 0, min_seconds: float = CALIBRATION_SECONDS, opq: bool = False) -> Rates:
    """Measure `Rates` on random data of dimension `d` (about a second on two cores), once per
    process and shape: a session that explores one dataset several times estimates from one
    measurement. The rotation updates are measured only with `opq` (an OPQ rotation to train):
    one costs 0.3 s at d = 784 and 50 s at d = 2048 on one core."""
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
    data = extract(ivf, "l2")
    ref = IvfPqReference(data, choose_format(data, base[:256], nprobe=nlist))
    fx_queries = base[:16]
    fx_work = reference_ops(m, m, fx_queries.shape[0], nlist, nlist, n)
    fx_ops = fx_work / _timed(lambda: ref.search(fx_queries, nlist, 10), min_seconds)
    return Rates(
        madds=madds,
        pq_rounds=pq_rounds,
        encoded=encoded,
        lookups=lookups,
        fx_ops=fx_ops,
        rotation_updates=rotation_updates_per_second(d, min_seconds) if opq else math.inf,
    )


ROTATION_SAMPLE = 256
"""Points (at least d: `fanns.index.ivfpq.check_opq_sample`) of the one-iteration OPQ training
`rotation_updates_per_second` times: few enough that its two n x d x d products and its PQ round
cost little beside the d x d update."""


@functools.lru_cache(maxsize=16)
def rotation_updates_per_second(d: int, min_seconds: float = CALIBRATION_SECONDS) -> float:
    """OPQ rotation updates per second at dimension `d`, timed as faiss runs them: one OPQ
    iteration (`OPQMatrix` with niter 1) on `ROTATION_SAMPLE` random points, whose cost is its
    full SVD of a d x d matrix and the d x d product after it. Once per process and d, and
    timed once where one iteration alone fills the calibration's `min_seconds`."""
    x = np.random.default_rng(0).standard_normal((max(ROTATION_SAMPLE, d), d)).astype(np.float32)

    pq = faiss.ProductQuantizer(d, 1, 8)
    pq.cp.min_points_per_centroid = 1  # no sample-size warning: the PQ round is not what is timed

    def one_iteration() -> None:
        opq = faiss.OPQMatrix(d, 1)
        opq.niter, opq.niter_pq_0, opq.niter_pq = 1, 1, 1
        opq.pq = pq
        opq.train(x)

    with blas_distances():
        return 1.0 / _timed(one_iteration, min_seconds, least=1)


def probed_codes(sample: np.ndarray, queries: np.ndarray, n: int, nlist: int, max_nprobe: int, seed: int) -> np.ndarray:
    """The mean codes a query scans at nprobe 1..`max_nprobe` in an index of `n` vectors and
    `nlist` cells, [min(max_nprobe, nlist)]: cells from a quick k-means (`SKEW_NITER` rounds) on
    `sample` (host vectors of the base, about `SKEW_POINTS_PER_CELL` a cell), each cell's share
    of the base from that sample's assignment, the queries' nearest cells."""
    x = np.ascontiguousarray(sample, dtype=np.float32)
    km = faiss.Kmeans(x.shape[1], nlist, niter=SKEW_NITER, seed=seed, max_points_per_centroid=SKEW_POINTS_PER_CELL)
    km.cp.min_points_per_centroid = 1  # no warning: few points per cell is the point
    with blas_distances():
        km.train(x)
        _, cell = km.index.search(x, 1)
        share = np.bincount(cell[:, 0], minlength=nlist) / x.shape[0]
        _, probed = km.index.search(np.ascontiguousarray(queries, dtype=np.float32), min(max_nprobe, nlist))
    return n * np.cumsum(share[probed], axis=1).mean(0)


def probed_codes_of(index, queries: np.ndarray, max_nprobe: int) -> np.ndarray:
    """`probed_codes` measured on a trained and filled faiss IVF index (an earlier exploration's
    cached one): its own cell sizes and the queries' nearest cells, no k-means."""
    ivf = faiss.downcast_index(faiss.extract_index_ivf(index))
    sizes = np.array([ivf.invlists.list_size(c) for c in range(ivf.nlist)], dtype=np.float64)
    _, probed = ivf.quantizer.search(apply_pretransform(index, queries), min(max_nprobe, ivf.nlist))
    return np.cumsum(sizes[probed], axis=1).mean(0)


def reference_ops(d: int, m: int, nq: int, nlist: int, nprobe: int, codes: float) -> float:
    """Fixed-point operations of the bit-accurate reference searching `nq` queries: distances to
    the `nlist` centroids, a 256-entry LUT per sub-space of each of `nprobe` probed cells (d
    elements each), an m-entry sum per scanned code (`codes` per query)."""
    return float(nq) * ((nlist + nprobe * PQ_CENTROIDS) * d + m * codes)


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
    scanned: np.ndarray | None = None,
) -> dict[str, dict[str, float]]:
    """Per phase, the work (in `UNITS`) of training and exploring one index.

    train: k-means of `train_n` points on `nlist` centroids (`IVF_NITER` rounds, multiply-adds)
    and of the PQ (`PQ_NITER` point-rounds per point); with OPQ, `OPQ_NITER` rounds of a short
    PQ (`OPQ_NITER_PQ` point-rounds, `OPQ_NITER_PQ0` in the first), an encoding of the
    `opq_points` points and a rotation update (two n x d x d products, an SVD). add: coarse
    assignment (and the rotation) of every base vector, and its PQ encoding. sweep: distance
    tables of every probed cell and a scan of every code (nprobe up to `swept`, default nlist) —
    the codes a query scans at each nprobe are `scanned` (`probed_codes`) where given, else
    n / nlist a cell. An OPQ index that reuses the plain index's coarse quantizer
    (`coarse_shared`) skips the k-means and the coarse assignment; one that reuses a rotation
    trained for another nlist (`rotation_shared`) skips the OPQ training
    (`fanns.index.ivfpq_shared`).
    """
    rotate = d * d if opq else 0
    coarse = 0 if coarse_shared else nlist * d
    probed = nlist if swept is None else min(swept, nlist)
    train = {"madds": float(train_n) * (IVF_NITER * coarse + rotate), "pq_rounds": float(train_n) * PQ_NITER}
    if opq and not rotation_shared:
        train["madds"] += float(opq_points) * OPQ_NITER * 2 * d * d
        train["pq_rounds"] += float(opq_points) * (OPQ_NITER * OPQ_NITER_PQ + OPQ_NITER_PQ0)
        train["encoded"] = float(opq_points) * OPQ_NITER
        train["rotation_updates"] = float(OPQ_NITER)
    return {
        "train": train,
        "add": {"madds": float(n) * (coarse + rotate), "encoded": float(n)},
        "sweep": {
            "madds": float(nq) * (nlist * d + probed * PQ_CENTROIDS * d + rotate),
            "lookups": float(nq) * m * codes_at(probed, n, nlist, scanned),
        },
    }


def codes_at(nprobe: int, n: int, nlist: int, scanned: np.ndarray | None = None) -> float:
    """The codes a query scans at `nprobe`: `scanned[nprobe - 1]` where measured, all n at
    nprobe >= nlist, else n / nlist a cell."""
    if nprobe >= nlist:
        return float(n)
    if scanned is not None and nprobe <= len(scanned):
        return float(scanned[nprobe - 1])
    return float(n) * nprobe / nlist


def record_cost(d: int, nq: int, nlist: int, m: int, codes: float, goals: int, threads: int, sample: int) -> dict:
    """The work (in `UNITS`) of one index's record after its sweep, for `goals` recall goals met
    at a nprobe scanning `codes` codes a query: the number format chosen on `sample` base
    vectors and the hardware-faithful recall (reference-model operations), and faiss's CPU QPS
    (`QPS_REPEATS` passes over the queries on all `threads` and as many on one thread, whose
    pass takes `threads` times as long)."""
    passes = QPS_REPEATS * (threads + 1)
    return {
        "fx_ops": goals * (reference_ops(d, m, sample, nlist, 1, 0.0) + reference_ops(d, m, nq, nlist, 1, codes)),
        "madds": goals * passes * float(nq) * nlist * d,
        "lookups": goals * passes * float(nq) * m * codes,
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
