"""Synthetic IVF-PQ index data: random inverted lists (with empty and tiny lists, in a second),
a skewed index whose few hot lists take most probes, and a fixed-point format for them.

Why in the package: the code-generation tests, the RTL and latency benchmarks and the figures the
README quotes all build designs on such data, and a benchmark runs as `python benchmarks/X.py`,
where only the installed package is importable (not the tests).
"""

from collections.abc import Callable

import numpy as np

from fanns.index.ivfpq import IvfPqIndexData
from fanns.numerics import IvfPqFormat


def random_index(
    nlist: int = 12, n: int = 900, d: int = 32, m: int = 8, opq: bool = False, seed: int = 0, empty: int = 2
) -> IvfPqIndexData:
    """Random lists of very different sizes (`empty` of them empty), shuffled unique ids."""
    rng = np.random.default_rng(seed)
    weights = rng.pareto(1.2, nlist) + 0.05
    weights[:empty] = 0
    sizes = np.floor(weights / weights.sum() * n).astype(np.int64)
    sizes[-1] += n - sizes.sum()
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    opq_matrix = np.linalg.qr(rng.standard_normal((d, d)))[0].astype(np.float32) if opq else None
    return IvfPqIndexData(
        centroids=rng.standard_normal((nlist, d)).astype(np.float32),
        codebook=(rng.standard_normal((m, 256, d // m)) * 0.3).astype(np.float32),
        opq_matrix=opq_matrix,
        offsets=offsets,
        ids=rng.permutation(n * 3)[:n].astype(np.int64),
        codes=rng.integers(0, 256, (n, m), dtype=np.uint8),
        metric="l2",
    )


def random_format(d: int = 32, m: int = 8) -> IvfPqFormat:
    """A fixed-point format that suits `random_index` data of the same d and m."""
    return IvfPqFormat(d=d, m=m, scale=1000.0, ivf_shift=8, lut_shift=10)


def skewed_index(
    nlist: int = 16, hot: int = 4, hot_size: int = 540, cold_size: int = 70, d: int = 32, m: int = 8, seed: int = 0
) -> tuple[IvfPqIndexData, Callable[[int, int], np.ndarray]]:
    """An index with access skew: `hot` large lists whose centroids sit close together, the other
    lists small and spread out; and `queries(n, seed)`, which draws queries near the hot
    centroids (4 in 5) or near a random cold one, so the few hot lists get most of the probes."""
    rng = np.random.default_rng(seed)
    centroids = rng.standard_normal((nlist, d)) * 2.0
    centre = centroids[0].copy()
    centroids[:hot] = centre + 0.4 * rng.standard_normal((hot, d))
    sizes = np.array([hot_size] * hot + [cold_size] * (nlist - hot), dtype=np.int64)
    n = int(sizes.sum())
    data = IvfPqIndexData(
        centroids=centroids.astype(np.float32),
        codebook=(rng.standard_normal((m, 256, d // m)) * 0.3).astype(np.float32),
        opq_matrix=None,
        offsets=np.concatenate([[0], np.cumsum(sizes)]),
        ids=rng.permutation(n * 3)[:n].astype(np.int64),
        codes=rng.integers(0, 256, (n, m), dtype=np.uint8),
        metric="l2",
    )

    def queries(count: int, qseed: int) -> np.ndarray:
        r = np.random.default_rng(qseed)
        near_hot = r.random(count) < 0.8
        base = np.where(near_hot[:, None], centre, centroids[r.integers(hot, nlist, count)])
        return (base + 0.3 * r.standard_normal((count, d))).astype(np.float32)

    return data, queries
