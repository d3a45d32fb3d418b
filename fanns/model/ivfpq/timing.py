"""The RTL clock estimate of an IVF-PQ design, and the DSE run at the clock a design can stand behind.

`design_timing` prices every unit of the design's inventory (`fanns.model.ivfpq.stages.design_units`,
the same PEs the generators instantiate) with its PE's timing table, and adds the structures
between PEs (`fanns.model.timing`): the reset to every register, each Broadcast fork to its
consumers, and the streams between stages that the SLR assignment places in different SLRs.

`run` is the DSE (`fanns.model.ivfpq.dse.run`) at the clock a prediction may use
(`fanns.model.timing.resolve_clock`): the user's `--clock` when given; else the board's sourced
default, lowered to the chosen design's RTL estimate when that is below it, in which case the
DSE runs again at the lower clock (memory bandwidth per cycle, and so the best design, depend on
the clock) until the chosen design reaches the clock it was chosen at.
"""

from __future__ import annotations

from fanns.boards import Board, Clock
from fanns.model.ivfpq import control, dse
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.dse import DesignPoint, Outcome
from fanns.model.timing import (
    DesignTiming,
    TimingElement,
    pe_elements,
    reset_element,
    resolve_clock,
    slowest_first,
    slr_element,
)
from fanns.pe.base import PE
from fanns.tools.delay_models import MODELS

MAX_ROUNDS = 4
"""DSE runs at most, each at a lower clock than the last (it converges in one or two)."""

ORDER = ("infra", *stage_model.STAGES)
"""The order `design_units` lists the stage groups in, and streams flow between them."""


def design_timing(
    units: list[stage_model.Unit], slr: dict[str, list[list]], family: str, csr: PE | None = None
) -> DesignTiming:
    """The RTL timing estimate of a design's units placed as `slr` says (`DesignPoint.slr`).
    `csr`: the kernel's register file as one PE (the inventory prices it in parts, per group)."""
    if family not in MODELS:
        return DesignTiming(family, (), (f"no delay model for device family {family}",))
    items = [(f"{u.stage}.{u.label}", u.pe, u.count) for u in units if csr is None or u.label != "axil_csr"]
    if csr is not None:
        items.append(("infra.axil_csr", csr, 1))
    elements, uncovered = pe_elements(items, family)
    if not elements:  # no PE measured for this family: no estimate rather than one of the glue alone
        return DesignTiming(family, (), tuple(uncovered))
    registers = stage_model.total_resources(units).ff
    found = [*elements, reset_element(MODELS[family], registers), *slr_elements(slr)]
    return slowest_first(found, family, uncovered)


def slr_elements(slr: dict[str, list[list]]) -> list[TimingElement]:
    """One element per stream between consecutive stage groups, or between the parts of one
    group, that the SLR assignment puts in different SLRs (the number of boundaries between)."""
    names = list(slr)
    where: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        for stage, _, _ in slr[name]:
            where.setdefault(stage, []).append(i)
    out = []
    groups = [g for g in ORDER if g in where]
    for g in groups:
        if max(where[g]) > min(where[g]):
            out.append(slr_element(f"within {g}", 1))
    for a, b in zip(groups, groups[1:]):
        gap = abs(where[b][0] - where[a][-1])
        if gap:
            out.append(slr_element(f"{a} -> {b} ({names[where[a][-1]]} -> {names[where[b][0]]})", gap))
    if "infra" in where and groups[-1] != "infra":  # the results return to the infrastructure's writer
        gap = abs(where[groups[-1]][-1] - where["infra"][0])
        if gap:
            last = groups[-1]
            out.append(
                slr_element(f"{last} -> infra results ({names[where[last][-1]]} -> {names[where['infra'][0]]})", gap)
            )
    return out


def point_timing(p: DesignPoint) -> DesignTiming:
    pq = p.stages.pq_dist
    csr = control.csr_pe(p.ctx.opq, pq.channels, pq.tiers is not None)
    return design_timing(p.units, p.slr, p.ctx.family, csr)


def run(
    workloads,
    board: Board,
    goal: str,
    clock: Clock | None,
    util: float = 0.6,
    top: int = 5,
    unreachable: list[dict] | None = None,
    **options,
) -> Outcome:
    """The DSE at the clock a prediction may use (module docstring); `clock` is the user's
    `--clock` (None: the board's default, checked against the RTL estimate). The outcome carries
    the clock with its origin (`Outcome.clock`) and the best design's estimate (`Outcome.timing`)."""
    chosen = clock or board.clock
    outcome = None
    for _ in range(MAX_ROUNDS):
        outcome = dse.run(workloads, board, goal, chosen.mhz, util, top, unreachable, **options)
        estimate = point_timing(outcome.best) if outcome.best is not None else None
        outcome.clock, outcome.timing = chosen, estimate
        wanted = resolve_clock(board.clock, clock, estimate)
        if wanted.mhz >= chosen.mhz:
            return outcome
        chosen = wanted
    return outcome
