"""Per-query latency of an IVF-PQ design: the distribution, not only the mean, alone and under load.

Why: users serving retrieval under a service-level objective care about P95/P99, and those come
from the few queries that probe the largest cells. Every number here is per sample query, from
the same measured probes (`Workload.probed`) and the same PE timing the throughput model uses
(`fanns.model.ivfpq.stages`).

The pipeline as a tandem of servers (`query_times`): a server takes a new query `service`
cycles after it took the previous one (the stage's per-query interval) and hands a query on
`latency` cycles after taking it. A selection stage streams alongside its producer, so
(IVFDist, SelCells) and (PQDist, SelK) are one server each (service = the larger of the two,
SelK's already coupled to PQDist's pace, `fanns.model.ivfpq.selk`; latency = the producer's plus
the selection's tail). BuildLUT is a server of its own (its constant interval) that hands a
query on as it starts: PQDist scans each cell as soon as its LUT is delivered, so the back
end's latency runs from BuildLUT's first input (`back_span`). Codes that cross a link (host
memory over PCIe) add the link as a server (`LINK_SERVERS`, `CodeFeed.link`): it reads ahead of
PQDist, so its time is not PQDist's service. The accelerator's
own I/O adds a fixed `io_cycles` per query: reading the query from the I/O channel and writing
its K results. Per-query latencies are checked against RTL simulation in
tests/model/test_latency_rtl.py (benchmarks/latency_rtl.py: within 2 %).

Under load (`poisson`) the tandem is simulated exactly for a deterministic arrival sequence:
exponential gaps of mean 1/rate drawn with a seeded generator, each arrival a sample query drawn
with replacement; each server's start times follow the tandem recursion
start[q] = max(ready[q], start[q-1] + service[q-1]), computed in closed form
(start = C + cummax(ready - C), C the cumulative service) so 100 000 arrivals take milliseconds.
Buffers between servers are taken as unbounded here (the FIFOs in the design hold 32 items, and
two LUTs between BuildLUT and PQDist; a query's items can back up into the previous stage, which
this model does not charge): below saturation they are rarely full. The throughput with the
finite buffers, where they matter most, is `fanns.model.ivfpq.sequence` (the DSE's `cycles`).
The first `WARMUP` of arrivals are discarded (the empty pipeline at time zero).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fanns.design.ivfpq import Stages
from fanns.errors import FannsError
from fanns.model.ivfpq import stages as stage_model

PERCENTILES = (50, 95, 99)
WARMUP = 0.05
"""Fraction of simulated arrivals discarded before percentiles are taken."""
DEFAULT_ARRIVALS = 50_000
SERVERS = ("opq", "front", "lut", "back")
"""The tandem's servers: OPQ, IVFDist + SelCells, BuildLUT, PQDist + SelK."""
LINK_SERVERS = ("opq", "front", "link", "lut", "back")
"""The servers of a design whose codes cross a link of their own (`CodeFeed.link`): its readers
take the probed cells from SelCells beside BuildLUT and read ahead of PQDist."""


@dataclass(frozen=True)
class QueryTimes:
    """Per server (`names`) and sample query: service and latency cycles; plus fixed I/O cycles."""

    names: tuple[str, ...]
    service: np.ndarray  # [servers, nq]
    latency: np.ndarray  # [servers, nq]
    io_cycles: float
    clock_mhz: float

    @property
    def queries(self) -> int:
        return int(self.service.shape[1])

    def alone(self) -> np.ndarray:
        """[nq] cycles of each sample query alone in the accelerator (batch 1, no queueing)."""
        return self.latency.sum(0) + self.io_cycles

    def max_qps(self) -> float:
        """Sustained throughput of the tandem: the busiest server's mean service."""
        return self.clock_mhz * 1e6 / float(self.service.mean(1).max())


def io_cycles(ctx: stage_model.Context, port_bits: int) -> float:
    """Fixed per-query cycles outside the stages: the query read (memory latency plus its beats
    on the I/O port) and the result write (K 64-bit keys in beats plus the write response)."""
    query_beats = -(-ctx.d * 8 * stage_model.stored_elem_bytes(ctx.fmt.vec_bits) // port_bits)
    result_beats = -(-ctx.k * 64 // port_bits)
    return float(2 * stage_model.MEM_LATENCY_CYCLES + query_beats + result_beats)


@dataclass(frozen=True)
class CodeFeed:
    """Where one PQDist PE's codes come from, per sample query: `ready` [nq, nprobe] the cycle
    (from the first code request) by which cell j's last beat has arrived, and `busy` [nq] the
    cycles the busiest channel spends on the query (its share of throughput); `link` [nq] (None:
    none) the cycles of a link the channels' readers cross (host memory over PCIe,
    `fanns.model.ivfpq.skew.SharedLink`), a server of its own in `query_times`.

    Why the link apart from `busy`: its readers run ahead of the PEs (the fetcher queues every
    probed cell's read, the beats wait in the readers' FIFOs), so while the PEs work on a query
    that needs little of the link (its lists cached, or small) the link already reads the next
    queries' lists. Charged per query as max(PE work, link time) the link stood idle in those
    queries: on tests/codegen/test_host_tier_rtl.py's designs 4-7 % more cycles a query than
    measured with cached probes (docs/host_tier.md, "Several PQ channels")."""

    ready: np.ndarray
    busy: np.ndarray
    link: np.ndarray | None = None

    def bound(self) -> np.ndarray:
        """[nq] `busy` and `link` as one per-query bound (the larger): the feed's time for a model
        that has no link server (the stage and sequence models)."""
        return self.busy if self.link is None else np.maximum(self.busy, self.link)


def channel_feed(
    beats: np.ndarray, pes_on_channel: int, rate: float, latency: float = stage_model.MEM_LATENCY_CYCLES
) -> CodeFeed:
    """A channel shared by `pes_on_channel` PEs delivering `beats` [nq, nprobe] per PE and cell
    (codes and ids, `Packing.beats`) at `rate` beats per cycle after `latency` cycles."""
    per = pes_on_channel / rate
    return CodeFeed(latency + per * np.cumsum(beats, axis=1), per * beats.sum(1))


def cell_beats(ctx: stage_model.Context, st, probes: stage_model.Probes) -> np.ndarray:
    """[nq, nprobe] beats of one PE's share of every probed cell (`Packing.beats`)."""
    return stage_model.Packing(ctx.m, st.port_bits).beats(probes.values, st.pes)[probes.inverse].astype(np.float64)


def default_feed(ctx: stage_model.Context, stages: Stages, probes: stage_model.Probes) -> CodeFeed:
    """The untiered design: every list on the PQ channels of `stages.pq_dist.memory`."""
    st = stages.pq_dist
    return channel_feed(cell_beats(ctx, st, probes), max(st.pes_per_channel()), ctx.memory(st.memory).beats_per_cycle)


def back_span(
    ctx: stage_model.Context, stages: Stages, probes: stage_model.Probes, feed: CodeFeed | None = None
) -> np.ndarray:
    """[nq] cycles from BuildLUT's first input to the last key of PQDist for each query alone.

    BuildLUT PE p builds the LUTs of probes p, p + P, ... back to back, so LUT j is complete at
    a_j = (j // P) * II + L (`BuildLut.ii`, `latency`); its words leave at the PE's output rate
    and the pq_decode PE loads them as they come. The `PqDecode.schedule` recurrence with that
    constraint: load start ls_j = max(ld_(j-1), se_(j-B) + 1), load done ld_j = max(ls_j + 256,
    a_j + 1), scan ss_j = max(ld_j, se_(j-1) + 1), last code se_j = ss_j + n_j - 1, and no
    earlier than the feed has delivered the cell (`CodeFeed.ready`: memory latency + the busiest
    channel's beats up to cell j / rate); the span is se_last + D + 1. (The LUT FIFOs hold two
    LUTs; a BuildLUT PE blocked on a full FIFO only delays LUTs that are not yet needed, which is
    not modelled.)
    """
    lut = stage_model.lut_pe(ctx, stages.build_lut)
    st = stages.pq_dist
    pe = stage_model.pq_pe(ctx, st)
    items = stage_model.Packing(ctx.m, st.port_bits).items(probes.values, st.pes)[probes.inverse].astype(np.float64)
    mem = (feed or default_feed(ctx, stages, probes)).ready
    nq, nprobe = items.shape
    ld = np.zeros(nq)
    se: list[np.ndarray] = []
    for j in range(nprobe):
        ready = (j // ctx.lut_groups(stages.build_lut)) * lut.ii() + lut.latency()
        ls = ld if j < pe.banks else np.maximum(ld, se[j - pe.banks] + 1)
        ld = np.maximum(ls + pe.load_cycles, ready + 1)
        ss = ld if j == 0 else np.maximum(ld, se[j - 1] + 1)
        se.append(np.maximum(ss + items[:, j] - 1, mem[:, j]))
    return se[-1] + pe.depth() + 1


def query_times(
    ctx: stage_model.Context,
    stages: Stages,
    probes: stage_model.Probes,
    feed: CodeFeed | None = None,
    timings: dict[str, stage_model.StageTiming] | None = None,
) -> QueryTimes:
    """Service and latency of every server for every sample query (see the module docstring);
    `feed` places the codes (default: all on the design's PQ channels); `timings` are the
    design's `stage_timings` for these probes when already computed."""
    t = timings or stage_model.stage_timings(ctx, stages, probes)
    nq = probes.sizes.shape[0]
    ones = np.ones(nq)
    st = stages.pq_dist
    placed = feed is not None  # codes delivered by a given feed (tiers, a simulated memory), not the design's channels
    feed = feed or default_feed(ctx, stages, probes)
    work = stage_model.pq_work(stage_model.pq_shares(ctx.m, probes, st.pes, st.port_bits), stage_model.pq_pe(ctx, st))
    pq_service = np.maximum(work.pe_cycles, feed.busy)
    selk_service = stage_model.sel_k_intervals(
        stages.sel_k,
        work,
        stage_model.pq_pe(ctx, st),
        st.pes_per_channel(),
        ctx.memory(st.memory).beats_per_cycle,
        st.port_bits,
        busy=feed.busy if placed else None,
    )
    rows = {
        "opq": (t["opq"].interval * ones, t["opq"].latency * ones) if "opq" in t else (0 * ones, 0 * ones),
        "front": (
            max(t["ivf_dist"].interval, t["sel_cells"].interval) * ones,
            (t["ivf_dist"].latency + t["sel_cells"].latency) * ones,
        ),
        "lut": (t["build_lut"].interval * ones, 0 * ones),
        "back": (
            np.maximum(pq_service, selk_service),
            back_span(ctx, stages, probes, feed) + t["sel_k"].latency,
        ),
        # hands a query on as it starts reading it: the back end's latency has the link's arrivals
        "link": (feed.link, 0 * ones),
    }
    names = SERVERS if feed.link is None else LINK_SERVERS
    service = np.stack([rows[s][0] for s in names]).astype(np.float64)
    latency = np.stack([rows[s][1] for s in names]).astype(np.float64)
    return QueryTimes(names, service, latency, io_cycles(ctx, ctx.memories[0].port_bits), ctx.clock_mhz)


def tandem(arrivals: np.ndarray, service: np.ndarray, latency: np.ndarray) -> np.ndarray:
    """Completion times of queries arriving at `arrivals` (non-decreasing) through servers with
    per-query `service` and `latency` [servers, n] (the recursion of the module docstring)."""
    ready = np.asarray(arrivals, dtype=np.float64)
    for s in range(service.shape[0]):
        c = np.concatenate([[0.0], np.cumsum(service[s, :-1])])
        start = c + np.maximum.accumulate(ready - c)
        ready = start + latency[s]
    return ready


@dataclass(frozen=True)
class LatencyProfile:
    """Latency percentiles (microseconds) of a design, alone and at a load."""

    rate_qps: float | None  # None: queries alone (batch 1)
    percentiles_us: dict[int, float]
    mean_us: float
    stable: bool  # False: the load exceeds the design's throughput (latency grows without bound)

    def get(self, p: int) -> float:
        return self.percentiles_us[p] if self.stable else float("inf")

    def as_dict(self) -> dict:
        pct = {f"p{p}_us": (round(v, 3) if self.stable else None) for p, v in sorted(self.percentiles_us.items())}
        return {
            "load_qps": self.rate_qps,
            "stable": self.stable,
            "mean_us": round(self.mean_us, 3) if self.stable else None,
            **pct,
        }


def _percentiles(cycles: np.ndarray, clock_mhz: float) -> dict[int, float]:
    return {p: float(np.percentile(cycles, p)) / clock_mhz for p in PERCENTILES}


def alone(times: QueryTimes) -> LatencyProfile:
    """Percentiles of the sample queries, each alone in the accelerator."""
    cyc = times.alone()
    return LatencyProfile(None, _percentiles(cyc, times.clock_mhz), float(cyc.mean()) / times.clock_mhz, True)


def poisson(times: QueryTimes, rate_qps: float, arrivals: int = DEFAULT_ARRIVALS, seed: int = 0) -> LatencyProfile:
    """Percentiles under Poisson arrivals at `rate_qps` (deterministic for a seed; see above)."""
    if rate_qps <= 0:
        raise FannsError(f"load {rate_qps} QPS must be positive")
    if rate_qps >= times.max_qps():
        return LatencyProfile(rate_qps, {p: float("inf") for p in PERCENTILES}, float("inf"), False)
    rng = np.random.default_rng(seed)
    gap = times.clock_mhz * 1e6 / rate_qps  # mean cycles between arrivals
    at = np.cumsum(rng.exponential(gap, arrivals))
    pick = rng.integers(0, times.queries, arrivals)
    done = tandem(at, times.service[:, pick], times.latency[:, pick]) + times.io_cycles
    cyc = (done - at)[int(WARMUP * arrivals) :]
    return LatencyProfile(rate_qps, _percentiles(cyc, times.clock_mhz), float(cyc.mean()) / times.clock_mhz, True)
