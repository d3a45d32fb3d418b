"""IVF distance PE (Stage IVFDist; FANNS 6.2.1, 6.4.2): query-to-centroid distances as selection keys.

Per query, the PE loads the query (d elements, `vec_bits` signed, d/w words of w elements on
`q`; an accelerator passes its padded d_hw, `fanns.numerics` "Padded sub-vectors", so w need not
divide the real d), then computes ``IvfPqFormat.ivf_distances`` to each of its `nlist` centroids, w elements per
cycle (II = d/w cycles per centroid): the exact squared L2, shifted right by `ivf_shift` (floor)
and saturated to `ivf_dist_bits` unsigned. It emits one key ``(dist << 32) | (id_base + c)`` per
centroid c on `o`, `last` on the final centroid of the query.

Centroid storage (`storage`):
* "bram" / "uram": on chip. After reset the PE first accepts nlist * d/w words on `centroids`
  (centroid c's words at c*d/w .. c*d/w + d/w - 1) into a block RAM / UltraRAM, once.
* "stream": off chip. Every query reads nlist * d/w centroid words from `centroids`, in order.

1-D array (FANNS 6.4.2.2): a stage splits its nlist centroids over z PEs (PE k gets `id_base` = the
index of its first centroid) and chains them through the query: a query word enters both a PE's load register and its
two-word forward buffer, whose head is `q_fwd`, the next PE's `q` (tie the last PE's `q_fwd.ready`
high). `q.ready` is the PE's own state (load register free or being taken, forward buffer not
full), never the next PE's ready: a ready that rippled back through the array would be one
combinational path through every PE (256 PEs overflowed Amaranth's netlist check, and the path
bounds the clock). Each PE's keys go to its own
output stream: they are the z input streams of the cell-selection stage (HPQ / HSMPQG), so no PE
sits on another's result path.

Datapath: the shared row-sweep engine (`fanns.engines.rowsweep`): w subtract/square lanes, an adder tree
of ceil(log2 w) levels, an accumulator over the d/w words of a centroid, shift-and-saturate
into the output register; D = 3 + ceil(log2 w) edges from the last word of a centroid to its key,
plus 1 for the on-chip memory read.

Timing (N back-to-back queries, from the first query word accepted to the last key; the
one-time centroid fill excluded): II = (nlist + 1) * d/w (query load, then nlist centroids),
L = (nlist + 1) * d/w + D + 1 (the input register). The next query's first word waits in the
input register during a sweep, so a chain of z PEs starts z cycles apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from amaranth import Cat, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.engines.datapath import ram_features, ram_style
from fanns.engines.rowsweep import LOGIC_FEATURES, Sweep, SweepSpec
from fanns.numerics import ID_BITS, IvfPqFormat, make_keys
from fanns.pe.base import PE

STORAGES = ("bram", "uram", "stream")


@dataclass(frozen=True)
class IvfDist(PE):
    d: int = 128
    w: int = 16
    vec_bits: int = 8
    nlist: int = 256
    ivf_shift: int = 0
    ivf_dist_bits: int = 32
    storage: str = "bram"
    id_base: int = 0

    name: ClassVar[str] = "ivf_dist"
    summary: ClassVar[str] = (
        "query-to-centroid distances as (dist, cell id) keys, w lanes, centroids on chip or streamed"
    )
    timing_formula: ClassVar[str] = (
        "N queries: II = (nlist+1)*d/w, L = (nlist+1)*d/w + 4 + ceil(log2 w) (+1 for on-chip centroids)"
    )
    hls_header: ClassVar[str] = "ivf_dist.h"
    testbench: ClassVar[str] = "tb_ivf_dist"
    calibration_points: ClassVar[tuple] = (
        {"d": 128, "w": 16, "vec_bits": 8, "nlist": 256, "storage": "bram"},
        {"d": 128, "w": 8, "vec_bits": 8, "nlist": 1024, "storage": "bram"},
        {"d": 96, "w": 16, "vec_bits": 16, "nlist": 512, "storage": "bram"},
        {"d": 64, "w": 4, "vec_bits": 8, "nlist": 512, "storage": "bram"},
        {"d": 64, "w": 16, "vec_bits": 8, "nlist": 1024, "storage": "uram"},
        {"d": 128, "w": 32, "vec_bits": 8, "nlist": 2048, "storage": "uram"},
        {"d": 128, "w": 16, "vec_bits": 8, "nlist": 256, "storage": "stream"},
        {"d": 64, "w": 4, "vec_bits": 16, "nlist": 128, "storage": "stream"},
        {"d": 128, "w": 32, "vec_bits": 12, "nlist": 256, "storage": "stream"},
        {"d": 96, "w": 8, "vec_bits": 8, "nlist": 64, "storage": "stream"},
        {"d": 32, "w": 32, "vec_bits": 8, "nlist": 128, "storage": "stream"},
    )

    def validate(self) -> None:
        self.require(
            self.d > 0 and self.w > 0 and self.d % self.w == 0,
            f"w={self.w} must divide d={self.d}",
            "pick w as a divisor of d",
        )
        self.require(2 <= self.vec_bits <= 24, f"vec_bits={self.vec_bits} out of range 2..24")
        self.require(self.nlist >= 1, f"nlist={self.nlist} must be positive")
        self.require(self.storage in STORAGES, f"storage={self.storage!r} unknown", f"use one of {', '.join(STORAGES)}")
        self.require(0 <= self.ivf_shift < 64, f"ivf_shift={self.ivf_shift} out of range 0..63")
        self.require(1 <= self.ivf_dist_bits <= 32, f"ivf_dist_bits={self.ivf_dist_bits} out of range 1..32")
        self.require(0 <= self.id_base and self.id_base + self.nlist <= 1 << ID_BITS, "cell ids must fit 32 bits")

    # -- formats --------------------------------------------------------------------------------
    def fmt(self) -> IvfPqFormat:
        return IvfPqFormat(
            d=self.d,
            m=1,
            scale=1.0,
            ivf_shift=self.ivf_shift,
            lut_shift=0,
            vec_bits=self.vec_bits,
            ivf_dist_bits=self.ivf_dist_bits,
        )

    @property
    def words(self) -> int:
        return self.d // self.w

    @property
    def key_bits(self) -> int:
        return self.ivf_dist_bits + ID_BITS

    def elem_range(self) -> tuple[int, int]:
        return -(1 << (self.vec_bits - 1)), (1 << (self.vec_bits - 1)) - 1

    # -- reference model ------------------------------------------------------------------------
    def keys(self, q: np.ndarray, centroids: np.ndarray) -> np.ndarray:
        """Keys (uint64) of one query [d] against this PE's centroids [nlist, d]."""
        dist = self.fmt().ivf_distances(np.asarray(q)[None, :], centroids)[0]
        return make_keys(dist, self.id_base + np.arange(len(centroids)))

    def pack_words(self, vec: np.ndarray) -> list[int]:
        """The d/w stream words of one vector (element i of a word at bits i*vec_bits)."""
        mask = (1 << self.vec_bits) - 1
        return [
            sum((int(v) & mask) << (i * self.vec_bits) for i, v in enumerate(vec[k * self.w : (k + 1) * self.w]))
            for k in range(self.words)
        ]

    # -- timing ---------------------------------------------------------------------------------
    def spec(self) -> SweepSpec:
        rng = self.elem_range()
        return SweepSpec(
            w=self.w,
            words=self.words,
            rows=self.nlist,
            vec_range=rng,
            row_range=rng,
            op="sqdiff",
            result_lanes=self.w,
            result_words=self.words,
            collect=1,
            source="stream" if self.storage == "stream" else "memory",
            ram_attrs=ram_style(self.storage),
        )

    def query_interval(self) -> int:
        return (self.nlist + 1) * self.words

    def latency(self) -> int:
        return self.query_interval() + self.spec().depth() + 1

    def ii(self) -> int:
        return self.query_interval()

    # -- resources ------------------------------------------------------------------------------
    logic_features: ClassVar[tuple[str, ...]] = (*LOGIC_FEATURES, "uram_mux_bits")

    def resource_features(self) -> dict[str, float]:
        """Lanes, the query file and centroid memory (registers, DSPs, RAM tiles), and the engine's
        logic: adder tree, accumulator, rotate multiplexer, read multiplexer of RAMs stacked in depth."""
        width, depth = self.w * self.vec_bits, self.nlist * self.words
        return {
            "w": self.w,
            "w*vec_bits": self.w * self.vec_bits,
            "vec_bits": self.vec_bits,
            "d*vec_bits": self.d * self.vec_bits,
            **ram_features(self.storage, width, depth),
            **self.spec().structure_features(),
        }

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return IvfDistComponent(self)


class IvfDistComponent(wiring.Component):
    """Amaranth implementation of `IvfDist` (see the module docstring)."""

    def __init__(self, pe: IvfDist):
        self.pe = pe
        word = data.ArrayLayout(signed(pe.vec_bits), pe.w)
        super().__init__(
            {
                "q": In(stream.Signature(word)),
                "q_fwd": Out(stream.Signature(word)),
                "centroids": In(stream.Signature(word)),
                "o": Out(stream.Signature(data.StructLayout({"key": pe.key_bits, "last": 1}))),
            }
        )

    def elaborate(self, platform):
        pe = self.pe
        m = Module()
        top = (1 << pe.ivf_dist_bits) - 1

        def post(total):
            shifted = total >> pe.ivf_shift
            return Mux(shifted > top, top, shifted)[: pe.ivf_dist_bits]

        sw = Sweep(pe.spec(), post=post, post_shape=unsigned(pe.ivf_dist_bits))
        en = Signal()
        m.d.comb += en.eq(~sw.out_valid | self.o.ready)
        sw.build(m, en)

        # A query word enters both the local load register and the forward buffer (the 1-D
        # array's chain). The forward buffer holds two words and takes one whenever it is not
        # full, so `q.ready` never depends on `q_fwd.ready`: back-pressure does not ripple
        # through the array in one cycle (a combinational path as long as the array).
        qreg = Signal.like(self.q.payload)
        load_pending, take, accept, pop = Signal(), Signal(), Signal(), Signal()
        fwd = [Signal.like(self.q.payload, name=f"fwd{i}") for i in range(2)]
        fwd_count = Signal(range(3))
        m.d.comb += [
            take.eq(load_pending & sw.load_ready),
            sw.load_valid.eq(load_pending),
            sw.load_word.eq(qreg),
            self.q_fwd.valid.eq(fwd_count != 0),
            self.q_fwd.payload.eq(fwd[0]),
            self.q.ready.eq((fwd_count != 2) & (~load_pending | take)),
            accept.eq(self.q.valid & self.q.ready),
            pop.eq(self.q_fwd.valid & self.q_fwd.ready),
        ]
        with m.If(accept):
            m.d.sync += [qreg.eq(self.q.payload), load_pending.eq(1)]
        with m.Elif(take):
            m.d.sync += load_pending.eq(0)
        with m.If(pop):
            m.d.sync += fwd[0].eq(fwd[1])
        with m.If(accept & (fwd_count == pop)):  # the word lands behind those staying
            m.d.sync += fwd[0].eq(self.q.payload)
        with m.Elif(accept):
            m.d.sync += fwd[1].eq(self.q.payload)
        m.d.sync += fwd_count.eq(fwd_count + accept - pop)

        sw.take_rows(m, self.centroids)

        # Cell ids count the keys leaving the PE.
        cell = Signal(range(max(2, pe.nlist)))
        ident = Signal(ID_BITS)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += cell.eq(Mux(sw.out_last, 0, cell + 1))
        m.d.comb += [
            ident.eq(cell + pe.id_base),
            self.o.valid.eq(sw.out_valid),
            self.o.payload.key.eq(Cat(ident, sw.out_word[0])),
            self.o.payload.last.eq(sw.out_last),
        ]
        return m
