"""The `model` backend: the device emulated by the design's bit-accurate reference model.

Why it executes the driver's register writes instead of answering `search()` directly: so the
model backend checks the driver's plan like the other backends do. At index load it rebuilds the
index from the device memory the address registers point to (the ROM and PQ-code images, parsed
with the packer's own layouts), and every run reads its queries from the query buffer and writes
the result keys of `fanns.reference.ivfpq_streams.DesignReference` into the result buffer, in the
layouts of `IoLayout`. For an RTL project it also checks the run-time parameters as the core
does (a refused run sets `status.bad_params`). A step-wise run (the HLS kernel's mode 1,
docs/stepwise.md) reads the cell lists and seed keys from their buffers and writes
`DesignReference.search_keys_cells_fx`'s keys.

Host-memory tier (docs/host_tier.md): opened with `cache_bytes` (by default, for a design with
`stages.pq_dist.host_tier`, the design's cache), the backend keeps the index's lists in a
host-memory image with an HBM cache region of that size
(`fanns.reference.ivfpq_host_tier.HostTierReference`); `prefetch` copies the lists of the draft
queries' nearest cells into it, and every search reads each list from where it is (same keys) and
counts the bytes it read from HBM and from host memory (`tier_stats`). The design's pinned lists
stay in the region's end from each index load on and count as hits.
"""

from __future__ import annotations

import numpy as np

from fanns.checks import check_number
from fanns.driver.ivfpq.backend import RegisterDevice
from fanns.errors import FannsError
from fanns.images.ivfpq import Image, MemoryImages, stored_centroids, unpack_lists
from fanns.index.ivfpq import IvfPqIndexData
from fanns.reference.ivfpq_host_tier import HostTierReference
from fanns.reference.ivfpq_streams import DesignReference


def _real(fx: np.ndarray, scale: float) -> np.ndarray:
    """Float values whose quantisation at `scale` gives back the integers `fx` exactly."""
    return np.asarray(fx, dtype=np.float64) / scale


def index_from_images(images: MemoryImages, design, metric: str) -> IvfPqIndexData:
    """The index a device holding `images` serves, as float arrays that quantise back to the
    images' fixed-point values (checked), with the lists recombined from the PQ-code images."""
    fmt = design.format
    d, m = fmt.d_hw, fmt.m  # images hold the hardware layout (padded sub-vectors)
    names = {img.name for img in images.images}
    cent_fx = fmt.unpad(stored_centroids(images))
    book = images.get("codebook").array().astype(np.int64).reshape(256, m, d // m)[:, :, : fmt.dsub]
    book_fx = np.ascontiguousarray(book.transpose(1, 0, 2))
    opq_fx = None
    if "opq_matrix" in names:
        opq_fx = fmt.unpad(np.swapaxes(fmt.unpad(images.get("opq_matrix").array()), 0, 1)).T
    lists = unpack_lists(images, design.stages.pq_dist.pes)
    sizes = np.array([ids.shape[0] for ids, _ in lists], dtype=np.int64)
    data = IvfPqIndexData(
        centroids=_real(cent_fx, fmt.scale),
        codebook=_real(book_fx, fmt.scale),
        opq_matrix=None if opq_fx is None else _real(opq_fx, float(1 << fmt.opq_frac_bits)),
        offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        ids=np.concatenate([ids for ids, _ in lists]).astype(np.int64),
        codes=np.concatenate([codes for _, codes in lists]).reshape(-1, m).astype(np.uint8),
        metric=metric,
    )
    if not (
        np.array_equal(fmt.quantize(data.centroids), cent_fx) and np.array_equal(fmt.quantize(data.codebook), book_fx)
    ):
        raise RuntimeError("model: the index read from device memory does not quantise back to its images")
    return data


def tier_stats(cache_bytes: int | None, pinned_lists: int, counts: dict) -> dict:
    """`stats()["host_tier"]` of a host-memory design: the cache, its pinned lists, the `counts` so
    far and the shares of probed cells found cached and found pinned (None before a search)."""
    cells = counts["cells"]
    return {
        "cache_bytes": cache_bytes,
        "pinned_lists": pinned_lists,
        **counts,
        "cell_hit_rate": counts["cached_cells"] / cells if cells else None,
        "pinned_hit_rate": counts["pinned_cells"] / cells if cells else None,
    }


class ModelBackend(RegisterDevice):
    """See the module docstring."""

    name = "model"

    def __init__(self, cache_bytes: int | None = None):
        self.cache_bytes = (
            None if cache_bytes is None else int(check_number(cache_bytes, "cache_bytes", lo=0, integer=True))
        )
        self.tier = {
            "prefetched_bytes": 0,
            "hbm_bytes": 0,
            "host_bytes": 0,
            "cells": 0,
            "cached_cells": 0,
            "pinned_cells": 0,
        }

    @property
    def host_tier(self) -> bool:
        """Whether the lists are in host memory with a prefetched cache (`cache_bytes` given)."""
        return self.cache_bytes is not None

    def attach(self, project, iface) -> None:
        super().attach(project, iface)
        tier = project.design.stages.pq_dist.host_tier
        if self.cache_bytes is None and tier is not None:  # a host-memory design: the cache it was built with
            self.cache_bytes = tier.cache_bytes
        self.reference: DesignReference | HostTierReference | None = None

    def _load_index(self) -> None:
        images = []
        for img in self.project.images.images:  # layouts from the manifest, bytes from device memory
            raw = self.at(img.name)[: img.nbytes].tobytes()
            images.append(Image(img.name, img.use, img.memory, img.channel, raw, img.layout))
        mem = MemoryImages(tuple(images), self.project.io, (self.project.io_bank.memory, self.project.io_bank.channel))
        index = index_from_images(mem, self.project.design, self.project.metric)
        if self.host_tier:
            tier = self.project.design.stages.pq_dist.host_tier
            pinned = () if tier is None else tier.pinned
            self.reference = HostTierReference(self.project.design, index, self.cache_bytes, pinned)
        else:
            self.reference = DesignReference(self.project.design, index)

    def prefetch(self, q_host: np.ndarray, budget: int, depth: int) -> int:
        """Copy the lists of the drafts' `depth` nearest cells into the cache within `budget` bytes
        (`HostTierReference.prefetch_fx`); the bytes copied."""
        if not self.host_tier:
            raise FannsError(
                "model: prefetch needs the host-memory tier, which this session was opened without",
                hint="open the project with a cache: fanns.driver.open(path, backend='model', cache_bytes=N)",
            )
        if self.reference is None:
            raise RuntimeError("model: a prefetch before the index was loaded")
        sent = self.reference.prefetch_fx(q_host, budget, depth)
        self.tier["prefetched_bytes"] += sent
        return sent

    def _count(self) -> None:
        last = self.reference.last
        self.tier["hbm_bytes"] += int(last["hbm_bytes"].sum())
        self.tier["host_bytes"] += int(last["host_bytes"].sum())
        self.tier["cells"] += int((np.asarray(last["cells"]) >= 0).sum())
        self.tier["cached_cells"] += int(last["in_cache"].sum())
        self.tier["pinned_cells"] += int(last["pinned"].sum())

    def tier_stats(self) -> dict | None:
        """The host tier's counts so far (None without it): bytes prefetched, bytes searches read
        from HBM and from host memory, and the share of probed cells found cached."""
        if not self.host_tier:
            return None
        pinned = len(self.reference.lists.cache.pinned) if self.reference is not None else 0
        return tier_stats(self.cache_bytes, pinned, self.tier)

    def _set(self, name: str, value: int) -> None:
        for off, word in self.iface.encode(name, value):
            self.words[off] = word

    def execute(self) -> None:
        iface, design, io = self.iface, self.project.design, self.project.io
        nq = self.decode("nq")
        if iface.kind == "rtl":
            nprobe, k = self.decode("nprobe"), self.decode("k")
            if not (1 <= nprobe <= design.nprobe and 1 <= k <= design.k):
                self._set("status", (self.reference is not None) | 0b10)
                return
            if self.reference is None:
                self._load_index()
            self._set("status", 1)
        else:
            nprobe, k = design.nprobe, design.k
            if self.decode("load"):
                self._load_index()
        if nq == 0:
            return
        if self.reference is None:
            raise RuntimeError("model: a search run before the index was loaded (the on-chip memories are empty)")
        beat = io.port_bits // 8
        q_stride, r_stride = io.query_beats * beat, io.result_beats * beat
        q_fx = io.unpack_queries(self.at("queries")[: nq * q_stride].tobytes(), nq)
        if iface.stepwise and self.decode("mode"):  # the kernel: any non-zero mode is step-wise
            cells = io.unpack_cells(self.at("cells"), nq, nprobe)
            seeds = io.unpack_results(self.at("seeds").tobytes(), nq)
            keys = self.reference.search_keys_cells_fx(q_fx, cells, seeds, k).astype("<u8")
        else:
            keys = self.reference.search_keys_fx(q_fx, nprobe, k).astype("<u8")
        if self.host_tier:
            self._count()
        out = self.at("results")[: nq * r_stride].reshape(nq, r_stride)
        out[:, : 8 * k] = keys.view(np.uint8).reshape(nq, 8 * k)
