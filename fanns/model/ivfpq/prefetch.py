"""Lookahead prefetch of IVF lists from host memory into an HBM cache (TeleRAG), as a model.

Why: an index larger than the card keeps its lists in host memory, read over PCIe at a fraction
of HBM's bandwidth. TeleRAG (../shared/seeds/rag-telerag.txt) hides that link behind the LLM: the
cells the final (rewritten) query probes are predictable from the draft query, so their lists are
copied into fast memory while the LLM still generates. This module models that for an IVF-PQ
design (docs/host_tier.md).

Prefetch set (`prefix_counts`, `RingCache.prefetch`): the draft's cells nearest first, whole lists
added in that order until the next would pass the budget (TeleRAG §4.4, "Prefetch Target": a byte
budget, whole clusters added by proximity, the one that would exceed it left out; here the walk
stops there, so the set is a prefix of the draft's order). Several drafts prefetched at once are
interleaved rank by rank (`interleave`).

Budget (TeleRAG Eq. 1-3): the prefetch overlaps the LLM for b_p <= B * t_LLM bytes, B the link
bandwidth and t_LLM the time the LLM leaves; TeleRAG finds b_p* = B * t_LLM optimal on current links
(its Eq. 5 alternative, prefetching past the LLM's end, pays 1/B per byte for a smaller miss
term). `budget_for` is that bound, capped by the cache.

Eviction (`RingCache`, shared by consecutive queries): the cache region is a ring; each list
prefetched is appended whole at the write pointer (wrapping to the region's start when it would
cross the end) and the oldest lists whose bytes it overwrites are invalidated in the cell ->
location table: FIFO by last prefetch. The prefetch set is TeleRAG's (the draft's nearest cells
within the budget); a list of the set that is still cached crosses no link: it is moved to the write
pointer by a copy within HBM (refreshed), so the set is always the youngest and survives its own
appends; with a region of at least the budget plus the largest list, hits are never fewer than with
a cache of the set alone (`cold_hits`; a smaller region can cut the set short at a wrap's unused
tail), while the link carries only the set's missing lists (a shorter prefetch, a lighter link).
Lists of earlier sets stay until overwritten and give further hits. Chosen because it needs no
allocator on chip: one write pointer, a FIFO of (cell, offset, bytes) and the table. The in-HBM
moves are not charged time here: they run at the design's HBM bandwidth (14.375 GB/s per channel,
UG1469, the channels in parallel) against 12 GB/s for the whole link, and are at most the budget's
bytes per prefetch.

Pinned lists (`PinnedRing`): the hottest lists of a design stay in a region at the end of the cache
for good; the ring has the rest, a prefetch skips them, nothing evicts them (docs/host_tier.md, "The
pinned hot region"; `PrefetchModel.split` for the model's side).

Hit rate (`cold_hits`: each query's cache holds its own prefetch set only, the TeleRAG figure;
`ring_hits`: one ring shared by the queries in order): of the final query's probed cells, the
share (by count: TeleRAG's "cluster hit rate"; and by bytes: what the link is spared) whose lists
the cache holds.

Time (`host_times`, `search_figures`): the search reads cached cells from the design's HBM channels and the rest
over the host link (`fanns.model.ivfpq.skew.host_tier`: the board file's `host` bandwidth and
latency, shared by the PQ channels' own host ports, `skew.host_bandwidth`), per cell in probe
order (`skew.mask_feed` into the latency model), so per-query latency
is the latency model's `alone`; after the LLM ends a query waits max(0, t_p - t_LLM) for its
prefetch (t_p = transferred bytes / B + link latency), then searches. B is the same figure for
the copies and the search's reads (`host_link`): both cross the channels' host ports. Throughput is the pipeline's
(`QueryTimes.max_qps`) or the link's, shared by prefetches and misses, whichever is lower:
B / mean(transferred + missed bytes).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

import numpy as np

from fanns.boards import Board
from fanns.errors import FannsError
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import skew
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.skew import Tier

TELERAG_TABLE4 = (
    ("HyDE", "H100", 9.0, 0.9195),
    ("SubQ", "H100", 8.0, 0.7904),
    ("Iter", "H100", 5.0, 0.9551),
    ("IRG", "H100", 4.0, 0.5952),
    ("FLARE", "H100", 6.0, 0.7935),
    ("S-RAG", "H100", 3.0, 0.7129),
    ("HyDE", "RTX4090", 7.0, 0.8742),
    ("SubQ", "RTX4090", 7.0, 0.7638),
    ("Iter", "RTX4090", 3.0, 0.8459),
    ("IRG", "RTX4090", 2.5, 0.5034),
    ("FLARE", "RTX4090", 3.0, 0.5667),
    ("S-RAG", "RTX4090", 1.25, 0.2996),
)
"""TeleRAG Table 4 (NQ, nprobe 256 of 4096 lists, a 61 GB flat index): (pipeline, GPU, prefetch
budget GB, measured cluster hit rate)."""
TELERAG_INDEX_GB = 61.0
TELERAG_PROBED_SHARE = 256 / 4096
"""TeleRAG's nprobe / nlist: a query probes about this share of its 61 GB index (3.8 GB, equal
lists assumed), the unit `budget ratio` divides budgets by to compare across index sizes."""


def interleave(ranked: np.ndarray) -> np.ndarray:
    """One prefetch order for several drafts' ranked cells [nq, c] (-1: none): rank 0 of every
    draft, then rank 1, ..., each cell once (at its first place)."""
    flat = np.asarray(ranked, dtype=np.int64).T.ravel()
    flat = flat[flat >= 0]
    _, first = np.unique(flat, return_index=True)
    return flat[np.sort(first)]


def prefix_counts(order: np.ndarray, sizes: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """[budgets, nq] how many leading cells of each row of `order` [nq, c] fit whole in each budget
    (bytes; `sizes` [nlist] bytes per list)."""
    cum = np.cumsum(sizes[order], axis=1)
    return np.stack([(cum <= b).sum(1) for b in np.asarray(budgets, dtype=np.float64)])


def _ranks(order: np.ndarray, nlist: int) -> np.ndarray:
    """[nq, nlist] each cell's position in its row of `order` (len(row) where absent)."""
    nq, c = order.shape
    rank = np.full((nq, nlist), c, dtype=np.int64)
    rank[np.arange(nq)[:, None], order] = np.arange(c)[None, :]
    return rank


def cold_hits(draft_order: np.ndarray, final_cells: np.ndarray, sizes: np.ndarray, budgets) -> dict:
    """Per budget and query, with a cache that holds only the query's own prefetch set (the draft's
    cells `draft_order` [nq, c], nearest first, as far as they fit): `cells` [budgets, nq] share of
    the final's `final_cells` [nq, nprobe] cached, `bytes` share of their bytes, `transferred`
    bytes prefetched."""
    sizes = np.asarray(sizes, dtype=np.int64)
    counts = prefix_counts(draft_order, sizes, budgets)
    rank = np.take_along_axis(_ranks(draft_order, sizes.shape[0]), final_cells, axis=1)
    fb = sizes[final_cells]
    cum = np.concatenate([np.zeros((draft_order.shape[0], 1), np.int64), np.cumsum(sizes[draft_order], 1)], 1)
    hit = (rank[None, :, :] < counts[:, :, None]) & (fb > 0)[None]  # an empty list is never cached
    return {
        "cells": hit.mean(2),
        "bytes": (hit * fb[None]).sum(2) / np.maximum(fb.sum(1), 1)[None],
        "transferred": np.take_along_axis(cum[None].repeat(len(counts), 0), counts[:, :, None], 2)[:, :, 0],
    }


class RingCache:
    """The HBM cache region of `capacity` bytes with the ring eviction of the module docstring.
    `table` is the cell -> byte offset map the accelerator keeps on chip."""

    def __init__(self, capacity: int):
        if capacity < 0:
            raise FannsError(f"a cache of {capacity} bytes: the capacity must be >= 0")
        self.capacity = int(capacity)
        self.table: dict[int, int] = {}
        self.fifo: deque[tuple[int, int, int]] = deque()  # (cell, offset, bytes), oldest first
        self.head = 0

    def holds(self, cell: int) -> bool:
        return int(cell) in self.table

    def _place(self, cell: int, size: int) -> tuple[int, list[int]]:
        """Append `size` bytes for `cell` at the write pointer, evicting what it overwrites:
        (offset, the cells evicted, oldest first)."""
        start = 0 if self.head + size > self.capacity else self.head
        end = start + size
        evicted = []
        while self.fifo:
            old, off, n = self.fifo[0]
            wrapped = start < self.head  # the write pointer went back to the region's start
            if not ((off < end and off + n > start) or (wrapped and off >= self.head)):
                break
            self.fifo.popleft()
            del self.table[old]
            evicted.append(old)
        self.fifo.append((cell, start, size))
        self.table[cell] = start
        self.head = end
        return start, evicted

    def prefetch(self, order: np.ndarray, sizes: np.ndarray, budget: float) -> list[tuple[int, int, int | None]]:
        """Prefetch the cells of `order` (nearest first) while the set's lists fit `budget` bytes
        and the region (a wrap's skipped tail included); returns (cell, offset, source) of each list
        written, in order: source None for a copy from host memory, else the HBM offset it was moved
        from (a refreshed cached list: read it before writing what follows it)."""
        return [(cell, at, source) for cell, at, source, _evicted in self.plan(order, sizes, budget)]

    def plan(self, order: np.ndarray, sizes: np.ndarray, budget: float) -> list[tuple[int, int, int | None, list[int]]]:
        """`prefetch` with the evictions of each write: (cell, offset, source, evicted cells) — what
        the accelerator's location table must forget before the write (`prefetch_descriptors`)."""
        written: list[tuple[int, int, int | None, list[int]]] = []
        total = used = 0  # the set's bytes; the region's bytes this prefetch wrote or skipped at a wrap
        head = self.head
        for cell in map(int, np.asarray(order, dtype=np.int64)):
            size = int(sizes[cell])
            waste = self.capacity - head if head + size > self.capacity else 0
            if total + size > budget or used + waste + size > self.capacity:
                break
            total += size
            if not size:
                continue
            used += waste + size
            head = (0 if waste else head) + size
            source = self.table.get(cell)
            if source is not None:
                self.fifo.remove((cell, source, size))
                del self.table[cell]
            at, evicted = self._place(cell, size)
            written.append((cell, at, source, evicted))
        return written


def pinned_offsets(sizes: np.ndarray, pinned, capacity: int, what: str = "the pinned lists") -> dict[int, int]:
    """The pinned region at the end of a cache of `capacity` units (`sizes` [nlist] per list, same
    units): cell -> offset of each non-empty list of `pinned`, in that order, the last ending at
    `capacity` (an empty list takes no room and is never cached). A clear error, naming `what`, when
    they do not fit."""
    sizes = np.asarray(sizes, dtype=np.int64)
    need = int(sizes[list(pinned)].sum()) if len(pinned) else 0
    if need > capacity:
        raise FannsError(
            f"{what}: {len(pinned)} pinned lists take {need:,} units of a cache of {capacity:,}",
            hint="pin fewer lists (stages.pq_dist.host_tier.pinned) or give the cache more bytes (cache_bytes)",
        )
    out, at = {}, int(capacity) - need
    for cell in map(int, pinned):
        if sizes[cell]:
            out[cell] = at
            at += int(sizes[cell])
    return out


class PinnedRing:
    """A cache of `capacity` units whose lists `pinned` stay for good in a region at its end
    (`pinned_offsets`) and whose rest is a `RingCache`: a prefetch skips the pinned cells of its
    order (they are cached already and need neither budget nor ring room), and the ring's
    evictions never reach them. `sizes` [nlist] in the cache's units (bytes, or beats)."""

    def __init__(self, capacity: int, sizes: np.ndarray, pinned=(), what: str = "the pinned lists"):
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.pinned = pinned_offsets(self.sizes, pinned, int(capacity), what)
        self.ring = RingCache(min(self.pinned.values(), default=int(capacity)))

    def where(self, cell: int) -> int | None:
        """The offset of `cell` in the cache, None when it is not cached."""
        at = self.pinned.get(int(cell))
        return self.ring.table.get(int(cell)) if at is None else at

    def holds(self, cell: int) -> bool:
        return int(cell) in self.pinned or self.ring.holds(cell)

    def is_pinned(self, cells: np.ndarray) -> np.ndarray:
        """bool, the shape of `cells`: which cells are pinned (cached for good); -1 (no cell) never."""
        return np.isin(np.asarray(cells, dtype=np.int64), list(self.pinned))

    def plan(self, order: np.ndarray, budget: float) -> list[tuple[int, int, int | None, list[int]]]:
        """`RingCache.plan` over the cells of `order` that are not pinned."""
        order = np.asarray(order, dtype=np.int64)
        return self.ring.plan(order[~np.isin(order, list(self.pinned))], self.sizes, budget)


def ring_hits(
    draft_order: np.ndarray, final_cells: np.ndarray, sizes: np.ndarray, budget: float, capacity: int
) -> dict:
    """`cold_hits` for one budget with one `RingCache` of `capacity` bytes shared by the queries in
    order: per query `cells`, `bytes` (hit shares) and `transferred` (bytes copied) [nq]."""
    sizes = np.asarray(sizes, dtype=np.int64)
    cache = RingCache(capacity)
    nq = final_cells.shape[0]
    cells, hit_bytes, sent = np.zeros(nq), np.zeros(nq), np.zeros(nq, dtype=np.int64)
    for q in range(nq):
        sent[q] = sum(sizes[c] for c, _, source in cache.prefetch(draft_order[q], sizes, budget) if source is None)
        hit = np.array([cache.holds(c) for c in final_cells[q]])
        cells[q] = hit.mean()
        hit_bytes[q] = sizes[final_cells[q]][hit].sum() / max(int(sizes[final_cells[q]].sum()), 1)
    return {"cells": cells, "bytes": hit_bytes, "transferred": sent}


@dataclass(frozen=True)
class Link:
    """The host link as a design uses it (`host_link`): bandwidth and read latency."""

    bandwidth_bps: float  # bytes per second
    latency_s: float


def host_link(board: Board, clock_mhz: float, channels: int, port_bits: int) -> Link:
    """The link as a design clocked at `clock_mhz` with `channels` PQ channels of `port_bits` uses it:
    prefetch copies go through the channels' host ports like the search's misses
    (`skew.host_bandwidth`: the link or the ports together, the lower)."""
    return Link(skew.host_bandwidth(board, clock_mhz, channels, port_bits), board.host.latency_us * 1e-6)


def budget_for(link: Link, t_llm_s: float, capacity: int) -> float:
    """TeleRAG's b_p* = B * t_LLM (Eq. 3), at most the cache."""
    return min(link.bandwidth_bps * t_llm_s, float(capacity))


def host_times(
    ctx: stage_model.Context,
    stages,
    probes: stage_model.Probes,
    cells: np.ndarray,
    in_cache: np.ndarray,
    list_bytes: np.ndarray,
    transferred: np.ndarray,
    fast: Tier,
    slow: Tier,
    link: Link,
    t_llm_s: float,
) -> latency_model.QueryTimes:
    """The latency model's tandem (`latency_model.query_times`) of sample queries probing `cells`
    [nq, nprobe] (sizes `probes`) with `in_cache` [nq, nprobe] of them in HBM (`fast`) and the rest
    in host memory (`slow`), each query's prefetch having copied `transferred` [nq] bytes;
    `list_bytes` [nlist] whole-list bytes (all PEs' shares). Two servers go in front of the
    accelerator's: "prefetch", a pure delay (the wait max(0, t_p - t_LLM) once the LLM ends), and
    "link", the host link each query holds for its prefetch and its misses (service transferred / B
    plus the misses' time: missed / B, or the feed's link time if larger, `CodeFeed.link`, where the
    ports' round robin and their own rates bound it; no latency of its own: the misses' arrival is
    in the PQ feed). The one link server stands for the feed's own (`latency.LINK_SERVERS`), which
    is taken out. So `alone` is the latency after the LLM ends, `max_qps` the lower of the
    pipeline's and the link's throughput, and `latency_model.poisson` queues queries at the link as
    at the stages."""
    feed = skew.mask_feed(ctx, stages, probes, in_cache, fast, slow)
    times = latency_model.query_times(ctx, stages, probes, replace(feed, link=None))
    prefetch_s = np.where(transferred > 0, transferred / link.bandwidth_bps + link.latency_s, 0.0)
    wait = np.maximum(prefetch_s - t_llm_s, 0.0) * 1e6 * ctx.clock_mhz
    cycles = 1e6 * ctx.clock_mhz / link.bandwidth_bps  # per byte
    missed = np.where(in_cache, 0, list_bytes[cells]).sum(1) * cycles
    hold = transferred * cycles + (missed if feed.link is None else np.maximum(missed, feed.link))
    zero = np.zeros_like(wait)
    return latency_model.QueryTimes(
        ("prefetch", "link", *times.names),
        np.vstack([zero, hold, times.service]),
        np.vstack([wait, zero, times.latency]),
        times.io_cycles,
        times.clock_mhz,
    )


def search_figures(times: latency_model.QueryTimes) -> dict:
    """Retrieval after the LLM ends from `host_times`' tandem: per-query latency (us), its wait for
    the prefetch and its search, and QPS (see the module docstring)."""
    lat = times.alone() / times.clock_mhz
    wait_us = times.latency[0] / times.clock_mhz
    hold = float(times.service[1].mean())
    pipeline = times.clock_mhz * 1e6 / float(times.service[2:].mean(1).max())
    return {
        "qps": round(times.max_qps(), 1),
        "latency_mean_us": round(float(lat.mean()), 3),
        "latency_p99_us": round(float(np.percentile(lat, 99)), 3),
        "wait_mean_us": round(float(wait_us.mean()), 3),
        "search_mean_us": round(float((lat - wait_us).mean()), 3),
        "link_bound": bool(hold > 0 and times.clock_mhz * 1e6 / hold < pipeline),
    }
