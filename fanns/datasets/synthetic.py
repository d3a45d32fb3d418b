"""Deterministic synthetic datasets that behave like SIFT and Deep under IVF-PQ.

Real descriptor sets are neither uniform nor a few round blobs: they are many clusters of very
different sizes and spreads, each spread along a few local directions (low intrinsic dimension),
grouped into larger super-clusters. Uniform or isotropic data in 96-128 dimensions has almost
no near neighbours, which makes IVF-PQ recall curves look nothing like the real ones. The
generator therefore draws

* super-cluster centres, then cluster centres around them (two scales of structure),
* cluster sizes from a log-normal law (a few big cells, many small ones: the access skew that
  makes per-cell work imbalanced on hardware),
* per cluster a spread (log-normal) and a random low-rank basis (`latent` directions) plus a
  small isotropic noise.

The constants were tuned so that IVF1024,Flat on the 100k sets needs nprobe 8-16 for R@10 =
0.9 (R@10 about 0.4 at nprobe 1), the shape of the SIFT1M / Deep1M curves.

SIFT-like: non-negative sparse-ish centres (gamma with shape < 1: many small values), then the
SIFT descriptor normalisation (unit length, clip at 0.2, renormalise, x512) rounded and clipped
to uint8. Deep-like: centres with a decaying per-dimension variance (a PCA-compressed CNN
feature) and unit-length rows, float32. Queries are drawn from the same mixture as the base.
One `numpy.random.Generator(PCG64(seed))` drives everything, so the output is identical for a
given (seed, sizes) on every machine.
"""

from __future__ import annotations

import numpy as np

GENERATOR_VERSION = 1
"""Bump when the generators change: cached built-ins are stored per version."""


def _mixture(
    rng: np.random.Generator,
    n: int,
    centres: np.ndarray,
    spread: np.ndarray,
    latent: int,
    noise: float,
) -> np.ndarray:
    """`n` points of a mixture of low-rank Gaussian clusters (weights log-normal)."""
    k, d = centres.shape
    weights = rng.lognormal(0.0, 1.0, k)
    labels = rng.choice(k, size=n, p=weights / weights.sum())
    out = np.empty((n, d), dtype=np.float64)
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(k + 1))
    for c in range(k):
        rows = order[bounds[c] : bounds[c + 1]]
        if rows.size == 0:
            continue
        basis = rng.standard_normal((latent, d)) / np.sqrt(latent)
        z = rng.standard_normal((rows.size, latent))
        iso = rng.standard_normal((rows.size, d)) * noise
        out[rows] = centres[c] + spread[c] * (z @ basis + iso)
    return out


def _split(rng: np.random.Generator, x: np.ndarray, nq: int) -> tuple[np.ndarray, np.ndarray]:
    perm = rng.permutation(x.shape[0])
    return x[perm[nq:]], x[perm[:nq]]


def sift_like(n: int, nq: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """SIFT-like 128-d uint8 vectors: (base [n,128], queries [nq,128])."""
    rng = np.random.default_rng(seed)
    d = 128
    n_clusters = max(16, (n + nq) // 1000)
    n_super = max(4, n_clusters // 20)
    supers = rng.gamma(0.35, 1.0, (n_super, d))
    parent = rng.integers(0, n_super, n_clusters)
    centres = supers[parent] + rng.gamma(0.35, 0.6, (n_clusters, d))
    spread = 0.6 * rng.lognormal(0.0, 0.4, n_clusters)
    x = _mixture(rng, n + nq, centres, spread, latent=16, noise=0.25)
    x = np.maximum(x, 0.0)
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    x = np.minimum(x, 0.2)
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    x = np.clip(np.rint(x * 512.0), 0, 255).astype(np.uint8)
    return _split(rng, x, nq)


def deep_like(n: int, nq: int, seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Deep-like 96-d float32 unit vectors: (base [n,96], queries [nq,96])."""
    return clustered(n, nq, 96, seed)


def clustered(n: int, nq: int, d: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Deep-like float32 unit vectors of any dimension `d` (>= 1): (base [n,d], queries [nq,d]).

    The same two-scale cluster mixture as `deep_like`, for shapes the built-ins do not have (the
    design-space fuzz draws d from 1 to 2048). At d = 1 the mixture's values are kept as they are:
    normalised, every vector would be +1 or -1 (two distinct points, every distance 0 or 4)."""
    rng = np.random.default_rng(seed)
    spectrum = 1.0 / np.sqrt(1.0 + np.arange(d) / 8.0)
    n_clusters = max(16, (n + nq) // 1000)
    n_super = max(4, n_clusters // 20)
    supers = rng.standard_normal((n_super, d)) * spectrum
    parent = rng.integers(0, n_super, n_clusters)
    centres = supers[parent] + 0.6 * rng.standard_normal((n_clusters, d)) * spectrum
    spread = 0.6 * rng.lognormal(0.0, 0.4, n_clusters)
    x = _mixture(rng, n + nq, centres, spread, latent=min(16, d), noise=0.25)
    if d > 1:  # a 1-d unit vector is +1 or -1: the set would hold two distinct points
        x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    return _split(rng, x.astype(np.float32), nq)


def zipf_clustered(n: int, nq: int, d: int = 128, zipf: float = 1.0, seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Float32 unit vectors whose clusters have Zipf-like weights (cluster r of C weighs
    (r + 1) ** -`zipf`, in random order) and log-normal spreads: (base [n,d], queries [nq,d]).

    Why: the built-ins' log-normal weights give k-means lists with a max/mean near 3; real
    descriptor sets (SIFT1M at nlist 1024: max/mean 5-10, the hottest 20 % of lists holding about
    half the codes) are more skewed, and the per-query work of an IVF-PQ accelerator follows
    the probed lists' sizes. Queries come from the same mixture, so hot lists are probed often
    (the access skew of real queries)."""
    rng = np.random.default_rng(seed)
    spectrum = 1.0 / np.sqrt(1.0 + np.arange(d) / 8.0)
    n_clusters = max(16, (n + nq) // 500)
    n_super = max(4, n_clusters // 20)
    supers = rng.standard_normal((n_super, d)) * spectrum
    centres = supers[rng.integers(0, n_super, n_clusters)] + 0.6 * rng.standard_normal((n_clusters, d)) * spectrum
    weights = rng.permutation((1.0 + np.arange(n_clusters)) ** -zipf)
    labels = rng.choice(n_clusters, size=n + nq, p=weights / weights.sum())
    # heavy clusters are dense (spread ~ weight^-1/4 around the mean): k-means keeps a tight
    # heavy cluster in one list rather than splitting it, which is what makes real lists uneven
    spread = 0.15 * rng.lognormal(0.0, 0.3, n_clusters) * (weights / weights.mean()) ** -0.25
    latent = min(16, d)
    x = np.empty((n + nq, d), dtype=np.float64)
    for c in range(n_clusters):
        rows = np.flatnonzero(labels == c)
        if rows.size:
            basis = rng.standard_normal((latent, d)) / np.sqrt(latent)
            noise = rng.standard_normal((rows.size, d)) * 0.25
            x[rows] = centres[c] + spread[c] * (rng.standard_normal((rows.size, latent)) @ basis + noise)
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    return _split(rng, x.astype(np.float32), nq)
