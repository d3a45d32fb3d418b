"""Recall of search results against ground truth, the measures both accelerators report
(R@k, hits per query); the IVF-PQ sweep of recall at every nprobe is `fanns.index.ivfpq_recall`.
"""

from __future__ import annotations

import numpy as np


def hits(found: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per query, how many of the ids in `found` [nq, a] are in `truth` [nq, b] (ids unique per row)."""
    nq = truth.shape[0]
    span = int(max(found.max(initial=0), truth.max(initial=0))) + 2
    row = np.arange(nq, dtype=np.int64)[:, None] * span
    truth_keys = np.sort((truth.astype(np.int64) + 1 + row).ravel())
    found_keys = found.astype(np.int64) + 1 + row  # -1 padding -> never matches a truth key
    pos = np.clip(np.searchsorted(truth_keys, found_keys), 0, truth_keys.size - 1)
    return (truth_keys[pos] == found_keys).sum(1)


def measure_recall(found: np.ndarray, gt: np.ndarray, measure: tuple[int, int]) -> float:
    """The recall of a measure (k, truth) (`fanns.index.goals.RecallGoal.measure`): mean over
    queries of |found[:k] ∩ gt[:truth]| / truth."""
    k, truth = measure
    return float(hits(found[:, :k], gt[:, :truth]).mean() / truth)


def recall_at(found: np.ndarray, gt: np.ndarray, k: int) -> float:
    """R@k = mean over queries of |found[:k] ∩ gt[:k]| / k."""
    return float(hits(found[:, :k], gt[:, :k]).mean() / k)


def recall_at_k(ids: np.ndarray, gt: np.ndarray, k: int) -> float:
    """Mean R@k = |found[:k] ∩ truth[:k]| / k over the queries."""
    hits = [len(np.intersect1d(a[:k][a[:k] >= 0], b[:k])) for a, b in zip(ids, gt)]
    return float(np.mean(hits) / k)
