"""Recall goals: ``R@k=x`` — on average, x of the true k nearest neighbours are in the top k."""
from __future__ import annotations

import re
from dataclasses import dataclass

from fanns.errors import FannsError

_GOAL = re.compile(r"^\s*R@(\d+)\s*=\s*([0-9]*\.?[0-9]+)\s*(%?)\s*$", re.IGNORECASE)


@dataclass(frozen=True, order=True)
class RecallGoal:
    k: int
    target: float

    @property
    def text(self) -> str:
        return f"R@{self.k}={self.target:g}"


def parse_goal(text: str) -> RecallGoal:
    """Parse ``R@10=0.8`` (or ``R@10=80%``)."""
    m = _GOAL.match(text)
    if not m:
        raise FannsError(f"cannot parse recall goal {text!r}", hint="write it as R@k=x, e.g. R@10=0.8 or R@10=80%")
    k, value = int(m.group(1)), float(m.group(2))
    if m.group(3):
        value /= 100
    if k < 1:
        raise FannsError(f"recall goal {text!r}: k must be at least 1")
    if not 0 < value <= 1:
        raise FannsError(f"recall goal {text!r}: the target must be in (0, 1] (or (0, 100]%)")
    return RecallGoal(k, value)
