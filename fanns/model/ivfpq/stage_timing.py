"""The stages' timing: mean cycles per query and latency of each stage of an IVF-PQ design.

Why a module of its own: `fanns.model.ivfpq.stages` prices what a design is built of (its units
and their resources); this one prices how fast each stage runs — OPQ, IVFDist, SelCells and
BuildLUT from their PEs' intervals, PQDist from the codes each PE scans per query over its
channel's rate, SelK from the coupled recurrence of its PEs (`fanns.model.ivfpq.selk`). The DSE,
the latency model and the RTL checks read both through `stages`, which re-exports this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from fanns.design.ivfpq import BuildLutStage, IvfDistStage, OpqStage, PqDistStage, SelectStage, Stages
from fanns.design.ivfpq_stages import selector_pe
from fanns.model.ivfpq.memory import MEM_LATENCY_CYCLES, PqShares, Probes, pq_shares, reader_lead
from fanns.model.ivfpq.selk import Buffers, ChannelFeed, channel_groups, coupled_intervals_many, interval_floors
from fanns.model.ivfpq.stage_pes import (
    Context,
    ivf_pe,
    ivf_stream_slowdown,
    lut_pe,
    opq_pe,
    opq_stream_slowdown,
    pq_pe,
)
from fanns.pe.base import PE
from fanns.pe.pq_decode import PqDecode

FIFO_DEPTH = 32
"""Depth of every inter-stage and inter-PE FIFO (architecture choice, docs/ivfpq_architecture.md:
LUT RAM sized, deep enough for the 1-D arrays' forwarding registers)."""


@cache
def selector_latency(pe: PE) -> int:
    """A selection PE's latency, once per distinct PE (HSMPQG builds its comparator network)."""
    return pe.latency()


@dataclass(frozen=True)
class StageTiming:
    """Mean steady-state cycles per query (`interval`), mean one-query latency, and details."""

    interval: float
    latency: float
    detail: dict = field(default_factory=dict)


def opq_timing(ctx: Context, st: OpqStage) -> StageTiming:
    """A streamed matrix: one row word a cycle while its channel delivers that many bits, slower
    where it does not (`opq_stream_slowdown`), and the memory's latency before the first."""
    pe = opq_pe(ctx, st)
    if st.storage != "stream":
        return StageTiming(float(pe.ii()), float(pe.latency()))
    slow = opq_stream_slowdown(ctx, st)
    return StageTiming(pe.ii() * slow, pe.latency() * slow + MEM_LATENCY_CYCLES, {"matrix": "streamed"})


def ivf_timing(ctx: Context, st: IvfDistStage) -> StageTiming:
    pe = ivf_pe(ctx, st, -(-ctx.nlist // st.pes))
    slow = ivf_stream_slowdown(ctx, st) if st.storage == "stream" else 1.0
    extra = MEM_LATENCY_CYCLES if st.storage == "stream" else 0
    return StageTiming(pe.ii() * slow, pe.latency() * slow + extra, {"centroids_per_pe": pe.nlist})


def sel_cells_timing(ctx: Context, st: SelectStage, ivf: IvfDistStage) -> StageTiming:
    pe = selector_pe(st)
    return StageTiming(float(pe.interval(-(-ctx.nlist // ivf.pes))), float(selector_latency(pe)))


def lut_timing(ctx: Context, st: BuildLutStage) -> StageTiming:
    """The LUTs of a run go round the P groups of PEs (LUT k by group k mod P, across queries:
    `fanns.arch.ivfpq.lut`), so a query costs nprobe / P LUT intervals on average, with P above
    nprobe too; one query alone waits for its busiest group's ceil(nprobe / P) LUTs."""
    pe = lut_pe(ctx, st)
    groups = ctx.lut_groups(st)
    probes = ctx.nprobe / groups
    extra = MEM_LATENCY_CYCLES if st.centroids == "memory" else 0
    alone = -(-ctx.nprobe // groups)
    return StageTiming(probes * pe.ii(), float(pe.cycles(alone) + extra), {"probes_per_pe": round(probes, 3)})


@dataclass(frozen=True)
class PqWork:
    """Per sample query, what one pq_decode PE does (cycles from `PqDecode.cell_cycles`)."""

    shares: PqShares
    pe_cycles: np.ndarray  # [nq] steady-state cycles
    pe_latency: np.ndarray  # [nq] one query alone: first LUT word to last key (`cycles_for_cells`)

    @property
    def beats(self) -> np.ndarray:
        return self.shares.beats


def pq_work(shares: PqShares, pe: PqDecode) -> PqWork:
    cell = pe.cell_cycles(shares.items)
    pe_cycles = cell.sum(1)
    latency = pe.load_cycles + pe_cycles - cell[:, -1] + shares.items[:, -1] + pe.depth()
    return PqWork(shares, pe_cycles.astype(np.float64), latency.astype(np.float64))


def channel_cycles(beats: np.ndarray, busiest: int, rate: float) -> np.ndarray:
    """Per sample query, the busiest PQ channel's cycles: the share `beats` of each of its
    `busiest` PEs at `rate` beats a cycle."""
    return busiest * beats / rate


def pq_query_cycles(work: PqWork, busiest: int, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Per sample query, (interval, latency) of the PQDist stage: a query takes the longer of the
    PE's scan and its busiest channel's beats (the reader runs ahead of the PEs within a query)."""
    chan = channel_cycles(work.beats, busiest, rate)
    return np.maximum(work.pe_cycles, chan), np.maximum(work.pe_latency, chan + MEM_LATENCY_CYCLES)


def pq_timing_from_work(work: PqWork, busiest: int, rate: float) -> tuple[float, float, float, float]:
    """(interval, latency, compute part, memory part), means over the sample (`pq_query_cycles`)."""
    interval, latency = pq_query_cycles(work, busiest, rate)
    chan = channel_cycles(work.beats, busiest, rate)
    return float(interval.mean()), float(latency.mean()), float(work.pe_cycles.mean()), float(chan.mean())


def pq_timing(ctx: Context, st: PqDistStage, probes: Probes) -> tuple[StageTiming, PqWork]:
    work = pq_work(pq_shares(ctx.m, probes, st.pes, st.port_bits), pq_pe(ctx, st))
    busiest, rate = max(st.pes_per_channel()), ctx.memory(st.memory).beats_per_cycle
    interval, latency, compute, memory = pq_timing_from_work(work, busiest, rate)
    per_query = np.maximum(work.pe_cycles, channel_cycles(work.beats, busiest, rate))
    detail = {
        "compute_cycles": round(compute, 3),
        "memory_cycles": round(memory, 3),
        "bound": "memory" if memory > compute else "compute",
        "items_per_pe": round(float(work.shares.items_per_query.mean()), 3),
        # the sample's spread (throughput uses the mean: queries overlap in the pipeline)
        "p95_cycles": round(float(np.percentile(per_query, 95)), 3),
    }
    return StageTiming(interval, latency, detail), work


def pq_feed_cycles(work: PqWork, pe: PqDecode, busiest: int, rate: float, busy: np.ndarray | None = None) -> np.ndarray:
    """Per sample query, the busiest channel's cycles for the items a held stream's buffers (key
    FIFO, datapath, item FIFO: `selk_slack` + FIFO_DEPTH) could not take, plus the datapath.
    `busy` [nq]: the busiest port's cycles per query when the codes come from elsewhere than the
    design's PQ channels (a tiered placement's `CodeFeed.busy`); default: those channels."""
    n = work.shares.items_per_query.astype(np.float64)
    ahead = selk_slack(pe) + FIFO_DEPTH
    busy = channel_cycles(work.beats, busiest, rate) if busy is None else busy
    return busy * np.maximum(n - ahead, 0) / np.maximum(n, 1) + pe.depth() + 2


def pq_channel_feed(
    work: PqWork, pe: PqDecode, busiest: int, rate: float, port_bits: int, busy: np.ndarray | None = None
) -> ChannelFeed:
    """The busiest channel as the recurrence's source (`fanns.model.ivfpq.selk.ChannelFeed`): its
    time after a hold (`pq_feed_cycles`), each probed cell's share of its cycles per query
    (`channel_cycles`, or `busy` spread over a query's cells by their beats) and how far its
    reader runs ahead (`reader_lead`); `busy` as in `pq_feed_cycles`."""
    cell_beats = work.shares.cell_beats
    if busy is None:
        cells = channel_cycles(cell_beats, busiest, rate)
    else:
        cells = busy[:, None] * cell_beats / np.maximum(cell_beats.sum(1, keepdims=True), 1)
    return ChannelFeed(pq_feed_cycles(work, pe, busiest, rate, busy), cells, reader_lead(port_bits, rate))


def selk_slack(pe: PqDecode) -> int:
    """Keys a held SelK stream's buffers take: the key FIFO and the PE's datapath registers."""
    return FIFO_DEPTH + pe.depth() + 1


def selk_buffers(pe: PqDecode) -> Buffers:
    """The FIFOs between the PQDist PEs and SelK: a held stream's (`selk_slack`), a LUT chain FIFO."""
    return Buffers(selk_slack(pe), FIFO_DEPTH)


def sel_k_intervals(
    st: SelectStage,
    work: PqWork,
    pq: PqDecode,
    pes_per_channel: list[int],
    rate: float,
    port_bits: int,
    busy: np.ndarray | None = None,
) -> np.ndarray:
    """Per sample query, the interval of SelK fed by the PQDist PEs (`fanns.model.ivfpq.selk`:
    their work and SelK's level-2 hold add up where the old max of the two let them overlap);
    `busy` as in `pq_feed_cycles`."""
    return sel_k_intervals_many([(st, pes_per_channel)], work, pq, rate, port_bits, busy)[0]


def sel_k_intervals_many(
    configs: list[tuple[SelectStage, list[int]]],
    work: PqWork,
    pq: PqDecode,
    rate: float,
    port_bits: int,
    busy: np.ndarray | None = None,
) -> np.ndarray:
    """`sel_k_intervals` for several (SelK stage, PEs per channel) of the same PEs: [configs, nq]
    (configs with the same busiest channel share its feed)."""
    feeds = {b: pq_channel_feed(work, pq, b, rate, port_bits, busy) for b in {max(ppc) for _, ppc in configs}}
    many = [(selector_pe(st), channel_groups(ppc), feeds[max(ppc)]) for st, ppc in configs]
    return coupled_intervals_many(many, pq, work.shares.items, selk_buffers(pq))


def sel_k_floors_many(
    configs: list[tuple[SelectStage, list[int]]], work: PqWork, pq: PqDecode, rate: float
) -> np.ndarray:
    """[configs] a lower bound of `sel_k_intervals_many(...).mean(1)` for the same configs, from
    SelK's own restarts and the channel's time after a hold alone (`fanns.model.ivfpq.selk.interval_floors`):
    a few array operations a config where the recurrence runs every query's cells."""
    held = {b: pq_feed_cycles(work, pq, b, rate) for b in {max(ppc) for _, ppc in configs}}
    many = [(selector_pe(st), channel_groups(ppc), held[max(ppc)]) for st, ppc in configs]
    return interval_floors(many, work.shares.items)


def sel_k_timing(
    st: SelectStage, work: PqWork, pq: PqDecode, pes_per_channel: list[int], rate: float, port_bits: int
) -> StageTiming:
    """SelK's mean interval (`sel_k_intervals`: it includes PQDist's pace) and tail latency."""
    return StageTiming(
        float(sel_k_intervals(st, work, pq, pes_per_channel, rate, port_bits).mean()),
        float(selector_latency(selector_pe(st))),
    )


def stage_timings(
    ctx: Context, stages: Stages, probes: Probes, back: dict[str, StageTiming] | None = None
) -> dict[str, StageTiming]:
    """Timing of every stage of a design for the measured probes. `back`: this design's PQDist
    and SelK timings when already known (`back_timings`: the DSE shares them between designs)."""
    out = front_timings(ctx, stages) | {"build_lut": lut_timing(ctx, stages.build_lut)}
    return out | (back_timings(ctx, stages.pq_dist, stages.sel_k, probes) if back is None else back)


def front_timings(ctx: Context, stages: Stages) -> dict[str, StageTiming]:
    """The stages in front of BuildLUT (OPQ, IVFDist, SelCells): the same cycles for every query."""
    out = {} if stages.opq is None else {"opq": opq_timing(ctx, stages.opq)}
    out["ivf_dist"] = ivf_timing(ctx, stages.ivf_dist)
    out["sel_cells"] = sel_cells_timing(ctx, stages.sel_cells, stages.ivf_dist)
    return out


def back_timings(ctx: Context, st: PqDistStage, sel_k: SelectStage, probes: Probes) -> dict[str, StageTiming]:
    """The PQDist and SelK timings of a design (SelK's depend on PQDist's work)."""
    pq, work = pq_timing(ctx, st, probes)
    rate = ctx.memory(st.memory).beats_per_cycle
    return {
        "pq_dist": pq,
        "sel_k": sel_k_timing(sel_k, work, pq_pe(ctx, st), st.pes_per_channel(), rate, st.port_bits),
    }
