"""The CPU baseline of a graph design: faiss's HNSW at the same recall, measured here.

Why: a graph accelerator's predicted QPS means little without what a CPU does at the same
recall. The baseline is faiss `IndexHNSWFlat` on the same host vectors (`prepare_vectors`), with
M = max degree / 2 (its base layer has the graph's maximum degree, as `fanns.index.graph` builds
the HNSW graph the accelerator searches) and the same efConstruction, built on one thread (so the
same data gives the same index). efSearch is swept upwards (`EF_SEARCH`) on the held-out queries
to the smallest at which faiss's R@k reaches the chosen design's held-out R@k (the largest swept
where none does, said so), and QPS is measured there on the whole query sample as the IVF-PQ
baseline measures it (`fanns.model.cpu_baseline.cpu_qps`: one thread on its CPU clock, all cores
on the wall clock, each the median of several windows), with the figure an FPGA / CPU ratio
divides by chosen so that a loaded machine cannot inflate it (`cpu_basis`).
"""

from __future__ import annotations

import faiss
import numpy as np

from fanns.index.recall import hits
from fanns.model.cpu_baseline import all_threads, basis_text, cpu_basis, cpu_qps
from fanns.progress import track

EF_SEARCH = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
"""efSearch values swept (each at least k: faiss raises a smaller efSearch to k)."""


def build_hnsw(base: np.ndarray, max_degree: int, ef_construction: int):
    """faiss IndexHNSWFlat with M = max_degree / 2, built on one thread (deterministic)."""
    index = faiss.IndexHNSWFlat(base.shape[1], max(1, max_degree // 2))
    index.hnsw.efConstruction = ef_construction
    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        index.add(np.ascontiguousarray(base, dtype=np.float32))
    finally:
        faiss.omp_set_num_threads(previous)
    return index


def ef_for_recall(index, queries: np.ndarray, gt: np.ndarray, k: int, target: float) -> tuple[int, float, bool]:
    """(efSearch, R@k there, reached): the smallest swept efSearch whose R@k on `queries` reaches
    `target`, else the largest swept."""
    q = np.ascontiguousarray(queries, dtype=np.float32)
    previous = index.hnsw.efSearch
    ef, recall = EF_SEARCH[-1], 0.0
    try:
        for ef in track([e for e in EF_SEARCH if e >= k], f"CPU baseline: faiss HNSW efSearch for R@{k} {target:.3f}"):
            index.hnsw.efSearch = ef
            recall = float((hits(index.search(q, k)[1], gt[:, :k]) / k).mean())
            if recall >= target - 1e-9:
                return ef, recall, True
    finally:
        index.hnsw.efSearch = previous
    return ef, recall, False


def hnsw_baseline(
    base: np.ndarray,
    queries: np.ndarray,
    held: np.ndarray,
    gt: np.ndarray,
    k: int,
    max_degree: int,
    ef_construction: int,
    target: float,
    min_seconds: float = 0.2,
) -> dict:
    """summary.json's CPU record (module docstring): `queries` the sample [nq, d] (host vectors),
    `held` its held-out rows, `gt` their exact neighbours [nq, >= k], `target` the design's
    held-out R@k."""
    index = build_hnsw(base, max_degree, ef_construction)
    ef, recall, reached = ef_for_recall(index, queries[held], gt[held], k, target)
    cpu = {
        "1": cpu_qps(index, queries, ef, k, min_seconds, threads=1),
        "all": cpu_qps(index, queries, ef, k, min_seconds, threads=all_threads()),
    }
    basis = cpu_basis(cpu)
    m = max(1, max_degree // 2)
    return {
        "index": f"HNSW{m},Flat",
        "M": m,
        "efConstruction": ef_construction,
        "efSearch": ef,
        "recall": round(recall, 6),
        "target": round(target, 6),
        "reached": reached,
        "qps": basis["qps"],
        "threads": basis["threads"],
        "basis": {**basis, "text": basis_text(basis)},
        "spread": cpu["all"],
        "one_thread": cpu["1"],
    }
