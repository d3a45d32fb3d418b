"""Access skew of IVF lists and skew-aware placement of lists in memory tiers.

Why: a few IVF lists take most of the scanning (RAG serving studies report 59-93 % of accesses
in the hottest 20 % of lists), so a small fast tier holding the hot lists can carry most of the
PQ-code traffic. Everything is measured from a query sample (`Workload.cells`: the probed cell
ids of every sample query), weighted by work (codes scanned = accesses x list size).

Tiers (`Tier`): where one PQDist PE's share of a list can live — on-chip UltraRAM (one port per PE, no
sharing, a few cycles of latency), a board memory group (channels shared by the PEs, bandwidth and
capacity from the board file, the model's memory latency), or host memory over PCIe (the board file's
`host` link, its latency and bandwidth shared by every PQ channel's own host port, `host_tier`; the
ports take the link's beats round robin, `SharedLink`).
`place` puts lists in the fast tier hottest first (by
accesses per list), skipping a list that no longer fits, while the tier's per-PE (URAM) or per-channel
(memory) capacity lasts; the rest stays in the slow tier. `tiered_feed` turns a placement into the
per-cell arrival times and busiest-channel busy time of `fanns.model.ivfpq.latency.CodeFeed`, so
throughput and per-query latency come from the same latency model as untiered designs. The two tiers
are read in parallel (each PE has a reader on both); a cell waits only for its own tier.

Generated tiered designs: a design.yaml may carry `stages.pq_dist.tiers` (`PqTiers`: a memory
group and the hot list ids, from `place`; `with_tiers` makes one, and `fanns dse --tiers` writes
`design_tiered.yaml` when the best option is a memory group). The packer then writes the hot
lists into `pq_hot_<c>` images on one fast channel paired with each PQ channel, the cold ones
into `pq_codes_<c>`, plus the list->tier table `list_tiers`; the RTL accelerator loads that
table and sends each probed cell's read to its tier's reader (`fanns.pe.fetcher`).
tests/codegen/test_tiers.py simulates a tiered and an untiered design on a skewed workload with
the slow tier's memory slower than the fast one's and checks keys bit for bit and the measured
cycles per query against this model (`cells_feed` with `ram_tier`s of the simulated memories).
Host memory as a tier (`host_tier`, `SharedLink`) is built in both generated faces, with lookahead
prefetch into an HBM cache (`fanns.model.ivfpq.prefetch`, docs/host_tier.md). Not built: the URAM
tier (`uram_tier` is prediction only) and tiered HLS kernels (the HLS generator refuses designs
with `stages.pq_dist.tiers`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from fanns.boards import Board
from fanns.design.ivfpq import IvfPqDesign, PqTiers, Stages, pes_per_channel
from fanns.errors import FannsError
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.stages import memory_plan
from fanns.model.ivfpq.workload import Workload

URAM_BYTES = 288 * 1024 // 8
"""One UltraRAM block: 288 Kb (UG573)."""
URAM_LATENCY_CYCLES = 3
"""Read latency of an UltraRAM with its output register and one pipeline register (UG573: the
cascade adds more; a PE's private URAM column is not cascaded)."""
HOT_FRACTION = 0.2


def _cells(w: Workload) -> np.ndarray:
    if w.cells is None:
        raise FannsError(
            f"{w.label()}: the probed cell ids are not recorded", hint="re-run `fanns explore` (it records probes.npy)"
        )
    return w.cells


def accesses(w: Workload) -> np.ndarray:
    """[nlist] how many sample queries probe each list."""
    return np.bincount(_cells(w).ravel(), minlength=w.nlist).astype(np.int64)


def profile(w: Workload, points: int = 200) -> dict:
    """The access distribution of the lists: work (codes scanned) and accesses, hottest lists
    first, as cumulative shares (at most `points` points), and the share in the hottest 20 %."""
    acc = accesses(w)
    work = acc * w.list_sizes
    order = np.lexsort((np.arange(w.nlist), -work))
    total_work, total_acc = max(int(work.sum()), 1), max(int(acc.sum()), 1)
    work_cdf = np.cumsum(work[order]) / total_work
    acc_cdf = np.cumsum(acc[order]) / total_acc
    hot = max(1, math.ceil(HOT_FRACTION * w.nlist))
    take = np.unique(np.linspace(0, w.nlist - 1, min(points, w.nlist)).round().astype(np.int64))
    return {
        "label": w.label(),
        "nlist": w.nlist,
        "queries": w.queries,
        "hot20_work_share": round(float(work_cdf[hot - 1]), 6),
        "hot20_access_share": round(float(np.sort(acc)[::-1][:hot].sum() / total_acc), 6),
        "list_fraction": [round(float(i + 1) / w.nlist, 6) for i in take],
        "work_cdf": [round(float(work_cdf[i]), 6) for i in take],
        "access_cdf": [round(float(acc_cdf[i]), 6) for i in take],
    }


@dataclass(frozen=True)
class SharedLink:
    """One link every port of a tier crosses (host memory over PCIe: each PQ channel's host port):
    `beats` (of the design's PQ port) a cycle in all, granted round robin among the ports that want
    a beat, each port at most `port_rate` a cycle; `port_pes` the PEs on each port.

    Why not an even split: a port whose channel has fewer PEs (3 PEs on 2 channels: 2 and 1) runs out
    of beats to ask for first, and the busier ports then take its share. That is the round robin of
    the simulated link (`fanns.sim.axi_memory.meter_link`: the link earns `beats` a cycle and grants
    its whole beats to the ports that want one, from the port after the last one granted), and what
    the model assumes of the PCIe link: the read requests of the ports are served in turn, none
    favoured. An even split charged the 2 + 1 design's busiest port the link's time for 4 PE shares
    instead of 3: on tests/codegen/test_host_tier_rtl.py's 1 GB/s board it modelled 3,401.5 cycles a
    query cold against 2,449.8 measured; this model gives 2,568.6 (and 2,568.6 against 2,537.9 for 2
    + 2 PEs, where both agree)."""

    beats: float
    port_rate: float
    port_pes: tuple[int, ...]

    def feed(self, beats: np.ndarray, latency: float) -> latency_model.CodeFeed:
        """Arrival of one PE's share `beats` [nq, nprobe] of each cell on the busiest port, each query
        alone. While k ports still want beats every one moves min(`port_rate`, `beats` / k) a cycle,
        so all ports have moved the same amount a(t) until a port's query is done; a port of n PEs
        needs n x (the query's beats so far) and, with T the query's total, reaches amount x at
        T g(x / T), g(u) = integral from 0 to u of max(1 / port_rate, k(v) / beats) dv, k(v) the
        ports with more than v PEs: piecewise linear, breaks at the ports' PE counts. The link's time
        (`CodeFeed.link`; `busy` is zero, the PEs wait on no channel of their own) is the long-run
        one (a port done with a query starts the next one's lists, so the link stays busy):
        T x max(busiest port's PEs / port_rate, all PEs / beats)."""
        pes = np.asarray(self.port_pes, dtype=np.float64)
        levels = np.concatenate([[0.0], np.unique(pes)])
        slope = np.maximum(1.0 / self.port_rate, np.array([(pes > v).sum() for v in levels[:-1]]) / self.beats)
        g = np.concatenate([[0.0], np.cumsum(slope * np.diff(levels))])
        total = beats.sum(1)
        safe = np.where(total > 0, total, 1.0)[:, None]
        ready = latency + safe * np.interp(levels[-1] * np.cumsum(beats, 1) / safe, levels, g)
        link = total * max(levels[-1] / self.port_rate, pes.sum() / self.beats)
        return latency_model.CodeFeed(ready, np.zeros_like(total), link)


@dataclass(frozen=True)
class Tier:
    """One place a PE's share of a list can live (see the module docstring)."""

    name: str
    capacity_bytes: int  # per PE (uram) or per channel (memory)
    pes_per_port: int  # PEs sharing one port (the busiest port's)
    rate: float  # beats (of the design's PQ port width) per cycle per port (behind a link: its even share)
    latency_cycles: float
    link: SharedLink | None = None
    """The one link every port crosses (None: each port has its own `rate`)."""

    def feed(self, beats: np.ndarray) -> latency_model.CodeFeed:
        """The code feed of one PE's share `beats` [nq, nprobe] of the probed cells from this tier."""
        if self.link is not None:
            return self.link.feed(beats, self.latency_cycles)
        return latency_model.channel_feed(beats, self.pes_per_port, self.rate, self.latency_cycles)


def uram_tier(blocks: int, pes: int) -> Tier:
    """`blocks` UltraRAMs spread over `pes` PQDist PEs, one port each at one beat per cycle."""
    if blocks < pes:
        raise FannsError(f"{blocks} URAM blocks for {pes} PQDist PEs: each PE needs at least one")
    return Tier("uram", (blocks // pes) * URAM_BYTES, 1, 1.0, URAM_LATENCY_CYCLES)


def memory_tier(board: Board, kind: str, clock_mhz: float, pes: int, channels: int, port_bits: int) -> Tier:
    """`channels` channels of the board's memory group `kind` shared by `pes` PEs (contiguous
    blocks, as the design assigns them); rate in beats of `port_bits` (the design's PQ port)."""
    group = next((g for g in board.memory if g.kind == kind), None)
    if group is None:
        raise FannsError(
            f"{board.name} has no memory group {kind!r}", hint=f"one of {', '.join(g.kind for g in board.memory)}"
        )
    if not 1 <= channels <= group.count:
        raise FannsError(f"{channels} {kind} channels: {board.name} has {group.count}")
    bytes_per_cycle = group.bandwidth_gbps * 1e9 / (clock_mhz * 1e6)
    rate = min(1.0, bytes_per_cycle / (port_bits / 8), stage_model.reader_rate(stage_model.channel_reader(port_bits)))
    return Tier(kind, group.capacity_bytes, -(-pes // channels), rate, stage_model.MEM_LATENCY_CYCLES)


def host_bandwidth(board: Board, clock_mhz: float, channels: int, port_bits: int) -> float:
    """Bytes per second a design reads from host memory: each of its `channels` PQ channels has a
    host port of its own (`m_axi_pq<c>` / bundle `host_pq_codes_<c>`, `port_bits` wide, at most one
    beat a cycle), and all of them share the board file's `host` link, so the lower of the link's
    bandwidth and channels x port bytes x clock (one 256-bit port at 140 MHz: 4.48 GB/s, under the
    U55C's 12 GB/s link; three or more such channels: the link binds). The search's reads of
    uncached lists and the prefetch copies (each channel's copy engine reads through its host port)
    both run at this figure."""
    if board.host is None:
        raise FannsError(
            f"{board.name} has no host link figures",
            hint="add host: {capacity_gb, bandwidth_gbps, latency_us} to its board file",
        )
    return min(board.host.bandwidth_gbps * 1e9, channels * port_bits / 8 * clock_mhz * 1e6)


def host_tier(board: Board, clock_mhz: float, pes: int, channels: int, port_bits: int) -> Tier:
    """Host memory over PCIe (the board file's `host` figures) as a design's `channels` PQ channels
    read it: each its own host port of `port_bits` (the channel's PEs share it, at most one beat a
    cycle, and what the channel's AXI reader sustains at the link's latency), all over the one link
    (`host_bandwidth`), taken round robin (`SharedLink`); rate the even share in beats of `port_bits`
    per cycle per channel, latency the link's."""
    if not 1 <= channels <= pes:
        raise FannsError(f"{channels} PQ channels for {pes} PQDist PEs: each channel needs at least one PE")
    latency = board.host.latency_us * clock_mhz if board.host else 0.0
    link = host_bandwidth(board, clock_mhz, channels, port_bits) / (clock_mhz * 1e6) / (port_bits / 8)
    tier = link_tier("host", round(latency), link, tuple(pes_per_channel(pes, channels)), port_bits)
    return dataclasses.replace(tier, capacity_bytes=board.host.capacity_bytes, latency_cycles=latency)


def link_tier(name: str, latency: int, link: float, port_pes: tuple[int, ...], port_bits: int) -> Tier:
    """Ports with `port_pes` PEs each behind one link of `link` beats a cycle in all (`SharedLink`),
    first beat `latency` cycles after a request, each port read through the design's AXI reader at
    most a beat a cycle: the host memory of a design or of a simulation bench (`meter_link`)."""
    cap = min(1.0, stage_model.channel_reader(port_bits).words_per_cycle(latency))
    shared = SharedLink(link, cap, tuple(int(n) for n in port_pes))
    return Tier(name, 0, max(shared.port_pes), min(cap, link / len(port_pes)), latency, shared)


def list_bytes(w: Workload, st) -> np.ndarray:
    """[nlist] bytes one PE's share of each list takes (codes and ids, whole beats)."""
    return stage_model.Packing(w.m, st.port_bits).beats(w.list_sizes, st.pes) * (st.port_bits // 8)


def ram_tier(name: str, latency: int, rate: float, pes_per_port: int, port_bits: int) -> Tier:
    """A memory as a simulation bench (or a measurement) gives it: first beat `latency` cycles after
    a request, at most `rate` beats per cycle, read through the design's AXI reader (which
    sustains less when the latency exceeds its outstanding window)."""
    reader = stage_model.channel_reader(port_bits).words_per_cycle(latency)
    return Tier(name, 0, pes_per_port, min(rate, reader), latency)


def place(w: Workload, st, fast: Tier) -> np.ndarray:
    """[nlist] bool: the lists in the fast tier, hottest (accesses per list) first while they fit
    (per PE for URAM, per channel — `pes_per_port` PE shares — for memory)."""
    return place_lists(accesses(w), list_bytes(w, st) * fast.pes_per_port, fast.capacity_bytes)


def place_lists(acc: np.ndarray, size: np.ndarray, capacity: int) -> np.ndarray:
    """`place` on plain arrays: [nlist] accesses and bytes per list in one port of the fast tier."""
    nlist = len(acc)
    hot = np.zeros(nlist, dtype=bool)
    room = capacity
    for i in np.lexsort((np.arange(nlist), -acc)):
        if acc[i] == 0:
            break
        if size[i] <= room:  # a list too large for what is left is skipped; smaller colder ones may fit
            hot[i] = True
            room -= size[i]
    return hot


def with_tiers(design: IvfPqDesign, hot: np.ndarray, memory: str) -> IvfPqDesign:
    """`design` with the lists `hot` ([nlist] bool, e.g. from `place`) on a fast tier of the board
    memory group `memory`: one channel paired with each PQ channel (`PqTiers`), the channel plan
    redone (`fanns.model.ivfpq.stages.memory_plan`). PEs and the other stages stay as they are."""

    board = design.target_board()
    if not any(g.kind == memory for g in board.memory):
        raise FannsError(
            f"{board.name} has no memory group {memory!r}", hint=f"one of {', '.join(g.kind for g in board.memory)}"
        )
    st = design.stages.pq_dist
    tiers = PqTiers(memory, st.channels, tuple(int(i) for i in np.nonzero(hot)[0]))
    stages = dataclasses.replace(design.stages, pq_dist=dataclasses.replace(st, tiers=tiers))
    ctx = stage_model.design_context(design, board)
    out = dataclasses.replace(design, stages=stages, memory=memory_plan(ctx, stages))
    out.validate()
    return out


def hit_rate(w: Workload, hot: np.ndarray) -> float:
    """Share of the sample's work (codes scanned) served from the fast tier."""
    work = accesses(w) * w.list_sizes
    return float(work[hot].sum() / max(work.sum(), 1))


def tiered_feed(
    ctx: stage_model.Context, stages: Stages, w: Workload, hot: np.ndarray, fast: Tier, slow: Tier
) -> latency_model.CodeFeed:
    """Per-cell arrival and busiest-port busy time with hot cells on `fast`, the rest on `slow`."""
    return cells_feed(ctx, stages, _cells(w), stage_model.Probes.of(w.probed), hot, fast, slow)


def cells_feed(
    ctx: stage_model.Context,
    stages: Stages,
    cells: np.ndarray,
    probes: stage_model.Probes,
    hot: np.ndarray,
    fast: Tier,
    slow: Tier,
) -> latency_model.CodeFeed:
    """`tiered_feed` for probed `cells` [nq, nprobe] of sizes `probes` (e.g. a simulation's queries)."""
    return mask_feed(ctx, stages, probes, hot[cells], fast, slow)


def mask_feed(
    ctx: stage_model.Context, stages: Stages, probes: stage_model.Probes, in_fast: np.ndarray, fast: Tier, slow: Tier
) -> latency_model.CodeFeed:
    """`cells_feed` with the cells on `fast` given per query and probe, `in_fast` [nq, nprobe] bool
    (a placement per query: lists prefetched into a cache, `fanns.model.ivfpq.prefetch`).

    A tier behind a link (host memory, `SharedLink`) gives the link's time per query apart
    (`CodeFeed.link`), a server of the latency model's tandem of its own: the link reads ahead of
    the PEs, so a query of cached lists costs the link nothing and the PEs' time on it is not the
    link's. Taken as max(PE work, link time) per query, the RTL of tests/codegen/test_host_tier_rtl.py
    (3 PEs on 2 + 1 channels, after a prefetch) measured 1,131.0 cycles a query against 1,219.5
    modelled (−7.3 %); with the link apart, 1,149.7 (−1.6 %), and every search of its three designs,
    cold, pinned-only and warm, within 5 % (docs/host_tier.md, "Several PQ channels")."""
    beats = latency_model.cell_beats(ctx, stages.pq_dist, probes)
    feeds = [t.feed(np.where(sel, beats, 0.0)) for t, sel in ((fast, in_fast), (slow, ~in_fast))]
    ready = np.where(in_fast, feeds[0].ready, feeds[1].ready)
    links = [f.link for f in feeds if f.link is not None]
    link = np.maximum.reduce(links) if links else None
    return latency_model.CodeFeed(ready, np.maximum(feeds[0].busy, feeds[1].busy), link)


def batch_cycles(times: latency_model.QueryTimes, batch: int, batches: int = 200, seed: int = 0) -> np.ndarray:
    """Completion of the last query of batches of `batch` sample queries submitted together
    (the slowest query sets the batch's time), for `batches` seeded random batches."""
    rng = np.random.default_rng(seed)
    out = np.empty(batches)
    for b in range(batches):
        pick = rng.integers(0, times.queries, batch)
        out[b] = (
            latency_model.tandem(np.zeros(batch), times.service[:, pick], times.latency[:, pick]).max()
            + times.io_cycles
        )
    return out


def evaluate(name: str, times: latency_model.QueryTimes, batch: int, extra: dict | None = None) -> dict:
    alone = latency_model.alone(times)
    batches = batch_cycles(times, batch) / times.clock_mhz
    return {
        "name": name,
        "qps": round(times.max_qps(), 1),
        "p50_us": round(alone.get(50), 3),
        "p99_us": round(alone.get(99), 3),
        f"batch{batch}_p99_us": round(float(np.percentile(batches, 99)), 3),
        **(extra or {}),
    }


def compare(w: Workload, ctx: stage_model.Context, stages: Stages, fast: Tier, slow: Tier, batch: int = 16) -> dict:
    """The same design (PEs, channels) with every list on `slow` (untiered) and with the hot
    lists on `fast` (tiered): hit rate, QPS, per-query P50/P99 alone, P99 of a batch's time."""
    probes = stage_model.Probes.of(w.probed)
    untiered = slow.feed(latency_model.cell_beats(ctx, stages.pq_dist, probes))
    hot = place(w, stages.pq_dist, fast)
    feed = tiered_feed(ctx, stages, w, hot, fast, slow)
    return {
        "title": f"{w.label()}: hot lists on {fast.name}, cold on {slow.name}",
        "hot_lists": int(hot.sum()),
        "hit_rate": round(hit_rate(w, hot), 6),
        "designs": [
            evaluate(f"all on {slow.name}", latency_model.query_times(ctx, stages, probes, untiered), batch),
            evaluate(f"tiered {fast.name}+{slow.name}", latency_model.query_times(ctx, stages, probes, feed), batch),
        ],
        "mapping": hot,
    }


def fast_tiers(
    board: Board, budget_uram: float, ctx: stage_model.Context, stages: Stages, channels_used: dict[str, int]
) -> list[Tier]:
    """The fast tiers a design could add for its hot lists: the UltraRAM the budget leaves
    (`budget_uram` blocks), and every other memory group of the board with free channels for one
    fast channel paired with each of the design's PQ channels (`PqTiers`, what the RTL generator
    builds). The readers of the added channels (one `axi_reader` each) are not added to the
    design's resources: the comparison holds the PEs fixed, not the glue."""
    st = stages.pq_dist
    out = []
    if int(budget_uram) >= st.pes:
        out.append(uram_tier(int(budget_uram), st.pes))
    for group in board.memory:
        free = group.count - channels_used.get(group.kind, 0)
        if group.kind != st.memory and free >= st.channels:
            out.append(memory_tier(board, group.kind, ctx.clock_mhz, st.pes, st.channels, st.port_bits))
    return out


def tier_choices(point, board: Board, budget_uram: float, batch: int = 16) -> dict:
    """For a DSE design point: its untiered prediction and, per possible fast tier, the tiered
    one (hit rate, QPS, P99) and the hot list ids (`place`); `best` names the fastest tiered
    option if it beats untiered."""
    w, st = point.workload, point.stages.pq_dist
    slow = memory_tier(board, st.memory, point.clock_mhz, st.pes, st.channels, st.port_bits)
    options = []
    for fast in fast_tiers(board, budget_uram - point.resources.uram, point.ctx, point.stages, point.channels):
        cmp = compare(w, point.ctx, point.stages, fast, slow, batch)
        base, tiered = cmp["designs"]
        options.append(
            {
                "fast": fast.name,
                "hot_lists": cmp["hot_lists"],
                "hot": [int(i) for i in np.nonzero(cmp["mapping"])[0]],
                "hit_rate": cmp["hit_rate"],
                **{k: tiered[k] for k in ("qps", "p50_us", "p99_us", f"batch{batch}_p99_us")},
                "speedup": round(tiered["qps"] / base["qps"], 4),
            }
        )
    best = max(options, key=lambda o: (o["qps"], -o["p99_us"]), default=None)
    return {
        "slow": slow.name,
        "untiered": evaluate(
            f"all on {slow.name}",
            latency_model.query_times(point.ctx, point.stages, stage_model.Probes.of(w.probed)),
            batch,
        ),
        "options": options,
        "best": best["fast"] if best and best["speedup"] > 1.0 else None,
    }
