"""Draft/final query pairs: a query before and after a RAG pipeline rewrites it (for lookahead prefetch).

Why: TeleRAG (../shared/seeds/rag-telerag.txt, §3.3) prefetches the IVF lists of the *draft*
query (the user's question before the pre-retrieval LLM rewrites it, or the previous round's
query) while the LLM generates the *final* one; how well that works depends on how many of the
final query's probed cells the draft's cells cover (its Table 1: 61.6-91.5 % over three QA sets and
five rewriting pipelines, 100 % without rewriting). No rewritten-query set ships here, so a draft is
made from the final query by a deterministic perturbation that mimics rewriting:

    draft_i = unit((1 - mix) * final_i + mix * final_pi(i) + noise * g_i / sqrt(d))

- `final_pi(i)` is another query of the set (`pi` a seeded derangement): rewriting adds or drops
  content, so the draft drifts towards another topic of the same corpus, not in a random direction
  (a query's neighbourhood in a real embedding space is anisotropic);
- `g_i` is standard normal (seeded): the paraphrase's small changes in wording, isotropic;
- `unit` keeps the drafts on the unit sphere, like the sentence embeddings (angular metric).

`mix` sets how far the draft drifts and so the cell coverage; `calibrate_mix` finds, by bisection,
the `mix` whose mean coverage of the final's `nprobe` cells by the draft's `nprobe` cells equals a
target on given IVF centroids (coverage falls as `mix` grows). `TEXT_MIX` is that `mix` for
builtin:text-384 at TeleRAG's mean coverage, measured by benchmarks/host_tier.py. Everything is
seeded: the same arguments give byte-identical arrays.
"""

from __future__ import annotations

import numpy as np

from fanns.datasets.builtins import load_builtin
from fanns.datasets.dataset import normalize_rows
from fanns.errors import FannsError

TELERAG_COVERAGE = 0.79
"""Mean cell coverage to calibrate for: TeleRAG Table 1 (nprobe 512 of 4096 lists), the mean of its
15 pipelines with query rewriting (HyDE, SubQ, Iter, IRG, FLARE on NQ, HotpotQA, TriviaQA: 61.6-91.5 %,
mean 79 %); S-RAG, which does not rewrite (100 %), left out."""
TEXT_MIX = 0.2997
"""`mix` for builtin:text-384 whose mean coverage is `TELERAG_COVERAGE` with `TEXT_NOISE`: `calibrate_mix`
on its IVF1024 centroids (faiss k-means, 20 iterations, seed 1), nprobe 32, 12 bisection steps gave
0.2997 at a coverage of 0.790 (benchmarks/host_tier.py runs the fit again and prints it)."""
TEXT_NOISE = 0.1
"""Paraphrase noise of the text set's drafts (norm of the noise vector relative to a unit query)."""
PAIR_SEED = 11


def derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A permutation of range(n) with no fixed point (n >= 2): a seeded shuffle, rotated by one."""
    if n < 2:
        raise FannsError(f"{n} queries: a draft mixes in another query, so at least 2 are needed")
    perm = rng.permutation(n)
    out = np.empty(n, dtype=np.int64)
    out[perm] = np.roll(perm, 1)
    return out


def draft_queries(finals: np.ndarray, mix: float, noise: float, seed: int = PAIR_SEED) -> np.ndarray:
    """The draft of every final query [nq, d] (see the module docstring), float32 unit rows."""
    finals = np.asarray(finals, dtype=np.float64)
    if finals.ndim != 2:
        raise FannsError(f"final queries of shape {finals.shape}: expected [nq, d]")
    if not (0.0 <= mix <= 1.0 and noise >= 0.0):
        raise FannsError(f"mix {mix}, noise {noise}: mix must lie in [0, 1] and noise be >= 0")
    unit = normalize_rows(finals).astype(np.float64)
    rng = np.random.default_rng(seed)
    other = unit[derangement(unit.shape[0], rng)]
    g = rng.standard_normal(unit.shape) / np.sqrt(unit.shape[1])
    return normalize_rows((1.0 - mix) * unit + mix * other + noise * g)


def nearest_cells(queries: np.ndarray, centroids: np.ndarray, count: int) -> np.ndarray:
    """[nq, count] ids of the `count` nearest centroids (L2) of each query, nearest first (ties to
    the smaller id)."""
    q = np.asarray(queries, dtype=np.float64)
    c = np.asarray(centroids, dtype=np.float64)
    dist = (c * c).sum(1)[None, :] - 2.0 * q @ c.T
    return np.lexsort((np.broadcast_to(np.arange(c.shape[0]), dist.shape), dist), axis=1)[:, :count]


def coverage(draft_cells: np.ndarray, final_cells: np.ndarray) -> np.ndarray:
    """[nq] share of each final query's cells that are among its draft's cells."""
    return np.array([np.isin(f, d).mean() for d, f in zip(draft_cells, final_cells)])


def calibrate_mix(
    finals: np.ndarray,
    centroids: np.ndarray,
    nprobe: int,
    target: float = TELERAG_COVERAGE,
    noise: float = TEXT_NOISE,
    seed: int = PAIR_SEED,
    steps: int = 20,
) -> tuple[float, float]:
    """(mix, its mean coverage): the `mix` whose drafts' `nprobe` cells cover `target` of the finals'
    `nprobe` cells on average, by bisection over [0, 1] (coverage falls as mix grows)."""
    final_cells = nearest_cells(normalize_rows(finals), centroids, nprobe)

    def mean_coverage(mix: float) -> float:
        drafts = draft_queries(finals, mix, noise, seed)
        return float(coverage(nearest_cells(drafts, centroids, nprobe), final_cells).mean())

    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean_coverage(mid) > target else (lo, mid)
    mix = round((lo + hi) / 2, 4)
    return mix, mean_coverage(mix)


def text_query_pairs(
    mix: float = TEXT_MIX, noise: float = TEXT_NOISE, seed: int = PAIR_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """(drafts, finals) float32 [1000, 384]: builtin:text-384's queries as the finals and their
    drafts (`draft_queries`); builds the text set on first use (the 'text' extra)."""
    finals = normalize_rows(np.asarray(load_builtin("text-384").queries))
    return draft_queries(finals, mix, noise, seed), finals
