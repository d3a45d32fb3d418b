"""Choosing a search setting on one query sample and promising the recall of another.

Why: the smallest nprobe that reaches a goal on a query sample is chosen *because* that sample
happens to reach the goal there, so its recall on the same sample is biased upwards; and a
retrained index (another seed, the next data) lands lower still. The explorer therefore splits
its queries into a selection part and a held-out part (`split_queries`, seeded and
deterministic), picks the smallest nprobe whose selection recall reaches the goal plus
`TRAINING_MARGIN`, and promises the held-out recall with a bootstrap interval over the held-out
queries (`bootstrap_interval`).
"""

from __future__ import annotations

import numpy as np

from fanns.errors import FannsError

HOLDOUT_FRACTION = 0.5
"""Share of the query sample held out for the promised recall (the rest chooses nprobe)."""

SPLIT_SALT = 0x5E1EC7
"""Added to the exploration seed for the split, so the split does not share the training sample's stream."""

TRAINING_MARGIN = 0.04
"""Recall added to the goal when choosing nprobe on the selection queries, to cover the recall
spread between retrains (other training sample, other k-means starts). Measured on
builtin:sift-10k, IVF32,PQ16, training seeds 0-5, all 200 queries (so only training varied), at
the nprobe seed 0 needs (2): the standard deviation over seeds was 0.0199 for 1-R@10 = 0.8 and
0.0092 for R@10 = 0.6 — the same measurement as `python benchmarks/recall_holdout.py --sets
sift-10k --seeds 6` (its `sd` column). Two standard deviations of the noisier measure, 0.04,
leave a retrain below the goal about 2.5 % of the time. The 3-seed runs the README quotes give
0.0275 (sift-10k) and 0.0076 (deep-10k) for 1-R@10, 0.0059 and 0.0165 for R@10: with so few
seeds the spread is itself uncertain by about a factor of two."""

CONFIDENCE = 0.95
"""Two-sided confidence of the held-out recall interval."""

BOOTSTRAP_RESAMPLES = 2000
"""Resamples of the held-out queries in `bootstrap_interval`."""


def split_queries(nq: int, seed: int, fraction: float = HOLDOUT_FRACTION) -> tuple[np.ndarray, np.ndarray]:
    """(selection, held-out) query rows of a sample of `nq`: disjoint, sorted, together all of
    them; the same for the same (nq, seed, fraction). Both parts get at least one query."""
    if nq < 2:
        raise FannsError(
            f"{nq} query: choosing nprobe on some queries and measuring recall on others needs at least 2",
            hint="use a dataset with more queries (or a larger --queries)",
        )
    held = min(nq - 1, max(1, round(nq * fraction)))
    perm = np.random.default_rng(seed + SPLIT_SALT).permutation(nq)
    return np.sort(perm[held:]), np.sort(perm[:held])


def selection_target(goal: float, margin: float = TRAINING_MARGIN) -> float:
    """The recall the selection queries must reach: the goal plus the margin, at most 1."""
    return min(1.0, goal + margin)


def bootstrap_interval(
    per_query: np.ndarray, seed: int = 0, confidence: float = CONFIDENCE, resamples: int = BOOTSTRAP_RESAMPLES
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-query recalls, resampling queries
    (per-query recall is not a coin flip, so a binomial interval would be too narrow)."""
    v = np.asarray(per_query, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise FannsError("a recall interval needs at least one query")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    block = max(1, (1 << 22) // v.size)
    for start in range(0, resamples, block):
        n = min(block, resamples - start)
        means[start : start + n] = v[rng.integers(0, v.size, (n, v.size))].mean(1)
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])
    return float(lo), float(hi)
