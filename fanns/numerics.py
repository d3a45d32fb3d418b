"""The number formats of the hardware datapath — the arithmetic every face must match.

The reference model is the specification: the Python reference models, the HLS C++ and the
Amaranth RTL all compute exactly the integer functions in this module, so their outputs can be
compared bit for bit. Everything on the device is integer arithmetic; floats exist only on the
host, before quantisation.

IVF-PQ datapath (`IvfPqFormat`)
-------------------------------
* Vectors (queries, IVF centroids, PQ sub-centroids) are signed `vec_bits` integers:
  ``x_fx = clip(rint(x * scale), -(2**(vec_bits-1) - 1), 2**(vec_bits-1) - 1)``. One `scale` per
  index, so differences of vectors need no re-alignment. `rint` rounds half to even.
* OPQ: the rotation matrix is signed 16-bit with `opq_frac_bits` fractional bits;
  ``y = sat_vec((A_fx @ x_fx + 2**(opq_frac_bits-1)) >> opq_frac_bits)`` (arithmetic shift,
  i.e. floor, after adding half: round half up), saturated to `vec_bits`.
* IVF distance: the exact integer ``sum((q - c)**2)`` shifted right by `ivf_shift` (floor) and
  saturated to `ivf_dist_bits` unsigned.
* LUT entries: residual ``r = q - c`` (exact), per sub-space ``sum((r_sub - C[j])**2)`` shifted
  right by `lut_shift` (floor) and saturated to `lut_bits` unsigned.
* PQ distance (ADC): the exact sum of the m LUT entries, `pq_dist_bits = lut_bits + ceil(log2 m)`
  bits unsigned — no saturation is needed.

Padded sub-vectors (`dsub_hw`): the hardware may hold every sub-vector of d/m elements in
`dsub_hw >= d/m` elements, the real ones first and zeros after (`pad_subspaces`), so lane counts
that divide neither d nor d/m work (d = 96, m = 16: sub-vectors of 6 padded to 8 take 4, 8 or 16
lanes). Queries, IVF centroids, the codebook and the OPQ matrix (rows and columns) are padded
alike, so every pad element is 0 on both sides of a difference and of a product: it adds exactly
0 to every sum, and the datapath's exact integer sums (any adder-tree order gives the same
integer) equal the unpadded ones bit for bit. A pad output of OPQ is round(0) = 0, so the rotated
query stays padded. m stays a divisor of d (faiss's PQ requires it); the reference model computes
on the unpadded arrays.

Selection keys
--------------
Every selection PE orders *keys*: ``key = (dist << ID_BITS) | id`` as an unsigned integer. Ids
are unique, so keys are distinct and "the s smallest keys" is one well-defined sorted list no
matter which micro-architecture (HPQ, HSMPQG, sorting networks) computes it: distances tie-break
on the smaller id. Empty slots and padding hold the all-ones sentinel of the key width.

Graph datapath (`GraphFormat`)
------------------------------
Vectors are `vec_bits` signed integers (or unsigned when the data are, e.g. SIFT's uint8);
distances are the exact integer squared L2 (`dist_bits` wide, no shift).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from fanns.errors import FannsError

ID_BITS = 32
"""Width of a vector / cell / node id inside a selection key."""


def sentinel(key_bits: int) -> int:
    """The all-ones key that fills empty queue slots and marks padding."""
    return (1 << key_bits) - 1


def make_keys(dist: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Pack distances and ids into uint64 selection keys (dist in the high bits)."""
    return (np.asarray(dist, dtype=np.uint64) << np.uint64(ID_BITS)) | np.asarray(ids, dtype=np.uint64)


def split_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of `make_keys`: (dist, ids) as uint64 arrays."""
    keys = np.asarray(keys, dtype=np.uint64)
    return keys >> np.uint64(ID_BITS), keys & np.uint64((1 << ID_BITS) - 1)


def smallest_keys(keys: np.ndarray, s: int, fill_bits: int | None = None) -> np.ndarray:
    """The `s` smallest keys along the last axis, ascending.

    If fewer than `s` keys exist, the result is padded with the sentinel of `fill_bits`
    (required then), exactly as a hardware queue initialised with sentinels would return.
    """
    keys = np.asarray(keys, dtype=np.uint64)
    n = keys.shape[-1]
    if n < s:
        if fill_bits is None:
            raise ValueError("fewer keys than s and no fill_bits for the sentinel")
        pad = np.full(keys.shape[:-1] + (s - n,), sentinel(fill_bits), dtype=np.uint64)
        keys = np.concatenate([keys, pad], axis=-1)
        n = s
    if s < n:
        keys = np.partition(keys, s - 1, axis=-1)[..., :s]
    return np.sort(keys, axis=-1)


def first_true(mask: np.ndarray) -> tuple[int, ...]:
    """The index of the first True element of `mask` in row-major order (which input element an
    error message names)."""
    return tuple(int(v[0]) for v in np.nonzero(mask))


def bits_for(value: int) -> int:
    """Bits needed to hold the unsigned integer `value` (at least 1)."""
    return max(1, int(value).bit_length())


EXACT_FLOAT = 1 << 53
"""Integers below this are exact in float64, and so is every sum of them that stays below it."""


def squared_distances(r: np.ndarray, book: np.ndarray) -> np.ndarray:
    """Exact integer sum((r - c)**2) of every row r [n, m, dsub] against every codeword c of
    each sub-space, book [m, ksub, dsub]: int64 [n, m, ksub]. Computed as |r|^2 - 2 r.c + |c|^2
    with the cross term a float64 matrix product (BLAS) where every partial sum is an integer
    below 2**53, so exact whatever the summation order; else directly in int64."""
    dsub = r.shape[-1]
    big = max(int(np.abs(r).max(initial=0)), int(np.abs(book).max(initial=0)))
    if 4 * dsub * big * big >= EXACT_FLOAT:
        diff = r[:, :, None, :] - book[None]
        return (diff * diff).sum(-1)
    cross = np.matmul(r.transpose(1, 0, 2).astype(np.float64), book.transpose(0, 2, 1).astype(np.float64))
    out = (r * r).sum(-1).T[:, :, None] - 2 * cross.astype(np.int64) + (book * book).sum(-1)[:, None, :]
    return out.transpose(1, 0, 2)


def saturate_unsigned(x: np.ndarray, bits: int) -> np.ndarray:
    return np.minimum(x, np.int64((1 << bits) - 1))


def saturate_signed(x: np.ndarray, bits: int) -> np.ndarray:
    lim = (1 << (bits - 1)) - 1
    return np.clip(x, -lim, lim)


def quantize(x: np.ndarray, scale: float, bits: int) -> np.ndarray:
    """Real values to signed `bits`-bit fixed point (round half to even, symmetric saturation)."""
    q = np.rint(np.asarray(x, dtype=np.float64) * scale)
    lim = (1 << (bits - 1)) - 1
    return np.clip(q, -lim, lim).astype(np.int64)


def pad_subspaces(x: np.ndarray, m: int, dsub_hw: int) -> np.ndarray:
    """Vectors [..., m * dsub] as [..., m * dsub_hw]: each of the m sub-vectors followed by zeros."""
    x = np.asarray(x)
    sub = x.reshape(x.shape[:-1] + (m, x.shape[-1] // m))
    if sub.shape[-1] == dsub_hw:
        return x
    out = np.zeros(sub.shape[:-1] + (dsub_hw,), dtype=x.dtype)
    out[..., : sub.shape[-1]] = sub
    return out.reshape(x.shape[:-1] + (m * dsub_hw,))


def unpad_subspaces(x: np.ndarray, m: int, dsub: int) -> np.ndarray:
    """Inverse of `pad_subspaces`: [..., m * dsub_hw] -> [..., m * dsub]."""
    x = np.asarray(x)
    sub = x.reshape(x.shape[:-1] + (m, x.shape[-1] // m))
    return np.ascontiguousarray(sub[..., :dsub]).reshape(x.shape[:-1] + (m * dsub,))


@dataclass(frozen=True)
class IvfPqFormat:
    """Fixed-point formats of one IVF-PQ accelerator (see the module docstring)."""

    d: int
    m: int
    scale: float
    ivf_shift: int
    lut_shift: int
    vec_bits: int = 16
    opq_frac_bits: int = 14
    ivf_dist_bits: int = 32
    lut_bits: int = 16
    source: dict = field(default_factory=dict, compare=False)
    dsub_hw: int = 0
    """Elements the hardware holds per sub-vector (0: d/m, no padding; see the module docstring)."""

    def __post_init__(self) -> None:
        if self.d % self.m:
            raise FannsError(f"dimension {self.d} is not a multiple of m={self.m}", hint="choose m that divides d")
        if isinstance(self.scale, bool) or not isinstance(self.scale, (int, float)) or not 0 < self.scale < math.inf:
            raise FannsError(f"format scale {self.scale!r} must be a positive finite number")
        if not 2 <= self.vec_bits <= 24:
            raise FannsError(f"vec_bits={self.vec_bits} out of range", hint="use 2..24")
        if self.pq_dist_bits + ID_BITS > 64 or self.ivf_dist_bits + ID_BITS > 64:
            raise FannsError("distance plus id does not fit a 64-bit key", hint="lower lut_bits or ivf_dist_bits")
        if (
            isinstance(self.dsub_hw, bool)
            or not isinstance(self.dsub_hw, int)
            or (self.dsub_hw and not self.d // self.m <= self.dsub_hw <= 4096)
        ):
            raise FannsError(
                f"format dsub_hw={self.dsub_hw!r} is not a padded sub-vector length for d/m={self.d // self.m}",
                hint=f"use 0 (no padding) or an integer from {self.d // self.m} to 4096",
            )

    @property
    def dsub(self) -> int:
        return self.d // self.m

    @property
    def dsub_padded(self) -> int:
        """Elements per sub-vector in hardware (d/m, or `dsub_hw` when padded)."""
        return self.dsub_hw or self.dsub

    @property
    def d_hw(self) -> int:
        """Elements per vector in hardware: m padded sub-vectors."""
        return self.m * self.dsub_padded

    def pad(self, x: np.ndarray) -> np.ndarray:
        """Vectors [..., d] in the hardware layout [..., d_hw] (`pad_subspaces`)."""
        return pad_subspaces(x, self.m, self.dsub_padded)

    def unpad(self, x: np.ndarray) -> np.ndarray:
        """Inverse of `pad`: [..., d_hw] -> [..., d]."""
        return unpad_subspaces(x, self.m, self.dsub)

    def pad_matrix(self, a: np.ndarray) -> np.ndarray:
        """The OPQ matrix [d, d] in the hardware layout [d_hw, d_hw] (pad rows and columns are 0)."""
        return self.pad(np.swapaxes(self.pad(a), -1, -2)).swapaxes(-1, -2)

    @property
    def pq_dist_bits(self) -> int:
        return self.lut_bits + math.ceil(math.log2(self.m)) if self.m > 1 else self.lut_bits

    @property
    def pq_key_bits(self) -> int:
        return self.pq_dist_bits + ID_BITS

    @property
    def ivf_key_bits(self) -> int:
        return self.ivf_dist_bits + ID_BITS

    def to_dict(self) -> dict:
        out = asdict(self)
        if not self.dsub_hw:  # unpadded formats keep the files they always had
            del out["dsub_hw"]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> IvfPqFormat:
        return cls(**data)

    def dist_to_float(self, dist: np.ndarray) -> np.ndarray:
        """Approximate real squared L2 distance of fixed-point PQ distances (for reporting)."""
        return np.asarray(dist, dtype=np.float64) * float(1 << self.lut_shift) / (self.scale * self.scale)

    # -- the datapath, stage by stage ---------------------------------------------------------
    def quantize(self, x: np.ndarray) -> np.ndarray:
        return quantize(x, self.scale, self.vec_bits)

    def quantize_opq_matrix(self, a: np.ndarray) -> np.ndarray:
        return quantize(a, float(1 << self.opq_frac_bits), 16)

    def opq_rotate(self, q_fx: np.ndarray, a_fx: np.ndarray) -> np.ndarray:
        """Stage OPQ: rotate fixed-point queries [nq, d] by the fixed-point matrix [d, d]."""
        acc = np.asarray(q_fx, dtype=np.int64) @ np.asarray(a_fx, dtype=np.int64).T
        y = (acc + (1 << (self.opq_frac_bits - 1))) >> self.opq_frac_bits
        return saturate_signed(y, self.vec_bits)

    def ivf_distances(self, q_fx: np.ndarray, c_fx: np.ndarray) -> np.ndarray:
        """Stage IVFDist: [nq, d] x [nlist, d] -> [nq, nlist] shifted, saturated distances."""
        q = np.asarray(q_fx, dtype=np.int64)
        c = np.asarray(c_fx, dtype=np.int64)
        exact = (q * q).sum(1)[:, None] - 2 * (q @ c.T) + (c * c).sum(1)[None, :]
        return saturate_unsigned(exact >> self.ivf_shift, self.ivf_dist_bits)

    def select_cells(self, ivf_dist: np.ndarray, nprobe: int) -> np.ndarray:
        """Stage SelCells: ids of the `nprobe` nearest cells per query, nearest first."""
        nlist = ivf_dist.shape[-1]
        keys = make_keys(ivf_dist, np.broadcast_to(np.arange(nlist), ivf_dist.shape))
        _, ids = split_keys(smallest_keys(keys, nprobe))
        return ids.astype(np.int64)

    def build_luts(self, q_fx: np.ndarray, centroids_fx: np.ndarray, codebook_fx: np.ndarray) -> np.ndarray:
        """Stage BuildLUT: one m x 256 table per (query, probed cell).

        q_fx [..., d], centroids_fx [..., d] (broadcast against each other: one row per probe),
        codebook_fx [m, ksub, dsub]. Returns int64 [..., m, ksub].
        """
        r = np.asarray(q_fx, dtype=np.int64) - np.asarray(centroids_fx, dtype=np.int64)
        book = np.asarray(codebook_fx, dtype=np.int64)
        exact = squared_distances(r.reshape(-1, self.m, self.dsub), book)
        return saturate_unsigned(exact >> self.lut_shift, self.lut_bits).reshape(r.shape[:-1] + book.shape[:2])

    def adc(self, lut: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Stage PQDist: distances of PQ codes [n, m] (uint8) against one LUT [m, ksub]."""
        codes = np.asarray(codes, dtype=np.int64)
        return np.asarray(lut, dtype=np.int64)[np.arange(self.m)[None, :], codes].sum(1)


@dataclass(frozen=True)
class GraphFormat:
    """Number format of the graph (Falcon) datapath: integer vectors, exact squared L2."""

    d: int
    scale: float
    vec_bits: int = 8
    signed: bool = True

    @property
    def dist_bits(self) -> int:
        lim = (1 << (self.vec_bits - 1)) - 1 if self.signed else (1 << self.vec_bits) - 1
        diff = 2 * lim if self.signed else lim
        return bits_for(diff * diff * self.d)

    def quantize(self, x: np.ndarray) -> np.ndarray:
        if self.signed:
            return quantize(x, self.scale, self.vec_bits)
        q = np.rint(np.asarray(x, dtype=np.float64) * self.scale)
        return np.clip(q, 0, (1 << self.vec_bits) - 1).astype(np.int64)

    def l2(self, q_fx: np.ndarray, x_fx: np.ndarray) -> np.ndarray:
        """Exact integer squared L2 of one query [d] against vectors [n, d]."""
        diff = np.asarray(x_fx, dtype=np.int64) - np.asarray(q_fx, dtype=np.int64)
        return (diff * diff).sum(-1)
