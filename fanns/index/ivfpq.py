"""Train faiss IVF-PQ indexes and extract them into plain numpy arrays.

`IvfPqIndexData` is what the hardware side consumes (the whole-accelerator reference model, the
memory-image packers): coarse centroids, the PQ codebook, the optional OPQ rotation and the
inverted lists in CSR form (``offsets[l]:offsets[l+1]`` are list ``l``'s entries in ``ids`` /
``codes``). Only what the accelerator implements is accepted: L2 IVF-PQ with residual encoding
and 8-bit codes, optionally behind one OPQ rotation.

Angular datasets are served by normalising base and queries on the host and searching with L2
(the same ranking as inner product on unit vectors); ``metric`` records the dataset's metric so
the host knows to normalise. Inner-product (MIPS) datasets are not supported by the L2 datapath.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import faiss
import numpy as np
from faiss.contrib import inspect_tools

from fanns.datasets.dataset import as_float32, check_values, normalize_rows
from fanns.datasets.formats import atomic_path
from fanns.errors import FannsError

SERVED_METRICS = ("l2", "angular")
OPQ_NITER, OPQ_NITER_PQ0, OPQ_TRAIN_POINTS = 20, 10, 1 << 14
"""OPQ training: faiss's defaults (50 iterations, 40 for the first PQ, 65,536 points) cost minutes
on two cores for little recall; these settings train in seconds."""


def factory_string(nlist: int, m: int, opq: bool) -> str:
    return f"{f'OPQ{m},' if opq else ''}IVF{nlist},PQ{m}"


def host_vectors(x: np.ndarray, metric: str) -> np.ndarray:
    """float32 vectors as the host hands them to the index (unit length for angular)."""
    if metric not in SERVED_METRICS:
        raise FannsError(
            f"metric {metric!r} is not supported by the IVF-PQ accelerator (it computes L2 distances)",
            hint="use an l2 or angular dataset (normalise inner-product data and call it angular)",
        )
    return normalize_rows(x) if metric == "angular" else as_float32(x)


@dataclass
class IvfPqIndexData:
    """A trained IVF-PQ index as plain arrays (see the module docstring)."""

    centroids: np.ndarray  # [nlist, d] float32, in the rotated space when OPQ is used
    codebook: np.ndarray  # [m, 256, dsub] float32
    opq_matrix: np.ndarray | None  # [d, d] float32, y = A @ x
    offsets: np.ndarray  # [nlist + 1] int64
    ids: np.ndarray  # [N] int64
    codes: np.ndarray  # [N, m] uint8
    metric: str  # dataset metric served: "l2" or "angular" (host normalises)
    by_residual: bool = True

    def __post_init__(self) -> None:
        if not self.by_residual:
            raise FannsError(
                "the IVF-PQ index does not encode residuals", hint="train with by_residual=True (the default)"
            )
        if self.codebook.shape[1] != 256:
            raise FannsError(f"PQ codes of {self.codebook.shape[1]} centroids; the accelerator needs 8-bit codes (256)")

    @property
    def nlist(self) -> int:
        return int(self.centroids.shape[0])

    @property
    def d(self) -> int:
        return int(self.centroids.shape[1])

    @property
    def m(self) -> int:
        return int(self.codebook.shape[0])

    @property
    def dsub(self) -> int:
        return int(self.codebook.shape[2])

    @property
    def ntotal(self) -> int:
        return int(self.ids.shape[0])

    @property
    def list_sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def list_ids(self, cell: int) -> np.ndarray:
        return self.ids[self.offsets[cell] : self.offsets[cell + 1]]

    def list_codes(self, cell: int) -> np.ndarray:
        return self.codes[self.offsets[cell] : self.offsets[cell + 1]]

    def save(self, path: str | Path) -> None:
        arrays = dict(
            centroids=self.centroids, codebook=self.codebook, offsets=self.offsets, ids=self.ids, codes=self.codes
        )
        if self.opq_matrix is not None:
            arrays["opq_matrix"] = self.opq_matrix
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, metric=np.array(self.metric), **arrays)

    @classmethod
    def load(cls, path: str | Path) -> IvfPqIndexData:
        with np.load(path) as z:
            return cls(
                centroids=z["centroids"],
                codebook=z["codebook"],
                opq_matrix=z["opq_matrix"] if "opq_matrix" in z else None,
                offsets=z["offsets"],
                ids=z["ids"],
                codes=z["codes"],
                metric=str(z["metric"]),
            )


def extract(trained, metric: str) -> IvfPqIndexData:
    """Plain arrays of a trained faiss `IVF..,PQ..` index, optionally behind one OPQ transform."""

    # `trained` stays referenced while its down-cast views are used: when the caller passes a
    # temporary (extract(read_index(...))), it is the only owner of the C++ index
    index = faiss.downcast_index(trained)
    opq = None
    if isinstance(index, faiss.IndexPreTransform):
        if index.chain.size() != 1:
            raise FannsError("only one pre-transform (OPQ) is supported in front of the IVF-PQ index")
        vt = faiss.downcast_VectorTransform(index.chain.at(0))
        if not isinstance(vt, faiss.LinearTransform) or vt.d_in != vt.d_out:
            raise FannsError(f"unsupported pre-transform {type(vt).__name__}", hint="use OPQ (a square rotation)")
        a, b = inspect_tools.get_LinearTransform_matrix(vt)
        if b is not None and np.size(b) and np.any(b != 0):
            raise FannsError("the pre-transform has a bias; the accelerator implements a pure rotation")
        opq = np.ascontiguousarray(a, dtype=np.float32)
    ivf = faiss.downcast_index(faiss.extract_index_ivf(index))
    if not isinstance(ivf, faiss.IndexIVFPQ):
        raise FannsError(f"{type(ivf).__name__} is not an IVF-PQ index", hint="use a factory string like IVF1024,PQ16")
    if ivf.metric_type != faiss.METRIC_L2:
        raise FannsError("the IVF-PQ index does not use L2", hint="angular data: normalise and train an L2 index")
    if ivf.pq.nbits != 8:
        raise FannsError(f"PQ with {ivf.pq.nbits}-bit codes; the accelerator needs 8-bit codes")
    nlist = ivf.nlist
    sizes = inspect_tools.get_invlist_sizes(ivf.invlists).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    ids = np.empty(offsets[-1], dtype=np.int64)
    codes = np.empty((offsets[-1], ivf.pq.M), dtype=np.uint8)
    for cell in range(nlist):
        if sizes[cell]:
            cell_ids, cell_codes = inspect_tools.get_invlist(ivf.invlists, cell)
            ids[offsets[cell] : offsets[cell + 1]] = cell_ids
            codes[offsets[cell] : offsets[cell + 1]] = cell_codes.reshape(sizes[cell], ivf.pq.M)
    return IvfPqIndexData(
        centroids=ivf.quantizer.reconstruct_n(0, nlist).astype(np.float32),
        codebook=inspect_tools.get_pq_centroids(ivf.pq).astype(np.float32),
        opq_matrix=opq,
        offsets=offsets,
        ids=ids,
        codes=codes,
        metric=metric,
        by_residual=bool(ivf.by_residual),
    )


PQ_CENTROIDS = 256
"""Centroids of each PQ sub-quantizer (8-bit codes): k-means needs at least this many training vectors."""


ADD_CHUNK = 65536
"""Base vectors converted and added at a time: a memory-mapped base is never copied whole."""


class ListFiller(Protocol):
    """Where a trained index's inverted lists go while the base is added
    (`fanns.index.ivfpq_lists.ListsOnDisk`: a file of faiss's on-disk inverted lists)."""

    def fill(
        self, index, base: np.ndarray, metric: str, assign: np.ndarray | None, on_phase: Callable | None
    ) -> None: ...


def add_base(
    index,
    base: np.ndarray,
    metric: str,
    rows: range | None = None,
    assign: np.ndarray | None = None,
    on_phase: Callable[[str, int], None] | None = None,
) -> None:
    """Add the base vectors `rows` (all by default) to a trained index, `ADD_CHUNK` at a time,
    each under its row number as id; with `assign` (every base row's coarse cell) faiss skips
    the coarse assignment. `on_phase("add", rows)` after each chunk.

    Why explicit ids: an index filled in parts (shards of rows added to copies of one trained
    index) then holds the same ids as one filled at once."""
    rows = range(base.shape[0]) if rows is None else rows
    ivf = faiss.downcast_index(faiss.extract_index_ivf(index))
    for start in range(rows.start, rows.stop, ADD_CHUNK):
        stop = min(start + ADD_CHUNK, rows.stop)
        part = np.ascontiguousarray(host_vectors(base[start:stop], metric))
        ids = np.arange(start, stop, dtype=np.int64)
        if assign is None:
            index.add_with_ids(part, ids)
        else:
            x = apply_pretransform(index, part)
            cells = np.ascontiguousarray(assign[start:stop], dtype=np.int64)
            ivf.add_core(x.shape[0], faiss.swig_ptr(x), faiss.swig_ptr(ids), faiss.swig_ptr(cells))
            index.ntotal = ivf.ntotal
        if on_phase:
            on_phase("add", stop - start)


def fill(
    index,
    base: np.ndarray,
    metric: str,
    assign: np.ndarray | None,
    on_phase: Callable[[str, int], None] | None,
    lists: ListFiller | None,
) -> None:
    """Add the whole base to a trained, empty index: in RAM (`add_base`), or by `lists`."""
    if lists is None:
        add_base(index, base, metric, assign=assign, on_phase=on_phase)
    else:
        lists.fill(index, base, metric, assign, on_phase)


BLAS_DISTANCE_THRESHOLD = 20
"""faiss's `distance_compute_blas_threshold` while fanns trains: BLAS from 20 floats of queries."""


@contextmanager
def blas_distances() -> Iterator[None]:
    """faiss computes exhaustive L2 distances with BLAS, whatever the batch size, inside this block.

    Why: faiss 1.15 takes a loop without BLAS when the queries hold fewer than
    `distance_compute_blas_threshold` (128,000) floats. A PQ's k-means searches d/m-float
    sub-vectors, so at 768-d and m = 96 (8 floats) a sample under 16,000 points trained 10x
    slower per point than one over it (14k against 143k point-rounds/s, measured here on one
    thread): IVF128,PQ96 on 10,000 points took 67 s. With BLAS every sample size runs at the fast
    rate."""
    saved = faiss.cvar.distance_compute_blas_threshold
    faiss.cvar.distance_compute_blas_threshold = BLAS_DISTANCE_THRESHOLD
    try:
        yield
    finally:
        faiss.cvar.distance_compute_blas_threshold = saved


def check_opq_sample(rows: int, d: int, what: str) -> None:
    """Refuse an OPQ training sample of fewer than d vectors: faiss's `OPQMatrix.train` keeps
    the d x d product of each iteration in an n x d buffer and corrupts the heap (an abort, not
    an exception) when n < d."""
    if rows < d:
        raise FannsError(
            f"{what}: OPQ trains its {d} x {d} rotation on at least d = {d} vectors, and there are {rows}",
            hint=f"explore without OPQ (--no-opq), or use a dataset of at least {d} base vectors",
        )


def train_index(
    base: np.ndarray,
    metric: str,
    nlist: int,
    m: int,
    opq: bool,
    train: np.ndarray,
    seed: int,
    on_phase: Callable[[str, int], None] | None = None,
    lists: ListFiller | None = None,
):
    """Train `factory_string(nlist, m, opq)` on `train` (host vectors) and add all of `base`
    (`fill`: in RAM, or where `lists` puts them); `on_phase("train", n)` and `on_phase("add",
    rows)` report progress."""

    d = base.shape[1]
    factory = factory_string(nlist, m, opq)
    need = max(nlist, PQ_CENTROIDS)
    if train.shape[0] < need:
        raise FannsError(
            f"{factory}: {train.shape[0]} training vectors, fewer than the {need} the index needs "
            f"({nlist} IVF cells, {PQ_CENTROIDS} centroids per PQ sub-quantizer)",
            hint=f"use a dataset of at least {need} base vectors, or a smaller --nlist",
        )
    if opq:
        check_opq_sample(min(train.shape[0], OPQ_TRAIN_POINTS), d, factory)
    check_values(f"{factory}: training vectors", train)
    index = faiss.index_factory(d, factory, faiss.METRIC_L2)
    ivf = faiss.downcast_index(faiss.extract_index_ivf(index))
    ivf.cp.seed = seed
    ivf.pq.cp.seed = seed + 1
    ivf.do_polysemous_training = False  # only used by polysemous codes; it costs minutes
    if opq:
        rotation = faiss.downcast_VectorTransform(index.chain.at(0))
        rotation.niter, rotation.niter_pq_0, rotation.max_train_points = OPQ_NITER, OPQ_NITER_PQ0, OPQ_TRAIN_POINTS
    try:
        with blas_distances():
            index.train(np.ascontiguousarray(train, dtype=np.float32))
        if on_phase:
            on_phase("train", train.shape[0])
        fill(index, base, metric, None, on_phase, lists)
    except RuntimeError as exc:  # a faiss exception: the data cannot train this index
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise FannsError(f"{factory}: faiss cannot train or fill the index ({first})") from None
    return index


def apply_pretransform(index, x: np.ndarray) -> np.ndarray:
    """Queries as the IVF part of `index` sees them (through OPQ if present)."""

    index = faiss.downcast_index(index)
    x = np.ascontiguousarray(x, dtype=np.float32)
    if isinstance(index, faiss.IndexPreTransform):
        for i in range(index.chain.size()):
            x = faiss.downcast_VectorTransform(index.chain.at(i)).apply(x)
    return x
