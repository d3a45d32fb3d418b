"""Why no IVF-PQ design fits, in words a user can act on (`Outcome.explain` of
`fanns.model.ivfpq.dse`).

Why apart: the DSE decides; this says what to change when it finds nothing — an unreachable goal,
an option group that no configuration can fill (and why), an index larger than the board's
memory, or per overflowing resource the need, the budget, the excess and the stage group that
takes most of it.
"""

from __future__ import annotations

import numpy as np

from fanns.index.holdout import unpromised_text
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.budget import Budget, overflow_text
from fanns.model.ivfpq.buildable import divisors
from fanns.model.ivfpq.options import GROUPS
from fanns.model.ivfpq.search import Result, Space
from fanns.model.ivfpq.workload import Workload


def space_label(w: Workload, ctx: stage_model.Context) -> str:
    """The workload's label, with the sub-vector padding of a padded context and the LUT words a
    cycle of a context that loads more than one."""
    return (
        w.label()
        + (f" (sub-vectors padded to {ctx.fmt.dsub_hw})" if ctx.fmt.dsub_hw else "")
        + (f" ({ctx.lut_words} LUT words a cycle)" if ctx.lut_words > 1 else "")
    )


UNREACHABLE_HINT = "recall is the index's, not the board's: explore another index (the m above) or lower the goal"
NO_FIT_HINT = "try another board, a higher --util, or a lower goal"


def no_design_hint(reachable: bool) -> str:
    """The hint of an error that found no design: for a goal no index reaches, what changes
    recall (another board or --util cannot); else what makes a design fit."""
    return NO_FIT_HINT if reachable else UNREACHABLE_HINT


def larger_m_text(unreachable: list[dict]) -> str:
    """What to explore for more recall: the next m that divide d above the largest explored, and
    OPQ where it was not explored (the PQ codes bound recall; the board does not)."""
    ms = sorted({u["m"] for u in unreachable if "m" in u})
    d = next((u["d"] for u in unreachable if u.get("d")), None)
    if not ms or d is None:
        return "explore a larger m (it must divide d) or OPQ, or lower the goal"
    larger = [m for m in divisors(d) if ms[-1] < m < d][:4]
    text = (
        f"explore a larger m (--m; m must divide d = {d}: {', '.join(map(str, larger))})"
        if larger
        else f"no m between the explored {ms[-1]} and d = {d} divides d"
    )
    if not any(u.get("opq") for u in unreachable):
        text += ", OPQ"
    return text + ", or lower the goal; the board and --util do not change recall"


def unreachable_text(goal: str, unreachable: list[dict]) -> list[str]:
    """Why no explored index promises `goal`: the best recall seen, or — where a larger query
    sample would tell — the fewest queries that would; and each index's own reason when it is
    not simply a recall below the goal (`fanns.index.holdout.unpromised_text`)."""
    if not unreachable:
        return [f"no index to evaluate for {goal}"]
    more = [u for u in unreachable if u.get("queries_needed")]
    if more:
        u = min(more, key=lambda u: (u["queries_needed"], u["index"]))
        lines = [
            f"{goal} cannot be promised from this query sample: about {u['queries_needed']:,} queries would tell "
            f"({u['index']}, from the observed per-query spread)",
            "use that many queries (--queries, or a dataset with more), or a lower goal",
        ]
    else:
        best = max(unreachable, key=lambda u: u.get("best_recall") or 0.0)
        lines = [
            f"{goal} is not reachable by any explored index: the best recall seen is "
            f"{best.get('best_recall', 0):.4f} ({best['index']} at nprobe {best.get('best_nprobe')})",
            larger_m_text(unreachable),
        ]
    lines += [
        f"{u['index']}: {unpromised_text(u, goal)}" for u in unreachable if u.get("reason") not in (None, "below")
    ]
    short = [u["index"] for u in unreachable if "swept_nprobe" in u]
    if short:
        lines.append(
            f"{', '.join(short)} swept nprobe only as far as the explored goals needed: re-run `fanns explore` "
            f"with --recall {goal} to sweep them for this goal"
        )
    return lines


GROUP_ADVICE = {
    "infra": "the shell, the control block and the memory readers alone: choose a larger board",
    "opq": "drop OPQ (its d x d matrix sits on chip, or streams from a channel of its own) or use a smaller d",
    "front": "fewer cells (nlist): IVFDist keeps nlist x d centroids on chip and SelCells sorts nlist keys",
    "lut": "a smaller d (every BuildLUT PE holds a 256 x d codebook, the stage all nlist x d centroids) or nlist",
    "back": "a smaller K (SelK's queues grow with K), a smaller m (8·m-bit codes), or fewer vectors per channel",
}
"""What to change when a group's smallest configuration takes most of a resource that overflows."""


def binding_lines(space: Space, budget: Budget) -> list[str]:
    """Per overflowing resource of the smallest design: need, budget, excess, the stage group that
    takes most of it, and what to change."""
    parts = {"infra": space.infra} | {g: space.floors[g] for g in GROUPS}
    lower = sum(parts.values())
    lines = []
    for i, (label, need, have) in enumerate(zip(budget.labels(), lower, budget.vector())):
        if need <= have + 1e-9:
            continue
        pct = f"+{100 * (need - have) / have:.0f}%" if have > 0 else "none available"
        group = max(parts, key=lambda g: parts[g][i])
        stages = "infrastructure" if group == "infra" else ", ".join(space.sets[group].stages)
        share = parts[group][i] / need
        lines.append(
            f"{label}: needs {need:,.0f}, the budget allows {have:,.0f} ({pct}), {100 * share:.0f}% of it in {stages}: "
            f"{GROUP_ADVICE[group]}; or raise --util, or use a board with more {label}"
        )
    return lines


def slr_line(space: Space, group: str, budget: Budget) -> str:
    """Why a group whose configurations fit the total budget has none: each has an instance that
    no single SLR holds (a PE cannot span SLRs); the resource where its smallest one overflows."""
    rooms = np.array([r.as_tuple() for r in budget.slrs.values()], dtype=np.float64).max(0)
    stages = ", ".join(space.sets[group].stages)
    head = f"option group {group!r} ({stages}) is empty: every configuration has a PE that no single SLR holds"
    for label, need, room in zip(budget.labels(), space.floors[group], rooms):
        if need > room + 1e-9:
            return (
                f"{head} (the smallest needs {need:,.0f} {label}, the roomiest SLR allows {room:,.0f} at this "
                f"utilisation): {GROUP_ADVICE[group]}; or raise --util"
            )
    return f"{head}: {GROUP_ADVICE[group]}; or raise --util"


def no_fit_text(spaces: list[Space], workloads: list[Workload], contexts, budget: Budget, result: Result) -> list[str]:
    lines = [f"no design fits {budget.board} at {100 * budget.util:.0f}% utilisation (with the shell)"]
    for space, w, ctx in zip(spaces, workloads, contexts):
        empty = [g for g in GROUPS if len(space.sets[g]) == 0]
        structural = [g for g in empty if space.sets[g].empty_reason]
        label = space_label(w, ctx)
        if structural:  # no configuration at all, whatever the budget: not a resource limit
            for g in structural:
                lines.append(
                    f"{w.label() if g == 'back' else label}: option group {g!r} "
                    f"({', '.join(space.sets[g].stages)}) is empty: "
                    f"{space.sets[g].empty_reason}"
                )
            continue
        if "back" in empty:
            need = int(w.n * (w.m + 4))
            cap = sum(m.capacity_bytes * m.count for m in ctx.memories)
            if need > cap:
                lines.append(
                    f"{w.label()}: the index needs about {need / 2**30:.2f} GiB "
                    f"of codes and ids, the board holds {cap / 2**30:.2f} GiB"
                )
                continue
        over = binding_lines(space, budget)
        if over:
            lines.append(f"{label}: even the smallest design is too large; binding: " + "; ".join(over))
            continue
        lines += [f"{label}: {slr_line(space, g, budget)}" for g in empty]
    if len(lines) == 1 and result.min_overflow is not None:
        lines.append(
            "every resource fits on its own but not together; the closest design: "
            + "; ".join(overflow_text(result.min_overflow, budget))
        )
    if len(lines) == 1 and len(result.pool):
        lines.append(
            "designs fit the total budget but none passes the per-SLR assignment (an instance finds no SLR with room)"
        )
    return list(dict.fromkeys(lines))  # paddings of one workload can share a reason: say it once
