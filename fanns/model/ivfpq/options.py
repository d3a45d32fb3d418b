"""Every valid implementation of each IVF-PQ stage for one workload, as arrays for the search.

Stages that share a parameter are enumerated together, so each group is independent of the
others and a design is one option per group:

* `opq`   — the OPQ PE's lanes and matrix memory (BRAM, or URAM where BRAM cannot hold it; or
  nothing, for an index without OPQ);
* `front` — IVFDist (PE count, lanes, centroid storage) with SelCells (architecture over
  z = IVFDist PEs streams, s = nprobe);
* `lut`   — BuildLUT (PE count, lanes, where the probed centroids come from);
* `back`  — PQDist (PE count, memory group and channel count, LUT double buffering) with SelK
  (architecture over z = PQDist PEs streams, s = K).

Each option carries the stage configurations the generators consume, its mean cycles per query
per stage, its latency, its resources (from `fanns.model.ivfpq.stages`'s unit inventories, i.e. the PE
library) and the memory channels it occupies per board memory group. Options that are provably
no better than another option of the same group are never generated: a PE count whose slowest
PE does the same work as a smaller count (IVFDist, BuildLUT), and a channel count whose busiest
channel serves as many PEs as a smaller count (PQDist). Options that cannot be placed at all —
over the budget on their own, or with one instance (a PE, a memory block, a reader) larger than
every SLR's room — are left out too.

Only configurations both generators build are enumerated (`fanns.model.ivfpq.buildable`): the
lane counts that fit the shape and the I/O port, the memory groups whose port carries the PQ
codes. Lanes must also be multiples of one another across the opq, front and lut groups, so each
option carries its lane count (`OptionSet.lanes`) and the search combines compatible ones only.
A group with no configuration at all says why (`OptionSet.empty_reason`), which "no design
fits" reports instead of blaming resources.
"""

from __future__ import annotations

import numpy as np

from fanns.design.ivfpq import BuildLutStage, IvfDistStage, OpqStage, PqDistStage
from fanns.design.ivfpq_selectors import selectors_for
from fanns.errors import FannsError
from fanns.model.ivfpq import buildable
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.option_set import Builder, Limits, OptionSet
from fanns.resources import Resources

MAX_PES = 1024
"""Upper bound on the PE count of one stage (beyond any board's resources for these PEs)."""
GROUPS = ("opq", "front", "lut", "back")
MAX_LANES = 64
"""Widest lane count offered where a narrower useful one exists: the widest the DSE has always
offered, within the span the PE calibrations measured (ivf_dist to 32); wider PEs are priced by
extrapolation and crowd the search's pool. BuildLUT and OPQ: `WIDE_LUT_LANES`, `WIDE_OPQ_LANES`."""
WIDE_LUT_LANES = 2 * MAX_LANES
"""BuildLUT is offered up to this many lanes (its calibration measured 128): more BuildLUT PEs pay
only up to nprobe (one probed cell each), and from 512-d on its codebook copies in block RAM
(256 x d each) bound the PE count too, so wider PEs are what makes the stage faster. Measured:
a synthetic 20k x 384 set at nprobe 2 on u55c, 64 -> 96 lanes lift the design from 146k to 292k
QPS; the sift-10k DSE takes as long as with 64 (13 CPU-s)."""
WIDE_OPQ_LANES = 4 * MAX_LANES
"""OPQ is offered up to this many lanes (its calibration measured 256): a design has one OPQ PE,
which rotates each query once in (d + 1) * d / lanes cycles, so only wider lanes make the stage
faster, and from 384-d on a 64-lane OPQ alone caps a design near 130k QPS at 300 MHz."""
MIN_USEFUL_LANES = 4


def _valid(make, *args) -> object | None:
    """`make(*args)`, or None when it refuses the parameters (raises FannsError)."""
    try:
        return make(*args)
    except FannsError:
        return None


def distinct_counts(work: int, limit: int) -> list[int]:
    """The smallest P for every distinct ceil(work / P), P in 1..limit."""
    out, last = [], None
    for p in range(1, max(1, min(limit, work)) + 1):
        c = -(-work // p)
        if c != last:
            out.append(p)
            last = c
    return out


def _grows_past(res: Resources, budget: Resources) -> bool:
    """Logic (LUT, FF, DSP) grows with a stage's PE count: past the budget, larger counts are too."""
    return res.lut > budget.lut or res.ff > budget.ff or res.dsp > budget.dsp


def _selections(
    ctx: stage_model.Context, stage: str, z: int, s: int, key_bits: int, limits: Limits, grown: set
) -> list:
    """(stage config, units, resources) of every selection architecture valid for z streams and s
    results. Selection PEs grow with z: an architecture past the budget at some z is not tried
    at larger z (`grown` remembers it)."""
    out = []
    for arch, params in selectors_for(stage):
        key = (arch, tuple(sorted(params.items())))
        if key in grown:
            continue
        sel = _valid(stage_model.select_stage, arch, z, s, key_bits, params)
        if sel is None:
            continue
        units = stage_model.select_units(ctx, stage, sel)
        res = stage_model.total_resources(units)
        if _grows_past(res, limits.total):
            grown.add(key)
            continue
        out.append((sel, units, res))
    return out


_ONE_PE = {
    "opq": lambda ctx, w: stage_model.opq_units(ctx, OpqStage(w)),
    "ivf_dist": lambda ctx, w: stage_model.ivf_units(ctx, IvfDistStage(1, w, "bram")),
    "build_lut": lambda ctx, w: stage_model.lut_units(ctx, BuildLutStage(ctx.lut_words, w, "bram")),
}
"""One PE of a lane-carrying stage with its FIFOs: the PE library refuses lanes too wide for them."""


def stage_lanes(ctx: stage_model.Context, stage: str) -> tuple[list[int], str]:
    """The lane counts of `stage` both generators build for this workload and board, and whose
    PE and FIFOs the PE library accepts; when there are none, why."""
    lanes = buildable.stage_lanes(stage, ctx.d, ctx.m, ctx.fmt.vec_bits, ctx.memories[0].port_bits)
    if not lanes:
        rule = buildable.lanes_rule(stage, ctx.d, ctx.m, ctx.fmt.vec_bits, ctx.memories[0].port_bits)
        return [], f"no {stage} lane count fits d={ctx.d}, m={ctx.m}: {rule}"
    try:  # one lane: an error here is not the lanes' (m too large for a FIFO, no calibration table)
        _ONE_PE[stage](ctx, lanes[0])
    except FannsError as exc:
        return [], f"{stage} with {lanes[0]} lane(s): {exc}"
    limit = {"opq": WIDE_OPQ_LANES, "build_lut": WIDE_LUT_LANES}.get(stage, MAX_LANES)
    return [w for w in offered_lanes(lanes, limit) if _valid(_ONE_PE[stage], ctx, w) is not None], ""


def offered_lanes(lanes: list[int], limit: int = MAX_LANES) -> list[int]:
    """Of the buildable lane counts (ascending), those up to `limit`, and beyond it the
    smallest one when none from `MIN_USEFUL_LANES` to `limit` is buildable (d = 96 with
    sub-vectors of 6 on a 512-bit port builds 1, 2 or 96 lanes unpadded: 96 is offered)."""
    out = [w for w in lanes if w <= limit]
    if not any(w >= MIN_USEFUL_LANES for w in out):
        out += [w for w in lanes if w > limit][:1]
    return out


def opq_options(ctx: stage_model.Context, limits: Limits) -> OptionSet:
    b = Builder("opq", ("opq",), limits)
    if not ctx.opq:
        b.offer((None,), [0.0], 0.0, Resources(), {}, {})
        return b.build()
    choices, why = stage_lanes(ctx, "opq")
    if why:
        b.reasons.append(why)
    for lanes in choices:
        # the matrix in UltraRAM only where block RAM cannot hold it (the PE fits no SLR's, or the
        # whole budget's, block RAM): a small matrix's URAM twin has the same speed and would
        # crowd the search's pool with designs that pack URAM into SLRs less easily; streamed
        # (read again for every query, on a channel of its own) only where neither can hold it
        for storage in buildable.on_family(buildable.BUILT_OPQ_STORES, ctx.family):
            st = OpqStage(lanes, storage)
            b.raw += 1
            if _valid(stage_model.opq_pe, ctx, st) is None:
                continue
            t = stage_model.opq_timing(ctx, st)
            units = stage_model.opq_units(ctx, st)
            res = stage_model.total_resources(units)
            if b.offer((st,), [t.interval], t.latency, res, {0: st.channels}, t.detail, limits.instances_fit(units)):
                break
    return b.build()


def front_options(ctx: stage_model.Context, limits: Limits) -> OptionSet:
    b = Builder("front", ("ivf_dist", "sel_cells"), limits)
    selectors = selectors_for("sel_cells")
    choices, why = stage_lanes(ctx, "ivf_dist")
    if why:
        b.reasons.append(why)
    for storage in buildable.on_family(buildable.BUILT_IVF_STORAGES, ctx.family):
        for lanes in choices:
            if _valid(stage_model.ivf_pe, ctx, IvfDistStage(1, lanes, "bram"), 1) is None:
                continue
            b.raw += min(ctx.nlist, MAX_PES) * len(selectors)
            grown: set = set()
            for pes in distinct_counts(ctx.nlist, MAX_PES):
                n_ch = stage_model.ivf_stream_channels(ctx, pes, lanes)[0] if storage == "stream" else 0
                st = IvfDistStage(pes, lanes, storage, n_ch)
                ivf_units = stage_model.ivf_units(ctx, st)
                ivf_res = stage_model.total_resources(ivf_units)
                if _grows_past(ivf_res, limits.total):
                    b.offer((st, None), [0.0, 0.0], 0.0, ivf_res, {0: n_ch}, {}, False)
                    break
                ivf_t = stage_model.ivf_timing(ctx, st)
                for sel, sel_units, sel_res in _selections(
                    ctx, "sel_cells", pes, ctx.nprobe, ctx.fmt.ivf_key_bits, limits, grown
                ):
                    sel_t = stage_model.sel_cells_timing(ctx, sel, st)
                    b.offer(
                        (st, sel),
                        [ivf_t.interval, sel_t.interval],
                        ivf_t.latency + sel_t.latency,
                        ivf_res + sel_res,
                        {0: n_ch},
                        {},
                        limits.instances_fit(ivf_units + sel_units),
                    )
    return b.build()


URAM_CODEBOOK_SHARE = 0.02
"""The DSE offers a BuildLUT PE's codebook in UltraRAM (beside block RAM) only where, in block
RAM, it would take more than this share of the block RAM budget (8-bit elements: from 384-d on
a U55C, from 64-d on a ZCU104): there the codebooks compete for block RAM and bound the PE
count (1024-d: U55C 243k -> 390k QPS predicted, and the ZCU104 gets a design at all). Why not
everywhere: every store offered multiplies the DSE's search (on a 128-d U55C workload both
stores doubled the BuildLUT options and the DSE's time, for a 0.02 % gain), and a small codebook
(128-d: 256 Kbit) wastes most of its UltraRAMs (one 4K x 72 shape) where block RAM's 18 Kbit
tiles fit it closely."""


def lut_options(ctx: stage_model.Context, limits: Limits) -> OptionSet:
    b = Builder("lut", ("build_lut",), limits)
    choices, why = stage_lanes(ctx, "build_lut")
    if why:
        b.reasons.append(why)
    codebooks = buildable.on_family(buildable.BUILT_LUT_CODEBOOKS, ctx.family)
    for store in buildable.on_family(buildable.BUILT_LUT_STORES, ctx.family):
        for lanes in choices:
            n_ch = 1 if store == "memory" else 0
            pe = _valid(stage_model.lut_pe, ctx, BuildLutStage(1, lanes, store, n_ch))
            if pe is None:
                continue
            # nprobe / G LUTs a query for G groups of lut_words PEs, so every G is another interval,
            # down to the PQDist PEs' own pace: they load each probe's LUT in 256 / lut_words
            # cycles, so past ceil(ii / that) groups BuildLUT builds LUTs faster than any back end
            # takes them (and the DSE's search grows with G)
            ways = ctx.lut_words
            most = min(MAX_PES // ways, -(-pe.ii() // (stage_model.KSUB // ways)))
            compete = pe.features()["bram18_tiles"] > URAM_CODEBOOK_SHARE * limits.total.bram18
            for codebook in codebooks if compete else ("bram",):
                b.raw += most
                for groups in range(1, most + 1):
                    st = BuildLutStage(groups * ways, lanes, store, n_ch, codebook)
                    units = stage_model.lut_units(ctx, st)
                    res = stage_model.total_resources(units)
                    t = stage_model.lut_timing(ctx, st)
                    b.offer((st,), [t.interval], t.latency, res, {0: n_ch}, t.detail, limits.instances_fit(units))
                    if not res.fits(limits.total):  # every resource of this stage grows with P
                        break
    return b.build()


WIDE_LUT_PES_PER_CHANNEL = 2
"""With more than one LUT word a cycle, the DSE puts at most this many PQDist PEs on a channel.
Why: the model times a channel's feeder per cell by its beats, which holds while a PE's 256-cycle
LUT load hides the feeder's per-cell work; with loads of 256 / W cycles and shares of a few
dozen codes it does not: pinned W = 8 designs (nprobe 10, ~16 codes a PE a cell) measured
+11.5 % against the model with 3 PEs a channel and +21.6 % with 6, and 0.0 % with 1 or 2
(the design fuzz's draws agree). Traced, the cause is the channel's feeder (one beat a cycle,
round robin, running ahead of the PEs only by their item FIFOs, where the model gives the reader's
256-word FIFO) and the reader's window of outstanding bursts over short cells
(docs/ivfpq_architecture.md); until the model has both, only the verified shapes are offered."""


def _dominated_pairs(b: Builder, pairs: list[tuple], work, pe, rate: float, group: int) -> set[int]:
    """The (PQDist stage, PQDist timing, SelK stage, resources, kept) `pairs` of one PE count that
    are kept but need no timing: even at SelK's floor (`stage_model.sel_k_floors_many`) an option
    kept before is no worse in every respect (`Builder.dominated`)."""
    kept = [i for i, (*_, ok) in enumerate(pairs) if ok]
    if not kept:
        return set()
    floors = stage_model.sel_k_floors_many([(pairs[i][2], pairs[i][0].pes_per_channel()) for i in kept], work, pe, rate)
    rows = np.array(
        [
            b.cost_row(max(pairs[i][1][0], floor), pairs[i][3], {group: pairs[i][0].channels})
            for i, floor in zip(kept, floors)
        ]
    )
    return {i for i, dominated in zip(kept, b.dominated(rows)) if dominated}


def back_options(
    ctx: stage_model.Context,
    probes: stage_model.Probes,
    list_sizes: np.ndarray,
    limits: Limits,
    skip_dominated: bool = True,
) -> OptionSet:
    """PQDist x SelK options from the measured probes and all list sizes.

    Each option's resources are its `pq_units` (readers, FIFOs, feeders per channel: the feeders
    depend on how the PEs split over the channels); `tests/model/test_dse.py` checks them.
    Options are timed PE count by PE count, fewest first; an option that even at SelK's floor
    is no better than one already kept is left out untimed (`_dominated_pairs`: the Pareto pruning
    would drop it), unless `skip_dominated` is False (every option timed: the same pruned group,
    `tests/model/test_dse_speed.py`)."""
    b = Builder("back", ("pq_dist", "sel_k"), limits)
    for g, mem in enumerate(ctx.memories):
        free = mem.count - (1 if g == 0 else 0)  # the host I/O channel lives in group 0
        try:  # one PE: the PE library refuses m too large for its FIFOs (codes of any width fit a port)
            stage_model.pq_units(ctx, PqDistStage(1, True, mem.kind, 1, mem.port_bits, lut_words=ctx.lut_words))
        except FannsError as exc:
            b.reasons.append(f"{mem.kind}: pq_dist with m={ctx.m}: {exc.args[0]}: use a smaller m")
            continue
        packing = stage_model.Packing(ctx.m, mem.port_bits)
        grown, grown_sel = set(), set()
        for pes in range(1, MAX_PES + 1):
            base = {}
            for db in (True, False):
                if db in grown:
                    continue
                st = PqDistStage(pes, db, mem.kind, 1, mem.port_bits, lut_words=ctx.lut_words)
                units = stage_model.pq_units(ctx, st)
                res = stage_model.total_resources(units)
                if not res.fits(limits.total):  # every resource of this stage grows with P
                    b.offer((st, None), [0.0, 0.0], 0.0, res, {g: 1}, {}, False)
                    grown.add(db)
                    continue
                base[db] = (res, limits.instances_fit(units), stage_model.pq_pe(ctx, st))
            if not base:
                break
            shares = stage_model.pq_shares(ctx.m, probes, pes, mem.port_bits)
            share_beats = int(packing.beats(list_sizes, pes).sum())
            sels = [
                (sel, sel_res, limits.instances_fit(sel_units))
                for sel, sel_units, sel_res in _selections(
                    ctx, "sel_k", pes, ctx.k, ctx.fmt.pq_key_bits, limits, grown_sel
                )
            ]
            for db, (_, placeable, pe) in base.items():
                work = stage_model.pq_work(shares, pe)
                b.raw += min(pes, free) * len(sels)
                stages, last_busiest = [], None
                for n_ch in range(1, min(pes, free) + 1):
                    busiest = -(-pes // n_ch)
                    if busiest == last_busiest or (ctx.lut_words > 1 and busiest > WIDE_LUT_PES_PER_CHANNEL):
                        continue
                    last_busiest = busiest
                    if (
                        stage_model.pq_channel_bytes(ctx.nlist, share_beats, busiest, mem.port_bits)
                        > mem.capacity_bytes
                    ):
                        continue
                    stages.append(PqDistStage(pes, db, mem.kind, n_ch, mem.port_bits, lut_words=ctx.lut_words))
                if not stages or not sels:
                    continue
                # (stage, selection) pairs in offering order; only those `offer` keeps are timed
                pairs = []
                for st in stages:
                    pq_res = stage_model.total_resources(stage_model.pq_units(ctx, st))
                    timing = stage_model.pq_timing_from_work(work, max(st.pes_per_channel()), mem.beats_per_cycle)
                    for sel, sel_res, sel_fit in sels:
                        res = pq_res + sel_res
                        kept = placeable and sel_fit and b.admits(res, {g: st.channels})
                        pairs.append((st, timing, sel, res, kept))
                skip = _dominated_pairs(b, pairs, work, pe, mem.beats_per_cycle, g) if skip_dominated else set()
                timed = [(p[2], p[0].pes_per_channel()) for i, p in enumerate(pairs) if p[4] and i not in skip]
                # SelK's intervals depend on the channel grouping: one vectorised recurrence for all
                sel_cycles = iter(
                    stage_model.sel_k_intervals_many(timed, work, pe, mem.beats_per_cycle, mem.port_bits).mean(1)
                    if timed
                    else []
                )
                for i, (st, (interval, latency, compute, memory), sel, res, kept) in enumerate(pairs):
                    if i in skip:
                        b.skip(res, {g: st.channels})
                        continue
                    b.offer(
                        (st, sel),
                        [interval, float(next(sel_cycles)) if kept else 0.0],
                        latency + stage_model.selector_latency(stage_model.selector_pe(sel)),
                        res,
                        {g: st.channels},
                        {"compute_cycles": compute, "memory_cycles": memory},
                        kept,
                    )
    return b.build()


def all_options(
    ctx: stage_model.Context,
    probes: stage_model.Probes,
    list_sizes: np.ndarray,
    limits: Limits,
    known: dict[str, OptionSet] | None = None,
    skip_dominated: bool = True,
) -> dict[str, OptionSet]:
    """The four option groups of one workload, each restricted to options within `limits`.
    `known`: groups already enumerated for this workload in another context they do not depend
    on (`CONTEXT_KEY`). `skip_dominated=False` keeps the back options the Pareto pruning would
    drop (`back_options`): every buildable option, as the design fuzz's corners need."""
    known = known or {}
    make = {
        "opq": lambda: opq_options(ctx, limits),
        "front": lambda: front_options(ctx, limits),
        "lut": lambda: lut_options(ctx, limits),
        "back": lambda: back_options(ctx, probes, list_sizes, limits, skip_dominated=skip_dominated),
    }
    return {g: known[g] if g in known else make[g]() for g in GROUPS}


CONTEXT_KEY = {
    "opq": lambda ctx: (ctx.fmt.dsub_hw,),
    "front": lambda ctx: (ctx.fmt.dsub_hw,),
    "lut": lambda ctx: (ctx.fmt.dsub_hw, ctx.lut_words),
    "back": lambda ctx: (ctx.lut_words,),
}
"""What of a workload's context (beside the workload) each group's options depend on: the padding
of the sub-vectors (`IvfPqFormat.dsub_hw`) reaches the lane-carrying groups, the LUT words a cycle
(`Context.lut_words`) BuildLUT's rows and PQDist's loads; the DSE enumerates each group once per
key (`fanns.model.ivfpq.dse.build_space`)."""
