"""The reference model of a whole design, SelK micro-architecture included.

`IvfPqReference` computes the K smallest keys of a query, which is what an exact selection PE
(HPQ, HSMPQG) returns however the keys reach it. An approximate one (AHPQ: level-1 queues cut to
s1 < K) may drop a result, and which one depends on exactly which keys reach which level-1 queue:
the item's position in its PQDist PE's key stream. `DesignReference` therefore rebuilds those
streams as the hardware produces them — PE p scans, cell after cell in probe order, the items
p, p + P, p + 2P, ... of the list padded to the share length (`Packing.items`: whole code beats,
padding keys are the sentinel; an empty list sends one padding item) — and applies the design's
SelK PE (`selector_pe(...).select`) to them. For exact selectors it is `IvfPqReference` itself.
Both accelerators (RTL and HLS) must equal this model bit for bit.
"""
from __future__ import annotations

import numpy as np

from fanns.arch import ivfpq as A
from fanns.arch.design import IvfPqDesign
from fanns.arch.ivfpq_reference import IvfPqReference
from fanns.explore.faiss_index import IvfPqIndexData
from fanns.numerics import make_keys, sentinel


class DesignReference:
    """Bit-accurate search of one design over `data` (see the module docstring)."""

    def __init__(self, design: IvfPqDesign, data: IvfPqIndexData):
        self.design = design
        self.ref = IvfPqReference(data, design.format)
        self.selector = A.selector_pe(design.stages.sel_k)
        self.exact = design.stages.sel_k.s1 >= design.stages.sel_k.s
        pq = design.stages.pq_dist
        self.pes = pq.pes
        self.packing = A.Packing(design.format.m, pq.port_bits)

    def streams(self, q_fx: np.ndarray, cells: np.ndarray) -> list[np.ndarray]:
        """The key stream of every PQDist PE for one prepared query and its probed cells."""
        fmt, data, pes = self.design.format, self.ref.data, self.pes
        pad = np.uint64(sentinel(fmt.pq_key_bits))
        out: list[list[np.ndarray]] = [[] for _ in range(pes)]
        for cell in cells:
            codes, ids = data.list_codes(cell), data.list_ids(cell)
            n = ids.shape[0]
            if n == 0:
                for p in range(pes):
                    out[p].append(np.array([pad], dtype=np.uint64))
                continue
            lut = fmt.build_luts(q_fx, self.ref.centroids_fx[cell], self.ref.codebook_fx)
            keys = make_keys(fmt.adc(lut, codes), ids)
            share = int(self.packing.items(n, pes))
            for p in range(pes):
                mine = np.full(share, pad, dtype=np.uint64)
                real = keys[p::pes]
                mine[: real.shape[0]] = real
                out[p].append(mine)
        return [np.concatenate(s) for s in out]

    def search_keys(self, queries: np.ndarray, nprobe: int | None = None, k: int | None = None) -> np.ndarray:
        """uint64 [nq, k]: the keys the accelerator returns (run-time nprobe, k at most the design's)."""
        nprobe = self.design.nprobe if nprobe is None else nprobe
        k = self.design.k if k is None else k
        if self.exact:
            return self.ref.search_keys(queries, nprobe, k)
        q_fx = self.ref.prepare(queries)
        cells = self.ref.probe(q_fx, nprobe)
        out = np.empty((q_fx.shape[0], k), dtype=np.uint64)
        for i in range(q_fx.shape[0]):
            out[i] = self.selector.select(self.streams(q_fx[i], cells[i]))[:k]
        return out
