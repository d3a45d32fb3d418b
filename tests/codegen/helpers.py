"""Index data for the code-generation tests: random inverted lists (fast, with empty and tiny
lists) and the fixed-point format that goes with them."""
import numpy as np

from fanns.explore.faiss_index import IvfPqIndexData
from fanns.numerics import IvfPqFormat


def random_index(nlist: int = 12, n: int = 900, d: int = 32, m: int = 8, opq: bool = False, seed: int = 0,
                 empty: int = 2) -> IvfPqIndexData:
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
    return IvfPqFormat(d=d, m=m, scale=1000.0, ivf_shift=8, lut_shift=10)
