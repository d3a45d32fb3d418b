"""Batch graph search through the compiled reference (csrc/graph_search.cpp), via ctypes.

Why: sweeping mg x mc over thousands of queries on 100k-node graphs needs the traversal and the
cycle model at C++ speed. `fanns.index.graph_traversal` and `fanns.model.graph.qpp` remain the
specification; the tests check this compiled face against them query by query.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from fanns.datasets.cache import cache_root
from fanns.errors import FannsError
from fanns.index.graph import GraphImage
from fanns.index.graph_traversal import TraversalConfig
from fanns.model.graph.qpp import QppConfig
from fanns.tools.csim import compile_program

SOURCE = Path(__file__).parent / "csrc" / "graph_search.cpp"


def cache_dir() -> Path:

    return cache_root() / "native"


@cache
def _library() -> ctypes.CDLL:

    lib = ctypes.CDLL(str(compile_program([SOURCE], cache_dir(), shared=True)))
    p = ctypes.c_void_p
    i32 = ctypes.c_int32
    lib.fanns_graph_search.argtypes = [
        i32,
        i32,
        i32,
        i32,
        i32,
        p,
        p,
        p,
        i32,
        p,
        p,
        ctypes.c_uint32,
        i32,
        p,
        i32,
        p,
        p,
        p,
        p,
    ]
    lib.fanns_graph_search.restype = ctypes.c_int
    return lib


@dataclass
class BatchResult:
    ids: np.ndarray  # int64 [nq, k]
    dists: np.ndarray  # int64 [nq, k]
    hops: np.ndarray  # int64 [nq]
    visited: np.ndarray
    checks: np.ndarray
    bloom_fp: np.ndarray
    groups: np.ndarray
    latency: np.ndarray  # int64 [nq, len(qpps)]
    occupancy: np.ndarray  # int64 [nq, len(qpps)]


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)


def search_batch(
    graph: GraphImage, queries: np.ndarray, cfg: TraversalConfig, qpps: Sequence[QppConfig] = (), threads: int = 1
) -> BatchResult:
    """DST (BFS, MCS) of every integer query in `queries` [nq, d], timed on every QPP in `qpps`."""
    queries = np.asarray(queries)
    if queries.ndim != 2 or queries.shape[1] != graph.fmt.d:
        raise FannsError(f"queries must be [nq, {graph.fmt.d}] integers, got shape {queries.shape}")
    for arr, what in ((graph.vectors, "graph vectors"), (queries, "queries")):
        if arr.size and (arr.min() < -(2**15) or arr.max() >= 2**15):
            raise FannsError(f"{what} do not fit 16-bit integers", hint="use a graph format with vec_bits <= 16")
    for q in qpps:
        if q.max_degree != graph.max_degree:
            raise FannsError(
                f"a QPP model is for max_degree {q.max_degree}, the graph has {graph.max_degree}",
                hint="build QppConfig with max_degree=graph.max_degree",
            )
    nq, k = len(queries), cfg.k
    bloom = cfg.bloom
    config = np.array(
        [
            cfg.l,
            k,
            cfg.mg,
            cfg.mc,
            cfg.cand_capacity,
            bloom.h if bloom else 0,
            bloom.bank_bits if bloom else 0,
            cfg.bfc_units,
        ],
        dtype=np.int32,
    )
    timing = np.stack([q.timing_vector() for q in qpps]) if qpps else np.zeros((0, 1), dtype=np.int64)
    timing = np.ascontiguousarray(timing, dtype=np.int64)
    nbrs = np.ascontiguousarray(graph.neighbors, dtype=np.int32)
    degree = np.ascontiguousarray(graph.degree, dtype=np.int32)
    vecs = np.ascontiguousarray(graph.vectors, dtype=np.int16)
    qs = np.ascontiguousarray(queries, dtype=np.int16)
    spread = max(int(vecs.max(initial=0)), int(qs.max(initial=0))) - min(
        int(vecs.min(initial=0)), int(qs.min(initial=0))
    )
    narrow = int(graph.fmt.d * spread * spread < 2**31)
    ids = np.empty((nq, k), dtype=np.int64)
    dists = np.empty((nq, k), dtype=np.int64)
    stats = np.empty((nq, 5), dtype=np.int64)
    out_timing = np.empty((nq, len(qpps), 2), dtype=np.int64)
    rc = _library().fanns_graph_search(
        graph.n,
        graph.max_degree,
        graph.fmt.d,
        graph.entry,
        narrow,
        _ptr(nbrs),
        _ptr(degree),
        _ptr(vecs),
        nq,
        _ptr(qs),
        _ptr(config),
        ctypes.c_uint32(bloom.seed if bloom else 0),
        len(qpps),
        _ptr(timing),
        max(1, threads),
        _ptr(ids),
        _ptr(dists),
        _ptr(stats),
        _ptr(out_timing),
    )
    if rc:
        raise FannsError("the compiled graph search rejected its parameters", hint="check the Bloom filter size")
    return BatchResult(
        ids=ids,
        dists=dists,
        hops=stats[:, 0],
        visited=stats[:, 1],
        checks=stats[:, 2],
        bloom_fp=stats[:, 3],
        groups=stats[:, 4],
        latency=out_timing[:, :, 0],
        occupancy=out_timing[:, :, 1],
    )
