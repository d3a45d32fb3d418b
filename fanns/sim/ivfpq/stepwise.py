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
from pathlib import Path

import numpy as np

from fanns.design.ivfpq import IvfPqDesign
from fanns.numerics import sentinel
from fanns.sim.ivfpq.rtl import Run, Step

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


@dataclass(frozen=True)
class StepCall:
    """One call of a schedule: the queries it runs (indices), their cell lists [len(queries), c]
    (-1 for no cell), and whether it passes no seeds (only where every query starts)."""

    queries: tuple[int, ...]
    cells: np.ndarray
    no_seeds: bool


def step_calls(plans: list[list], nprobe: int, rng: np.random.Generator) -> list[StepCall]:
    """`plans` (consumed) as calls: each runs a random subset of the queries with a step left (the
    others wait and resume later), its cell lists padded with -1 at random places to a random width
    <= nprobe; a call whose queries all start passes no seeds half of the time (sentinel seeds
    otherwise, the same result)."""
    calls = []
    started: set[int] = set()
    while any(plans):
        due = [i for i in range(len(plans)) if plans[i]]
        now = tuple(sorted(int(i) for i in rng.choice(due, size=int(rng.integers(1, len(due) + 1)), replace=False)))
        steps = [plans[i].pop(0) for i in now]
        cells = np.full((len(now), int(rng.integers(max(len(s) for s in steps), nprobe + 1))), -1, dtype=np.int64)
        for row, step in zip(cells, steps):
            row[rng.choice(cells.shape[1], size=len(step), replace=False)] = step
        no_seeds = not started.intersection(now) and rng.random() < 0.5
        started.update(now)
        calls.append(StepCall(now, cells, no_seeds))
    return calls


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
    design: IvfPqDesign,
    rng: np.random.Generator,
) -> StepCheck:
    """Runs `plans` (consumed) on `face` as `step_calls` cuts them, each query seeded by the keys
    the face returned for its earlier steps, and compares every call's keys with `reference`'s."""
    kept = np.full((q_host.shape[0], design.k), sentinel(design.format.pq_key_bits), dtype=np.uint64)
    differ: set[int] = set()
    first = ""
    calls = step_calls(plans, design.nprobe, rng)
    for n, call in enumerate(calls):
        now = list(call.queries)
        got = face(q_host[now], call.cells, None if call.no_seeds else kept[now])
        wrong = (got != reference(q_host[now], call.cells, kept[now])).any(axis=1)
        if wrong.any():
            differ.update(i for i, w in zip(now, wrong) if w)
            first = first or f"call {n}: queries {now}, cells {call.cells.tolist()}"
        kept[now] = got
    return StepCheck(len(calls), len(differ), first, kept)


def rtl_step_runs(
    calls: list[StepCall], reference: StepSearch, q_host: np.ndarray, design: IvfPqDesign, folder: Path, tag: str
) -> list[Run]:
    """The runs of the RTL harness (`fanns.sim.ivfpq.rtl.Run`, one simulation) for `calls`, each
    with its expected keys written to `folder`: the reference's, seeded by the reference's keys of
    the query's earlier steps (what a correct device returned; the harness checks every run)."""
    kept = np.full((q_host.shape[0], design.k), sentinel(design.format.pq_key_bits), dtype=np.uint64)
    runs = []
    for n, call in enumerate(calls):
        now = list(call.queries)
        want = reference(q_host[now], call.cells, kept[now])
        path = folder / f"{tag}_{n}.bin"
        want.tofile(path)
        step = Step(call.queries, call.cells, kept[now].copy())
        runs.append(Run(nq=len(now), nprobe=design.nprobe, k=design.k, expected=path, step=step))
        kept[now] = want
    return runs
