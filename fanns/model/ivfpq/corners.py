"""The corners of the IVF-PQ option space: for one workload on one board, the design that takes
one stage option to its extreme (the most PEs, the most selection streams of each architecture,
the widest lanes, the most memory channels, W = 8 LUT words a cycle) and the cheapest options of
the other groups beside it.

Why: the DSE picks the fastest design, so the designs it emits for a few sample workloads are a
narrow slice of what it may emit; a structure that breaks only at the largest PE count it offers
(a 256-PE IVFDist array once ended the Verilog emission in a RecursionError) is found only by
building that count. The design fuzz (`fanns.flow.design_fuzz`) generates and simulates these.

A corner's extreme option comes from the option groups exactly as the DSE enumerates them
(`fanns.model.ivfpq.options.all_options`, within the budget, before pruning): what the DSE could
combine. When the extreme option plus the cheapest compatible others does not fit the budget or
its SLRs, the next option towards the middle is tried, so a corner is the most extreme design
that fits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fanns.boards import Board
from fanns.design.ivfpq_selectors import selectors_for
from fanns.model.ivfpq import dse
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.budget import Budget
from fanns.model.ivfpq.options import GROUPS, OptionSet, all_options
from fanns.model.ivfpq.search import Space, compatible
from fanns.model.ivfpq.workload import Workload
from fanns.pe.pq_decode import LUT_WORDS

LANE_GROUPS = ("opq", "front", "lut")
"""Groups whose lanes must be multiples of one another (`fanns.model.ivfpq.search.compatible`)."""
TRIES = 64
"""Options tried per corner, from the extreme towards the middle, before the corner is given up."""


@dataclass(frozen=True)
class Corner:
    """One corner: in `group`, among the options `admits` accepts, the one with the largest
    `extent`; `lut_words` the LUT words a cycle of its context."""

    group: str
    extent: Callable[[tuple], float]
    admits: Callable[[tuple], bool] = lambda cfg: True
    lut_words: int = 1


def _selector(arch: str) -> Callable[[tuple], bool]:
    return lambda cfg: cfg[1] is not None and cfg[1].arch == arch


def _selection_corners() -> dict[str, Corner]:
    """Every selection architecture of both selection stages at its most and its fewest streams
    (IVFDist PEs for SelCells, PQDist PEs for SelK)."""
    out = {}
    for stage, group, short in (("sel_cells", "front", "ivf"), ("sel_k", "back", "pq")):
        for arch, _ in selectors_for(stage):
            out[f"{short}-pes-{arch}-most"] = Corner(group, lambda c: c[0].pes, _selector(arch))
            out[f"{short}-pes-{arch}-fewest"] = Corner(group, lambda c: -c[0].pes, _selector(arch))
    return out


CORNERS: dict[str, Corner] = {
    **_selection_corners(),
    "ivf-lanes": Corner("front", lambda c: (c[0].lanes, c[0].pes)),
    "lut-pes": Corner("lut", lambda c: c[0].pes),
    "lut-lanes": Corner("lut", lambda c: (c[0].lanes, c[0].pes)),
    "pq-channels": Corner("back", lambda c: (c[0].channels, c[0].pes)),
    "lut-words-8-channels": Corner("back", lambda c: (c[0].channels, c[0].pes), lut_words=max(LUT_WORDS)),
    "opq-lanes": Corner("opq", lambda c: 0 if c[0] is None else c[0].lanes),
}
"""The corners the design fuzz draws, by name."""


def _usage(sets: dict[str, OptionSet], budget: np.ndarray) -> dict[str, np.ndarray]:
    """Per group, each option's largest share of any budget line (its resources and channels)."""
    room = np.where(budget > 0, budget, np.inf)
    return {g: (np.column_stack([s.res, s.channels]) / room).max(1) for g, s in sets.items()}


def _cheapest(sets: dict[str, OptionSet], usage: dict, fixed: dict[str, int]) -> dict[str, int] | None:
    """`fixed` completed with the option of least budget share of every other group, lanes
    compatible with the lane-carrying options already chosen; None when a group has none."""
    pick = dict(fixed)
    for g in sorted(GROUPS, key=lambda g: g not in LANE_GROUPS):
        if g in pick:
            continue
        lanes = sets[g].lanes
        ok = np.ones(len(lanes), dtype=bool)
        if g in LANE_GROUPS:
            for other in LANE_GROUPS:
                if other in pick:
                    ok &= compatible(lanes, sets[other].lanes[pick[other]])
        if not ok.any():
            return None
        pick[g] = int(np.flatnonzero(ok)[np.argmin(usage[g][ok])])
    return pick


def corner_point(name: str, workload: Workload, board: Board, clock_mhz: float, util: float) -> dse.DesignPoint | None:
    """The design of corner `name` (`CORNERS`) for `workload` on `board` at `clock_mhz` within the
    utilisation cap `util`; None when no option of the corner's kind fits beside the cheapest others."""
    corner = CORNERS[name]
    budget = Budget.from_board(board, util)
    limit = budget.vector()
    spaces, candidates = [], []
    for key, ctx in enumerate(dse.padded_contexts(workload, board, clock_mhz, corner.lut_words)):
        probes = stage_model.Probes.of(workload.probed)
        sets = all_options(ctx, probes, workload.list_sizes, budget.limits(), skip_dominated=False)
        usage = _usage(sets, limit)
        spaces.append((Space(key, sets, dse.infra_vector(ctx, budget), 0), ctx, usage))
        if all(len(s) for s in sets.values()):
            group = sets[corner.group]
            candidates += [
                (corner.extent(cfg), -usage[corner.group][i], -key, i)
                for i, cfg in enumerate(group.configs)
                if corner.admits(cfg)
            ]
    for _, _, key, i in sorted(candidates, reverse=True)[:TRIES]:
        space, ctx, usage = spaces[-key]
        pick = _cheapest(space.sets, usage, {corner.group: i})
        if pick is None:
            continue
        rows = [np.concatenate([space.sets[g].res[pick[g]], space.sets[g].channels[pick[g]]]) for g in GROUPS]
        if (space.infra + sum(rows) > limit + 1e-9).any():
            continue
        point = dse.materialize(space, workload, ctx, pick, budget, clock_mhz)
        if point is not None:
            return point
    return None
