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

Time (`search_times`): the search reads cached cells from the design's HBM channels and the rest
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
from dataclasses import dataclass

import numpy as np

from fanns.boards import BUFFER_PAGE, Board
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


def search_times(
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
) -> dict:
    """Retrieval after the LLM ends for sample queries probing `cells` [nq, nprobe] (sizes `probes`)
    with `in_cache` [nq, nprobe] of them in HBM (`fast`) and the rest in host memory (`slow`),
    each query's prefetch having copied `transferred` [nq] bytes; `list_bytes` [nlist] whole-list
    bytes (all PEs' shares). Per-query latency (us) and QPS (see the module docstring)."""
    feed = skew.mask_feed(ctx, stages, probes, in_cache, fast, slow)
    times = latency_model.query_times(ctx, stages, probes, feed)
    search_us = times.alone() / times.clock_mhz
    prefetch_s = np.where(transferred > 0, transferred / link.bandwidth_bps + link.latency_s, 0.0)
    wait_us = np.maximum(prefetch_s - t_llm_s, 0.0) * 1e6
    missed = np.where(in_cache, 0, list_bytes[cells]).sum(1)
    link_s = float((transferred + missed).mean()) / link.bandwidth_bps
    qps = min(times.max_qps(), 1.0 / link_s if link_s > 0 else float("inf"))
    lat = wait_us + search_us
    return {
        "qps": round(qps, 1),
        "latency_mean_us": round(float(lat.mean()), 3),
        "latency_p99_us": round(float(np.percentile(lat, 99)), 3),
        "wait_mean_us": round(float(wait_us.mean()), 3),
        "search_mean_us": round(float(search_us.mean()), 3),
        "link_bound": bool(link_s > 0 and 1.0 / link_s < times.max_qps()),
    }


def choose_cache(rows: list[dict], key: str = "latency_mean_us", slack: float = 0.01) -> dict:
    """The smallest cache (`rows`: dicts with `cache_bytes` and `key`) within `slack` of the best
    `key` (lower is better): the DSE's cache size from the curve it reports."""
    if not rows:
        raise FannsError("no cache sizes to choose from")
    best = min(r[key] for r in rows)
    return min((r for r in rows if r[key] <= best * (1 + slack)), key=lambda r: r["cache_bytes"])


@dataclass(frozen=True)
class HitProfile:
    """Per-query-cache hit rate of each probe rank vs budget, measured on draft/final pairs
    (`hit_profile`): what an index without pairs of its own (a synthetic workload) is given."""

    ratios: np.ndarray  # [r] budgets in multiples of a final query's mean probed bytes, ascending
    per_rank: np.ndarray  # [r, nprobe] share of queries whose rank-j cell is cached

    def rates(self, ratio: float, nprobe: int) -> np.ndarray:
        """[nprobe] hit rate per rank at `ratio` (0 at 0, linear between the measured ratios, the
        last beyond them), ranks mapped by their relative position when `nprobe` differs."""
        xs = np.concatenate([[0.0], self.ratios])
        at = np.array([np.interp(ratio, xs, np.concatenate([[0.0], col])) for col in self.per_rank.T])
        rel = (np.arange(self.per_rank.shape[1]) + 0.5) / self.per_rank.shape[1]
        return np.interp((np.arange(nprobe) + 0.5) / nprobe, rel, at)


def hit_profile(draft_order: np.ndarray, final_cells: np.ndarray, sizes: np.ndarray, ratios) -> HitProfile:
    """`HitProfile` of draft/final pairs: `cold_hits` per rank at budgets `ratios` x the mean bytes
    a final query probes."""
    sizes = np.asarray(sizes, dtype=np.int64)
    ratios = np.asarray(ratios, dtype=np.float64)
    budgets = ratios * float(sizes[final_cells].sum(1).mean())
    per_rank = np.stack(
        [
            cold_hits(draft_order, final_cells[:, j : j + 1], sizes, budgets)["cells"].mean(1)
            for j in range(final_cells.shape[1])
        ],
        axis=1,
    )
    return HitProfile(ratios, per_rank)


class PrefetchModel:
    """A DSE design `point` (its workload, context and stages) on `board` with every list in host
    memory and a cache on its PQ channels (at most their capacity): QPS and latency vs budget and
    t_LLM, each query's cached cells drawn (seeded) from `profile`'s per-rank hit rates, each
    prefetch sending its whole budget (a per-query cache).

    Pinned lists (`pinned_lists`, `split`): the hottest lists by the sample's access counts
    (`skew.accesses`, placed by `skew.place_lists` hottest first) kept in a region of the cache for
    good; a probe of one is a hit whatever the prefetch, and the ring, with the rest of the cache,
    bounds the budget. The drawn hits do not know which lists are pinned (the profile was measured
    without a pinned region; a prefetch that skips pinned cells reaches further down the draft's
    order), so the pinned region's gain is, if anything, under-estimated; the pinned hits a split
    counts are out of sample (`pinned_probes`)."""

    def __init__(self, point, board: Board, profile: HitProfile, seed: int = 0):
        self.w, self.ctx, self.stages = point.workload, point.ctx, point.stages
        st = self.stages.pq_dist
        self.fast = skew.memory_tier(board, st.memory, self.ctx.clock_mhz, st.pes, st.channels, st.port_bits)
        self.slow = skew.host_tier(board, self.ctx.clock_mhz, st.pes, st.channels, st.port_bits)
        self.link = host_link(board, self.ctx.clock_mhz, st.channels, st.port_bits)
        group = next(g for g in board.memory if g.kind == st.memory)
        # a channel's region must fit the driver's allocation: whole pages after the bank's unused first
        self.cache_max = st.channels * ((group.capacity_bytes - BUFFER_PAGE) // BUFFER_PAGE * BUFFER_PAGE)
        self.list_bytes = skew.list_bytes(self.w, st) * st.pes  # [nlist] the index's lists
        # [nlist] bytes a list takes in the cache: every channel's region gives it the beats of the
        # channel with the most PEs (one offset serves every channel: `fanns.images.ivfpq.cache_list_beats`)
        self.footprint = skew.list_bytes(self.w, st) * max(st.pes_per_channel()) * st.channels
        self.beat_bytes = st.channels * st.port_bits // 8  # one beat of every channel's region
        # each probe's bytes from the probed lists' sizes: the hits are drawn per rank, so no cell ids are
        # needed (a workload of the sweep's grid has none); probe (i, j) is entry i * nprobe + j
        beats = stage_model.Packing(self.w.m, st.port_bits).beats(self.w.probed, st.pes)
        per_probe = beats * (st.port_bits // 8) * st.pes
        self.probe_bytes = per_probe.ravel()
        self.cells = np.arange(per_probe.size).reshape(per_probe.shape)
        self.probed = float(per_probe.sum(1).mean())
        self.probes = stage_model.Probes.of(self.w.probed)
        self.profile = profile
        self.draws = np.random.default_rng(seed).random(self.cells.shape)

    def _times(self, in_cache: np.ndarray, sent: np.ndarray, t_llm_s: float) -> dict:
        return search_times(
            self.ctx,
            self.stages,
            self.probes,
            self.cells,
            in_cache,
            self.probe_bytes,
            sent,
            self.fast,
            self.slow,
            self.link,
            t_llm_s,
        )

    def baseline(self, cached: bool) -> dict:
        """Every list read from host memory (no prefetch), or every list in HBM (the index fitting)."""
        return self._times(np.full(self.cells.shape, cached), np.zeros(self.w.queries), 0.0)

    @property
    def profiled(self) -> bool:
        """Whether the workload records its probed cells (the access profile pinning needs)."""
        return self.w.cells is not None

    def pinned_lists(self, nbytes: float, queries=slice(None)) -> np.ndarray:
        """[nlist] bool: the lists a pinned region of `nbytes` (whole beats of every channel) holds,
        hottest first by the accesses of the sample's `queries` (`skew.place_lists`; empty lists
        never); none without an access profile."""
        if not self.profiled:
            return np.zeros(self.w.nlist, dtype=bool)
        acc = np.bincount(self.w.cells[queries].ravel(), minlength=self.w.nlist)
        acc = np.where(self.footprint > 0, acc, 0)
        return skew.place_lists(acc, self.footprint, int(nbytes // self.beat_bytes) * self.beat_bytes)

    def pinned_probes(self, nbytes: float) -> np.ndarray:
        """[nq, nprobe] bool: the probes a pinned region of `nbytes` serves, out of sample: each half
        of the sample queries (even, odd) against the lists the other half's accesses pin. Lists
        chosen and counted on the same queries would hold every probed list of a small sample."""
        out = np.zeros(self.cells.shape, dtype=bool)
        if not self.profiled or self.w.queries < 2:
            return out
        half = np.arange(self.w.queries) % 2
        for fold in (0, 1):
            out[half == fold] = self.pinned_lists(nbytes, half != fold)[self.w.cells[half == fold]]
        return out

    def at(self, budget: float, t_llm_s: float, pinned: np.ndarray | None = None) -> dict:
        """A prefetch of `budget` bytes per query, the LLM leaving `t_llm_s` seconds; the lists
        `pinned` ([nlist] bool), or the probes ([nq, nprobe] bool, `pinned_probes`), cached for good."""
        ratio = budget / self.probed
        in_cache = self.draws < self.profile.rates(ratio, self.w.nprobe)[None, :]
        pin = np.zeros(in_cache.shape, dtype=bool)
        if pinned is not None and pinned.any():
            pin = pinned if pinned.shape == in_cache.shape else pinned[self.w.cells]
        out = self._times(in_cache | pin, np.full(self.w.queries, float(budget)), t_llm_s)
        return {
            "budget_bytes": int(budget),
            "ratio": round(ratio, 3),
            "cell_hit": round(float((in_cache | pin).mean()), 4),
            "pinned_hit": round(float(pin.mean()), 4),
            **out,
        }

    def split(self, cache_bytes: int, share: float, t_llm_s: float) -> dict:
        """A cache of `cache_bytes` with a pinned region of at most `share` of it (`pinned_lists` of
        the whole sample: the design's) and the ring in the rest, the budget TeleRAG's rule gives for
        the ring (`budget_for`); the pinned hits out of sample (`pinned_probes`)."""
        pinned = self.pinned_lists(share * cache_bytes)
        pinned_bytes = int(self.footprint[pinned].sum())
        ring = cache_bytes - pinned_bytes
        return {
            "cache_bytes": int(cache_bytes),
            "pinned_share": share,
            "pinned_lists": int(pinned.sum()),
            "pinned_bytes": pinned_bytes,
            "ring_bytes": ring,
            **self.at(budget_for(self.link, t_llm_s, ring), t_llm_s, self.pinned_probes(share * cache_bytes)),
        }

    def cache_curve(self, t_llm_s: float, cache_ratios, shares=(0.0,)) -> dict:
        """The curve the DSE chooses the cache from: per cache size (`cache_ratios` x a query's probed
        bytes, within the PQ channels) the best split (`split`, lowest mean latency; the smaller share
        on a tie) of the pinned `shares` compared (every split in `splits`); `chosen_bytes` by
        `choose_cache`."""
        rows, splits = [], []
        for c in cache_ratios:
            if c * self.probed > self.cache_max:
                continue
            options = [self.split(int(c * self.probed), s, t_llm_s) for s in sorted(shares)]
            splits += options
            rows.append(min(options, key=lambda r: r["latency_mean_us"]))
        return {"t_llm_s": t_llm_s, "curve": rows, "splits": splits, "chosen_bytes": choose_cache(rows)["cache_bytes"]}
