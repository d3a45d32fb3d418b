"""The parts of `explore.json` computed from measured numbers alone: the nprobe each goal takes
and where the recall sweep ends, statistics of the work per query, bootstrap intervals of
recall, the recall curves, how the queries were split, and the best index per goal. Kept apart
from the explorer, which trains and measures."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from fanns.datasets.formats import atomic_path
from fanns.index.goals import RecallGoal, measure_name
from fanns.index.holdout import BOOTSTRAP_RESAMPLES, CONFIDENCE, TRAINING_MARGIN, bootstrap_interval, selection_target
from fanns.index.recall import smallest_meeting

ID_BYTES = 4
"""Bytes of the id stored next to each PQ code in device memory (32-bit ids)."""
SWEEP_FACTOR, SWEEP_MIN = 4, 64
"""The recall sweep ends once every goal is met on the selection queries and nprobe reaches
SWEEP_FACTOR times the largest nprobe they need, and at least SWEEP_MIN (or nlist): the curve
beyond shows only saturation, and at 1M vectors the full sweep of nlist = 2048 scanned every
code of the index for every query."""


def goal_nprobes(
    goals: Sequence[RecallGoal], chosen: dict[tuple[int, int], np.ndarray], margin: float
) -> dict[RecallGoal, int | None]:
    """Per goal, the smallest nprobe whose recall on the selection queries (`chosen`, a curve
    per measure) reaches the goal plus `margin`, or None: the one rule both the sweep's end
    (`sweep_done`) and the explorer's choice follow."""
    return {g: smallest_meeting(chosen[g.measure], selection_target(g.target, margin)) for g in goals}


def sweep_done(
    goals: Sequence[RecallGoal], selection: np.ndarray, margin: float, nlist: int
) -> Callable[[int, dict[tuple[int, int], np.ndarray]], bool]:
    """The `done` test of `fanns.index.recall.recall_hits` for an index of `nlist` cells: every
    goal met on the `selection` queries (`goal_nprobes`) and the sweep past `SWEEP_FACTOR` times
    the largest nprobe they need, at least `SWEEP_MIN`."""

    def done(p: int, hits: dict[tuple[int, int], np.ndarray]) -> bool:
        chosen = {ms: h[selection, :p].mean(0) / ms[1] for ms, h in hits.items()}
        need = goal_nprobes(goals, chosen, margin).values()
        if None in need:
            return False
        return p >= min(nlist, max(SWEEP_MIN, SWEEP_FACTOR * max(need)))

    return done


def stats(values: np.ndarray) -> dict:
    """Mean and tail percentiles of a per-query (or per-cell) quantity."""
    v = np.asarray(values, dtype=np.float64)
    return {
        "mean": round(float(v.mean()), 3),
        "p50": float(np.percentile(v, 50)),
        "p95": float(np.percentile(v, 95)),
        "p99": float(np.percentile(v, 99)),
        "max": float(v.max()),
    }


def interval(per_query: np.ndarray, seed: int) -> list[float]:
    """The bootstrap interval of a mean recall over the queries it averages (`bootstrap_interval`)."""
    lo, hi = bootstrap_interval(per_query, seed)
    return [round(lo, 6), round(hi, 6)]


def curve_lists(curves: dict[tuple[int, int], np.ndarray]) -> dict[str, list[float]]:
    """Recall curves (one value per nprobe) keyed by measure name, rounded for JSON."""
    return {measure_name(ms): [round(float(r), 6) for r in c] for ms, c in curves.items()}


def recall_split(selection: int, holdout: int, margin: float) -> dict:
    """How the queries were split and what recall the exploration promises."""
    return {
        "selection_queries": selection,
        "holdout_queries": holdout,
        "margin": margin,
        "margin_source": "fanns.index.holdout.TRAINING_MARGIN" if margin == TRAINING_MARGIN else "set by the caller",
        "interval": f"{CONFIDENCE:.0%} percentile bootstrap over the held-out queries "
        f"({BOOTSTRAP_RESAMPLES} resamples)",
        "promised": "recall and hw_recall are the held-out queries' at the nprobe chosen on the selection "
        "queries (selection_recall >= goal + margin)",
    }


def best_per_goal(records: list[dict], goals: list[RecallGoal]) -> dict:
    """Per goal: the index that reaches it with the fewest codes scanned per query, or the best recall seen."""
    out = {}
    for g in goals:
        ok = [
            (r["goals"][g.text]["codes_per_query"]["mean"], r["index"])
            for r in records
            if r["goals"][g.text]["reached"]
        ]
        if ok:
            codes, name = min(ok)
            out[g.text] = {"reached": True, "index": name, "codes_per_query": codes}
        else:
            recall, name = max((r["goals"][g.text]["best_recall"], r["index"]) for r in records)
            out[g.text] = {"reached": False, "best_recall": recall, "index": name}
    return out


def read_json(path: Path) -> object:
    """The JSON in `path`, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def write_json(path: Path, data: dict) -> None:
    """Write `data` to `path` whole or not at all."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
