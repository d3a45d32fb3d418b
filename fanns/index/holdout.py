"""Choosing a search setting on one query sample and promising the recall of another.

Why: the smallest nprobe that reaches a goal on a query sample is chosen *because* that sample
happens to reach the goal there, so its recall on the same sample is biased upwards; a small
sample's mean is itself uncertain (50 queries carry about +-0.06 on a recall near 0.8); and a
retrained index (another seed, the next data) lands elsewhere again. The explorer therefore
splits its queries into a selection part and a held-out part (`split_queries`, seeded and
deterministic) and promises a goal only when

1. the selection queries' *lower confidence bound* reaches it (`lower_bound`: the mean less
   `PROMISE_Z` standard errors of the per-query recall, with the training spread `TRAINING_SD`
   added in quadrature, on the sample widened by Agresti and Coull's pseudo-queries so a small
   or saturated sample cannot claim a spread of zero), and
2. the held-out queries, which took no part in the choice, reach the goal at that nprobe too;
   where they do not, nprobe is raised until they do (`choose_nprobe`).

The promise in numbers: the nprobe chosen has a recall below the goal, on the query
distribution the sample came from, at most 1 - `PROMISE_LEVEL` = 2.5 % of the time
(`tests/explore/test_holdout.py` measures it over thousands of query samples,
`benchmarks/recall_promise.py` over retrained indexes). Where no nprobe passes, `promise` says
why: the index's recall is below the goal (or within the training spread of it), or the sample
is too small to tell — with the number of queries that would tell, from the observed per-query
spread (`queries_needed`). The held-out recall is reported with a bootstrap interval over the
held-out queries (`bootstrap_interval`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from fanns.errors import FannsError

HOLDOUT_FRACTION = 0.5
"""Share of the query sample held out for the promised recall (the rest chooses nprobe)."""

SPLIT_SALT = 0x5E1EC7
"""Added to the exploration seed for the split, so the split does not share the training sample's stream."""

TRAINING_SD = 0.02
"""Standard deviation of an index's recall between retrains (other training sample, other k-means
starts). Measured on builtin:sift-10k, IVF32,PQ16, training seeds 0-5, all 200 queries (so only
training varied), at the nprobe seed 0 needs (2): 0.0199 for 1-R@10 = 0.8 and 0.0092 for
R@10 = 0.6 — the same measurement as `python benchmarks/recall_holdout.py --sets sift-10k
--seeds 6` (its `sd` column); the noisier measure is taken. The 3-seed runs the README quotes
give 0.0275 (sift-10k) and 0.0076 (deep-10k) for 1-R@10, 0.0059 and 0.0165 for R@10: with so few
seeds the spread is itself uncertain by about a factor of two. On a large query sample the
bound's margin tends to `PROMISE_Z` x 0.02 = 0.039 (the 0.04 the explorer added before it
had a bound)."""

PROMISE_LEVEL = 0.975
"""One-sided confidence of the promise: the lower end of a two-sided 95 % interval."""

PROMISE_Z = NormalDist().inv_cdf(PROMISE_LEVEL)
"""Standard errors below the mean the bound sits (1.96)."""

CONFIDENCE = 0.95
"""Two-sided confidence of the held-out recall interval."""

BOOTSTRAP_RESAMPLES = 2000
"""Resamples of the held-out queries in `bootstrap_interval`."""

TOLERANCE = 1e-9
"""A recall this close below the goal counts as reaching it (curves are stored rounded)."""

REASONS = {
    "below": "its recall stays below the goal",
    "training": "its recall is within the training spread of the goal",
    "queries": "the query sample is too small to tell",
    "held-out": "the held-out queries stay below the goal",
    "hardware": "the hardware-faithful recall stays below the goal",
}
"""Why a goal is not promised (`Promise.reason`), as `unpromised_text` says it."""


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


def lower_bound(mean, sd, n, training_sd: float = TRAINING_SD, z: float = PROMISE_Z) -> np.ndarray:
    """The lower confidence bound of a recall measured as the mean `mean` of `n` per-query recalls
    in [0, 1] with standard deviation `sd` (ddof 1); any shapes that broadcast.

    The sample is widened by z^2 / 2 pseudo-queries of recall 0 and as many of recall 1 (Agresti
    and Coull, "Approximate is better than 'exact' for interval estimation of binomial
    proportions", The American Statistician 52(2), 1998): for 1-R@k, a 0/1 recall per query,
    this is their interval, which keeps its confidence on small samples and near recall 1, where
    the plain mean - z standard errors claims certainty from ten queries that all hit. The
    training spread adds in quadrature to the standard error."""
    m, s, total = widened(mean, sd, n, z)
    return m - z * np.sqrt(s**2 / total + training_sd**2)


def widened(mean, sd, n, z: float = PROMISE_Z) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, standard deviation, size) of a sample of `n` per-query recalls with mean `mean` and
    standard deviation `sd`, widened by z^2 / 2 pseudo-queries of recall 0 and as many of 1."""
    mean, sd, n = (np.asarray(v, dtype=np.float64) for v in (mean, sd, n))
    pseudo = z * z
    total = n + pseudo
    m = (n * mean + pseudo / 2) / total
    squares = np.maximum(n - 1, 0) * sd**2 + n * mean**2 + pseudo / 2
    return m, np.sqrt(np.maximum(squares - total * m**2, 0.0) / (total - 1)), total


def first_true(mask: np.ndarray) -> np.ndarray:
    """Along the last axis, the 1-based position of the first True, 0 where there is none."""
    mask = np.asarray(mask, dtype=bool)
    return np.where(mask.any(-1), mask.argmax(-1) + 1, 0)


def passing(
    selection: np.ndarray,
    selection_sd: np.ndarray,
    n_selection: int,
    held: np.ndarray,
    goal: float,
    training_sd: float = TRAINING_SD,
    z: float = PROMISE_Z,
) -> tuple[np.ndarray, np.ndarray]:
    """Per nprobe (the last axis of the curves; leading axes: many samples at once), whether the
    selection bound reaches `goal`, and whether the held-out mean reaches it too."""
    bound = lower_bound(selection, selection_sd, n_selection, training_sd, z) >= goal - TOLERANCE
    return bound, bound & (np.asarray(held) >= goal - TOLERANCE)


def choose_nprobe(
    selection: np.ndarray,
    selection_sd: np.ndarray,
    n_selection: int,
    held: np.ndarray,
    goal: float,
    training_sd: float = TRAINING_SD,
    z: float = PROMISE_Z,
) -> tuple[np.ndarray, np.ndarray]:
    """(chosen by the selection queries alone, promised) nprobe, 1-based, 0 for none (`passing`):
    the smallest nprobe whose selection bound reaches `goal`, and the smallest whose held-out
    mean reaches it too — nprobe raised until the queries that did not choose it agree."""
    bound, both = passing(selection, selection_sd, n_selection, held, goal, training_sd, z)
    return first_true(bound), first_true(both)


def queries_needed(
    mean: float, sd: float, goal: float, training_sd: float = TRAINING_SD, z: float = PROMISE_Z
) -> int | None:
    """The smallest query sample (selection and held-out parts together) whose selection part
    would, at this mean and per-query spread, put the bound at the goal; None when no sample
    would (the training spread alone is wider than the recall's distance from the goal)."""
    if mean - z * training_sd < goal - TOLERANCE:
        return None

    def enough(n: int) -> bool:
        return bool(lower_bound(mean, sd, n, training_sd, z) >= goal - TOLERANCE)

    hi = 2
    while not enough(hi):
        hi *= 2
        if hi > 1 << 40:
            return None
    lo = hi // 2  # enough(hi), and lo = 1 or not enough(lo)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return math.ceil(hi / (1 - HOLDOUT_FRACTION))


@dataclass(frozen=True)
class SplitCurves:
    """One recall measure of one index on a split query sample, per nprobe (1..P): the selection
    queries' mean and per-query standard deviation, the held-out queries' mean, and the whole
    sample's mean and standard deviation (the best estimate when the goal is not promised)."""

    selection: np.ndarray
    selection_sd: np.ndarray
    held: np.ndarray
    pooled: np.ndarray
    pooled_sd: np.ndarray
    n_selection: int
    n_held: int

    @classmethod
    def of(cls, per_query: np.ndarray, selection: np.ndarray, held: np.ndarray) -> SplitCurves:
        """From per-query recalls [queries, nprobe] and the split's rows."""
        r = np.asarray(per_query, dtype=np.float64)
        return cls(
            r[selection].mean(0),
            _sd(r[selection]),
            r[held].mean(0),
            r.mean(0),
            _sd(r),
            int(len(selection)),
            int(len(held)),
        )

    @classmethod
    def joined(cls, parts: list[SplitCurves]) -> SplitCurves:
        """The curves of consecutive nprobe ranges of one sample, one after the other."""
        arrays = [np.concatenate([getattr(c, f) for c in parts]) for f in ("selection", "selection_sd", "held")]
        pooled = [np.concatenate([getattr(c, f) for c in parts]) for f in ("pooled", "pooled_sd")]
        return cls(*arrays, *pooled, parts[0].n_selection, parts[0].n_held)


def _sd(r: np.ndarray) -> np.ndarray:
    return r.std(0, ddof=1) if r.shape[0] > 1 else np.zeros(r.shape[1])


@dataclass(frozen=True)
class Promise:
    """What `promise` decided for one goal and one index: the nprobe promised, or why none is."""

    nprobe: int | None
    selected: int | None  # the nprobe the selection bound alone chose (raised when held-out disagreed)
    reason: str | None  # a key of REASONS when nprobe is None
    queries_needed: int | None = None  # with reason "queries": a sample that would tell
    at: int = 1  # the nprobe the reason refers to (the best one seen)

    def record(self, c: SplitCurves, training_sd: float = TRAINING_SD) -> dict:
        """The fields of explore.json's entry of a goal not promised: why, and the figures the
        reason quotes (at nprobe `at`)."""
        p = self.at - 1
        return {
            "reason": self.reason,
            "queries_needed": self.queries_needed,
            "at_nprobe": self.at,
            "selection_bound": round(float(lower_bound(c.selection, c.selection_sd, c.n_selection, training_sd)[p]), 6),
            "holdout_recall": round(float(c.held[p]), 6),
        }


def promise(c: SplitCurves, goal: float, training_sd: float = TRAINING_SD, z: float = PROMISE_Z) -> Promise:
    """The smallest nprobe promised for `goal` (`choose_nprobe`), or the reason there is none:
    the best recall seen is below the goal ("below") or within `z` training spreads of it
    ("training"): no sample size would help; the held-out queries stay below where the selection
    bound passes ("held-out"); or the sample is too small ("queries", with `queries_needed` at
    the nprobe where the fewest would do, from the whole sample's mean and spread there, widened
    as the bound widens them)."""
    selected, promised = (
        int(v) for v in choose_nprobe(c.selection, c.selection_sd, c.n_selection, c.held, goal, training_sd, z)
    )
    if promised:
        return Promise(promised, selected, None)
    best = int(np.argmax(c.pooled)) + 1
    if c.pooled[best - 1] < goal - TOLERANCE:
        return Promise(None, None, "below", at=best)
    if c.pooled[best - 1] - z * training_sd < goal - TOLERANCE:
        return Promise(None, None, "training", at=best)
    # planned from the whole sample widened as the bound widens it (from 20 queries that all hit,
    # the plain mean and spread, 1 and 0, would ask for far too few), else from the plain ones
    options = []
    for stats in (widened(c.pooled, c.pooled_sd, c.n_selection + c.n_held, z)[:2], (c.pooled, c.pooled_sd)):
        needs = [queries_needed(float(m), float(s), goal, training_sd, z) for m, s in zip(*stats)]
        options = options or [(n, p) for p, n in enumerate(needs, 1) if n is not None]
    need, at = min(options)
    more = need if need > c.n_selection + c.n_held else None  # None: this many would do, the split came out low
    if selected:
        # the selection bound passed but the held-out half never confirmed: the halves disagree
        held = int(np.argmax(c.held[selected - 1 :])) + selected
        return Promise(None, selected, "held-out", more, at=held)
    return Promise(None, None, "queries", more, at=at)


def unpromised_text(entry: dict, goal: str) -> str:
    """Why explore.json's entry of an index does not promise `goal`, in a sentence a user can act on."""
    reason = entry.get("reason")
    best = f"best recall {entry.get('best_recall') or 0:.3f} at nprobe {entry.get('best_nprobe')}"
    at = entry.get("at_nprobe")
    more = entry.get("queries_needed")
    tell = (
        f"about {more:,} queries would tell (from the observed per-query spread)"
        if more
        else "the whole sample's recall would do at this size, the split came out low: try another --seed"
    )
    if reason == "queries":
        return (
            f"{REASONS[reason]}: at nprobe {at} the selection queries' {PROMISE_LEVEL:.1%} lower bound is "
            f"{entry['selection_bound']:.3f} ({best}); {tell}"
        )
    if reason == "held-out":
        return (
            f"{REASONS[reason]}: {entry['holdout_recall']:.3f} at nprobe {at}, where the selection queries' bound "
            f"reaches {goal}; {tell}"
        )
    if reason == "hardware":
        return (
            f"{REASONS[reason]}: {entry.get('hw_recall') or 0:.3f} at nprobe {at} ({best}); wider number formats "
            "may help (fanns explore --pq-vec-bits, --pq-lut-bits)"
        )
    if reason == "training":
        return f"{REASONS[reason]} ({best}; a retrain falls below more than {1 - PROMISE_LEVEL:.1%} of the time)"
    return f"{REASONS['below']} ({best})"


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
