"""LUT construction PE (Stage BuildLUT; FANNS 6.2.1, 6.4.2): one m x 256 distance table per probe.

For every (query, probed-cell centroid) pair the PE computes ``IvfPqFormat.build_luts``: the
residual r = q - c (exact, vec_bits + 1 bits), then for every sub-space i and code j the exact
``sum((r_i - C[i][j])**2)`` over the d/m elements of the sub-space, shifted right by `lut_shift`
(floor) and saturated to `lut_bits` unsigned.

* Input `x`: per probe d/w words {q: w query elements, c: w centroid elements, last}; `last`,
  read on the final word of a probe, marks the final probe of a query.
* Codebook fill `codebook` (once after reset, into block RAM or, `storage="uram"`, UltraRAM: a
  large d's codebook, 256 x d elements, is where a small board's block RAM runs out): 256 rows of
  d/w words; row j is [C[0][j], C[1][j], ..., C[m-1][j]] (the j-th sub-centroid of every
  sub-space, d elements).
* Output `o`: {lut, last}: 256 words per probe in the order the PQ decode unit consumes them:
  word j = [LUT[0][j], ..., LUT[m-1][j]] (sub-space i at bits i*lut_bits); `last` on word 255 of
  a query's final probe.

`rows` < 256: the PE holds and sweeps only that many codebook rows (the ones it was filled
with), `rows` words per probe. Why: a PQ decode unit that loads W LUT words a cycle
(`PqDecode.lut_words`) is fed by W PEs building one LUT together, PE r the rows j = r mod W
(`fanns.arch.ivfpq.lut`), so each holds a W-th of the codebook and builds its part W times
as fast.

Datapath: the shared row-sweep engine (`fanns.engines.rowsweep`) over the codebook rows with the
residual as the swept vector: w subtract/square lanes grouped per sub-space (w/dsub sub-spaces
per cycle when w >= dsub, else one sub-space every dsub/w cycles), a tree of
ceil(log2 min(w, dsub)) levels per group, accumulation over a sub-space's words, shift and
saturate, and a collector that packs the m entries of row j into one output word. Lanes `w`
must divide d and divide or be a multiple of dsub = d/m; an accelerator passes its hardware
shape here (sub-vectors padded with zeros to `format.dsub_hw`, `fanns.numerics`), so lane counts
that fit neither the real d nor d/m are built on padded sub-vectors. D = 4 + ceil(log2 min(w, dsub)) edges
from a row's last word to its output word.

Timing (N probes back to back, from the first input word to the last LUT word; codebook fill
excluded): II = (rows + 1) * d/w (residual load of d/w cycles, then `rows` rows of d/w cycles),
L = II + D. One output word every d/w cycles (w = d: one per cycle, the PQ decode rate).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from amaranth import Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.engines.datapath import ram_features, ram_style
from fanns.engines.rowsweep import LOGIC_FEATURES, Sweep, SweepSpec
from fanns.numerics import IvfPqFormat
from fanns.pe.base import PE

KSUB = 256
STORAGES = ("bram", "uram")
"""Where the codebook lives: block RAM or UltraRAM."""


@dataclass(frozen=True)
class BuildLut(PE):
    d: int = 128
    m: int = 16
    w: int = 16
    vec_bits: int = 8
    lut_shift: int = 0
    lut_bits: int = 16
    storage: str = "bram"
    rows: int = KSUB

    name: ClassVar[str] = "build_lut"
    summary: ClassVar[str] = (
        "distance LUT per (query, probed cell): residual to 256 sub-centroids per sub-space, w lanes"
    )
    timing_formula: ClassVar[str] = "N probes: II = (rows+1)*d/w, L = (rows+1)*d/w + 4 + ceil(log2 min(w, d/m))"
    hls_header: ClassVar[str] = "build_lut.h"
    testbench: ClassVar[str] = "tb_build_lut"
    calibration_points: ClassVar[tuple] = (
        {"d": 128, "m": 16, "w": 16, "vec_bits": 8, "lut_bits": 16},
        {"d": 128, "m": 16, "w": 32, "vec_bits": 8, "lut_bits": 16},
        {"d": 128, "m": 32, "w": 8, "vec_bits": 8, "lut_bits": 16},
        {"d": 64, "m": 8, "w": 16, "vec_bits": 16, "lut_bits": 16},
        {"d": 96, "m": 8, "w": 4, "vec_bits": 12, "lut_bits": 16},
        {"d": 128, "m": 32, "w": 64, "vec_bits": 8, "lut_bits": 16},
        {"d": 64, "m": 16, "w": 64, "vec_bits": 8, "lut_bits": 12},
        {"d": 128, "m": 8, "w": 128, "vec_bits": 8, "lut_bits": 16},
        {"d": 64, "m": 32, "w": 2, "vec_bits": 8, "lut_bits": 16},
        {"d": 128, "m": 16, "w": 16, "vec_bits": 8, "lut_bits": 16, "storage": "uram"},
        {"d": 256, "m": 32, "w": 8, "vec_bits": 8, "lut_bits": 16, "storage": "uram"},
        {"d": 128, "m": 8, "w": 64, "vec_bits": 8, "lut_bits": 16, "storage": "uram"},
        {"d": 128, "m": 16, "w": 16, "vec_bits": 8, "lut_bits": 16, "rows": 128},
        {"d": 384, "m": 48, "w": 32, "vec_bits": 8, "lut_bits": 16, "rows": 64},
        {"d": 128, "m": 16, "w": 32, "vec_bits": 8, "lut_bits": 16, "rows": 32},
    )

    def validate(self) -> None:
        self.require(
            self.d > 0 and self.m > 0 and self.d % self.m == 0,
            f"m={self.m} must divide d={self.d}",
            "choose m that divides d",
        )
        self.require(
            self.w > 0 and self.d % self.w == 0, f"w={self.w} must divide d={self.d}", "pick w as a divisor of d"
        )
        dsub = self.d // self.m
        self.require(
            dsub % self.w == 0 or self.w % dsub == 0,
            f"w={self.w} must divide or be a multiple of the sub-vector length d/m={dsub}",
            f"pick w among the divisors of {dsub} or the multiples of {dsub} that divide {self.d}",
        )
        self.require(2 <= self.vec_bits <= 24, f"vec_bits={self.vec_bits} out of range 2..24")
        self.require(1 <= self.lut_bits <= 24, f"lut_bits={self.lut_bits} out of range 1..24")
        self.require(0 <= self.lut_shift < 64, f"lut_shift={self.lut_shift} out of range 0..63")
        self.require(self.storage in STORAGES, f"storage={self.storage!r} unknown", f"use one of {', '.join(STORAGES)}")
        self.require(
            1 <= self.rows <= KSUB and KSUB % self.rows == 0,
            f"rows={self.rows} must divide {KSUB}",
            "a PE builds all 256 rows or an equal share of them",
        )

    # -- formats --------------------------------------------------------------------------------
    def fmt(self) -> IvfPqFormat:
        return IvfPqFormat(
            d=self.d,
            m=self.m,
            scale=1.0,
            ivf_shift=0,
            lut_shift=self.lut_shift,
            vec_bits=self.vec_bits,
            lut_bits=self.lut_bits,
        )

    @property
    def dsub(self) -> int:
        return self.d // self.m

    @property
    def words(self) -> int:
        return self.d // self.w

    def elem_range(self) -> tuple[int, int]:
        return -(1 << (self.vec_bits - 1)), (1 << (self.vec_bits - 1)) - 1

    # -- reference model ------------------------------------------------------------------------
    def luts(self, q: np.ndarray, c: np.ndarray, codebook: np.ndarray) -> np.ndarray:
        """The LUT [m, rows] of query q [d] and probed centroid c [d]; codebook [m, rows, d/m]
        (the rows the PE holds)."""
        return self.fmt().build_luts(q, c, codebook)

    def _pack(self, elems, bits: int) -> int:
        mask = (1 << bits) - 1
        return sum((int(v) & mask) << (i * bits) for i, v in enumerate(elems))

    def codebook_words(self, codebook: np.ndarray) -> list[int]:
        """The rows * d/w fill words of codebook [m, rows, d/m]: row j = the j-th sub-centroid of
        every sub-space."""
        rows = np.asarray(codebook).transpose(1, 0, 2).reshape(self.rows, self.d)
        return [
            self._pack(row[k * self.w : (k + 1) * self.w], self.vec_bits) for row in rows for k in range(self.words)
        ]

    def input_words(self, q: np.ndarray, c: np.ndarray, last: bool) -> list[int]:
        """The d/w words {q, c, last} of one probe."""
        b, w = self.vec_bits, self.w
        return [
            self._pack(q[k * w : (k + 1) * w], b)
            | (self._pack(c[k * w : (k + 1) * w], b) << (w * b))
            | (int(last) << (2 * w * b))
            for k in range(self.words)
        ]

    # -- timing ---------------------------------------------------------------------------------
    def spec(self) -> SweepSpec:
        lo, hi = self.elem_range()
        return SweepSpec(
            w=self.w,
            words=self.words,
            rows=self.rows,
            vec_range=(lo - hi, hi - lo),
            row_range=(lo, hi),
            op="sqdiff",
            result_lanes=min(self.w, self.dsub),
            result_words=max(1, self.dsub // self.w),
            collect=self.m,
            source="memory",
            tag_bits=1,
            ram_attrs=ram_style(self.storage),
        )

    def latency(self) -> int:
        return self.ii() + self.spec().depth()

    def ii(self) -> int:
        return (self.rows + 1) * self.words

    # -- resources ------------------------------------------------------------------------------
    logic_features: ClassVar[tuple[str, ...]] = (*LOGIC_FEATURES, "uram_mux_bits")

    def resource_features(self) -> dict[str, float]:
        """Lanes, groups, the vector file, output word and codebook RAM (registers, DSPs, RAM),
        and the engine's logic: adder trees, accumulators, rotate and RAM read multiplexers (of
        block RAM or UltraRAM stacked in depth)."""
        width, depth = self.w * self.vec_bits, self.rows * self.words
        return {
            "w": self.w,
            "w*vec_bits": self.w * self.vec_bits,
            "groups*vec_bits": self.spec().per_event * self.vec_bits,
            "d*vec_bits": self.d * self.vec_bits,
            "m*lut_bits": self.m * self.lut_bits,
            **ram_features(self.storage, width, depth),
            **self.spec().structure_features(),
        }

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return BuildLutComponent(self)


class BuildLutComponent(wiring.Component):
    """Amaranth implementation of `BuildLut` (see the module docstring)."""

    def __init__(self, pe: BuildLut):
        self.pe = pe
        word = data.ArrayLayout(signed(pe.vec_bits), pe.w)
        super().__init__(
            {
                "x": In(stream.Signature(data.StructLayout({"q": word, "c": word, "last": 1}))),
                "codebook": In(stream.Signature(word)),
                "o": Out(
                    stream.Signature(
                        data.StructLayout({"lut": data.ArrayLayout(unsigned(pe.lut_bits), pe.m), "last": 1})
                    )
                ),
            }
        )

    def elaborate(self, platform):
        pe = self.pe
        m = Module()
        top = (1 << pe.lut_bits) - 1

        def post(total):
            shifted = total >> pe.lut_shift
            return Mux(shifted > top, top, shifted)[: pe.lut_bits]

        sw = Sweep(pe.spec(), post=post, post_shape=unsigned(pe.lut_bits))
        en = Signal()
        m.d.comb += en.eq(~sw.out_valid | self.o.ready)
        sw.build(m, en)
        p = self.x.payload
        m.d.comb += [
            sw.load_valid.eq(self.x.valid),
            self.x.ready.eq(sw.load_ready),
            sw.load_tag.eq(p.last),
            sw.fill_valid.eq(self.codebook.valid),
            sw.fill_word.eq(self.codebook.payload),
            self.codebook.ready.eq(sw.fill_ready),
            self.o.valid.eq(sw.out_valid),
            self.o.payload.lut.eq(sw.out_word),
            self.o.payload.last.eq(sw.out_last & sw.out_tag[0]),
        ]
        m.d.comb += [sw.load_word[i].eq(p.q[i] - p.c[i]) for i in range(pe.w)]
        return m
