"""The IVF-PQ accelerator at the level of its selection streams: what each selection PE receives,
item by item, and what it emits — the bit-exact model of a generated accelerator for every
selection architecture, approximate ones (AHPQ) included.

Why: `IvfPqReference` computes the exact K smallest keys, which is what HPQ and HSMPQG emit. AHPQ
truncates its level-1 queues, so its output depends on which item reaches which queue, i.e. on
the position of every key in its stream; that is fixed by the architecture
(docs/ivfpq_architecture.md): IVFDist PE i emits the keys of its contiguous chunk of cells in
cell order; PQDist PE p emits, probe by probe (nearest cell first), the items of its share of the
list — positions p, p + P, ... — padded with sentinel keys to the share length of
`fanns.arch.ivfpq.Packing` (one padding item for an empty list). This module builds exactly those
streams from the same `IvfPqFormat` stage functions and runs the selection PEs' own reference
models (`selector_pe(...).select`) on them.
"""
from __future__ import annotations

import numpy as np

from fanns.arch.design import IvfPqDesign
from fanns.arch.ivfpq import Packing, ivf_chunks, selector_pe
from fanns.arch.ivfpq_reference import IvfPqReference
from fanns.numerics import make_keys, sentinel


class IvfPqStreams:
    """Stream-level model of the accelerator `design` serving `ref` (its index and format)."""

    def __init__(self, design: IvfPqDesign, ref: IvfPqReference):
        self.design, self.ref = design, ref
        st = design.stages
        self.sel_cells = selector_pe(st.sel_cells)
        self.sel_k = selector_pe(st.sel_k)
        self.chunks = ivf_chunks(ref.data.nlist, st.ivf_dist.pes)
        self.pes = st.pq_dist.pes
        self.packing = Packing(design.format.m, st.pq_dist.port_bits)

    def ivf_streams(self, ivf_dist: np.ndarray) -> list[np.ndarray]:
        """One query's IVFDist key streams: PE i's cells in order, keys (dist << 32) | cell."""
        keys = make_keys(ivf_dist, np.arange(ivf_dist.shape[0]))
        return [keys[base : base + n] for base, n in self.chunks]

    def pq_streams(self, q_fx: np.ndarray, cells: np.ndarray) -> list[np.ndarray]:
        """One query's PQDist key streams over its probed `cells` (probe order)."""
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

    def search_keys(self, queries: np.ndarray) -> np.ndarray:
        """The K keys the accelerator returns per query, ascending: uint64 [nq, K]."""
        q_fx = self.ref.prepare(queries)
        ivf = self.ref.fmt.ivf_distances(q_fx, self.ref.centroids_fx)
        out = np.empty((q_fx.shape[0], self.design.k), dtype=np.uint64)
        for i in range(q_fx.shape[0]):
            cells = self.sel_cells.select(self.ivf_streams(ivf[i])) & np.uint64(0xFFFFFFFF)
            out[i] = self.sel_k.select(self.pq_streams(q_fx[i], cells))
        return out


def expected_keys(design: IvfPqDesign, ref: IvfPqReference, queries: np.ndarray) -> np.ndarray:
    """The keys the accelerator of `design` must return for `queries`: the whole-accelerator
    reference when both selection stages are exact (fast), else the stream-level model."""
    st = design.stages
    if st.sel_cells.s1 >= st.sel_cells.s and st.sel_k.s1 >= st.sel_k.s:
        return ref.search_keys(queries, design.nprobe, design.k)
    return IvfPqStreams(design, ref).search_keys(queries)
