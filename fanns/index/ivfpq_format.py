"""Choose the fixed-point number format (`fanns.numerics.IvfPqFormat`) of one IVF-PQ index.

The format is derived from the index and a sample of vectors that stand in for queries:

* ``scale`` maps the largest magnitude among the sample vectors, the sample after the OPQ
  rotation, the coarse centroids and the PQ sub-centroids to the largest `vec_bits` value, so
  nothing the datapath quantises saturates on the sample;
* ``ivf_shift`` is the smallest right shift that makes the largest exact query-to-centroid
  distance of the sample fit `ivf_dist_bits`;
* ``lut_shift`` is the smallest right shift that makes the `lut_percentile`-th percentile of the
  exact LUT entries of the sample's `nprobe` nearest cells fit `lut_bits` (entries above it
  saturate; they belong to codes far from the query, which cannot reach the top K).

All inputs of the choice are recorded in ``fmt.source``.
"""

from __future__ import annotations

import numpy as np

from fanns.errors import FannsError
from fanns.index.ivfpq import IvfPqIndexData
from fanns.numerics import IvfPqFormat, bits_for

MAX_LUT_PAIRS = 1024
"""(query, cell) pairs whose LUTs are sampled for the lut_shift percentile."""


def _exact_ivf(q: np.ndarray, c: np.ndarray) -> np.ndarray:
    return (q * q).sum(1)[:, None] - 2 * (q @ c.T) + (c * c).sum(1)[None, :]


def _exact_luts(r: np.ndarray, codebook: np.ndarray, m: int) -> np.ndarray:
    """Exact LUT entries of residuals r [n, d] against codebook [m, 256, dsub]: [n, m, 256]."""
    rs = r.reshape(r.shape[0], m, -1)
    cross = np.einsum("nmd,mkd->nmk", rs, codebook)
    return (rs * rs).sum(-1)[:, :, None] - 2 * cross + (codebook * codebook).sum(-1)[None]


MAX_CLIPPED = 0.01
"""Largest fraction of query elements that may saturate the vector format (a few outliers clip
harmlessly; more means the queries are not from the base's value range)."""


def clipped_fraction(fmt: IvfPqFormat, x: np.ndarray) -> float:
    """Fraction of the elements of host vectors `x` outside the range `fmt` represents."""
    lim = ((1 << (fmt.vec_bits - 1)) - 1) / fmt.scale
    x = np.asarray(x, dtype=np.float64)
    return float((np.abs(x) > lim * (1 + 1e-9)).mean()) if x.size else 0.0


def check_query_range(fmt: IvfPqFormat, queries: np.ndarray, what: str = "queries") -> float:
    """The clipped fraction of `queries`; an error when it exceeds MAX_CLIPPED, because the
    hardware's recall would then be that of different queries."""
    frac = clipped_fraction(fmt, queries)
    if frac > MAX_CLIPPED:
        lim = ((1 << (fmt.vec_bits - 1)) - 1) / fmt.scale
        raise FannsError(
            f"{what}: {100 * frac:.1f}% of the elements lie outside the number format's range "
            f"[-{lim:.4g}, {lim:.4g}] (set by the base vectors) and would be clipped",
            hint="queries must come from the same value range as the base vectors (same scaling and type)",
        )
    return frac


def choose_format(
    data: IvfPqIndexData,
    sample: np.ndarray,
    nprobe: int,
    vec_bits: int = 16,
    lut_bits: int = 16,
    ivf_dist_bits: int = 32,
    opq_frac_bits: int = 14,
    lut_percentile: float = 99.9,
    seed: int = 0,
) -> IvfPqFormat:
    """The IvfPqFormat for `data` (see the module docstring). `sample`: host vectors [n, d]."""
    sample = np.asarray(sample, dtype=np.float64)
    parts = [sample, data.centroids, data.codebook]
    if data.opq_matrix is not None:
        parts.append(sample @ data.opq_matrix.T.astype(np.float64))
    max_abs = float(max(np.abs(p).max() for p in parts))
    scale = ((1 << (vec_bits - 1)) - 1) / max_abs if max_abs > 0 else 1.0

    def fmt_with(ivf_shift: int, lut_shift: int, source: dict | None = None) -> IvfPqFormat:
        return IvfPqFormat(
            d=data.d,
            m=data.m,
            scale=scale,
            ivf_shift=ivf_shift,
            lut_shift=lut_shift,
            vec_bits=vec_bits,
            opq_frac_bits=opq_frac_bits,
            ivf_dist_bits=ivf_dist_bits,
            lut_bits=lut_bits,
            source=source or {},
        )

    probe_fmt = fmt_with(0, 0)
    q_fx = probe_fmt.quantize(sample)
    if data.opq_matrix is not None:
        q_fx = probe_fmt.opq_rotate(q_fx, probe_fmt.quantize_opq_matrix(data.opq_matrix))
    c_fx = probe_fmt.quantize(data.centroids)
    exact_ivf = _exact_ivf(q_fx, c_fx)
    max_ivf = int(exact_ivf.max())
    ivf_shift = max(0, bits_for(max_ivf) - ivf_dist_bits)

    nprobe = max(1, min(nprobe, data.nlist))
    nearest = np.argsort(exact_ivf, axis=1, kind="stable")[:, :nprobe]
    pairs = np.stack(np.meshgrid(np.arange(q_fx.shape[0]), np.arange(nprobe), indexing="ij"), -1).reshape(-1, 2)
    if pairs.shape[0] > MAX_LUT_PAIRS:
        pairs = pairs[np.sort(np.random.default_rng(seed).choice(pairs.shape[0], MAX_LUT_PAIRS, replace=False))]
    residuals = q_fx[pairs[:, 0]] - c_fx[nearest[pairs[:, 0], pairs[:, 1]]]
    entries = _exact_luts(residuals, probe_fmt.quantize(data.codebook), data.m)
    lut_value = int(np.percentile(entries, lut_percentile, method="higher"))
    lut_shift = max(0, bits_for(lut_value) - lut_bits)
    saturated = float(np.mean((entries >> lut_shift) >= (1 << lut_bits) - 1))
    source = {
        "method": "fanns.index.ivfpq_format.choose_format",
        "sample_vectors": int(sample.shape[0]),
        "max_abs": max_abs,
        "max_ivf_dist": max_ivf,
        "nprobe": int(nprobe),
        "lut_pairs": int(pairs.shape[0]),
        "lut_percentile": float(lut_percentile),
        "lut_value_at_percentile": lut_value,
        "lut_saturated_fraction": saturated,
    }
    return fmt_with(ivf_shift, lut_shift, source)
