"""Bit-accurate reference of a search with the lists in host memory and a prefetched HBM cache.

Why: the host-memory tier (docs/host_tier.md) changes where a list's bytes come from, never the
result: a search with any cache content must return the keys of the design's normal search
(`DesignReference`), and the faces to come are checked against this model. So the lists here are
real bytes: every list is stored once in a host-memory image (its m-byte codes, then its ids as
32-bit little-endian words), `prefetch` copies whole lists into an HBM cache region of `capacity`
bytes at the offsets the eviction policy gives (`fanns.model.ivfpq.prefetch.RingCache`, whose
cell -> offset table is the one the accelerator keeps on chip), and a search decodes every probed
list from the cache where the table has it, else from the host image. `HostTierLists` stands in
for the index's list arrays under the unchanged `IvfPqReference` / `DesignReference`, so the
scan, the number formats and the selection are the normal search's own code.

The design's pinned lists (`PqHostTier.pinned`) are copied into the region's end when the lists
are made (an index load) and stay there (`fanns.model.ivfpq.prefetch.PinnedRing`); the ring has
the rest of the region.

A search also reports where each query's probed bytes came from (`sources`) and which probed
cells were cached (`in_cache`), what `fanns.model.ivfpq.prefetch.host_times` turns into
cycles and latency.
"""

from __future__ import annotations

import numpy as np

from fanns.design.ivfpq import IvfPqDesign
from fanns.index.ivfpq import IvfPqIndexData
from fanns.model.ivfpq.prefetch import PinnedRing, interleave
from fanns.reference.ivfpq import IvfPqReference
from fanns.reference.ivfpq_streams import DesignReference

ID_BYTES = 4
"""A stored id: 32 bits (`fanns.numerics.ID_BITS`)."""


def pack_lists(data: IvfPqIndexData) -> tuple[np.ndarray, np.ndarray]:
    """(host image uint8, [nlist + 1] byte offsets): each list's codes row by row, then its ids."""
    sizes = np.diff(data.offsets)
    nbytes = sizes * (data.m + ID_BYTES)
    offsets = np.concatenate([[0], np.cumsum(nbytes)]).astype(np.int64)
    image = np.empty(int(offsets[-1]), dtype=np.uint8)
    for cell in range(data.nlist):
        codes = np.ascontiguousarray(data.list_codes(cell), dtype=np.uint8).ravel()
        ids = data.list_ids(cell).astype("<u4").view(np.uint8)
        image[offsets[cell] : offsets[cell + 1]] = np.concatenate([codes, ids])
    return image, offsets


class HostTierLists:
    """The lists of `data` as a device with a host-memory tier holds them (see the module
    docstring): the index arrays `IvfPqReference` reads, with `list_codes` / `list_ids` decoded
    from the cache region or the host image."""

    def __init__(self, data: IvfPqIndexData, capacity: int, pinned=()):
        self.index = data
        self.host, self.offsets = pack_lists(data)
        self.sizes = np.diff(data.offsets).astype(np.int64)
        self.list_bytes = np.diff(self.offsets)
        self.hbm = np.zeros(int(capacity), dtype=np.uint8)
        self.cache = PinnedRing(int(capacity), self.list_bytes, pinned, "the pinned lists (in list bytes)")
        for cell, at in self.cache.pinned.items():
            n = int(self.list_bytes[cell])
            self.hbm[at : at + n] = self.host[self.offsets[cell] : self.offsets[cell] + n]

    # -- the index's fields the reference reads ---------------------------------------------------
    centroids = property(lambda self: self.index.centroids)
    codebook = property(lambda self: self.index.codebook)
    opq_matrix = property(lambda self: self.index.opq_matrix)
    metric = property(lambda self: self.index.metric)
    nlist = property(lambda self: self.index.nlist)
    d = property(lambda self: self.index.d)
    m = property(lambda self: self.index.m)

    def _bytes(self, cell: int) -> np.ndarray:
        n = int(self.list_bytes[cell])
        at = self.cache.where(cell)
        return self.host[self.offsets[cell] : self.offsets[cell] + n] if at is None else self.hbm[at : at + n]

    def list_codes(self, cell: int) -> np.ndarray:
        n = int(self.sizes[cell])
        return self._bytes(cell)[: n * self.m].reshape(n, self.m)

    def list_ids(self, cell: int) -> np.ndarray:
        n = int(self.sizes[cell])
        return self._bytes(cell)[n * self.m :].view("<u4").astype(np.int64)

    def prefetch(self, order: np.ndarray, budget: float) -> int:
        """Write the lists `RingCache.prefetch` chooses from `order` (cells, nearest first) into the
        cache region, from the host image or moved within the region (pinned cells skipped: they
        are cached for good); returns the bytes copied over the link."""
        sent = 0
        for cell, at, source, _evicted in self.cache.plan(order, budget):
            n = int(self.list_bytes[cell])
            if source is None:
                self.hbm[at : at + n] = self.host[self.offsets[cell] : self.offsets[cell] + n]
                sent += n
            else:
                self.hbm[at : at + n] = self.hbm[source : source + n].copy()
        return sent

    def in_cache(self, cells: np.ndarray) -> np.ndarray:
        """bool, the shape of `cells`: which cells the table holds now."""
        return np.array([self.cache.holds(c) for c in np.ravel(cells)], dtype=bool).reshape(np.shape(cells))

    def sources(self, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(HBM bytes, host bytes) [nq] a search probing `cells` [nq, nprobe] reads now."""
        nbytes = self.list_bytes[cells]
        hit = self.in_cache(cells)
        return np.where(hit, nbytes, 0).sum(1), np.where(hit, 0, nbytes).sum(1)


class HostTierReference:
    """`DesignReference` of `design` over `data` kept in host memory with an HBM cache of
    `capacity` bytes (see the module docstring)."""

    def __init__(self, design: IvfPqDesign, data: IvfPqIndexData, capacity: int, pinned=()):
        self.lists = HostTierLists(data, capacity, pinned)
        self.design = DesignReference(design, IvfPqReference(self.lists, design.format))
        self.last: dict | None = None

    def prefetch_fx(self, q_host: np.ndarray, budget: float, depth: int) -> int:
        """Prefetch for draft queries already quantised by the host: the `depth` nearest cells of
        each draft by the design's own IVF stage, interleaved (`interleave`), within `budget` bytes;
        returns the bytes copied."""
        q_fx = self.design.ref.rotate(np.asarray(q_host, dtype=np.int64))
        return self.lists.prefetch(interleave(self.design.probe(q_fx, min(depth, self.lists.nlist))), budget)

    def search_keys_fx(self, q_host: np.ndarray, nprobe: int | None = None, k: int | None = None) -> np.ndarray:
        """`DesignReference.search_keys_fx` reading each list from where it is; `last` keeps the
        probed cells, which were cached, and the bytes read from HBM and from host memory."""
        nprobe = self.design.design.nprobe if nprobe is None else nprobe
        cells = self.design.probe(self.design.ref.rotate(np.asarray(q_host, dtype=np.int64)), nprobe)
        hbm, host = self.lists.sources(cells)
        self.last = {
            "cells": cells,
            "in_cache": self.lists.in_cache(cells),
            "pinned": self.lists.cache.is_pinned(cells),
            "hbm_bytes": hbm,
            "host_bytes": host,
        }
        return self.design.search_keys_fx(q_host, nprobe, k)

    def search_keys_cells_fx(
        self, q_host: np.ndarray, cells: np.ndarray, seed_keys: np.ndarray | None, k: int | None = None
    ) -> np.ndarray:
        """A step-wise search step (`DesignReference.search_keys_cells_fx`) reading each list from
        where it is; `last` as for `search_keys_fx`, over the host's `cells` (-1: none)."""
        cells = np.asarray(cells)
        real = np.where(cells >= 0, cells, 0)
        pad = cells < 0
        nbytes = self.lists.list_bytes[real]
        hit = self.lists.in_cache(real) & ~pad
        hbm, host = np.where(hit, nbytes, 0).sum(1), np.where(hit | pad, 0, nbytes).sum(1)
        pinned = self.lists.cache.is_pinned(real) & ~pad
        self.last = {"cells": cells, "in_cache": hit, "pinned": pinned, "hbm_bytes": hbm, "host_bytes": host}
        return self.design.search_keys_cells_fx(q_host, cells, seed_keys, k)
