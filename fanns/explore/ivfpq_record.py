"""The parts of `explore.json` computed from measured numbers alone: the nprobe each goal is
promised at and where the recall sweep ends, statistics of the work per query, bootstrap intervals of
recall, the recall curves, how the queries were split, and the best index per goal. Kept apart
from the explorer, which trains and measures."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from fanns.datasets.formats import atomic_path
from fanns.index.goals import RecallGoal, measure_name
from fanns.index.holdout import (
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE,
    PROMISE_LEVEL,
    TRAINING_SD,
    Promise,
    SplitCurves,
    bootstrap_interval,
    choose_nprobe,
    promise,
)

ID_BYTES = 4
"""Bytes of the id stored next to each PQ code in device memory (32-bit ids)."""
SWEEP_FACTOR, SWEEP_MIN = 4, 64
"""The recall sweep ends once every goal is promised (`goal_promises`) and nprobe reaches
SWEEP_FACTOR times the largest nprobe they need, and at least SWEEP_MIN (or nlist): the curve
beyond shows only saturation, and at 1M vectors the full sweep of nlist = 2048 scanned every
code of the index for every query."""


def split_curves(
    hits: dict[tuple[int, int], np.ndarray], selection: np.ndarray, holdout: np.ndarray
) -> dict[tuple[int, int], SplitCurves]:
    """Per measure (k, truth), the recall curves of the split sample from per-query hits [queries, nprobe]."""
    return {ms: SplitCurves.of(h / ms[1], selection, holdout) for ms, h in hits.items()}


def promised_nprobe(c: SplitCurves, goal: float, training_sd: float) -> int:
    """The nprobe `promise` would give `goal` on curves `c` (0: none), without the reasons."""
    return int(choose_nprobe(c.selection, c.selection_sd, c.n_selection, c.held, goal, training_sd)[1])


def goal_promises(
    goals: Sequence[RecallGoal], curves: dict[tuple[int, int], SplitCurves], training_sd: float
) -> dict[RecallGoal, Promise]:
    """Per goal, the nprobe its measure's curves promise or why none does
    (`fanns.index.holdout.promise`): the rule the explorer's choice follows, and the sweep's end
    (`sweep_done`, through `promised_nprobe`, the same nprobe)."""
    return {g: promise(curves[g.measure], g.target, training_sd) for g in goals}


def sweep_done(
    goals: Sequence[RecallGoal], selection: np.ndarray, holdout: np.ndarray, training_sd: float, nlist: int
) -> Callable[[int, dict[tuple[int, int], np.ndarray]], bool]:
    """The `done` test of `fanns.index.ivfpq_recall.recall_hits` for an index of `nlist` cells: every
    goal promised (`goal_promises`) and the sweep past `SWEEP_FACTOR` times the largest nprobe
    they need, at least `SWEEP_MIN`."""

    seen: dict[tuple[int, int], list[SplitCurves]] = {}  # per measure, the curves of the nprobe swept so far

    def done(p: int, hits: dict[tuple[int, int], np.ndarray]) -> bool:
        for ms, h in hits.items():
            parts = seen.setdefault(ms, [])
            swept = sum(c.held.size for c in parts)
            parts.append(SplitCurves.of(h[:, swept:p] / ms[1], selection, holdout))  # only the new nprobe
            seen[ms] = [SplitCurves.joined(parts)]
        need = [promised_nprobe(seen[g.measure][0], g.target, training_sd) for g in goals]
        if 0 in need:
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


def recall_split(selection: int, holdout: int, training_sd: float) -> dict:
    """How the queries were split and what recall the exploration promises."""
    return {
        "selection_queries": selection,
        "holdout_queries": holdout,
        "training_sd": training_sd,
        "training_sd_source": "fanns.index.holdout.TRAINING_SD" if training_sd == TRAINING_SD else "set by the caller",
        "promise_level": PROMISE_LEVEL,
        "rule": f"nprobe is the smallest whose selection queries' {PROMISE_LEVEL:.1%} lower confidence bound "
        "(Agresti-Coull, training spread in quadrature) reaches the goal and whose held-out recall, faiss's and "
        "the hardware-faithful one, reaches it too (fanns.index.holdout)",
        "interval": f"{CONFIDENCE:.0%} percentile bootstrap over the held-out queries "
        f"({BOOTSTRAP_RESAMPLES} resamples)",
        "promised": "recall and hw_recall are the held-out queries' at the nprobe chosen by the rule; it falls "
        f"below the goal on the sampled query distribution at most {1 - PROMISE_LEVEL:.1%} of the time",
    }


def best_per_goal(records: list[dict], goals: list[RecallGoal]) -> dict:
    """Per goal: the index that reaches it with the fewest codes scanned per query; else the one
    a larger query sample could promise with the fewest queries, else the best recall seen."""
    out = {}
    for g in goals:
        entries = [(r["goals"][g.text], r["index"]) for r in records]
        ok = [(e["codes_per_query"]["mean"], name) for e, name in entries if e["reached"]]
        if ok:
            codes, name = min(ok)
            out[g.text] = {"reached": True, "index": name, "codes_per_query": codes}
            continue
        more = [(e["queries_needed"], name, e) for e, name in entries if e.get("queries_needed")]
        if more:
            _, name, e = min(more, key=lambda t: t[:2])
        else:
            _, name, e = max((e["best_recall"], name, e) for e, name in entries)
        out[g.text] = {
            "reached": False,
            "best_recall": e["best_recall"],
            "index": name,
            "reason": e.get("reason"),
            "queries_needed": e.get("queries_needed"),
        }
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
