"""The reference model of a whole design, selection micro-architecture included.

`IvfPqReference` computes the exact K smallest keys of a query, which is what an exact selection
PE (HPQ, HSMPQG) returns however the keys reach it. An approximate one (AHPQ: level-1 queues cut
to s1 < K) may drop a result, and which one depends on exactly which key reaches which level-1
queue: the key's position in its stream. That position is fixed by the architecture
(docs/ivfpq_architecture.md): IVFDist PE i emits the keys of its contiguous chunk of cells in
cell order; PQDist PE p scans, cell after cell in probe order (nearest first), the items p,
p + P, p + 2P, ... of the list padded with sentinel keys to the share length of
`fanns.design.ivfpq_stages.Packing` (whole code beats; an empty list sends one padding item).
`DesignReference` rebuilds exactly those streams from the same `IvfPqFormat` stage functions and
runs the design's selection PEs' own reference models (`selector_pe(...).select`) on them; when
both selection stages are exact it is `IvfPqReference` itself (fast). Both accelerators (RTL and
HLS) must equal this model bit for bit.
"""

from __future__ import annotations

import numpy as np

from fanns.design.ivfpq import IvfPqDesign
from fanns.design.ivfpq_stages import Packing, ivf_chunks, selector_pe
from fanns.index.ivfpq import IvfPqIndexData
from fanns.numerics import make_keys, sentinel, smallest_keys
from fanns.reference.ivfpq import IvfPqReference


class DesignReference:
    """Bit-accurate search of the accelerator `design` over an index (see the module docstring).

    `index` is the trained index data, or an `IvfPqReference` already built on it with the
    design's format."""

    def __init__(self, design: IvfPqDesign, index: IvfPqIndexData | IvfPqReference):
        self.design = design
        self.ref = index if isinstance(index, IvfPqReference) else IvfPqReference(index, design.format)
        st = design.stages
        self.sel_cells = selector_pe(st.sel_cells)
        self.sel_k = selector_pe(st.sel_k)
        self.exact_cells = st.sel_cells.s1 >= st.sel_cells.s
        self.exact_k = st.sel_k.s1 >= st.sel_k.s
        self.chunks = ivf_chunks(self.ref.data.nlist, st.ivf_dist.pes)
        self.pes = st.pq_dist.pes
        self.packing = Packing(design.format.m, st.pq_dist.port_bits)

    def ivf_streams(self, ivf_dist: np.ndarray) -> list[np.ndarray]:
        """One query's IVFDist key streams: PE i's cells in order, keys (dist << 32) | cell."""
        keys = make_keys(ivf_dist, np.arange(ivf_dist.shape[0]))
        return [keys[base : base + n] for base, n in self.chunks]

    def pq_streams(self, q_fx: np.ndarray, cells: np.ndarray) -> list[np.ndarray]:
        """One prepared query's PQDist key streams over its probed `cells` (probe order)."""
        fmt, data, pad = self.ref.fmt, self.ref.data, sentinel(self.design.format.pq_key_bits)
        parts: list[list[np.ndarray]] = [[] for _ in range(self.pes)]
        for cell in cells:
            ids, codes = data.list_ids(int(cell)), data.list_codes(int(cell))
            share = int(self.packing.items(ids.shape[0], self.pes))
            keys = np.full(share * self.pes, pad, dtype=np.uint64)
            if ids.shape[0]:
                lut = fmt.build_luts(q_fx, self.ref.centroids_fx[int(cell)], self.ref.codebook_fx)
                keys[: ids.shape[0]] = make_keys(fmt.adc(lut, codes), ids)
            for p in range(self.pes):
                parts[p].append(keys[p :: self.pes][:share])
        return [np.concatenate(p) for p in parts]

    def probe(self, q_fx: np.ndarray, nprobe: int) -> np.ndarray:
        """The cells the design probes per prepared query, in probe order: int [nq, nprobe]."""
        if self.exact_cells:
            return self.ref.probe(q_fx, nprobe)
        ivf = self.ref.fmt.ivf_distances(q_fx, self.ref.centroids_fx)
        mask = np.uint64(0xFFFFFFFF)
        return np.stack(
            [(self.sel_cells.select(self.ivf_streams(row)) & mask)[:nprobe].astype(np.int64) for row in ivf]
        )

    def search_keys(self, queries: np.ndarray, nprobe: int | None = None, k: int | None = None) -> np.ndarray:
        """uint64 [nq, k]: the keys the accelerator returns, ascending (run-time nprobe and k at
        most the design's)."""
        return self.search_keys_fx(self.ref.quantize_queries(queries), nprobe, k)

    def search_keys_cells_fx(
        self, q_host: np.ndarray, cells: np.ndarray, seed_keys: np.ndarray | None, k: int | None = None
    ) -> np.ndarray:
        """One step of a step-wise search as the accelerator does it (docs/stepwise.md): SelK over
        the PQDist streams of the host's `cells` (-1 skipped), then the K smallest of its result
        and the seed keys. With an exact SelK this is `IvfPqReference.search_keys_cells`; with a
        cut-short AHPQ the scanned cells' keys are selected approximately, as in a normal search."""
        k = self.design.k if k is None else k
        if self.exact_k:
            return self.ref.search_keys_cells(q_host, cells, seed_keys, k)
        q_fx = self.ref.rotate(np.asarray(q_host, dtype=np.int64))
        cells, seeds = self.ref.check_step(cells, seed_keys, q_fx.shape[0], k)
        out = np.empty((q_fx.shape[0], k), dtype=np.uint64)
        for i in range(q_fx.shape[0]):
            real = cells[i][cells[i] >= 0]
            scanned = self.sel_k.select(self.pq_streams(q_fx[i], real))[:k] if real.size else seeds[i][:0]
            out[i] = smallest_keys(np.concatenate([scanned, seeds[i]]), k)
        return out

    def search_keys_fx(self, q_host: np.ndarray, nprobe: int | None = None, k: int | None = None) -> np.ndarray:
        """`search_keys` of queries already quantised by the host: the query buffer's contents."""
        nprobe = self.design.nprobe if nprobe is None else nprobe
        k = self.design.k if k is None else k
        if self.exact_cells and self.exact_k:
            return self.ref.search_keys_fx(q_host, nprobe, k)
        q_fx = self.ref.rotate(np.asarray(q_host, dtype=np.int64))
        cells = self.probe(q_fx, nprobe)
        out = np.empty((q_fx.shape[0], k), dtype=np.uint64)
        for i in range(q_fx.shape[0]):
            out[i] = self.sel_k.select(self.pq_streams(q_fx[i], cells[i]))[:k]
        return out
