"""What a simulated IVF-PQ RTL run is given (`fanns.sim.ivfpq.rtl.RtlProjectSim.run`): the runs
(searches, step-wise steps, a host-memory design's prefetch commands), the memories' timing and the
watchdog's limits. Kept apart from the simulator so the run descriptions stay short to read."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Limits:
    """When a simulated run is stopped: `stall` cycles without progress and `cycles` simulated
    cycles per run (None: derived from the model), `seconds` of wall time per run."""

    stall: int | None = None
    cycles: int | None = None
    seconds: float = float("inf")


NO_LIMITS = Limits()
"""The defaults: the model's stall and cycle bounds, no wall-time limit."""


@dataclass(frozen=True, eq=False)
class Step:
    """A step-wise run's inputs (docs/stepwise.md, `mode` 1): the test queries `rows` (any of
    them, in any order), their cell lists `cells` (int64 [nq, c <= nprobe], -1: none) and seed
    keys `seeds` (uint64 [nq, K], ascending)."""

    rows: tuple[int, ...]
    cells: np.ndarray
    seeds: np.ndarray


@dataclass(frozen=True)
class Run:
    """One accelerator run: `nq` test queries from query `first`, run-time nprobe and k, and the
    file of expected keys (uint64 [nq, >= k]; None: the project's reference keys); with `step`, a
    step-wise run of the step's queries (fast harness; `expected` needed)."""

    nq: int
    nprobe: int
    k: int
    first: int = 0
    expected: Path | None = None
    step: Step | None = None
    pokes: tuple[tuple[str, int, bytes], ...] = ()


@dataclass(frozen=True, eq=False)
class PrefetchRun:
    """A prefetch run of a host-memory design (`mode` 2, docs/host_tier.md; fast harness): the
    descriptors (uint32 [n, 4]: cell, op, at, source), and `pokes` (port, byte offset in its image,
    bytes) written into the bench's memories before it."""

    descriptors: np.ndarray
    pokes: tuple[tuple[str, int, bytes], ...] = ()


@dataclass(frozen=True)
class RamTiming:
    """A simulated memory channel: the first beat `latency` cycles after the request, then at most
    `rate` beats per cycle (the bench's `LatencyAxiRam`)."""

    latency: int
    rate: float = 1.0

    def as_dict(self) -> dict:
        return {"latency": self.latency, "rate": self.rate}
