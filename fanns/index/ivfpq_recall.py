"""Recall at every nprobe from one incremental pass over the probed cells.

faiss's result at ``nprobe = p`` is the top K over the codes of the query's p nearest cells, so
it equals the top K of (the result at p - 1) merged with (the top K of cell p alone). The
sweep asks faiss for the per-cell top K with ``search_preassigned`` (nprobe 1, the query's p-th
cell, its true coarse distance — faiss's own distances, no re-implementation) and merges, so
the recall at *every* nprobe from 1 to P costs about as much as one search at nprobe P. That
makes "the smallest nprobe that meets the goal" exact even where the curve is not monotone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext

import faiss
import numpy as np

from fanns.index.ivfpq import apply_pretransform
from fanns.index.recall import hits
from fanns.progress import progress_bar


def recall_hits(
    index,
    queries: np.ndarray,
    gt: np.ndarray,
    measures: Sequence[tuple[int, int]],
    max_nprobe: int,
    label: str = "sweep",
    on_step: Callable[[], None] | None = None,
    done: Callable[[int, dict[tuple[int, int], np.ndarray]], bool] | None = None,
) -> dict[tuple[int, int], np.ndarray]:
    """Per measure (k, truth), the hits |top k ∩ true top `truth`| of every query at every
    nprobe, [nq, max_nprobe] — so recall on any subset of the queries (a held-out part) and its
    spread over queries come from one sweep. Recall at nprobe p is `hits[:, p - 1].mean() / truth`.

    `queries` are host vectors (float32, normalised for angular data); `gt` [nq, >= max k].
    Progress: `on_step()` after each nprobe if given (the caller's bar), else a bar of its own.
    `done(p, hits)`, asked after each nprobe p, ends the sweep there: the arrays are then [nq, p]."""

    ivf = faiss.extract_index_ivf(index)
    xq = apply_pretransform(index, queries)
    kmax = max(k for k, _ in measures)
    coarse_d, coarse_i = ivf.quantizer.search(xq, max_nprobe)
    nq = xq.shape[0]
    run_d = np.full((nq, kmax), np.inf, dtype=np.float32)
    run_i = np.full((nq, kmax), -1, dtype=np.int64)
    out = {ms: np.zeros((nq, max_nprobe), dtype=np.uint16) for ms in measures}
    saved = ivf.nprobe
    ivf.nprobe = 1
    rows = np.arange(nq)[:, None]
    try:
        with progress_bar() if on_step is None else nullcontext() as bar:
            task = bar.add_task(label, total=max_nprobe) if bar is not None else None
            for p in range(max_nprobe):
                d, i = ivf.search_preassigned(xq, kmax, coarse_i[:, p : p + 1], coarse_d[:, p : p + 1])
                all_d = np.concatenate([run_d, d], axis=1)
                all_i = np.concatenate([run_i, i], axis=1)
                order = np.argsort(all_d, axis=1, kind="stable")[:, :kmax]
                run_d, run_i = all_d[rows, order], all_i[rows, order]
                for k, truth in measures:
                    out[(k, truth)][:, p] = hits(run_i[:, :k], gt[:, :truth])
                if bar is not None:
                    bar.advance(task)
                else:
                    on_step()
                if done is not None and done(p + 1, out):
                    return {ms: h[:, : p + 1] for ms, h in out.items()}
    finally:
        ivf.nprobe = saved
    return out


def smallest_meeting(curve: np.ndarray, target: float) -> int | None:
    """The smallest nprobe (1-based) whose recall reaches `target`, or None."""
    ok = np.flatnonzero(curve >= target - 1e-12)
    return int(ok[0]) + 1 if ok.size else None
