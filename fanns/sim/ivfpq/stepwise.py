"""Step-wise search schedules (docs/stepwise.md) and their check against the reference model.

Why here: the step-wise mode is defined by its interim results (the K smallest keys over the cells
scanned so far), so every face is checked the same way: a schedule cuts each query's cells into
steps of random sizes, runs them in calls of a random subset of the queries (the others wait and
resume later, from the keys they kept), and compares every call's keys with the reference's. The
tests and the design fuzz share this, for the C simulation and the RTL simulation alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fanns.numerics import sentinel

StepSearch = Callable[[np.ndarray, np.ndarray, "np.ndarray | None"], np.ndarray]
"""One step: (host-quantised queries [nq, d], cells [nq, c] with -1 for no cell, seed keys uint64
[nq, K] or None for none) -> result keys uint64 [nq, K]."""


def schedules(cells: np.ndarray, nprobe: int, rng: np.random.Generator, own: bool, nlist: int) -> list[list]:
    """Per query, its steps: its probed cells `cells[i]` (own) or 1..2·nprobe-1 random distinct
    cells of `nlist`, in a random order, cut into steps of 0..nprobe cells."""
    plans = []
    for row in cells:
        chosen = rng.permutation(row if own else rng.choice(nlist, size=rng.integers(1, 2 * nprobe), replace=False))
        steps, at = [], 0
        while at < len(chosen):
            size = int(rng.integers(0, nprobe + 1))
            steps.append(chosen[at : at + size])
            at += size
        plans.append(steps)
    return plans


@dataclass
class StepCheck:
    """What running schedules on a face gave: calls made, the queries whose keys differed from
    the reference's in any call (the first such call described), and each query's keys after
    its last step."""

    calls: int
    mismatched_queries: int
    first_mismatch: str
    keys: np.ndarray


def run_schedules(
    face: StepSearch,
    reference: StepSearch,
    q_host: np.ndarray,
    plans: list[list],
    k: int,
    nprobe: int,
    key_bits: int,
    rng: np.random.Generator,
) -> StepCheck:
    """Runs `plans` (consumed) on `face` in calls of a random subset of the queries with a step
    left, each call's cell lists padded with -1 at random places to a random width <= nprobe, and
    compares every call's keys with `reference`'s. A query's first step gets no seeds (None)
    half of the time, sentinel seeds otherwise; later steps get the keys it kept."""
    nq = q_host.shape[0]
    kept: list[np.ndarray | None] = [None] * nq
    calls = 0
    differ: set[int] = set()
    first = ""
    empty = np.full(k, sentinel(key_bits), dtype=np.uint64)
    while any(plans):
        due = [i for i in range(nq) if plans[i]]
        now = sorted(rng.choice(due, size=int(rng.integers(1, len(due) + 1)), replace=False))
        steps = [plans[i].pop(0) for i in now]
        cells = np.full((len(now), int(rng.integers(max(len(s) for s in steps), nprobe + 1))), -1, dtype=np.int64)
        for row, step in zip(cells, steps):
            row[rng.choice(cells.shape[1], size=len(step), replace=False)] = step
        seeds = np.stack([empty if kept[i] is None else kept[i] for i in now])
        no_seeds = all(kept[i] is None for i in now) and rng.random() < 0.5
        got = face(q_host[now], cells, None if no_seeds else seeds)
        expected = reference(q_host[now], cells, seeds)
        wrong = (got != expected).any(axis=1)
        if wrong.any():
            differ.update(int(i) for i, w in zip(now, wrong) if w)
            first = first or f"call {calls}: queries {list(map(int, now))}, cells {cells.tolist()}"
        for i, row in zip(now, got):
            kept[i] = row
        calls += 1
    return StepCheck(calls, len(differ), first, np.stack(kept) if kept else np.zeros((0, k), dtype=np.uint64))
