"""Recall goals.

Two measures are in common use and both are accepted:

* ``R@k=x`` — k-recall@k (thesis 2.1.1.1, ann-benchmarks): on average, x of the true k nearest
  neighbours are among the k results.
* ``1-R@k=x`` (also written ``R1@k=x``) — 1-recall@k (faiss's benchmarks): the true nearest
  neighbour is among the k results for a fraction x of the queries. FANNS's published goals
  (R@1=30 %, R@10=80 %, R@100=95 % on SIFT100M with 16-byte codes) are of this kind.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from fanns.errors import FannsError

_GOAL = re.compile(r"^ *(1-R|R1|R)@([0-9]+) *= *([0-9]*\.?[0-9]+) *(%?) *$", re.IGNORECASE)
"""Spaces only (no tab, newline or other control character: a goal is copied into reports)."""


@dataclass(frozen=True, order=True)
class RecallGoal:
    k: int
    target: float
    truth: int = 0
    """How many true neighbours count: k for R@k, 1 for 1-R@k (0 means k)."""

    def __post_init__(self) -> None:
        if self.truth == 0:
            object.__setattr__(self, "truth", self.k)

    @property
    def measure(self) -> tuple[int, int]:
        """(results k, true neighbours counted) — the key of a recall curve."""
        return (self.k, self.truth)

    @property
    def name(self) -> str:
        return measure_name(self.measure)

    @property
    def text(self) -> str:
        return f"{self.name}={self.target:g}"


def measure_name(measure: tuple[int, int]) -> str:
    k, truth = measure
    return f"R@{k}" if truth == k else f"1-R@{k}"


def goal_entry(entries: Any, goal: RecallGoal) -> Any:
    """The value of `entries` (a mapping keyed by goal texts, as explore.json records them) for
    `goal`: same measure (R@k or 1-R@k), same k, same target; None if there is none. Keys that are
    not goals are ignored."""
    if not isinstance(entries, dict):
        return None
    for text, entry in entries.items():
        if not isinstance(text, str) or not _GOAL.fullmatch(text):
            continue
        g = parse_goal(text)
        if g.measure == goal.measure and math.isclose(g.target, goal.target):
            return entry
    return None


def parse_goal(text: str) -> RecallGoal:
    """Parse ``R@10=0.8``, ``R@10=80%``, ``1-R@10=0.8`` or ``R1@10=0.8``."""
    m = _GOAL.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise FannsError(
            f"cannot parse recall goal {text!r}",
            hint="write it as R@k=x (k-recall@k) or 1-R@k=x (1-recall@k), e.g. R@10=0.8 or 1-R@10=80%",
        )
    kind, k, value = m.group(1).upper(), int(m.group(2)), float(m.group(3))
    if m.group(4):
        value /= 100
    if k < 1:
        raise FannsError(f"recall goal {text!r}: k must be at least 1")
    if not 0 < value <= 1:
        raise FannsError(f"recall goal {text!r}: the target must be in (0, 1] (or (0, 100]%)")
    return RecallGoal(k, value, 1 if kind in ("1-R", "R1") else k)
