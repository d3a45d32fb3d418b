"""OPQ rotation PE (Stage OPQ; FANNS 6.2.1): y = A x in fixed point, matrix on chip or streamed.

Computes ``IvfPqFormat.opq_rotate`` for one query at a time: the d x d matrix A is signed 16-bit
with `frac_bits` fractional bits, the query x is `vec_bits` signed, and
``y_i = sat_vec((sum_k A[i, k] * x_k + 2**(frac_bits-1)) >> frac_bits)`` (round half up, symmetric
saturation to `vec_bits`).

* Matrix `matrix`: d rows of d/w words; row i = A[i, :]. Where it lives (`storage`):
  - "bram" / "uram": on chip, filled once after reset into block RAM or UltraRAM (where a large
    d's matrix goes: 4.7 MB at d = 1536);
  - "stream": off chip; every query reads the whole matrix from `matrix` again, row by row, one
    word a cycle (for boards whose on-chip memory cannot hold it; the accelerator's reader
    streams it from device memory).
  (An accelerator passes its padded d_hw and a matrix with zero pad rows and columns,
  `fanns.numerics` "Padded sub-vectors", so w need not divide the real d.)
* Input `x`: per query d/w words of w elements.
* Output `o`: {y, last}: per query d/w words of w elements (the same layout as the input, so it
  feeds the IVF distance stage's query input), `last` on the final word of a query.

Datapath: the shared row-sweep engine (`fanns.engines.rowsweep`) over the matrix rows with the query as
the swept vector: w multipliers (DSPs, operand and product registers), an adder tree of
ceil(log2 w) levels, an accumulator over the d/w words of a row, round/shift/saturate, and a
collector packing w consecutive y_i into one output word. D = 4 + ceil(log2 w) edges from a
row's last word to its result on chip, 3 + ceil(log2 w) streamed (no memory read).

Timing (N queries back to back, from the first input word to the last output word; matrix fill
excluded; a streamed matrix delivered one word a cycle): II = (d + 1) * d/w (query load, then d
rows of d/w cycles), L = (d + 1) * d/w + D.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from amaranth import Const, Module, Mux, Signal, signed
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.engines.datapath import ram_features, ram_style
from fanns.engines.rowsweep import LOGIC_FEATURES, Sweep, SweepSpec
from fanns.numerics import IvfPqFormat
from fanns.pe.base import PE

MATRIX_BITS = 16
"""Width of the fixed-point OPQ matrix entries (numerics: quantize_opq_matrix)."""
STORAGES = ("bram", "uram", "stream")
"""Where the matrix lives: block RAM, UltraRAM, or device memory (streamed per query)."""


@dataclass(frozen=True)
class Opq(PE):
    d: int = 128
    w: int = 16
    vec_bits: int = 8
    frac_bits: int = 14
    storage: str = "bram"

    name: ClassVar[str] = "opq"
    summary: ClassVar[str] = "OPQ rotation y = A x (16-bit fixed-point matrix on chip or streamed), w multipliers"
    timing_formula: ClassVar[str] = "N queries: II = (d+1)*d/w, L = (d+1)*d/w + 4 + ceil(log2 w) (streamed: 3 + ...)"
    hls_header: ClassVar[str] = "opq.h"
    testbench: ClassVar[str] = "tb_opq"
    calibration_points: ClassVar[tuple] = (
        {"d": 128, "w": 16, "vec_bits": 8},
        {"d": 128, "w": 8, "vec_bits": 8},
        {"d": 128, "w": 32, "vec_bits": 16},
        {"d": 64, "w": 16, "vec_bits": 12},
        {"d": 96, "w": 4, "vec_bits": 8},
        {"d": 64, "w": 64, "vec_bits": 8},
        {"d": 128, "w": 16, "vec_bits": 16},
        {"d": 128, "w": 2, "vec_bits": 8},
        {"d": 256, "w": 128, "vec_bits": 8},
        {"d": 256, "w": 256, "vec_bits": 16},
        {"d": 128, "w": 16, "vec_bits": 8, "storage": "uram"},
        {"d": 256, "w": 64, "vec_bits": 8, "storage": "uram"},
        {"d": 96, "w": 8, "vec_bits": 16, "storage": "uram"},
    )

    def validate(self) -> None:
        self.require(
            self.d > 0 and self.w > 0 and self.d % self.w == 0,
            f"w={self.w} must divide d={self.d}",
            "pick w as a divisor of d",
        )
        self.require(2 <= self.vec_bits <= 24, f"vec_bits={self.vec_bits} out of range 2..24")
        self.require(1 <= self.frac_bits <= 15, f"frac_bits={self.frac_bits} out of range 1..15")
        self.require(self.storage in STORAGES, f"storage={self.storage!r} unknown", f"use one of {', '.join(STORAGES)}")

    # -- formats --------------------------------------------------------------------------------
    def fmt(self) -> IvfPqFormat:
        return IvfPqFormat(
            d=self.d, m=1, scale=1.0, ivf_shift=0, lut_shift=0, vec_bits=self.vec_bits, opq_frac_bits=self.frac_bits
        )

    @property
    def words(self) -> int:
        return self.d // self.w

    def elem_range(self) -> tuple[int, int]:
        return -(1 << (self.vec_bits - 1)), (1 << (self.vec_bits - 1)) - 1

    # -- reference model ------------------------------------------------------------------------
    def rotate(self, x: np.ndarray, a: np.ndarray) -> np.ndarray:
        """y [d] of query x [d] and fixed-point matrix a [d, d]."""
        return self.fmt().opq_rotate(np.asarray(x)[None, :], a)[0]

    def pack_words(self, vec: np.ndarray, bits: int) -> list[int]:
        """d/w stream words of one vector (or matrix row) of `bits`-bit elements."""
        mask = (1 << bits) - 1
        return [
            sum((int(v) & mask) << (i * bits) for i, v in enumerate(vec[k * self.w : (k + 1) * self.w]))
            for k in range(self.words)
        ]

    # -- timing ---------------------------------------------------------------------------------
    def spec(self) -> SweepSpec:
        return SweepSpec(
            w=self.w,
            words=self.words,
            rows=self.d,
            vec_range=self.elem_range(),
            row_range=(-(1 << (MATRIX_BITS - 1)), (1 << (MATRIX_BITS - 1)) - 1),
            op="mul",
            result_lanes=self.w,
            result_words=self.words,
            collect=self.w,
            source="stream" if self.storage == "stream" else "memory",
            ram_attrs=ram_style(self.storage),
        )

    def latency(self) -> int:
        return self.ii() + self.spec().depth()

    def ii(self) -> int:
        return (self.d + 1) * self.words

    # -- resources ------------------------------------------------------------------------------
    logic_features: ClassVar[tuple[str, ...]] = (*LOGIC_FEATURES, "uram_mux_bits")

    def resource_features(self) -> dict[str, float]:
        """Lanes (DSPs, operand registers), the vector file, the matrix RAM, and the LUT datapath:
        adder tree, vector rotate multiplexer, and the read multiplexer of RAMs stacked in depth."""
        width, depth = self.w * MATRIX_BITS, self.d * self.words
        return {
            "w": self.w,
            "w*vec_bits": self.w * self.vec_bits,
            "d*vec_bits": self.d * self.vec_bits,
            **ram_features(self.storage, width, depth),
            **self.spec().structure_features(),
        }

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return OpqComponent(self)


class OpqComponent(wiring.Component):
    """Amaranth implementation of `Opq` (see the module docstring)."""

    def __init__(self, pe: Opq):
        self.pe = pe
        word = data.ArrayLayout(signed(pe.vec_bits), pe.w)
        super().__init__(
            {
                "matrix": In(stream.Signature(data.ArrayLayout(signed(MATRIX_BITS), pe.w))),
                "x": In(stream.Signature(word)),
                "o": Out(stream.Signature(data.StructLayout({"y": word, "last": 1}))),
            }
        )

    def elaborate(self, platform):
        pe = self.pe
        m = Module()
        lim = (1 << (pe.vec_bits - 1)) - 1

        def post(total):
            y = (total + Const(1 << (pe.frac_bits - 1))) >> pe.frac_bits
            return Mux(y > lim, lim, Mux(y < -lim, -lim, y))[: pe.vec_bits].as_signed()

        sw = Sweep(pe.spec(), post=post, post_shape=signed(pe.vec_bits))
        en = Signal()
        m.d.comb += en.eq(~sw.out_valid | self.o.ready)
        sw.build(m, en)
        sw.take_rows(m, self.matrix)
        m.d.comb += [
            sw.load_valid.eq(self.x.valid),
            sw.load_word.eq(self.x.payload),
            self.x.ready.eq(sw.load_ready),
            self.o.valid.eq(sw.out_valid),
            self.o.payload.y.eq(sw.out_word),
            self.o.payload.last.eq(sw.out_last),
        ]
        return m
