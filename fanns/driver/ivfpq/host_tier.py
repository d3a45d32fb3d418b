"""The driver's side of a generated host-memory design (docs/host_tier.md, "The faces"), for the
backends that run the device's own prefetch command: the ranking of a prefetch's cells, the plan
of its copies and the mirrored location table, and the counts `stats()["host_tier"]` reports.

Why on the host: the device has no allocator (a descriptor walker, copy loops and the table); the
ring (`fanns.model.ivfpq.prefetch_plan.CachePlan`) decides where each list goes and what it evicts,
and its mirror of the table tells which probed lists a search reads from the cache. The pinned
lists are placed by the same copies after every index load (`loaded`).
"""

from __future__ import annotations

import numpy as np

from fanns.driver.ivfpq.model import index_from_images, tier_stats
from fanns.images.ivfpq import TABLE_WORDS, cache_list_beats
from fanns.model.ivfpq.prefetch import interleave
from fanns.model.ivfpq.prefetch_plan import FROM_HOST, CachePlan
from fanns.reference.ivfpq_streams import DesignReference

PREFETCH_MODE = 2
"""The device's `mode` of the prefetch command."""


class HostTierMirror:
    """A project's cache plan, its mirrored table and the host tier's counts (module docstring)."""

    def __init__(self, project):
        self.project = project
        pq = project.design.stages.pq_dist
        info = project.images.info["host_tier"]
        self.plan = CachePlan(
            info["cache_beats"], cache_list_beats(project.images), pq.channels * pq.port_bits // 8, pq.host_tier.pinned
        )
        nlist = project.design.index.nlist
        beats = [
            np.frombuffer(img.data[: nlist * TABLE_WORDS * 4], dtype="<u4").reshape(nlist, -1)[:, 1]
            for img in project.images.by_use("pq_codes")
        ]
        self.list_bytes = np.sum(beats, axis=0).astype(np.int64) * (pq.port_bits // 8)  # every channel's share
        self.counts = {
            "prefetched_bytes": 0,
            "pinned_bytes": 0,
            "hbm_bytes": 0,
            "host_bytes": 0,
            "cells": 0,
            "cached_cells": 0,
            "pinned_cells": 0,
        }
        self._reference: DesignReference | None = None
        self.ops = np.zeros(3, np.int64)  # descriptors sent so far per op (EVICT, FROM_HOST, MOVE)

    @property
    def reference(self) -> DesignReference:
        """The design's reference over the project's own index: its IVF stage ranks the cells."""
        if self._reference is None:
            p = self.project
            self._reference = DesignReference(p.design, index_from_images(p.images, p.design, p.metric))
        return self._reference

    def cells(self, q_host: np.ndarray, depth: int) -> np.ndarray:
        """[nq, depth] the queries' nearest cells by the design's IVF stage, nearest first."""
        ref = self.reference
        return ref.probe(ref.ref.rotate(np.asarray(q_host, dtype=np.int64)), min(depth, ref.design.index.nlist))

    def loaded(self) -> np.ndarray:
        """The descriptors [n, 4] that place the pinned lists after an index load (which emptied the
        device's table; the mirror starts over)."""
        desc = self.plan.reset()
        self.counts["pinned_bytes"] += self.sent(desc)
        return desc

    def prefetch(self, q_host: np.ndarray, budget: int, depth: int) -> np.ndarray:
        """The descriptors [n, 4] of one prefetch for the drafts `q_host` (the mirror follows them)."""
        desc = self.plan.prefetch(interleave(self.cells(q_host, depth)), budget)
        self.counts["prefetched_bytes"] += self.sent(desc)
        self.ops += np.bincount(desc[:, 1], minlength=len(self.ops))[: len(self.ops)]
        return desc

    def sent(self, desc: np.ndarray) -> int:
        """Bytes the descriptors copy over the host link."""
        return int(self.list_bytes[desc[desc[:, 1] == FROM_HOST, 0]].sum())

    def searched(self, cells: np.ndarray) -> None:
        """Count a run's probed cells (-1 or out of range: no cell) as the mirror has them."""
        real = cells[(cells >= 0) & (cells < self.project.design.index.nlist)]
        hit = self.plan.cached(real)
        nbytes = self.list_bytes[real]
        self.counts["cells"] += int(real.size)
        self.counts["cached_cells"] += int(hit.sum())
        self.counts["pinned_cells"] += int(self.plan.cache.is_pinned(real).sum())
        self.counts["hbm_bytes"] += int(nbytes[hit].sum())
        self.counts["host_bytes"] += int(nbytes[~hit].sum())

    def stats(self) -> dict:
        cache = self.project.design.stages.pq_dist.host_tier.cache_bytes
        return tier_stats(cache, len(self.plan.pinned), self.counts)
