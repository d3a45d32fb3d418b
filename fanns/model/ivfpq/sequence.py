"""Cycles per query of a whole IVF-PQ design over a sequence of queries, with its finite buffers.

Why: the stage model (`fanns.model.ivfpq.stages.stage_timings`) prices each stage by its mean interval
and takes the largest, as if unbounded buffers sat between the stages. Between BuildLUT and
PQDist there are only a few LUTs of buffer (each BuildLUT PE's FIFO of two LUTs, the PQDist PEs'
two banks), so when BuildLUT's constant interval and the back end's per-query interval (which
follows the probed cells' sizes) are close, a query that is quick at the back end cannot bank
the time for the next slow one: BuildLUT stalls on its full FIFO, and the accelerator runs
slower than either stage alone. Measured in RTL on IVF16,PQ16 nprobe 1 (one BuildLUT PE at 514
cycles a LUT; PQDist + SelK 294-901 cycles a query, mean 514): 555.3 cycles per query over 20
queries where the stage model said 514.3.

`sequence_starts` runs the coupled PQDist-SelK recurrence (`fanns.model.ivfpq.selk`) over the
queries in their order with BuildLUT as the LUTs' producer (`LutSource`: its PEs, interval,
FIFOs), so both effects — the coupling of PQDist and SelK and the bounded buffer in front of
them — are in one recurrence. Two uses:

* `run_interval`: the cycles per query of one run of given queries, as the accelerator's cycle
  registers measure it (`fanns.sim.ivfpq.rtl.measured_interval`: first to last completion);
  what the RTL simulations are compared with.
* `steady_interval`: the long-run cycles per query, over about `STEADY_CELLS` probes of sample
  queries drawn with replacement (seeded), in independent sequences run side by side (one
  vectorised recurrence); what the DSE ranks designs by, never below the stage model.

The stages in front of BuildLUT (OPQ, IVFDist, SelCells) take the same cycles for every query
and the PQ channels have deep buffers (FIFOs, outstanding bursts), so they enter as floors
(`floors`): their mean cycles per query. The front's pace also spaces the probes' arrival at
BuildLUT (`LutSource.arrival`): with more BuildLUT PEs than a query has probes, the first LUTs of
a run start one front interval apart, not at once, and a short run's span holds that spacing.
Measured in RTL on a DSE-chosen ZCU104 design (512-d, nlist 512, nprobe 1, K = 1; IVFDist 520
cycles a query, 6 BuildLUT PEs of 4,112 cycles a LUT; tests/flow/test_design_fuzz.py): 652.3
cycles per query over 16 queries, where the model without the arrivals said 599.5 (+8.81 %).
"""

from __future__ import annotations

import numpy as np

from fanns.design.ivfpq import Stages
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.selk import LutSource, channel_groups
from fanns.model.ivfpq.selk import sequence_starts as _starts

STEADY_CELLS = 2048
"""Probes (cells) simulated for `steady_interval` (`steady_shape`); ~40 us of model time each."""
STEADY_QUERIES = (16, 128)
"""Queries per sequence of `steady_interval`: at most 128 (further sequences run side by side),
at least 16 (a long run of few queries when they probe many cells)."""
WARMUP = 0.1
"""Fraction of `steady_interval`'s sequence discarded at its start (the empty pipeline)."""


def lut_source(ctx: stage_model.Context, stages: Stages) -> LutSource:
    """The BuildLUT stage as the LUTs' producer: PEs, interval and latency of one LUT (with the
    centroid fetch when the centroids are in memory), each group of PEs (`Context.lut_groups`) as
    one producer of whole LUTs, FIFOs of two LUTs (`lut_fifo_depth`), and the pace at which the
    stages in front deliver the queries' probes."""
    st = stages.build_lut
    pe = stage_model.lut_pe(ctx, st)
    extra = stage_model.MEM_LATENCY_CYCLES if st.centroids == "memory" else 0
    return LutSource(
        ctx.lut_groups(st),
        float(pe.ii()),
        float(pe.latency() + extra),
        stage_model.lut_fifo_depth(ctx.lut_words) // pe.rows,
        front_interval(ctx, stages),
    )


def front_interval(ctx: stage_model.Context, stages: Stages) -> float:
    """The cycles per query of the stages in front of BuildLUT (OPQ, IVFDist, SelCells: the same
    for every query): their largest interval, the pace at which they deliver the queries' probes."""
    return max(t.interval for t in stage_model.front_timings(ctx, stages).values())


def sequence_starts(
    ctx: stage_model.Context,
    stages: Stages,
    probes: stage_model.Probes,
    order: np.ndarray,
    busy: np.ndarray | None = None,
) -> np.ndarray:
    """[len(order)] the cycle SelK starts the level-2 collection of each query of `order`
    (indices into the probes' queries) submitted back to back; `busy` [nq] as in
    `fanns.model.ivfpq.stages.pq_feed_cycles` (codes from elsewhere than the design's PQ channels)."""
    st = stages.pq_dist
    pe = stage_model.pq_pe(ctx, st)
    work = stage_model.pq_work(stage_model.pq_shares(ctx.m, probes, st.pes, st.port_bits), pe)
    ppc = st.pes_per_channel()
    rate = ctx.memory(st.memory).beats_per_cycle
    return _starts(
        stage_model.selector_pe(stages.sel_k),
        pe,
        work.shares.items,
        channel_groups(ppc),
        stage_model.pq_channel_feed(work, pe, max(ppc), rate, st.port_bits, busy),
        stage_model.selk_buffers(pe),
        lut_source(ctx, stages),
        np.asarray(order, dtype=np.int64),
    )


def floors(
    ctx: stage_model.Context,
    stages: Stages,
    probes: stage_model.Probes,
    busy: np.ndarray | None = None,
) -> float:
    """The least cycles per query of a run outside the recurrence: the stages in front of
    BuildLUT (`front_interval`) and the PQ channels (the busiest one's
    mean cycles per query; its deep buffers let the recurrence take it only per query), over the
    queries after the first, which the measured span covers. PQDist's compute is no floor: the
    recurrence runs its PEs cell by cell, and a short run's span may hold less than the queries'
    whole scans (the first query's long last cell overlaps the next query's LUT loads)."""
    st = stages.pq_dist
    if busy is None:
        beats = stage_model.pq_shares(ctx.m, probes, st.pes, st.port_bits).beats
        busy = stage_model.channel_cycles(beats, max(st.pes_per_channel()), ctx.memory(st.memory).beats_per_cycle)
    return max(front_interval(ctx, stages), float(np.mean(busy[1:])))


def run_interval(
    ctx: stage_model.Context,
    stages: Stages,
    probes: stage_model.Probes,
    busy: np.ndarray | None = None,
) -> float:
    """Cycles per query of the probes' queries run once in their order: the span between the
    first and the last query's level-2 start over the queries in between (the measure of
    `fanns.sim.ivfpq.rtl.measured_interval`), or a floor (`floors`) if larger."""
    nq = probes.sizes.shape[0]
    if nq < 2:
        raise ValueError("a run interval needs at least two queries")
    starts = sequence_starts(ctx, stages, probes, np.arange(nq), busy)
    return max(float(starts[-1] - starts[0]) / (nq - 1), floors(ctx, stages, probes, busy))


def steady_interval(
    ctx: stage_model.Context,
    stages: Stages,
    probes: stage_model.Probes,
    timings: dict[str, stage_model.StageTiming] | None = None,
    seed: int = 0,
    sequence: float | None = None,
) -> float:
    """Long-run cycles per query for queries like the sample: `steady_sequence`, or a stage's
    mean interval (`stage_timings`) if larger: the stage model is a lower bound (every stage does
    all its work), which the DSE's search relies on. `sequence`: `steady_sequence` of these
    BuildLUT, PQDist and SelK stages when already known (it depends on no other stage)."""
    t = timings or stage_model.stage_timings(ctx, stages, probes)
    seq = steady_sequence(ctx, stages, probes, seed) if sequence is None else sequence
    return max([seq] + [s.interval for s in t.values()])


def steady_sequence(ctx: stage_model.Context, stages: Stages, probes: stage_model.Probes, seed: int = 0) -> float:
    """The sequence model's long-run cycles per query: `steady_shape` independent sequences of
    sample queries drawn with replacement (seeded), each its mean interval after its warm-up;
    their mean."""
    nq, nprobe = probes.sizes.shape
    queries, lanes = steady_shape(nprobe)
    order = np.random.default_rng(seed).integers(0, nq, (queries, lanes))
    starts = sequence_starts(ctx, stages, probes, order)
    first = int(WARMUP * queries)
    return float((starts[-1] - starts[first]).mean()) / (queries - 1 - first)


def steady_shape(nprobe: int) -> tuple[int, int]:
    """(queries per sequence, sequences) of `steady_interval`: about `STEADY_CELLS` probes in
    sequences of `STEADY_QUERIES` queries (fewer, down to its lower end, when many probes)."""
    lo, hi = STEADY_QUERIES
    queries = min(hi, max(lo, STEADY_CELLS // nprobe))
    return queries, max(1, STEADY_CELLS // (queries * nprobe))
