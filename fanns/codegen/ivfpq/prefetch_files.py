"""The descriptor plan a host-memory design's generated host programs replay (docs/host_tier.md):
`data/prefetch_plan.bin`, the pinned lists' placement sent after each index load and, per chunk of
the project's test queries, the prefetch sent before that chunk's searches.

Why written at generation: the board hosts (XRT) and the C-simulation host are plain C++ without the
driver's planner (`fanns.model.ivfpq.prefetch_plan.CachePlan`, `fanns.driver.ivfpq.host_tier`), so
the plan is made here with the same planner, the same cache (the design's region, its pinned lists
and the lists' beats from the images) and the same ranking of a draft's cells (the design's IVF stage,
every cell, drafts interleaved rank by rank), simulated in order across the chunks so that each
chunk's descriptors fit the table the previous ones left. The project's test set has no drafts, so the
drafts are the test queries themselves (a final query as its own draft covers all of its cells,
against TeleRAG's 79 % for rewritten queries: the plan's hit rate is optimistic for a RAG workload).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fanns.design.ivfpq import IvfPqDesign
from fanns.images.ivfpq import MemoryImages, cache_list_beats
from fanns.model.ivfpq.prefetch import interleave
from fanns.model.ivfpq.prefetch_plan import DESCRIPTOR_WORDS, CachePlan
from fanns.reference.ivfpq_streams import DesignReference

PLAN_FILE = "data/prefetch_plan.bin"
PREFETCH_CHUNK = 8
"""Test queries per prefetch: a batch whose drafts one LLM step serves together (one prefetch of the
design's budget for all of them, as `Accelerator.prefetch` of several drafts)."""
DRAFTS = "the test queries themselves (the test set has no drafts)"
"""What the plan prefetches for: stated in the host programs' output and the README."""


@dataclass(frozen=True)
class HostPlan:
    """The plan of one project: the pinned lists' descriptors, each chunk's prefetch descriptors
    ([n, 4] uint32 each), and the cell hit rates the planner's table gives the test queries' probes."""

    chunk: int
    budget_bytes: int
    budget_rule: str
    pinned: np.ndarray
    chunks: tuple[np.ndarray, ...]
    hit_rate: float  # with the prefetches
    cold_hit_rate: float  # pinned lists only

    def to_bytes(self) -> bytes:
        """The file's bytes (the layout host_common.h describes): little-endian uint32 words
        chunk, chunks, pinned descriptors, the descriptors of each chunk, then the descriptors."""
        head = [self.chunk, len(self.chunks), self.pinned.shape[0], *(c.shape[0] for c in self.chunks)]
        body = [np.asarray(head, dtype="<u4"), self.pinned.astype("<u4"), *(c.astype("<u4") for c in self.chunks)]
        return b"".join(np.ascontiguousarray(a).tobytes() for a in body)

    def summary(self) -> dict:
        """What the host programs print and the project record keeps."""
        return {
            "file": PLAN_FILE,
            "chunk": self.chunk,
            "chunks": len(self.chunks),
            "budget_bytes": self.budget_bytes,
            "budget_rule": self.budget_rule,
            "drafts": DRAFTS,
            "pinned_descriptors": int(self.pinned.shape[0]),
            "max_descriptors": max([self.pinned.shape[0], *(c.shape[0] for c in self.chunks)]),
            "hit_rate": self.hit_rate,
            "cold_hit_rate": self.cold_hit_rate,
        }


def budget(design: IvfPqDesign, ring_bytes: int) -> tuple[int, str]:
    """A prefetch's byte budget: the DSE's (`prediction.host_tier.budget_bytes`, TeleRAG's
    min(B x t_LLM, ring)) when the design records one, else the whole ring (an LLM leaving time to fill it)."""
    chosen = (design.prediction or {}).get("host_tier", {}).get("budget_bytes")
    if chosen is not None:
        return int(chosen), "the DSE's budget (design.yaml prediction.host_tier.budget_bytes: min(B x t_LLM, ring))"
    return ring_bytes, "the ring's bytes (the design records no DSE budget)"


def host_plan(design: IvfPqDesign, ref: DesignReference, q_host: np.ndarray, images: MemoryImages) -> HostPlan:
    """The plan for the host-quantised test queries `q_host` [nq, d] (module docstring)."""
    pq = design.stages.pq_dist
    plan = CachePlan(
        images.info["host_tier"]["cache_beats"],
        cache_list_beats(images),
        pq.channels * pq.port_bits // 8,
        pq.host_tier.pinned,
    )
    pinned = plan.reset()
    nlist = design.index.nlist
    ranked = ref.probe(ref.ref.rotate(np.asarray(q_host, dtype=np.int64)), nlist)
    probes = ranked[:, : design.nprobe]
    nbytes, rule = budget(design, plan.ring.capacity * plan.bytes_per_beat)
    cold = int(plan.cached(probes).sum())
    chunks, hits = [], 0
    for first in range(0, q_host.shape[0], PREFETCH_CHUNK):
        part = slice(first, first + PREFETCH_CHUNK)
        chunks.append(plan.prefetch(interleave(ranked[part]), nbytes).reshape(-1, DESCRIPTOR_WORDS))
        hits += int(plan.cached(probes[part]).sum())
    return HostPlan(
        PREFETCH_CHUNK, nbytes, rule, pinned, tuple(chunks), hits / max(probes.size, 1), cold / max(probes.size, 1)
    )
