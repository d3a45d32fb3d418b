"""The hardware-faithful half of the recall promise, and the recall fields of explore.json's goal
entries.

The nprobe faiss's curves promise a goal at (`fanns.index.holdout.promise`) is kept only where
the recall the generated hardware returns — the whole-accelerator reference model's, in the
index's fixed-point format — reaches the goal on the held-out queries and on the whole sample
too (the sample the report's "Recall vs nprobe" figure plots); where it does not, nprobe rises to
the next one faiss's rule passes at, one reference search each (fixed point loses little recall,
`benchmarks/fixed_point_recall.py`, so a step is rare, and a goal the hardware never reaches,
which scans every nprobe swept, rarer still).

Why a loop: the format is chosen for the largest nprobe the goals take (`reference_at`), so a
goal that rises past it chooses the format again, and every goal is measured again in it; nprobe
only rises, so the loop ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from fanns.explore.ivfpq_record import interval
from fanns.index.goals import RecallGoal
from fanns.index.holdout import TOLERANCE, Promise, SplitCurves, first_true, lower_bound, passing
from fanns.index.recall import hits
from fanns.reference.ivfpq import IvfPqReference


@dataclass
class HardwarePromises:
    """What `hardware_promises` settled: per goal the promised nprobe (None: none), the reference
    model whose format the record keeps (chosen for nprobe `p_max`), its search results per
    nprobe measured, and per goal the held-out hardware-faithful recall at every nprobe tried."""

    nprobe: dict[RecallGoal, int | None]
    ref: IvfPqReference
    p_max: int
    gt: np.ndarray
    holdout: np.ndarray
    results: dict[int, np.ndarray] = field(default_factory=dict)  # nprobe -> ids [queries, kmax]
    tried: dict[RecallGoal, dict[int, float]] = field(default_factory=dict)

    def per_query(self, goal: RecallGoal, nprobe: int) -> np.ndarray:
        """The hardware-faithful recall of every sample query for `goal` at `nprobe` (measured)."""
        return hits(self.results[nprobe][:, : goal.k], self.gt[:, : goal.truth]) / goal.truth

    def entry(
        self, g: RecallGoal, pr: Promise, c: SplitCurves, hits_g: np.ndarray, training_sd: float, seed: int
    ) -> dict:
        """explore.json's recall fields of goal `g` (faiss's promise `pr`, curves `c`, per-query
        hits `hits_g` [queries, nprobe]): the promised nprobe with the selection recall and bound
        there, where the bound alone had put it, and the held-out recall (faiss's and the
        hardware-faithful one, with bootstrap intervals); or why no nprobe is promised."""
        p = self.nprobe[g]
        if p is None:
            best = int(np.argmax(c.pooled))
            out = {"reached": False, "best_recall": round(float(c.pooled[best]), 6), "best_nprobe": best + 1}
            if pr.nprobe is None:
                return out | pr.record(c, training_sd)
            # faiss's curves promise it, the hardware-faithful recall does not
            at, held = max(self.tried[g].items(), key=lambda t: t[1])
            return out | Promise(None, pr.selected, "hardware", at=at).record(c, training_sd) | {"hw_recall": held}
        hw_all = self.per_query(g, p)
        hw_held = hw_all[self.holdout]
        held = hits_g[self.holdout, p - 1] / g.truth
        bound = lower_bound(c.selection[p - 1], c.selection_sd[p - 1], c.n_selection, training_sd)
        out = {
            "reached": True,
            "nprobe": p,
            "selection_recall": round(float(c.selection[p - 1]), 6),
            "selection_bound": round(float(bound), 6),
        }
        if pr.selected is not None and pr.selected < p:
            out["raised_from"] = {"nprobe": pr.selected, "recall": round(float(c.held[pr.selected - 1]), 6)}
            if pr.selected in self.tried[g]:
                out["raised_from"]["hw_recall"] = round(self.tried[g][pr.selected], 6)
        return out | {
            "recall": round(float(c.held[p - 1]), 6),
            "recall_interval": interval(held, seed),
            "hw_recall": round(float(hw_held.mean()), 6),
            "hw_recall_interval": interval(hw_held, seed),
            "all_queries_recall": round(float(c.pooled[p - 1]), 6),
            "all_queries_hw_recall": round(float(hw_all.mean()), 6),
        }


def hardware_promises(
    goals: Sequence[RecallGoal],
    training_sd: float,
    promises: dict[RecallGoal, Promise],
    curves: dict[tuple[int, int], SplitCurves],
    reference_at: Callable[[int], IvfPqReference],
    queries: np.ndarray,
    gt: np.ndarray,
    holdout: np.ndarray,
) -> HardwarePromises:
    """Settle every goal's nprobe against the hardware-faithful recall (see the module docstring);
    `reference_at(p)` is the reference model in the format chosen for nprobe `p`."""
    kmax = max(g.k for g in goals)
    p_max = max((pr.nprobe for pr in promises.values() if pr.nprobe), default=1)
    while True:
        out = HardwarePromises({}, reference_at(p_max), p_max, gt, holdout)
        for g in goals:
            out.nprobe[g] = _settle(g, promises[g], curves[g.measure], training_sd, out, queries, kmax)
        top = max((p for p in out.nprobe.values() if p), default=1)
        if top <= p_max:
            return out
        p_max = top


def _settle(
    g: RecallGoal,
    pr: Promise,
    c: SplitCurves,
    training_sd: float,
    out: HardwarePromises,
    queries: np.ndarray,
    kmax: int,
) -> int | None:
    """The smallest nprobe from faiss's promise on at which the hardware-faithful recall reaches
    the goal on the held-out queries and on the whole sample; None when none tried does."""
    ok = passing(c.selection, c.selection_sd, c.n_selection, c.held, g.target, training_sd)[1]
    later = np.arange(1, ok.size + 1)
    out.tried[g] = {}
    p = pr.nprobe or 0
    while p:
        if p not in out.results:
            _, out.results[p] = out.ref.search(queries, p, kmax)
        hw = out.per_query(g, p)
        held, whole = float(hw[out.holdout].mean()), float(hw.mean())
        out.tried[g][p] = held
        if held >= g.target - TOLERANCE and whole >= g.target - TOLERANCE:
            return p
        p = int(first_true(ok & (later > p)))  # the next nprobe faiss's rule passes at
    return None
