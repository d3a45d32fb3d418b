"""Design-space exploration: the best IVF-PQ accelerator for a recall goal on a board.

For every index that reaches the goal (at its smallest nprobe, with its measured probes), the
stage options of `fanns.model.ivfpq.options` are enumerated against the board's budget, every
combination is evaluated by `fanns.model.ivfpq.search`, and the best combinations are turned into
complete designs (`DesignPoint`): stage configurations, exact per-stage timing
(`fanns.model.ivfpq.stages.stage_timings`), the PE inventory, resources, the SLR assignment of
`fanns.model.ivfpq.budget` and the memory channel assignment. When nothing fits, `Outcome.explain`
says why (which resource binds and by how much, or that the goal is unreachable). An index larger
than the board's memory, on a board with a host link, is searched beside the others as a
host-memory candidate and ranked by its QPS with prefetch (`run`, `fanns.model.ivfpq.host_mix`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np

from fanns.boards import Board
from fanns.choices import DEFAULT_LLM_MS
from fanns.design.ivfpq import Stages
from fanns.errors import FannsError
from fanns.model.ivfpq import buildable, host_cache, host_mix
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.budget import Budget, SlrFill
from fanns.model.ivfpq.no_fit import no_fit_text, space_label, unreachable_text
from fanns.model.ivfpq.options import CONTEXT_KEY, GROUPS, MAX_LANES, all_options
from fanns.model.ivfpq.points import DesignPoint, Outcome, Slo, annotate_latency
from fanns.model.ivfpq.search import Result, Space, decode, prune, search
from fanns.model.ivfpq.skew import tier_choices
from fanns.model.ivfpq.workload import Workload
from fanns.numerics import ID_BITS
from fanns.pe.pq_decode import KSUB, LUT_WORDS
from fanns.progress import eta_bar
from fanns.resources import KINDS, Resources

MAX_POOL = 1 << 16
MAX_SLO_POOL = 1 << 9
"""With an SLO, the pool of the fastest combinations grows (x8 from 64) to at most this many while
too few meet the SLO; slower combinations are not evaluated (materialising and timing a design
costs ~10 ms, so this bounds an infeasible SLO to seconds)."""
MAX_HOST_SLO_POOL = 64
"""The same bound for host-memory candidates: each SLO check runs the prefetch model (the cache
choice and its latency, `host_cache.annotate`: ~0.1 s a design on 30 sample queries), so the pool
stays at its first size."""


def context(w: Workload, board: Board, clock_mhz: float, dsub_hw: int = 0, lut_words: int = 1) -> stage_model.Context:
    """The stage model's context of workload `w`, its sub-vectors padded to `dsub_hw` (0: none),
    its LUTs loaded `lut_words` words a cycle."""
    return stage_model.Context(
        fmt=dataclasses.replace(w.fmt, dsub_hw=0 if dsub_hw == w.fmt.dsub else dsub_hw),
        n=w.n,
        nlist=w.nlist,
        nprobe=w.nprobe,
        k=w.k,
        opq=w.opq,
        clock_mhz=clock_mhz,
        memories=stage_model.memories(board, clock_mhz),
        family=board.family,
        lut_words=lut_words,
    )


def infra_vector(ctx: stage_model.Context, budget: Budget) -> np.ndarray:
    ch = np.zeros(len(budget.channels))
    ch[0] = 1  # the host I/O channel
    return np.concatenate([stage_model.total_resources(stage_model.infra_units(ctx)).as_array(), ch])


def padded_contexts(w: Workload, board: Board, clock_mhz: float, lut_words: int = 1) -> list[stage_model.Context]:
    """One context per sub-vector padding worth trying (`buildable.padded_dsubs`; unpadded first)."""
    return [context(w, board, clock_mhz, p, lut_words) for p in buildable.padded_dsubs(w.fmt.d, w.fmt.m, MAX_LANES)]


def lut_word_choices(w: Workload, board: Board, clock_mhz: float) -> list[int]:
    """The LUT words a cycle (`PqDistStage.lut_words`) worth a search space of their own for `w`:
    1, and each W for which loading the LUTs at W/2 words a cycle (nprobe * 256 / (W/2) cycles a
    query: every PQDist PE loads every probed cell's LUT) would still take longer than streaming
    the query's codes and ids over all PQ-capable channels of the board's widest memory group at
    full rate, the floor no number of PEs breaks. Why not always all: each choice is a search
    space of its own (the back options, the DSE's largest cost, are enumerated per choice), and
    on large lists (the FANNS paper's SIFT100M: thousands of codes a cell) the loads hide behind
    the scans anyway."""
    rate = max(mem.count * mem.port_bits / 8 * mem.beats_per_cycle for mem in stage_model.memories(board, clock_mhz))
    floor = float(w.codes_per_query().mean()) * (w.m + ID_BITS // 8) / rate
    return [ways for ways in LUT_WORDS if ways == 1 or w.nprobe * KSUB / (ways // 2) > floor]


def build_space(
    key: int, w: Workload, ctx: stage_model.Context, budget: Budget, groups: dict | None = None
) -> tuple[Space, dict]:
    """The search space of one (workload, padding, LUT words); `groups` caches each option group
    per workload and what of the context it depends on (`fanns.model.ivfpq.options.CONTEXT_KEY`:
    the front is enumerated once per padding, not again for every LUT words)."""
    groups = {} if groups is None else groups
    keys = {g: (id(w), g, *CONTEXT_KEY[g](ctx)) for g in GROUPS}
    known = {g: groups[k] for g, k in keys.items() if k in groups}
    sets = all_options(ctx, stage_model.Probes.of(w.probed), w.list_sizes, budget.limits(), known)
    groups.update({k: sets[g] for g, k in keys.items()})
    raw = int(np.prod([max(1, s.raw) for s in sets.values()]))
    counts = {g: {"enumerated": s.raw, "fit": s.fit} for g, s in sets.items()}
    pruned = {g: prune(s) for g, s in sets.items()}
    for g, s in pruned.items():
        counts[g]["kept"] = len(s)
    space = Space(key, pruned, infra_vector(ctx, budget), raw)
    space.floors = {g: s.floor for g, s in sets.items()}
    return space, counts


GROUP_UNITS = {
    "opq": lambda ctx, cfg: stage_model.opq_units(ctx, cfg[0]),
    "front": lambda ctx, cfg: stage_model.ivf_units(ctx, cfg[0]) + stage_model.select_units(ctx, "sel_cells", cfg[1]),
    "lut": lambda ctx, cfg: stage_model.lut_units(ctx, cfg[0]),
    "back": lambda ctx, cfg: stage_model.pq_units(ctx, cfg[0]) + stage_model.select_units(ctx, "sel_k", cfg[1]),
}
"""The units of one option of each group; in `GROUPS` order after the infrastructure they are
`stage_model.design_units` (the order the SLR assignment walks)."""


def materialize(
    space: Space,
    w: Workload,
    ctx: stage_model.Context,
    pick: dict[str, int],
    budget: Budget,
    clock_mhz: float,
    cache: dict | None = None,
) -> DesignPoint | None:
    """The complete design of one combination, or None when it fails the SLR assignment.
    `cache` (one per DSE run, keyed by space) shares what combinations of a space have in
    common: each option's units and its back option's timings, and the SLR fill of the
    infrastructure and the opq, front and lut options, which the back options continue from."""
    cache = {} if cache is None else cache
    cfg = {g: space.sets[g].configs[pick[g]] for g in GROUPS}
    parts = []
    for g in ("infra", *GROUPS):
        key = (space.key, g, pick.get(g))
        if key not in cache:
            cache[key] = stage_model.infra_units(ctx) if g == "infra" else GROUP_UNITS[g](ctx, cfg[g])
        parts.append(cache[key])
    front_key = (space.key, "fill", pick["opq"], pick["front"], pick["lut"])
    if front_key not in cache:
        cache[front_key] = SlrFill.start(budget).place([u for units in parts[:-1] for u in units])
    fill = cache[front_key] if cache[front_key] is None else cache[front_key].place(parts[-1])
    if fill is None:
        return None
    stages = Stages(
        opq=cfg["opq"][0],
        ivf_dist=cfg["front"][0],
        sel_cells=cfg["front"][1],
        build_lut=cfg["lut"][0],
        pq_dist=cfg["back"][0],
        sel_k=cfg["back"][1],
    )
    units = [u for units in parts for u in units]
    probes_key = (space.key, "probes")
    if probes_key not in cache:
        cache[probes_key] = stage_model.Probes.of(w.probed)
    back_key = (space.key, "back timings", pick["back"])
    if back_key not in cache:
        cache[back_key] = stage_model.back_timings(ctx, stages.pq_dist, stages.sel_k, cache[probes_key])
    timings = stage_model.stage_timings(ctx, stages, cache[probes_key], cache[back_key])
    # channels per memory: the back option's PQ channels, the front's streamed and BuildLUT's centroids
    plan_key = (space.key, "channels", pick["back"], stages.ivf_dist.channels, stages.build_lut.channels)
    if plan_key not in cache:
        cache[plan_key] = {}
        for ch in stage_model.memory_plan(ctx, stages):
            cache[plan_key][ch.memory] = cache[plan_key].get(ch.memory, 0) + 1
    return DesignPoint(
        w,
        ctx,
        stages,
        timings,
        units,
        stage_model.total_resources(units),
        dict(cache[plan_key]),
        fill.assignment(),
        clock_mhz,
    )


def _points(
    rows: np.ndarray, spaces, workloads, contexts, budget, clock, cache: dict | None = None
) -> list[DesignPoint]:
    cache = {} if cache is None else cache
    out = []
    for key, left, back in rows[:, :3].astype(np.int64):
        space = spaces[key]
        p = materialize(space, workloads[key], contexts[key], decode(space, left, back), budget, clock, cache)
        if p is not None:
            out.append(p)
    return out


def pareto_points(points: list[DesignPoint]) -> list[DesignPoint]:
    """Designs no other design beats on both QPS and LUT, by increasing LUT."""
    out, best = [], None
    for p in sorted(points, key=DesignPoint.rank_key):
        if best is None or p.resources.lut < best:
            out.append(p)
            best = p.resources.lut
    return sorted(out, key=lambda p: p.resources.lut)


def run(
    workloads: list[Workload],
    board: Board,
    goal: str,
    clock_mhz: float,
    util: float = 0.6,
    top: int = 5,
    unreachable: list[dict] | None = None,
    slo: Slo | None = None,
    load_qps: float | None = None,
    tiers: bool = False,
    padding: bool = True,
    llm_ms: float = DEFAULT_LLM_MS,
) -> Outcome:
    """The DSE of one goal over the given workloads (see the module docstring). With an `slo`,
    the designs are the highest-throughput ones whose tail latency meets it; every kept design
    carries its latency percentiles alone and at `load_qps` (default: the SLO's load). With
    `tiers`, every top design with its lists on the card also gets the memory-tier choice of
    `fanns.model.ivfpq.skew.tier_choices` (hot lists in the UltraRAM the budget leaves or in another
    memory group; `fanns.model.ivfpq.report` writes the best memory-group option as
    design_tiered.yaml, which the RTL generator builds). `padding=False` offers only the unpadded
    sub-vectors (`benchmarks/padding_dse.py` measures what the paddings gain).

    Two kinds of candidate in one exploration (`fanns.model.ivfpq.host_mix`): an index that fits the
    board's memory gets designs with its lists on the card; an index larger than it, on a board
    file with a `host` link, gets designs whose stages are chosen as if it fitted
    (`host_cache.compute_board`) and whose lists stay in host memory with an HBM cache sized for an
    LLM leaving `llm_ms` (`host_cache.choice`, `DesignPoint.host_tier`). Each kind is searched on
    its own (its best `top` designs by the stage and sequence models); then both are ranked
    together by `DesignPoint.rank_key`: a host-memory candidate by its QPS with prefetch, never
    by its in-HBM figures, an ordinary one by its QPS. `Outcome.kind_best` keeps each kind's best."""
    if top < 1:
        raise FannsError(f"--top {top}: must be at least 1")
    if clock_mhz <= 0:
        raise FannsError(f"clock {clock_mhz} MHz must be positive")
    if load_qps is None and slo is not None:
        load_qps = slo.load_qps
    if load_qps is not None and not load_qps > 0:
        raise FannsError(f"load {load_qps} QPS must be positive")
    start = time.perf_counter()
    budget = Budget.from_board(board, util)
    outcome = Outcome(
        goal, board, budget, clock_mhz, workloads, list(unreachable or []), [], [], None, slo=slo, load_qps=load_qps
    )
    if not workloads:
        outcome.explain = unreachable_text(goal, outcome.unreachable)
        return outcome
    card, host = host_mix.split(workloads, board)
    outcome.refused = host_mix.refusals(card, board)
    kinds = [("card", card, board)] if card else []
    if host:  # the options on a board whose channels hold the index, not the budget
        kinds.append(("host", host, host_cache.compute_board(board, host)))
    with eta_bar() as bar:
        found = {
            kind: _search(ws, stage_board, budget, goal, clock_mhz, top, slo, load_qps, padding, bar, kind, annotate)
            for kind, ws, stage_board in kinds
            for annotate in [latency_annotation(kind, board, llm_ms, load_qps)]
        }
    outcome.top = sorted((p for f in found.values() for p in f.top), key=DesignPoint.rank_key)[:top]
    outcome.kind_best = {k: min(f.top, key=DesignPoint.rank_key) for k, f in found.items() if f.top}
    # the Pareto set (QPS vs LUT) of the lists on the card when any fits: a host-memory design's QPS
    # with prefetch is computed for the ranked designs only
    outcome.pareto = next((f.pareto for f in found.values() if f.top), found[kinds[0][0]].pareto)
    outcome.result = merged_result([f.result for f in found.values()])
    outcome.slo_rejected = sum(f.missed for f in found.values())
    for f in found.values():
        outcome.option_counts.update(f.counts)
    if tiers:
        outcome.tiers = {
            i: tier_choices(p, board, budget.total.uram) for i, p in enumerate(outcome.top) if p.host_tier is None
        }
    if not outcome.top:
        outcome.explain = list(dict.fromkeys([*(line for f in found.values() for line in f.explain), *outcome.refused]))
    outcome.seconds = time.perf_counter() - start
    return outcome


@dataclasses.dataclass
class Found:
    """What the search of one kind found (`_search`)."""

    top: list[DesignPoint]
    pareto: list[DesignPoint]
    result: Result
    counts: dict[str, dict]
    missed: int
    explain: list[str]


def merged_result(results: list[Result]) -> Result:
    """One `Result` of the kinds' searches for the outcome's counts (evaluated, bounded, design
    space, seconds); the pools and fronts stacked (their space keys are each search's own)."""
    if len(results) == 1:
        return results[0]
    return Result(
        np.concatenate([r.pool for r in results]),
        np.concatenate([r.front for r in results]),
        sum(r.evaluated for r in results),
        sum(r.raw for r in results),
        sum(r.seconds for r in results),
        next((r.min_overflow for r in results if r.min_overflow is not None), None),
        sum(r.bounded for r in results),
    )


def _search(
    workloads: list[Workload],
    stage_board: Board,
    budget: Budget,
    goal: str,
    clock_mhz: float,
    top: int,
    slo: Slo | None,
    load_qps: float | None,
    padding: bool,
    bar,
    kind: str,
    annotate: Callable[[DesignPoint], DesignPoint],
) -> Found:
    """The search of one kind of candidate: the stage options of `workloads` enumerated on
    `stage_board` against `budget`, the best `top` designs by the stage and sequence models, each
    kept design's latency (and a host-memory candidate's cache) attached by `annotate`
    (`latency_annotation`). A host-memory kind's Pareto set is that of its kept designs (the
    prefetch model runs for those only; its whole front ranked by in-HBM figures would not hold)."""
    pairs = [
        (w, ctx)
        for w in workloads
        for ways in lut_word_choices(w, stage_board, clock_mhz)
        for ctx in (
            padded_contexts(w, stage_board, clock_mhz, ways)
            if padding
            else [context(w, stage_board, clock_mhz, lut_words=ways)]
        )
    ]
    what = f"DSE of {goal} on {budget.board}" + (" (lists in host memory)" if kind == "host" else "")
    # the options (by far the most work), the search, the ranking
    task = bar.add_task(f"{what}: stage options", total=2 * len(pairs) + 1)
    contexts = [ctx for _, ctx in pairs]
    workloads = [w for w, _ in pairs]  # one space per (workload, padding, LUT words): `_points` maps keys back
    spaces, groups, counts = [], {}, {}
    for key, (w, ctx) in enumerate(pairs):
        bar.update(task, description=f"{what}: stage options of {space_label(w, ctx)}")
        space, counts[space_label(w, ctx)] = build_space(key, w, ctx, budget, groups)
        spaces.append(space)
        bar.advance(task)
    bar.update(task, description=f"{what}: search")

    sequences: dict = {}  # `DesignPoint.settle`'s cache
    shared: dict = {}  # `materialize`'s cache
    latencies: dict = {}  # `annotate` per design: a function of the workload, context and stages

    def keep(points: list[DesignPoint], limit: int | None = None) -> tuple[list[DesignPoint], int]:
        """The fastest `limit` points that meet the SLO (latency attached), and how many faster
        ones missed it. With a `limit`, points are settled (`DesignPoint.settle`) in the order
        of their stage-model bound; once `limit` are kept, a point whose bound exceeds the
        slowest kept one's cycles cannot enter (branch and bound: the sequence model runs only
        where it can change the ranking). Without one (the Pareto front, ~100 designs) the
        stage model ranks, except for designs already settled."""
        kept, missed = [], []
        for p in sorted(points, key=DesignPoint.bound_key):
            if limit is not None and len(kept) >= limit and p.stage_cycles > kept[-1].cycles:
                break
            if limit is not None:
                p.settle(sequences)
            if slo is not None and not slo.met(with_latency(p)):
                missed.append(p)
                continue
            kept = sorted(kept + [p], key=DesignPoint.sort_key)[:limit]
        if slo is None:  # the latency ranks nothing: only the kept designs need it
            kept = [with_latency(p) for p in kept]
        return kept, sum(1 for p in missed if not kept or p.sort_key() < kept[-1].sort_key())

    def with_latency(p: DesignPoint) -> DesignPoint:
        design = (id(p.workload), id(p.ctx), repr(p.stages))  # a design met again (a larger pool, the front)
        if design not in latencies:
            annotate(p)
            latencies[design] = (p.latency, p.host_tier)
        p.latency, p.host_tier = dict(latencies[design][0]), latencies[design][1]
        return p

    def stable(rows: np.ndarray) -> np.ndarray:
        # a design slower than the load queues without bound (its tandem is no faster than its stages)
        return rows if load_qps is None else rows[clock_mhz * 1e6 / rows[:, 3] > load_qps]

    def keep_pool(rows: np.ndarray) -> tuple[list[DesignPoint], int, list[DesignPoint]]:
        """`keep(..., top)` over the pool's rows, materialised in their order (by stage bound) only
        as far as `keep` reads them: once `top` are kept, it stops at the first design whose bound
        exceeds the slowest kept one's cycles, and more designs only lower those cycles. Also
        returns the designs materialised (every fitting one when fewer than `top` are kept)."""
        fitting, kept, missed, start, step = [], [], 0, 0, 8 * top
        while start < len(rows):
            if len(kept) >= top and rows[start, 3] > kept[-1].cycles * (1 + 1e-9):
                break
            fitting += _points(rows[start : start + step], spaces, workloads, contexts, budget, clock_mhz, shared)
            kept, missed = keep(fitting, top)
            start, step = start + step, 2 * step
        return kept, missed, fitting

    pool, result = max(8 * top, 64), None
    while True:
        advance = (lambda: bar.advance(task)) if result is None else None  # a refinement is quick
        result = search(spaces, budget.vector(), pool, known=result, on_space=advance)  # larger: front stands
        bar.update(task, description=f"{what}: ranking the best designs")
        rows = stable(result.pool)
        points, missed, fitting = keep_pool(rows)
        # the pool holds every design whose stage bound is below its last row's; a kept design
        # slower than that could be beaten by one outside the pool
        enough = len(points) >= top and points[-1].cycles <= result.pool[-1, 3]
        if enough or len(result.pool) < pool or len(rows) < len(result.pool):
            break
        if pool >= (MAX_POOL if slo is None else MAX_HOST_SLO_POOL if kind == "host" else MAX_SLO_POOL):
            break
        pool *= 8
    front = []
    if kind == "card":
        front = keep(_points(stable(result.front), spaces, workloads, contexts, budget, clock_mhz, shared))[0]
    explain = []
    if not points:
        if fitting and slo is not None:
            explain = _slo_text(slo, fitting)
        elif len(result.pool) and load_qps is not None:
            fastest = clock_mhz * 1e6 / result.pool[0, 3]
            explain = [
                f"the load {load_qps:,.0f} QPS exceeds the throughput of "
                f"every design that fits (the fastest: {fastest:,.0f} QPS)",
                "lower --load, or choose a lower recall goal or a larger board",
            ]
        else:
            explain = no_fit_text(spaces, workloads, contexts, budget, result)
    bar.update(task, completed=2 * len(pairs) + 1)
    return Found(points, pareto_points(front + points), result, counts, missed, explain)


def latency_annotation(
    kind: str, board: Board, llm_ms: float, load_qps: float | None
) -> Callable[[DesignPoint], DesignPoint]:
    """How a kept design of `kind` gets its latency profiles alone and at `load_qps`: a design with
    its lists on the card from the latency model (`annotate_latency`); a host-memory candidate
    from its cache for an LLM leaving `llm_ms` on `board` (`host_cache.annotate`)."""
    if kind == "host":
        return lambda p: host_cache.annotate(p, board, llm_ms, load_qps)
    return lambda p: annotate_latency(p, load_qps)


def _slo_text(slo: Slo, fitting: list[DesignPoint]) -> list[str]:
    closest = min(fitting, key=lambda p: (slo.observed(p), p.sort_key()))
    got = slo.observed(closest)
    seen = f"{got:,.1f} us" if np.isfinite(got) else "unbounded (the load exceeds every design's throughput)"
    return [
        f"none of the {len(fitting)} fastest fitting design(s) meets the SLO {slo.text()}",
        f"the lowest P{slo.percentile} found: {seen} ({closest.workload.label()}, {closest.rank_qps:,.0f} QPS)",
        "relax the SLO, lower the load, or choose a lower recall goal (fewer probes per query)",
    ]


def kinds_dict(r: Resources) -> dict[str, float]:
    return {k: round(v, 1) for k, v in zip(KINDS, r.as_tuple())}
