"""The `Dataset` every other part of fanns consumes, and its exact ground truth.

A dataset is base vectors, query vectors and a metric (``l2``, ``ip`` or ``angular``). Ground
truth given by the dataset's files is used when it is deep enough (validated against the base
size); otherwise it is computed exactly with faiss (flat L2 / inner-product index; angular =
normalise, then inner product) and cached in ``cache_dir`` under the dataset's content hash, so
any change to the vectors invalidates it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import faiss
import numpy as np

from fanns.datasets.formats import save_npy
from fanns.errors import FannsError
from fanns.numerics import first_true

METRICS = ("l2", "ip", "angular")
GT_MIN_DEPTH = 100
"""Computed ground truth is at least this deep, so asking for R@1, R@10 and R@100 computes once."""
HASH_FULL_LIMIT = 1 << 30
"""Arrays up to this many bytes are hashed whole; larger ones by 1024 evenly spaced 1 MiB blocks."""
MAX_BASE = (1 << 32) - 1
"""Ids are 32 bits in hardware and the all-ones id is the padding sentinel."""
_CHUNK_ROWS = 65536


def as_float32(x: np.ndarray) -> np.ndarray:
    """float32 copy (or view) of vectors of any supported element type, chunked for memmaps."""
    if x.dtype == np.float32:
        return np.asarray(x)
    out = np.empty(x.shape, dtype=np.float32)
    for i in range(0, x.shape[0], _CHUNK_ROWS):
        out[i : i + _CHUNK_ROWS] = x[i : i + _CHUNK_ROWS]
    return out


MAX_ABS_VALUE = 1e15
"""Largest magnitude of a vector element: squared distances of vectors this large still fit a
float32 (faiss computes in float32 and aborts on infinities)."""
FULL_CHECK_BYTES = 8 << 30
"""Arrays up to this size are checked element by element on load; larger ones in 4096 evenly
spaced blocks (their training sample is checked in full before training)."""


def check_values(what: str, x: np.ndarray) -> None:
    """Every element finite and of magnitude at most MAX_ABS_VALUE (see FULL_CHECK_BYTES)."""
    if x.dtype.kind not in "fiu" or (x.dtype.kind == "u" and x.dtype.itemsize == 1) or x.dtype == np.int8:
        return
    rows = x.shape[0]
    if x.nbytes <= FULL_CHECK_BYTES:
        starts = range(0, rows, _CHUNK_ROWS)
        block = _CHUNK_ROWS
    else:
        block = 64
        starts = np.unique(np.linspace(0, rows - block, 4096).astype(np.int64))
    for start in starts:
        part = np.asarray(x[start : start + block])
        bad = ~np.isfinite(part) if part.dtype.kind == "f" else np.zeros(part.shape, bool)
        bad |= np.abs(part if part.dtype.kind == "f" else part.astype(np.float64)) > MAX_ABS_VALUE
        if bad.any():
            row, col = first_true(bad)
            raise FannsError(
                f"{what}: element [{start + row}, {col}] is {part[row, col].item()!r}: "
                f"vectors must hold finite values of magnitude at most {MAX_ABS_VALUE:g}",
                hint="the file is corrupted or holds another data type; fix or remove that vector",
            )


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (all-zero rows stay zero)."""
    x = as_float32(x)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms > 0, norms, 1)).astype(np.float32)


def _hash_array(h, a: np.ndarray) -> None:
    h.update(f"{a.dtype.str}{a.shape}".encode())
    nbytes = a.size * a.itemsize
    rows = a.shape[0]
    if nbytes <= HASH_FULL_LIMIT:
        for i in range(0, rows, _CHUNK_ROWS):
            h.update(np.ascontiguousarray(a[i : i + _CHUNK_ROWS]).tobytes())
        return
    block = max(1, (1 << 20) // max(1, a.itemsize * int(np.prod(a.shape[1:]))))
    for start in np.linspace(0, rows - block, 1024).astype(np.int64):
        h.update(np.ascontiguousarray(a[start : start + block]).tobytes())


def exact_knn(base: np.ndarray, queries: np.ndarray, k: int, metric: str, chunk: int = _CHUNK_ROWS) -> np.ndarray:
    """Exact k nearest neighbours [nq, k] int64 with faiss, `chunk` base rows at a time.

    Each chunk is searched by a flat index of its own and the per-chunk top k are merged in a
    `faiss.ResultHeap`, so a memory-mapped base of any size is read once and never copied whole
    (faiss's `contrib.exhaustive_search.knn_ground_truth` does the same)."""

    k = min(k, base.shape[0])
    d = base.shape[1]
    ip = metric != "l2"
    prep = normalize_rows if metric == "angular" else as_float32
    xq = np.ascontiguousarray(prep(queries))
    heap = faiss.ResultHeap(xq.shape[0], k, keep_max=ip)
    for i in range(0, base.shape[0], chunk):
        index = faiss.IndexFlatIP(d) if ip else faiss.IndexFlatL2(d)
        index.add(np.ascontiguousarray(prep(base[i : i + chunk])))
        dist, ids = index.search(xq, min(k, index.ntotal))
        heap.add_result(dist, np.where(ids >= 0, ids + i, -1))
    heap.finalize()
    return heap.I.astype(np.int64)


@dataclass
class Dataset:
    """Base vectors, queries, metric; ground truth on demand (see the module docstring)."""

    name: str
    base: np.ndarray
    queries: np.ndarray
    metric: str
    cache_dir: Path
    description: str = ""
    given_groundtruth: np.ndarray | None = field(default=None, repr=False)
    _hash: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise FannsError(f"dataset {self.name}: unknown metric {self.metric!r}", hint=f"use one of {METRICS}")
        for what, arr in (("base", self.base), ("queries", self.queries)):
            if arr.ndim != 2 or 0 in arr.shape:
                raise FannsError(f"dataset {self.name}: {what} must be a non-empty 2-D array, got {arr.shape}")
        if self.base.shape[1] != self.queries.shape[1]:
            raise FannsError(
                f"dataset {self.name}: query/base dimension mismatch: base vectors have {self.base.shape[1]} "
                f"dimensions, queries have {self.queries.shape[1]}",
                hint="queries must come from the same vector space as the base",
            )
        if self.base.shape[0] >= MAX_BASE:
            raise FannsError(f"dataset {self.name}: {self.base.shape[0]} base vectors exceed 32-bit ids")
        for what, arr in (("base", self.base), ("queries", self.queries)):
            check_values(f"dataset {self.name}: {what}", arr)
        if self.given_groundtruth is not None:
            self.given_groundtruth = self._validate_groundtruth(self.given_groundtruth)

    # -- shape ------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return int(self.base.shape[0])

    @property
    def d(self) -> int:
        return int(self.base.shape[1])

    @property
    def nq(self) -> int:
        return int(self.queries.shape[0])

    def _validate_groundtruth(self, gt: np.ndarray) -> np.ndarray:
        gt = np.asarray(gt)
        if gt.ndim != 2 or gt.dtype.kind not in "iu":
            raise FannsError(
                f"dataset {self.name}: ground truth must be a 2-D integer array, got {gt.dtype} {gt.shape}"
            )
        if gt.shape[0] != self.nq:
            raise FannsError(
                f"dataset {self.name}: ground truth has {gt.shape[0]} rows but there are {self.nq} queries",
                hint="the ground-truth file does not belong to this query set",
            )
        lo, hi = int(gt.min()), int(gt.max())
        if lo < 0 or hi >= self.n:
            bad = hi if hi >= self.n else lo
            raise FannsError(
                f"dataset {self.name}: ground truth id {bad} is outside the base (ids must be 0..{self.n - 1})",
                hint="the ground-truth file belongs to a different (larger) base set; delete it to recompute",
            )
        return gt.astype(np.int64)

    # -- identity ---------------------------------------------------------------------------
    def content_hash(self) -> str:
        """Hex digest of metric, shapes, types and vector contents (see HASH_FULL_LIMIT)."""
        if self._hash is None:
            h = hashlib.blake2b(digest_size=16)
            h.update(self.metric.encode())
            _hash_array(h, self.base)
            _hash_array(h, self.queries)
            self._hash = h.hexdigest()
        return self._hash

    # -- ground truth -----------------------------------------------------------------------
    def _gt_cache(self) -> list[tuple[int, Path]]:
        prefix = f"gt-{self.content_hash()}-k"
        found = []
        if self.cache_dir.is_dir():
            for p in self.cache_dir.glob(prefix + "*.npy"):
                depth = p.stem[len(prefix) :]
                if depth.isdigit():
                    found.append((int(depth), p))
        return sorted(found)

    def groundtruth_status(self) -> str:
        """Human-readable: where the ground truth comes from."""
        if self.given_groundtruth is not None:
            return f"given by the files (depth {self.given_groundtruth.shape[1]})"
        cached = self._gt_cache()
        if cached:
            return f"computed (faiss exact), cached depth {cached[-1][0]} in {self.cache_dir}"
        return "not yet computed (exact, faiss; computed on first use)"

    def _cached_groundtruth(self, path: Path, depth: int) -> np.ndarray | None:
        """A cache entry if it is whole and plausible (shape, integer ids in range), else None:
        entries are published by atomic rename, but a file can still be damaged afterwards."""
        try:
            gt = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError):
            return None
        if gt.shape != (self.nq, depth) or gt.dtype.kind not in "iu":
            return None
        if gt.size and (gt.min() < 0 or gt.max() >= self.n):
            return None
        return gt

    def has_groundtruth(self, k: int) -> bool:
        """Whether ground truth `k` deep is given or cached (else `groundtruth` computes it)."""
        if self.given_groundtruth is not None and self.given_groundtruth.shape[1] >= k:
            return True
        return any(depth >= k for depth, _ in self._gt_cache())

    def groundtruth(self, k: int) -> np.ndarray:
        """Ids of the exact `k` nearest base vectors of every query, [nq, k] int64, nearest first."""
        if not 1 <= k <= self.n:
            raise FannsError(f"dataset {self.name}: k={k} must be between 1 and the base size {self.n}")
        given = self.given_groundtruth
        if given is not None and given.shape[1] >= k:
            return given[:, :k]
        for depth, path in self._gt_cache():
            if depth >= k:
                gt = self._cached_groundtruth(path, depth)
                if gt is not None:
                    return gt[:, :k].astype(np.int64)
        depth = min(self.n, max(k, GT_MIN_DEPTH))
        gt = exact_knn(self.base, self.queries, depth, self.metric)
        save_npy(self.cache_dir / f"gt-{self.content_hash()}-k{depth}.npy", gt)
        return gt[:, :k]

    def summary(self) -> dict:
        return {
            "name": self.name,
            "n": self.n,
            "nq": self.nq,
            "d": self.d,
            "dtype": str(self.base.dtype),
            "metric": self.metric,
        }
