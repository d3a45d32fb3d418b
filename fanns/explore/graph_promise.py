"""The recall promise of a graph design: the rule of `fanns.index.holdout` with the design space,
ranked by the DSE's objective, in place of nprobe.

A design is promised for an R@k goal only when

1. the selection queries' lower confidence bound reaches the goal (`holdout.lower_bound`, at
   `PROMISE_Z`, with the spread between graph builds, `build_sd`, added in quadrature), and
2. the held-out queries reach the goal with that design too; where they do not, the next design
   in the DSE's order (`fanns.model.graph.dse.ranked`: the next one down by latency or QPS, among
   those that fit) whose bound reaches the goal is checked, until the held-out queries agree.

The held-out recall is measured (one DST reference search of the held-out queries per distinct
traversal, cached) only for designs whose bound passes, best first, so it costs one search where
the first agrees. The DSE itself measures every point's selection recall, its per-query spread and
sample size (`GraphPoint.recall_sd`, `GraphPoint.queries`), from which the bound follows.

Where no design is promised, `GraphPromise.reason` says why, in `holdout.REASONS`' words: the
best recall that fits is below the goal ("below") or within the build spread of it ("training");
the held-out queries stay below where the bound passes ("held-out"); or the query sample is too
small to tell ("queries", with the number of queries that would, planned as
`holdout.queries_needed` plans it).
`tests/explore/test_graph_promise.py` draws thousands of query samples from a real graph's
per-query recalls and checks that the promised design's true recall is below the goal at most
1 - `PROMISE_LEVEL` of the time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from fanns.index.graph import GraphImage
from fanns.index.holdout import (
    HOLDOUT_FRACTION,
    PROMISE_LEVEL,
    PROMISE_Z,
    REASONS,
    TOLERANCE,
    lower_bound,
    widened,
)
from fanns.index.recall import hits
from fanns.model.graph.dse import GraphPoint, GraphSpace
from fanns.model.graph.fast import search_batch

BUILD_SD_SCALE = 0.19
"""Spread of a graph design's R@k between graph builds, as `BUILD_SD_SCALE` x sqrt(1 - recall)
(`build_sd`). Measured with `python benchmarks/graph_training_sd.py --seeds 8 --ls
16,32,64,128` (benchmarks/results/graph_training_sd.json): builtin:sift-10k, HNSW of max degree
64, efConstruction 64, 8-bit vectors, built in 8 seeded insertion orders, each searched by the DST
reference (mg = mc = 1, a 3 x 2^14-bit Bloom filter) on all 200 queries, so only the build
varied. Standard deviation of R@10 over the 8 builds: 0.0615 at l 16 (mean 0.894), 0.0391 at l
32 (0.952), 0.0140 at l 64 (0.987), 0.0071 at l 128 (0.996); over sqrt(1 - mean) that is 0.189,
0.178, 0.122, 0.107, and the largest is taken. A constant (as `holdout.TRAINING_SD` is for
IVF-PQ) would not do: the spread falls fivefold from recall 0.9 to 0.99, and the value at 0.9
(about 0.06) would bar every goal above 0.88. One build in eight (another entry point) lost 0.08
at l 32: the spread is real, not a rounding of the measurement. NSG of degree 64 on the same set
and orders (benchmarks/results/graph_training_sd_nsg.json) spreads 0.035-0.067 at recalls
0.43-0.67 (the clustered built-in sets cap NSG's recall, docs/graph_architecture.md): 0.074-0.104
x sqrt(1 - recall), inside the HNSW scale, so one scale serves both kinds."""


def build_sd(recall, scale: float = BUILD_SD_SCALE) -> np.ndarray:
    """The spread between graph builds of a design of this R@k (`BUILD_SD_SCALE`)."""
    return scale * np.sqrt(np.maximum(1.0 - np.asarray(recall, dtype=np.float64), 0.0))


def bound_of(mean, sd, n, scale: float = BUILD_SD_SCALE) -> float:
    """The lower confidence bound of a design measured at mean R@k `mean` with per-query spread
    `sd` over `n` queries; the build spread is taken at the mean widened as the bound widens it,
    so a small sample that all hit does not claim a build spread of zero."""
    return float(lower_bound(mean, sd, n, build_sd(widened(mean, sd, n)[0], scale)))


def traversal_key(p: GraphPoint) -> tuple[int, int, int, int, int]:
    """What a point's search results depend on: units, l, Bloom bits, mg, mc."""
    return (p.units, p.l, p.bloom_bits, p.mg, p.mc)


def held_out_search(
    graph: GraphImage, queries_fx: np.ndarray, groundtruth: np.ndarray, space: GraphSpace
) -> Callable[[GraphPoint], np.ndarray]:
    """Per-query R@k of a point's traversal on the held-out queries (the DST reference, as the DSE
    searches them)."""
    k = space.k

    def per_query(p: GraphPoint) -> np.ndarray:
        cfg = space.traversal(p.units, p.l, p.bloom_bits, p.mg, p.mc)
        return hits(search_batch(graph, queries_fx, cfg).ids[:, :k], groundtruth[:, :k]) / k

    return per_query


@dataclass
class GraphPromise:
    """The promise rule as the DSE's `accept` (module docstring), and what it saw: the point the
    bound alone chose (`selected`), the held-out recall of every traversal it measured, and
    after `settle`, the reason no point is promised."""

    goal: float
    held_out: Callable[[GraphPoint], np.ndarray] | None = None  # None: the bound alone decides
    scale: float = BUILD_SD_SCALE
    selected: GraphPoint | None = None
    measured: dict[tuple, np.ndarray] = field(default_factory=dict)
    reason: str | None = None
    queries_needed: int | None = None
    at: GraphPoint | None = None  # the point the reason refers to

    def restart(self) -> None:
        """Forget the choice of an earlier DSE run (the held-out measurements stay valid)."""
        self.selected = self.reason = self.queries_needed = self.at = None

    def bound(self, p: GraphPoint) -> float:
        return bound_of(p.recall, p.recall_sd, p.queries, self.scale)

    def held(self, p: GraphPoint) -> np.ndarray:
        key = traversal_key(p)
        if key not in self.measured:
            self.measured[key] = self.held_out(p)
        return self.measured[key]

    def accept(self, p: GraphPoint) -> bool:
        """Whether `p` is promised; called in the DSE's order, best first."""
        if self.bound(p) < self.goal - TOLERANCE:
            return False
        if self.selected is None:
            self.selected = p
        return self.held_out is None or float(self.held(p).mean()) >= self.goal - TOLERANCE

    def pooled(self, p: GraphPoint) -> tuple[float, float, int]:
        """(mean, sd, queries) of `p`'s R@k over selection and held-out queries together (the
        selection alone where no held-out recall is measured)."""
        if self.held_out is None:
            return p.recall, p.recall_sd, p.queries
        h = self.held(p)
        n1, n2 = p.queries, h.size
        m = (n1 * p.recall + h.sum()) / (n1 + n2)
        ss = (n1 - 1) * p.recall_sd**2 + n1 * (p.recall - m) ** 2 + ((h - m) ** 2).sum()
        return float(m), float(np.sqrt(ss / max(n1 + n2 - 1, 1))), n1 + n2

    def settle(self, points: list[GraphPoint]) -> None:
        """Why no point that fits is promised (points: every point the DSE evaluated)."""
        fits = [p for p in points if p.fits]
        if not fits:
            self.reason = "resources"
            return
        if self.selected is not None:  # the bound passed, the held-out queries never agreed
            tried = [p for p in fits if traversal_key(p) in self.measured]
            self.at = max(tried, key=lambda p: float(self.held(p).mean()))
            self.reason = "held-out"
            m, sd, n = self.pooled(self.selected)
            self.queries_needed = self._more(m, sd, n)
            return
        top = max(fits, key=lambda p: p.recall)
        m, sd, n = self.pooled(top)
        self.at = top
        if m < self.goal - TOLERANCE:
            self.reason = "below"
        elif m - PROMISE_Z * float(build_sd(m, self.scale)) < self.goal - TOLERANCE:
            self.reason = "training"
        else:
            self.reason = "queries"
            needs = [(self._more(p.recall, p.recall_sd, p.queries), p) for p in fits]
            needs = [(q, p) for q, p in needs if q is not None]
            if needs:
                self.queries_needed, self.at = min(needs, key=lambda t: t[0])

    def _more(self, mean: float, sd: float, n: int) -> int | None:
        """Queries (selection and held-out together) whose selection part would put the bound
        (`bound_of`) at the goal, planned from the sample widened as the bound widens it (from a
        few queries that all hit, the plain mean and spread, 1 and 0, would ask for far too few),
        else from the plain one; None where no sample would (the build spread alone is wider
        than the recall's distance from the goal)."""
        goal = self.goal - TOLERANCE
        for m, s in (widened(mean, sd, n)[:2], (mean, sd)):
            m, s = float(m), float(s)
            if m - PROMISE_Z * float(build_sd(m, self.scale)) < goal:
                continue
            lo, hi = 1, 2
            while bound_of(m, s, hi, self.scale) < goal:
                lo, hi = hi, hi * 2
                if hi > 1 << 40:
                    return None
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if bound_of(m, s, mid, self.scale) >= goal else (mid, hi)
            return math.ceil(hi / (1 - HOLDOUT_FRACTION))
        return None

    def text(self, goal: str, space: GraphSpace) -> str:
        """Why no design is promised, in a sentence a user can act on (`holdout.unpromised_text`'s style)."""
        if self.reason == "resources":
            return "no design fits the board under the utilisation cap"
        p = self.at
        where = f"l {p.l}, (mg, mc) = ({p.mg}, {p.mc}), {p.units} BFC unit(s), Bloom {p.bloom_bits} bits"
        if self.reason in ("below", "training"):
            m = self.pooled(p)[0]
            extra = (
                f"; a graph built again falls below more than {1 - PROMISE_LEVEL:.1%} of the time"
                if self.reason == "training"
                else ""
            )
            why = (
                "its recall is within the graph-build spread of the goal"
                if self.reason == "training"
                else REASONS["below"]
            )
            return f"{why} (best R@{space.k} that fits {m:.3f}, at {where}{extra})"
        tell = (
            f"about {self.queries_needed:,} queries would tell (from the observed per-query spread)"
            if self.queries_needed
            else "the whole sample would do at this size, the split came out low: try another --seed"
        )
        if self.reason == "held-out":
            return (
                f"{REASONS['held-out']}: {float(self.held(p).mean()):.3f} at {where}, where the selection queries' "
                f"{PROMISE_LEVEL:.1%} lower bound reaches {goal}; {tell}"
            )
        return (
            f"{REASONS['queries']}: the selection queries' {PROMISE_LEVEL:.1%} lower bound is "
            f"{self.bound(p):.3f} (R@{space.k} {p.recall:.3f} on {p.queries} queries, at "
            f"{where}); {tell}"
        )

    def record(self) -> dict:
        """dse.json's fields of the promise: the point the bound alone chose, the held-out recall
        of each traversal measured, and why none is promised."""
        out = {
            "rule": f"selection lower bound ({PROMISE_LEVEL:.1%}, build spread {self.scale:g} x sqrt(1 - R)) "
            + ("and held-out mean reach the goal" if self.held_out is not None else "reaches the goal"),
            "holdout_fraction": HOLDOUT_FRACTION,
            "selected": None
            if self.selected is None
            else self.selected.to_dict() | {"bound": self.bound(self.selected)},
            "held_out_measured": [
                {
                    "units": k[0],
                    "l": k[1],
                    "bloom_bits": k[2],
                    "mg": k[3],
                    "mc": k[4],
                    "recall": round(float(v.mean()), 6),
                }
                for k, v in sorted(self.measured.items())
            ],
        }
        if self.reason is not None:
            out |= {"reason": self.reason, "queries_needed": self.queries_needed}
        return out
