"""The whole-accelerator bit-accurate reference model of IVF-PQ search — the specification the
HLS and RTL accelerators are checked against.

It is composed only of the `fanns.numerics.IvfPqFormat` stage functions, in the order of the
hardware pipeline:

1. host: angular datasets are L2-normalised (float, before quantisation);
2. ``quantize`` the query to `vec_bits` fixed point;
3. ``opq_rotate`` by the quantised OPQ matrix (when the index has one);
4. ``ivf_distances`` to the quantised coarse centroids, ``select_cells`` the `nprobe` nearest
   (keys ``(dist << 32) | cell``: ties go to the smaller cell id);
5. per probed cell, ``build_luts`` from the residual to the quantised PQ codebook;
6. ``adc`` of every code in the cell (the exact sum of its m LUT entries);
7. keys ``(dist << 32) | id`` and the K smallest over all probed cells (`smallest_keys`),
   padded with the all-ones sentinel when fewer than K codes were scanned.

The result is unique (keys are distinct), so it does not depend on the order in which cells are
scanned; this model scans cell by cell over all queries that probe the cell, which is what
makes it fast enough for the explorer's sweeps. The same uniqueness makes step-wise search exact
(`IvfPqReference.search_keys_cells`, docs/stepwise.md): top-K(A u B) = top-K(top-K(A) u B).
"""

from __future__ import annotations

import numpy as np

from fanns.datasets.dataset import normalize_rows
from fanns.index.ivfpq import IvfPqIndexData
from fanns.numerics import IvfPqFormat, make_keys, sentinel, smallest_keys, split_keys

LUT_BATCH = 64
"""Queries whose LUTs for one cell are built at once (bounds memory: 64 x m x 256 x dsub int64)."""


def host_queries(fmt: IvfPqFormat, metric: str, queries: np.ndarray) -> np.ndarray:
    """Stages 1-2, the host's part: float queries [nq, d] -> the fixed-point queries the
    accelerator receives (before OPQ, which runs on the device)."""
    q = normalize_rows(queries) if metric == "angular" else np.asarray(queries, dtype=np.float64)
    return fmt.quantize(q)


class IvfPqReference:
    """Bit-accurate IVF-PQ search over `data` in the number format `fmt`."""

    def __init__(self, data: IvfPqIndexData, fmt: IvfPqFormat):
        if (fmt.d, fmt.m) != (data.d, data.m):
            raise ValueError(f"format is for d={fmt.d}, m={fmt.m}; the index has d={data.d}, m={data.m}")
        self.data = data
        self.fmt = fmt
        self.centroids_fx = fmt.quantize(data.centroids)
        self.codebook_fx = fmt.quantize(data.codebook)
        self.opq_fx = None if data.opq_matrix is None else fmt.quantize_opq_matrix(data.opq_matrix)

    def quantize_queries(self, queries: np.ndarray) -> np.ndarray:
        """Stages 1-2 (`host_queries`)."""
        return host_queries(self.fmt, self.data.metric, queries)

    def prepare(self, queries: np.ndarray) -> np.ndarray:
        """Stages 1-3: float queries [nq, d] -> fixed-point queries in the index space [nq, d]."""
        return self.rotate(self.quantize_queries(queries))

    def probe(self, q_fx: np.ndarray, nprobe: int) -> np.ndarray:
        """Stage 4: the `nprobe` nearest cells of each prepared query [nq, nprobe], nearest first."""
        nprobe = min(nprobe, self.data.nlist)
        return self.fmt.select_cells(self.fmt.ivf_distances(q_fx, self.centroids_fx), nprobe)

    def search_keys(self, queries: np.ndarray, nprobe: int, k: int) -> np.ndarray:
        """The K smallest selection keys per query, ascending: uint64 [nq, k]."""
        return self.search_keys_fx(self.quantize_queries(queries), nprobe, k)

    def rotate(self, q_fx: np.ndarray) -> np.ndarray:
        """Stage 3 on host-quantised queries (the identity without OPQ)."""
        return q_fx if self.opq_fx is None else self.fmt.opq_rotate(q_fx, self.opq_fx)

    def search_keys_fx(self, q_host: np.ndarray, nprobe: int, k: int) -> np.ndarray:
        """`search_keys` of queries already quantised by the host (what the device receives)."""
        q_fx = self.rotate(np.asarray(q_host, dtype=np.int64))
        best = np.full((q_fx.shape[0], k), sentinel(self.fmt.pq_key_bits), dtype=np.uint64)
        return self._scan(q_fx, self.probe(q_fx, nprobe), best)

    def search_keys_cells(
        self, q_host: np.ndarray, cells: np.ndarray, seed_keys: np.ndarray | None, k: int
    ) -> np.ndarray:
        """One step of a step-wise search (docs/stepwise.md): scan the host-given `cells` instead
        of the IVF stage's choice, starting from the kept top-K `seed_keys`.

        `q_host` [nq, d] are host-quantised queries (as for `search_keys_fx`); `cells` [nq, c]
        int lists, per query, c >= 1 cell ids to scan in any order, -1 entries (anywhere) skipped,
        so a query with fewer cells is padded with -1 and a row of -1 returns its seed; `seed_keys`
        [nq, k] uint64 are the keys kept from the earlier steps, ascending as a step returns them
        (the hardware merges two sorted lists), sentinels for none, None meaning all sentinels
        (the first step). Returns the K smallest keys of the seed and
        every code of the scanned cells, ascending: uint64 [nq, k]. Keys are unique, so the last
        step's result equals `search_keys_fx`'s whenever the steps together scan the same cells,
        each once; a cell scanned twice (within a step: refused; across steps: the caller's
        duty) would put duplicate keys in the result.
        """
        q_fx = self.rotate(np.asarray(q_host, dtype=np.int64))
        cells, best = self.check_step(cells, seed_keys, q_fx.shape[0], k)
        return self._scan(q_fx, cells, best)

    def check_step(self, cells, seed_keys: np.ndarray | None, nq: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The arguments of `search_keys_cells` checked (ValueError): (cells, seed keys [nq, k])."""
        cells = np.asarray(cells)
        if cells.ndim != 2 or cells.shape[0] != nq or not np.issubdtype(cells.dtype, np.integer):
            raise ValueError(f"cells must be an int array [nq={nq}, c]; got {cells.dtype} {cells.shape}")
        if cells.size and (cells.min() < -1 or cells.max() >= self.data.nlist):
            raise ValueError(f"cell ids must lie in [-1, {self.data.nlist}); got {cells.min()}..{cells.max()}")
        ordered = np.sort(cells, axis=1)
        if np.any((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)):
            raise ValueError("a query's cell list names a cell twice")
        if seed_keys is None:
            best = np.full((nq, k), sentinel(self.fmt.pq_key_bits), dtype=np.uint64)
        else:
            best = np.asarray(seed_keys, dtype=np.uint64)
            if best.shape != (nq, k):
                raise ValueError(f"seed_keys must be [nq={nq}, k={k}]; got {best.shape}")
            if np.any(best[:, 1:] < best[:, :-1]):
                raise ValueError("seed_keys must be ascending per query (as a step returns them)")
        return cells, best

    def _scan(self, q_fx: np.ndarray, cells: np.ndarray, best: np.ndarray) -> np.ndarray:
        """Merge every code of each query's `cells` (-1: none) into its kept top-K `best`."""
        best = best.copy()
        k = best.shape[1]
        nq = q_fx.shape[0]
        query_of = np.repeat(np.arange(nq), cells.shape[1])
        cell_of = cells.ravel().astype(np.int64)
        real = cell_of >= 0
        query_of, cell_of = query_of[real], cell_of[real]
        order = np.argsort(cell_of, kind="stable")
        bounds = np.searchsorted(cell_of[order], np.arange(self.data.nlist + 1))
        for cell in range(self.data.nlist):
            queries_here = query_of[order[bounds[cell] : bounds[cell + 1]]]
            codes = self.data.list_codes(cell)
            if queries_here.size == 0 or codes.shape[0] == 0:
                continue
            ids = self.data.list_ids(cell)
            for start in range(0, queries_here.size, LUT_BATCH):
                batch = queries_here[start : start + LUT_BATCH]
                luts = self.fmt.build_luts(q_fx[batch], self.centroids_fx[cell], self.codebook_fx)
                dist = np.stack([self.fmt.adc(lut, codes) for lut in luts])
                keys = make_keys(dist, np.broadcast_to(ids, dist.shape))
                best[batch] = smallest_keys(np.concatenate([best[batch], keys], axis=1), k)
        return best

    def search(self, queries: np.ndarray, nprobe: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(dist_fixed uint64 [nq, k], ids int64 [nq, k]), nearest first.

        Padding (fewer than k codes scanned) is the sentinel key, i.e. dist
        ``2**pq_dist_bits - 1`` and id ``2**32 - 1``.
        """
        dist, ids = split_keys(self.search_keys(queries, nprobe, k))
        return dist, ids.astype(np.int64)
