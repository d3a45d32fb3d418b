"""Small IVF-PQ indexes for tests: clustered data, trained once per module."""

import numpy as np

from fanns.index.ivfpq import extract, train_index


def clustered(n: int, nq: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, d)) * 3
    x = centres[rng.integers(0, 20, n + nq)] + rng.standard_normal((n + nq, d))
    return x[:n].astype(np.float32), x[n:].astype(np.float32)


def small_index(opq: bool, n: int = 4000, d: int = 32, m: int = 8, nlist: int = 16, seed: int = 3):
    base, queries = clustered(n, 300, d, seed)
    index = train_index(base, "l2", nlist, m, opq, base, seed)
    return index, extract(index, "l2"), base, queries
