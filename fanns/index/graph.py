"""The unified graph format: one representation of any proximity graph for the graph accelerator.

Why: Falcon serves any graph (7.3.4.2) by reducing it to nodes, a fixed maximum degree, an entry
node and the vectors. HNSW contributes its base layer (layer 0, which holds every vector) and a
fixed entry node on it (faiss's own `entry_point`, the node every HNSW search starts from);
NSG contributes its graph and its navigating node. Vectors are stored in the hardware number format
(`fanns.numerics.GraphFormat`: integers, exact squared L2), so traversals on this format compute
exactly what the accelerator computes.

On-device image (`pack`): node i lives in memory channel ``i % channels`` at row ``i // channels``
of two regions per channel, each row aligned to the 64-byte memory word (Falcon 7.3.2.3):
the adjacency region (a row is the degree as uint32, then `max_degree` uint32 neighbour ids padded
with 0xFFFFFFFF) and the vector region (a row is the d elements as int8/uint8 or int16/uint16,
little-endian). A fetch unit serving channel c therefore finds the data of every node ``i % C == c``
without crossing channels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import faiss
import numpy as np
from faiss.contrib.inspect_tools import get_NSG_neighbors

from fanns.choices import GRAPH_KINDS
from fanns.errors import FannsError
from fanns.numerics import GraphFormat

WORD_BYTES = 64
PAD_ID = 0xFFFFFFFF


@dataclass
class GraphImage:
    """A graph in the unified format (see the module docstring)."""

    kind: str
    neighbors: np.ndarray  # int32 [n, max_degree]; valid ids first, then -1
    entry: int
    vectors: np.ndarray  # int64 [n, d] in `fmt`
    fmt: GraphFormat
    build: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.neighbors = np.ascontiguousarray(self.neighbors, dtype=np.int32)
        self.vectors = np.ascontiguousarray(self.vectors, dtype=np.int64)
        n = len(self.neighbors)
        if len(self.vectors) != n:
            raise FannsError(
                f"graph has {n} nodes but {len(self.vectors)} vectors", hint="build the graph on the same base set"
            )
        if not 0 <= self.entry < n:
            raise FannsError(f"entry node {self.entry} outside the graph of {n} nodes")
        valid = self.neighbors >= 0
        if np.any(valid[:, 1:] & ~valid[:, :-1]):
            raise FannsError("neighbour lists must hold their valid ids first, padding (-1) last")
        if np.any(self.neighbors >= n):
            raise FannsError("a neighbour id is outside the graph")

    @property
    def n(self) -> int:
        return len(self.neighbors)

    @property
    def max_degree(self) -> int:
        return self.neighbors.shape[1]

    @property
    def degree(self) -> np.ndarray:
        return (self.neighbors >= 0).sum(1).astype(np.int32)

    @property
    def elem_bytes(self) -> int:
        return _elem_dtype(self.fmt).itemsize

    @property
    def adjacency_row_bytes(self) -> int:
        return _align(4 * (1 + self.max_degree))

    @property
    def vector_row_bytes(self) -> int:
        return _align(self.fmt.d * self.elem_bytes)

    def adjacency_bytes(self, degree: int) -> int:
        """Bytes a fetch of one node's neighbour list reads (degree word plus the valid ids)."""
        return 4 * (1 + degree)

    def vector_bytes(self) -> int:
        return self.fmt.d * self.elem_bytes

    def elem_dtype(self) -> np.dtype:
        return _elem_dtype(self.fmt)

    # -- on-device image ------------------------------------------------------------------------
    def pack(self, channels: int) -> list[dict[str, np.ndarray]]:
        """The per-channel memory image: for each channel {"adjacency": uint8[], "vectors": uint8[]}."""
        if channels < 1:
            raise FannsError(f"channels={channels} must be at least 1")
        adj_words = self.adjacency_row_bytes // 4
        rows = np.full((self.n, adj_words), PAD_ID, dtype=np.uint32)
        rows[:, 0] = self.degree
        rows[:, 1 : 1 + self.max_degree] = np.where(self.neighbors >= 0, self.neighbors, PAD_ID).astype(np.uint32)
        vec = np.zeros((self.n, self.vector_row_bytes), dtype=np.uint8)
        vec[:, : self.vector_bytes()] = self.vectors.astype(self.elem_dtype()).view(np.uint8).reshape(self.n, -1)
        out = []
        for c in range(channels):
            out.append(
                {
                    "adjacency": rows[c::channels].astype("<u4").view(np.uint8).reshape(-1),
                    "vectors": vec[c::channels].reshape(-1).copy(),
                }
            )
        return out

    @classmethod
    def unpack(
        cls, images: list[dict[str, np.ndarray]], n: int, max_degree: int, entry: int, fmt: GraphFormat, kind: str
    ) -> GraphImage:
        """Rebuild a graph from its per-channel image (the inverse of `pack`)."""
        channels = len(images)
        adj_row = _align(4 * (1 + max_degree)) // 4
        dtype = _elem_dtype(fmt)
        elem_bytes = dtype.itemsize
        vec_row = _align(fmt.d * elem_bytes)
        neighbors = np.empty((n, max_degree), dtype=np.int32)
        vectors = np.empty((n, fmt.d), dtype=np.int64)
        for c, image in enumerate(images):
            rows = image["adjacency"].view("<u4").reshape(-1, adj_row)
            ids = rows[:, 1 : 1 + max_degree].astype(np.int64)
            neighbors[c::channels] = np.where(ids == PAD_ID, -1, ids)
            v = image["vectors"].reshape(-1, vec_row)[:, : fmt.d * elem_bytes]
            vectors[c::channels] = v.copy().view(dtype).astype(np.int64)
        return cls(kind=kind, neighbors=neighbors, entry=entry, vectors=vectors, fmt=fmt)

    # -- persistence ----------------------------------------------------------------------------
    def save(self, path) -> None:
        keys = sorted(self.build)
        np.savez_compressed(
            path,
            neighbors=self.neighbors,
            vectors=self.vectors,
            entry=np.int64(self.entry),
            kind=np.str_(self.kind),
            fmt=np.array([self.fmt.d, self.fmt.scale, self.fmt.vec_bits, int(self.fmt.signed)], dtype=np.float64),
            build_keys=np.array(keys, dtype=np.str_),
            build_values=np.array([float(self.build[k]) for k in keys]),
        )

    @classmethod
    def load(cls, path) -> GraphImage:
        with np.load(path, allow_pickle=False) as z:
            d, scale, bits, signed = z["fmt"]
            fmt = GraphFormat(d=int(d), scale=float(scale), vec_bits=int(bits), signed=bool(signed))
            build = {str(k): _num(v) for k, v in zip(z["build_keys"], z["build_values"])}
            return cls(
                kind=str(z["kind"]),
                neighbors=z["neighbors"],
                entry=int(z["entry"]),
                vectors=z["vectors"],
                fmt=fmt,
                build=build,
            )


def _elem_dtype(fmt: GraphFormat) -> np.dtype:
    """Storage type of one vector element: 1 byte up to 8 bits, else 2 (vec_bits <= 16)."""
    if fmt.vec_bits > 16:
        raise FannsError(f"vec_bits={fmt.vec_bits} is too wide for the graph image", hint="use vec_bits <= 16")
    size = 1 if fmt.vec_bits <= 8 else 2
    return np.dtype(f"{'i' if fmt.signed else 'u'}{size}").newbyteorder("<")


def _num(v: float) -> float | int:
    return int(v) if float(v).is_integer() else float(v)


def _align(nbytes: int) -> int:
    return WORD_BYTES * math.ceil(nbytes / WORD_BYTES)


def graph_format_for(base: np.ndarray, vec_bits: int = 8) -> GraphFormat:
    """The number format of a base set: exact unsigned integers when the data are (e.g. SIFT's
    uint8 stored as float), otherwise signed `vec_bits` with one scale mapping max |x| to full range."""
    base = np.asarray(base)
    d = base.shape[1]
    if base.size and np.all(base >= 0) and np.all(base == np.rint(base)) and base.max() < (1 << vec_bits):
        return GraphFormat(d=d, scale=1.0, vec_bits=vec_bits, signed=False)
    peak = float(np.abs(base).max()) if base.size else 1.0
    scale = ((1 << (vec_bits - 1)) - 1) / peak if peak > 0 else 1.0
    return GraphFormat(d=d, scale=scale, vec_bits=vec_bits, signed=True)


def build_graph(
    base: np.ndarray,
    kind: str,
    max_degree: int = 32,
    ef_construction: int = 64,
    fmt: GraphFormat | None = None,
    threads: int = 1,
) -> GraphImage:
    """Build an HNSW (base layer, max_degree = 2M) or NSG (R = max_degree) graph with faiss.

    `threads=1` (the default) makes the construction deterministic; faiss's parallel insertion
    gives a slightly different graph on each run.
    """

    base = np.ascontiguousarray(base, dtype=np.float32)
    n, d = base.shape
    if kind not in GRAPH_KINDS:
        raise FannsError(f"unknown graph kind {kind!r}", hint=f"choose one of {', '.join(GRAPH_KINDS)}")
    if n < 2:
        raise FannsError(f"a graph needs at least two vectors, got {n}")
    if max_degree < 2 or (kind == "hnsw" and max_degree % 2):
        raise FannsError(
            f"max_degree={max_degree} is invalid for {kind}", hint="use an even max_degree >= 2 (HNSW: 2*M)"
        )
    fmt = fmt or graph_format_for(base)
    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(max(1, threads))
    try:
        if kind == "hnsw":
            index = faiss.IndexHNSWFlat(d, max_degree // 2)
            index.hnsw.efConstruction = ef_construction
            index.add(base)
            neighbors, entry = _hnsw_base_layer(index.hnsw, n)
            build = {"M": max_degree // 2, "efConstruction": ef_construction}
        else:
            index = faiss.IndexNSGFlat(d, max_degree)
            index.add(base)
            neighbors = get_NSG_neighbors(index.nsg).astype(np.int32)
            entry = int(index.nsg.enterpoint)
            build = {"R": max_degree}
    finally:
        faiss.omp_set_num_threads(previous)
    neighbors = _compact(neighbors)
    return GraphImage(kind=kind, neighbors=neighbors, entry=entry, vectors=fmt.quantize(base), fmt=fmt, build=build)


def _hnsw_base_layer(hnsw, n: int) -> tuple[np.ndarray, int]:

    nb = faiss.vector_to_array(hnsw.neighbors)
    offsets = faiss.vector_to_array(hnsw.offsets).astype(np.int64)
    cum = faiss.vector_to_array(hnsw.cum_nneighbor_per_level).astype(np.int64)
    width = int(cum[1] - cum[0])
    rows = offsets[:n, None] + cum[0] + np.arange(width)[None, :]
    return nb[rows].astype(np.int32), int(hnsw.entry_point)


def _compact(neighbors: np.ndarray) -> np.ndarray:
    """Move valid ids to the front of each row, keeping their order (padding = -1 last)."""
    valid = neighbors >= 0
    if not np.any(valid[:, 1:] & ~valid[:, :-1]):
        return neighbors
    order = np.argsort(~valid, axis=1, kind="stable")
    return np.where(np.take_along_axis(valid, order, 1), np.take_along_axis(neighbors, order, 1), -1).astype(np.int32)
