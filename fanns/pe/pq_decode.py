"""PQ decode / ADC unit (Stage PQDist; FANNS 6.4.2.1, Fig. 6.7; ChamVS 4.4.1, Fig. 4.3).

For every probed cell the unit first stores the cell's distance lookup table, then scans the
cell's PQ codes, one code per cycle, and emits one selection key per code.

* LUT input `lut`: 256 words per cell; word j = [LUT[0][j], ..., LUT[m-1][j]] (`lut_bits` each,
  sub-space i at bits i*lut_bits), exactly what `build_lut` emits, `lut_words` words a beat (beat
  b carries words b*W .. b*W + W-1, word b*W + r at bits r*m*lut_bits), so a LUT loads in 256/W
  cycles. Column i lives in its own memories, so the m lookups of a code happen in the same
  cycle: one (256 x lut_bits, one BRAM18) for W = 1; for W > 1, W memories of 256/W words each,
  memory r holding the words j = r mod W, read at code >> log2 W and selected by code mod W.
  Why: a cell with fewer items than 256 leaves the unit waiting for its LUT (a PQDist PE loads
  every probed cell's LUT in full), and W words a beat cut that wait W-fold.
* Code input `codes`: {codes: m bytes, id: 32 bits, pad, last_cell, last_query}. `last_cell` on
  the final item of a cell switches to the next cell's LUT; every cell has at least one item
  (the controller sends an empty cell as one padding item). `last_query` marks the final item of
  a query (it is also the final item of its cell).
* Output `o`: {key, last}: key = ``(dist << 32) | id`` with dist = `IvfPqFormat.adc` (the exact sum
  of the m entries, `pq_dist_bits` wide), or the all-ones sentinel for a padding item (padding
  detection, 6.4.2.1); last = last_query.

Double buffering (`double_buffer=True`): the columns are 512 deep (two banks, still one BRAM18
each for lut_bits <= 36), so the next cell's LUT loads while the current cell scans. A bank is
free again right after the final code of its cell was looked up. A memory of W > 1 is left to
yosys's choice of block or LUT RAM (`fanns.pe.stream_fifo.memory_mapping`: 256 words of 16 bits
stay in block RAM, 128 or fewer go to LUT RAM); a W = 1 column is kept in block RAM.

Datapath: m synchronous reads (the BRAM output register; for W > 1 a W:1 multiplexer behind
it), an adder tree of ceil(log2 m) registered levels, the output register: D = 2 + ceil(log2 m)
edges from accepting a code to its key in the output register. Everything stalls together when
the output is back-pressured.

Timing, no bubbles nor back-pressure, counted from the first LUT beat accepted to the last key
out, with T = 256/W the LUT's load: the LUT of cell c starts loading at ls_c, its scan starts at
ss_c and its final code is accepted at se_c, with ls_0 = 0, ss_c = max(ls_c + T, se_(c-1) + 1),
se_c = ss_c + n_c - 1, and ls_(c+1) = max(ls_c + T, se_(c+1-B) + 1) for B banks; the span is
se_last + D + 1 (`schedule`, `cycles_for_cells`). Query boundaries cost nothing, so a batch of
queries is one list of cells. For one cell of N codes this is L + (N-1) with L = T + 1 + D
(`cycles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from amaranth import Array, Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from fanns.engines.datapath import Pipe, add_tree, tree_depth
from fanns.errors import FannsError
from fanns.numerics import ID_BITS, IvfPqFormat, make_keys, sentinel
from fanns.pe.base import PE
from fanns.pe.stream_fifo import memory_mapping

KSUB = 256
"""Codes per sub-space (8-bit PQ codes): LUT words per cell."""
LUT_WORDS = (1, 2, 4, 8)
"""LUT words a beat the unit offers (`PqDecode.lut_words`): powers of two, so a code splits into
memory (its low bits) and address (the rest) without arithmetic."""


@dataclass(frozen=True)
class PqDecode(PE):
    m: int = 16
    lut_bits: int = 16
    double_buffer: bool = True
    lut_words: int = 1

    name: ClassVar[str] = "pq_decode"
    summary: ClassVar[str] = (
        "ADC: per cell, load a 256-word LUT (lut_words words a cycle) into m columns, "
        "then one PQ code -> one key per cycle"
    )
    timing_formula: ClassVar[str] = (
        "one cell of N codes: II = 1, L = 256/lut_words + 3 + ceil(log2 m) (includes the LUT load); "
        "many cells: cycles_for_cells(sizes)"
    )
    hls_header: ClassVar[str] = "pq_decode.h"
    testbench: ClassVar[str] = "tb_pq_decode"
    calibration_points: ClassVar[tuple] = (
        {"m": 8, "lut_bits": 16, "double_buffer": True},
        {"m": 16, "lut_bits": 16, "double_buffer": True},
        {"m": 32, "lut_bits": 16, "double_buffer": True},
        {"m": 64, "lut_bits": 16, "double_buffer": True},
        {"m": 16, "lut_bits": 16, "double_buffer": False},
        {"m": 32, "lut_bits": 12, "double_buffer": False},
        {"m": 8, "lut_bits": 24, "double_buffer": True},
        {"m": 16, "lut_bits": 8, "double_buffer": True},
        {"m": 16, "lut_bits": 16, "double_buffer": True, "lut_words": 2},
        {"m": 32, "lut_bits": 16, "double_buffer": True, "lut_words": 2},
        {"m": 16, "lut_bits": 16, "double_buffer": True, "lut_words": 4},
        {"m": 48, "lut_bits": 16, "double_buffer": True, "lut_words": 4},
        {"m": 16, "lut_bits": 16, "double_buffer": True, "lut_words": 8},
        {"m": 16, "lut_bits": 12, "double_buffer": False, "lut_words": 4},
    )

    def validate(self) -> None:
        self.require(1 <= self.m <= 256, f"m={self.m} out of range 1..256")
        self.require(
            1 <= self.lut_bits <= 24, f"lut_bits={self.lut_bits} out of range 1..24", "use 8..16 bit LUT entries"
        )
        self.require(
            self.lut_words in LUT_WORDS,
            f"lut_words={self.lut_words} is not one of {', '.join(map(str, LUT_WORDS))}",
            "use a power of two up to 8",
        )

    # -- formats --------------------------------------------------------------------------------
    def fmt(self) -> IvfPqFormat:
        """The numerics this unit implements (only m and lut_bits matter for ADC)."""
        return IvfPqFormat(d=self.m, m=self.m, scale=1.0, ivf_shift=0, lut_shift=0, lut_bits=self.lut_bits)

    @property
    def banks(self) -> int:
        return 2 if self.double_buffer else 1

    @property
    def load_cycles(self) -> int:
        """Cycles a LUT takes to load: 256 words, `lut_words` a cycle."""
        return KSUB // self.lut_words

    @property
    def column_depth(self) -> int:
        """Words of each of a column's `lut_words` memories (all banks)."""
        return self.load_cycles * self.banks

    def column_kind(self) -> str:
        """Where a column's memories live: "bram" or "lutram" (`memory_mapping`'s choice for W > 1)."""
        return "bram" if self.lut_words == 1 else memory_mapping(self.lut_bits, self.column_depth)["kind"]

    @property
    def dist_bits(self) -> int:
        return self.fmt().pq_dist_bits

    @property
    def key_bits(self) -> int:
        return self.dist_bits + ID_BITS

    # -- reference model ------------------------------------------------------------------------
    def scan(self, lut: np.ndarray, codes: np.ndarray, ids: np.ndarray, pad: np.ndarray) -> np.ndarray:
        """Keys (uint64) of one cell's items: LUT [m, 256], codes [n, m], ids [n], pad [n] (bool)."""
        dist = self.fmt().adc(lut, codes)
        keys = make_keys(dist, ids)
        keys[np.asarray(pad, dtype=bool)] = np.uint64(sentinel(self.key_bits))
        return keys

    def lut_beats(self, lut: np.ndarray) -> list[int]:
        """The 256 / `lut_words` stream beats of one LUT [m, 256]: word j holds LUT[i][j] at bits
        i*lut_bits, beat b words b*W .. b*W + W-1 (word b*W + r at bits r*m*lut_bits)."""
        word_bits = self.m * self.lut_bits
        beats = []
        for b in range(self.load_cycles):
            beat = 0
            for r in range(self.lut_words):
                j = b * self.lut_words + r
                for i in range(self.m):
                    beat |= int(lut[i, j]) << (r * word_bits + i * self.lut_bits)
            beats.append(beat)
        return beats

    # -- timing ---------------------------------------------------------------------------------
    def depth(self) -> int:
        """Edges from accepting a code to its key in the output register."""
        return 2 + tree_depth(self.m)

    def latency(self) -> int:
        return self.load_cycles + 1 + self.depth()

    def ii(self) -> int:
        return 1

    def schedule(self, sizes: Sequence[int]) -> list[tuple[int, int, int]]:
        """Per cell (first LUT beat accepted, first code accepted, last code accepted), in cycles
        from the first LUT beat, for cells of `sizes` items each (no bubbles, no back-pressure)."""
        if any(int(n) < 1 for n in sizes):
            raise FannsError(
                "pq_decode: every probed cell is sent as at least one item",
                hint="count an empty cell as 1 (its padding item); sizes include padding",
            )
        out: list[tuple[int, int, int]] = []
        load, t = 0, self.load_cycles
        for c, n in enumerate(sizes):
            if c > 0:
                load = out[c - 1][0] + t
                if c >= self.banks:
                    load = max(load, out[c - self.banks][2] + 1)
            start = load + t if c == 0 else max(load + t, out[c - 1][2] + 1)
            out.append((load, start, start + int(n) - 1))
        return out

    def cell_cycles(self, sizes) -> np.ndarray:
        """Cycles each cell occupies the unit in a back-to-back stream of cells (steady state).

        From the schedule's recurrence, consecutive scan starts are ss_(c+1) = ss_c + max(T, n_c)
        with two banks (the next LUT loads while the current cell scans) and ss_c + T + n_c with
        one, for every cell after the first (T = `load_cycles`); so a query's share of a long
        stream is the sum of its cells' values, and `cycles_for_cells(sizes)` = T +
        sum(cell_cycles(sizes[:-1])) + sizes[-1] + depth(). Works on arrays of sizes (items,
        padding included, each >= 1).
        """
        n = np.asarray(sizes, dtype=np.int64)
        return np.maximum(n, self.load_cycles) if self.banks == 2 else n + self.load_cycles

    def cycles_for_cells(self, sizes: Sequence[int]) -> int:
        """Cycles from the first LUT beat to the last key for cells of `sizes` items (0 if none)."""
        if len(sizes) == 0:
            return 0
        return self.schedule(sizes)[-1][2] + self.depth() + 1

    # -- resources ------------------------------------------------------------------------------
    def resource_features(self) -> dict[str, float]:
        """The columns' memories by kind: block RAM tiles, or LUT-RAM primitives with their read
        registers (a LUT RAM reads asynchronously, so the synchronous read is a register per bit)
        and the multiplexers of memories deeper than one primitive (64 words); the W:1 read
        multiplexers of W > 1; the datapath (the adder tree grows with m*lut_bits)."""
        memories = self.m * self.lut_words
        bits = memories * self.lut_bits
        lutram = self.column_kind() == "lutram"
        return {
            "m": self.m,
            "m*lut_bits": self.m * self.lut_bits,
            "key_bits": self.key_bits,
            "bram_columns": 0 if lutram else memories,
            "lutram_prims": memories * memory_mapping(self.lut_bits, self.column_depth)["lutram"] if lutram else 0,
            "lutram_bits": bits if lutram else 0,
            "lutram_mux_bits": bits * (-(-self.column_depth // 64) - 1) if lutram else 0,
            "mux_bits": self.m * self.lut_bits * (self.lut_words - 1),
        }

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return PqDecodeComponent(self)


class PqDecodeComponent(wiring.Component):
    """Amaranth implementation of `PqDecode` (see the module docstring)."""

    def __init__(self, pe: PqDecode):
        self.pe = pe
        item = data.StructLayout(
            {"codes": data.ArrayLayout(8, pe.m), "id": ID_BITS, "pad": 1, "last_cell": 1, "last_query": 1}
        )
        word = data.ArrayLayout(unsigned(pe.lut_bits), pe.m)
        super().__init__(
            {
                "lut": In(stream.Signature(data.ArrayLayout(word, pe.lut_words))),
                "codes": In(stream.Signature(item)),
                "o": Out(stream.Signature(data.StructLayout({"key": pe.key_bits, "last": 1}))),
            }
        )

    def elaborate(self, platform):
        pe = self.pe
        m = Module()
        en = Signal()
        m.d.comb += en.eq(~self.o.valid | self.o.ready)
        pipe = Pipe(m, en)

        # Bank bookkeeping: the loader fills bank `wb`, the scanner reads bank `rb`.
        full = [Signal(name=f"full{b}") for b in range(pe.banks)]
        wb = Signal(range(pe.banks), name="wb")
        rb = Signal(range(pe.banks), name="rb")
        full_w, full_r = Signal(), Signal()
        m.d.comb += [full_w.eq(Cat(*full).bit_select(wb, 1)), full_r.eq(Cat(*full).bit_select(rb, 1))]

        j = Signal(range(pe.load_cycles), name="beat")
        load = Signal()
        m.d.comb += [self.lut.ready.eq(~full_w), load.eq(self.lut.valid & self.lut.ready)]
        scan = Signal()
        m.d.comb += [self.codes.ready.eq(full_r & en), scan.eq(self.codes.valid & self.codes.ready)]
        done_load = load & (j == pe.load_cycles - 1)
        done_scan = scan & self.codes.payload.last_cell
        with m.If(load):
            m.d.sync += j.eq(j + 1)
        with m.If(done_load):
            m.d.sync += wb.eq(wb + 1)
        with m.If(done_scan):
            m.d.sync += rb.eq(rb + 1)
        for b in range(pe.banks):
            with m.If(done_load & (wb == b)):
                m.d.sync += full[b].eq(1)
            with m.If(done_scan & (rb == b)):
                m.d.sync += full[b].eq(0)

        # Per column, `lut_words` memories (block RAM for one: yosys would pick LUT RAM for narrow
        # single-bank columns); the lookup of a code happens on the edge that accepts it, the
        # memory holding its word is selected behind the read.
        split = (pe.lut_words - 1).bit_length()
        attrs = {"ram_style": "block"} if pe.lut_words == 1 else {}
        entries = []
        for i in range(pe.m):
            code = self.codes.payload.codes[i]
            reads = []
            for r in range(pe.lut_words):
                mem = Memory(shape=unsigned(pe.lut_bits), depth=pe.column_depth, init=[], attrs=attrs)
                m.submodules[f"col{i}" if pe.lut_words == 1 else f"col{i}_{r}"] = mem
                wport, rport = mem.write_port(), mem.read_port()
                m.d.comb += [
                    wport.addr.eq(j if pe.banks == 1 else Cat(j, wb)),
                    wport.data.eq(self.lut.payload[r][i]),
                    wport.en.eq(load),
                    rport.addr.eq(code[split:] if pe.banks == 1 else Cat(code[split:], rb)),
                    rport.en.eq(en),
                ]
                reads.append(rport.data)
            entries.append(reads[0] if pe.lut_words == 1 else Array(reads)[pipe.reg(code[:split], name=f"sel{i}")])
        p = self.codes.payload
        side = pipe.reg(Cat(scan, p.pad, p.last_query, p.id), name="rd_side")
        total = add_tree(pipe, entries)
        side = pipe.delay(side, tree_depth(pe.m), name="tree_side")
        valid, pad, last, ident = side[0], side[1], side[2], side[3:]

        with m.If(en):
            m.d.sync += self.o.valid.eq(valid)
            with m.If(valid):
                m.d.sync += [
                    self.o.payload.key.eq(Mux(pad, sentinel(pe.key_bits), Cat(ident, total[: pe.dist_bits]))),
                    self.o.payload.last.eq(last),
                ]
        return m
