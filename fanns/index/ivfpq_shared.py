"""Training work shared by the indexes of an exploration grid.

Why: an exploration trains, per nlist, an index without and one with OPQ, and the OPQ index
repeats the two most expensive steps of the other. An OPQ rotation is orthogonal, so distances,
nearest centroids and k-means are the same before and after it: the OPQ index's coarse
quantizer is the plain index's centroids rotated, and every base vector goes to the same cell
— the k-means of the coarse quantizer (iterations x sample x nlist x d) and the coarse
assignment of the whole base (N x nlist x d) are done once per nlist, not once per index. Neither
depends on m either, so the plain index of a second m takes them from the first m's. The OPQ
rotation itself is trained on the raw vectors, not on residuals, so one rotation (trained on
a fixed sample) serves every nlist. What stays per index is what truly differs: the PQ
codebook (trained on the residuals of the rotated sample) and the encoding of the base.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import faiss
import numpy as np
from faiss.contrib import inspect_tools

from fanns.datasets.dataset import check_values
from fanns.errors import FannsError
from fanns.index import ivfpq
from fanns.index.ivfpq import OPQ_NITER, OPQ_NITER_PQ0, OPQ_TRAIN_POINTS, factory_string


@dataclass
class Coarse:
    """A trained coarse quantizer and where it put every base vector (in the unrotated space)."""

    centroids: np.ndarray  # [nlist, d] float32
    assign: np.ndarray  # [N] int64: the cell of base vector i


def coarse_of(index) -> Coarse:
    """The coarse quantizer and the cell of every base vector of a filled IVF index without a
    pre-transform (its ids are 0..N-1, as `train_index` adds them)."""
    index = faiss.downcast_index(index)
    if isinstance(index, faiss.IndexPreTransform):
        raise FannsError("coarse_of needs an index without a pre-transform (its centroids are in the raw space)")
    ivf = faiss.extract_index_ivf(index)
    assign = np.full(ivf.ntotal, -1, dtype=np.int64)
    for cell in range(ivf.nlist):
        if ivf.invlists.list_size(cell):
            ids, _ = inspect_tools.get_invlist(ivf.invlists, cell)
            assign[ids] = cell
    if ivf.ntotal and assign.min() < 0:
        raise FannsError("the index's ids are not 0..N-1; its coarse assignment cannot be reused")
    return Coarse(centroids=ivf.quantizer.reconstruct_n(0, ivf.nlist).astype(np.float32), assign=assign)


def train_rotation(train: np.ndarray, m: int) -> np.ndarray:
    """The [d, d] OPQ rotation (y = A @ x) for m sub-quantizers, trained on at most
    `OPQ_TRAIN_POINTS` of `train` (host vectors) with fanns's OPQ settings."""
    d = train.shape[1]
    ivfpq.check_opq_sample(min(train.shape[0], OPQ_TRAIN_POINTS), d, f"OPQ{m}")
    opq = faiss.OPQMatrix(d, m)
    opq.niter, opq.niter_pq_0, opq.max_train_points = OPQ_NITER, OPQ_NITER_PQ0, OPQ_TRAIN_POINTS
    check_values("OPQ training vectors", train)
    with ivfpq.blas_distances():
        opq.train(np.ascontiguousarray(train[:OPQ_TRAIN_POINTS], dtype=np.float32))
    a, _ = inspect_tools.get_LinearTransform_matrix(opq)
    return np.ascontiguousarray(a, dtype=np.float32)


def rotated(vectors: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """`vectors @ rotation.T` in float32, the same bits on any number of BLAS threads.

    Why: a float32 product's sums are split differently on 1 and 2 threads (a Dask worker runs
    BLAS on one), and the last bits of the centroids then differ between an index trained here
    and on a cluster. The float64 product is exact to far below float32's last bit, so rounding
    it gives the same float32 on any split."""
    product = vectors.astype(np.float64) @ rotation.T.astype(np.float64)
    return np.ascontiguousarray(product.astype(np.float32))


def train_shared_index(
    base: np.ndarray,
    metric: str,
    nlist: int,
    m: int,
    rotation: np.ndarray | None,
    train: np.ndarray,
    seed: int,
    coarse: Coarse | None = None,
    on_phase: Callable[[str, int], None] | None = None,
    lists: ivfpq.ListFiller | None = None,
):
    """`IVF{nlist},PQ{m}`, behind the given OPQ rotation when there is one, reusing what another
    index of the grid trained: its coarse quantizer is `coarse`'s centroids (rotated) and the base
    goes to `coarse`'s cells (no k-means, no coarse assignment), or, without `coarse`, k-means on
    the (rotated) `train`; the PQ is trained on the sample's residuals and the base added
    (`ivfpq.fill`, in RAM or where `lists` puts them). `on_phase` as `train_index`.

    A plain index with the coarse quantizer of a plain index of another m equals the one trained
    on its own (the k-means and the assignment do not depend on m): a second m costs only its
    codebook, its encoding and its sweep."""
    d = base.shape[1]
    opq = rotation is not None
    factory = factory_string(nlist, m, opq)
    if coarse is None and not opq:
        raise FannsError(f"{factory}: a plain index shares nothing without a coarse quantizer (use train_index)")
    if opq and rotation.shape != (d, d):
        raise FannsError(f"{factory}: an OPQ rotation of shape {rotation.shape} for d = {d}")
    if coarse is not None and (coarse.centroids.shape != (nlist, d) or coarse.assign.shape[0] != base.shape[0]):
        raise FannsError(f"{factory}: the shared coarse quantizer does not match {nlist} cells x {d} / the base")
    index = faiss.index_factory(d, factory, faiss.METRIC_L2)
    transform = None
    if opq:
        transform = faiss.downcast_VectorTransform(index.chain.at(0))
        faiss.copy_array_to_vector(rotation.ravel(), transform.A)
        transform.is_trained = True
    ivf = faiss.downcast_index(faiss.extract_index_ivf(index))
    ivf.cp.seed = seed
    ivf.pq.cp.seed = seed + 1
    ivf.do_polysemous_training = False
    if coarse is not None:  # IndexIVF.train then skips k-means
        ivf.quantizer.add(rotated(coarse.centroids, rotation) if opq else np.ascontiguousarray(coarse.centroids))
    check_values(f"{factory}: training vectors", train)
    try:
        with ivfpq.blas_distances():
            index.train(np.ascontiguousarray(train, dtype=np.float32))
        if on_phase:
            on_phase("train", train.shape[0])
        ivfpq.fill(index, base, metric, None if coarse is None else coarse.assign, on_phase, lists)
    except RuntimeError as exc:  # a faiss exception: the data cannot train this index
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise FannsError(f"{factory}: faiss cannot train or fill the index ({first})") from None
    index.ntotal = ivf.ntotal
    return index
