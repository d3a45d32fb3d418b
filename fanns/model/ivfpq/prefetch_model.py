"""The prefetch model of one DSE design (`PrefetchModel`): QPS and latency vs prefetch budget,
cache size and pinned region, from a per-rank hit profile (`HitProfile`) measured on draft/final
query pairs; the cache size the DSE picks from the curve (`choose_cache`).

Why apart from `fanns.model.ivfpq.prefetch`: that module holds the mechanisms the faces share
(the ring, the pinned region, the time of a search after a prefetch); this one applies them to a
design's sample queries, for `fanns.model.ivfpq.host_cache` and the benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fanns.boards import BUFFER_PAGE, Board
from fanns.errors import FannsError
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import skew
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.prefetch import budget_for, cold_hits, host_link, host_times, search_figures


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
    prefetch sending its whole budget (a per-query cache). A probe of a list whose bytes in the cache
    exceed the budget is never a hit: a prefetch copies whole lists (the profile, measured on the
    text set's lists, cannot know this design's; a cache smaller than every list of a sift-10k host
    design was once modelled at 20 % hits while the planner cached nothing).

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
        # [nq, nprobe] the bytes each probed list takes in the cache (as `footprint`): a prefetch copies
        # whole lists, so a list larger than the budget is never among its hits
        self.probe_footprint = beats * (st.port_bits // 8) * max(st.pes_per_channel()) * st.channels
        self.cells = np.arange(per_probe.size).reshape(per_probe.shape)
        self.probed = float(per_probe.sum(1).mean())
        self.probes = stage_model.Probes.of(self.w.probed)
        self.profile = profile
        self.draws = np.random.default_rng(seed).random(self.cells.shape)

    def _args(self, in_cache: np.ndarray, sent: np.ndarray, t_llm_s: float) -> tuple:
        """The arguments of `host_times` for this design's sample queries."""
        return (
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

    def _times(self, in_cache: np.ndarray, sent: np.ndarray, t_llm_s: float) -> dict:
        return search_figures(host_times(*self._args(in_cache, sent, t_llm_s)))

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

    def pinned_mask(self, pinned: np.ndarray | None) -> np.ndarray:
        """[nq, nprobe] bool: the probes of the lists `pinned` ([nlist] bool), or the probes
        `pinned` ([nq, nprobe] bool, `pinned_probes`) themselves; none for None or none pinned
        (a workload without cell ids has no [nlist] to index)."""
        if pinned is None or not pinned.any():
            return np.zeros(self.cells.shape, dtype=bool)
        return pinned if pinned.shape == self.cells.shape else pinned[self.w.cells]

    def cached(self, budget: float, pinned: np.ndarray | None = None) -> np.ndarray:
        """[nq, nprobe] bool: the probes a prefetch of `budget` bytes per query finds cached (drawn
        from the profile's per-rank rates), with `pinned` (`pinned_mask`) cached for good."""
        drawn = self.draws < self.profile.rates(budget / self.probed, self.w.nprobe)[None, :]
        return (drawn & (self.probe_footprint <= budget)) | self.pinned_mask(pinned)

    def at(self, budget: float, t_llm_s: float, pinned: np.ndarray | None = None) -> dict:
        """A prefetch of `budget` bytes per query, the LLM leaving `t_llm_s` seconds, `pinned` as in
        `cached`."""
        in_cache = self.cached(budget, pinned)
        out = self._times(in_cache, np.full(self.w.queries, float(budget)), t_llm_s)
        return {
            "budget_bytes": int(budget),
            "ratio": round(budget / self.probed, 3),
            "cell_hit": round(float(in_cache.mean()), 4),
            "pinned_hit": round(float(self.pinned_mask(pinned).mean()), 4),
            **out,
        }

    def split(self, cache_bytes: int, share: float, t_llm_s: float) -> dict:
        """A cache of `cache_bytes` with a pinned region of at most `share` of it (`pinned_lists` of
        the whole sample: the design's) and the ring in the rest, the budget TeleRAG's rule gives for
        the ring (`budget_for`); the pinned hits out of sample (`pinned_probes`)."""
        budget, pinned, layout = self._split(cache_bytes, share, t_llm_s)
        return {**layout, **self.at(budget, t_llm_s, pinned)}

    def _split(self, cache_bytes: int, share: float, t_llm_s: float) -> tuple[float, np.ndarray, dict]:
        """`split`'s budget, pinned probes and layout (sizes of the regions)."""
        pinned = self.pinned_lists(share * cache_bytes)
        pinned_bytes = int(self.footprint[pinned].sum())
        ring = cache_bytes - pinned_bytes
        layout = {
            "cache_bytes": int(cache_bytes),
            "pinned_share": share,
            "pinned_lists": int(pinned.sum()),
            "pinned_bytes": pinned_bytes,
            "ring_bytes": ring,
        }
        return budget_for(self.link, t_llm_s, ring), self.pinned_probes(share * cache_bytes), layout

    def latency(self, cache_bytes: int, share: float, t_llm_s: float, load_qps: float | None = None) -> dict:
        """The per-query latency profiles (`latency_model.LatencyProfile`) of `split`'s cache: "alone"
        (each query after its LLM ends) and, with a `load_qps`, "load" (Poisson arrivals, queued at
        the link and the stages: `host_times`). What an SLO is checked against and the DSE reports
        for a design with its lists in host memory, as `fanns.model.ivfpq.points.annotate_latency`
        gives a design with its lists on the card."""
        budget, pinned, _ = self._split(cache_bytes, share, t_llm_s)
        times = host_times(*self._args(self.cached(budget, pinned), np.full(self.w.queries, budget), t_llm_s))
        out = {"alone": latency_model.alone(times)}
        if load_qps:
            out["load"] = latency_model.poisson(times, load_qps)
        return out

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
