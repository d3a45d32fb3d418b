"""Stream FIFO PE: a valid/ready FIFO of `depth` words of `width` bits (amaranth.lib.fifo underneath).

The FIFOs between stages and inside the AXI masters are the "FIFOs and infrastructure" term of
the resource model (FANNS Eq. 6.2), so they are calibrated like any PE. It has no HLS header:
in HLS, FIFOs come from `hls::stream` with a depth pragma and the tool builds them.

Implementation: `SyncFIFOBuffered` (a memory of depth-1 words with a synchronous read port plus
an output register), so it maps to block RAM as well as to LUT RAM. Which one yosys picks
follows its memory_libmap costs (xilinx/lutrams_xcu.txt, brams_xc4v.txt): 16 per LUT-RAM
primitive (RAM32M16: 14 bits x 32, RAM64M8: 7 bits x 64, one per 64 words deeper) against 129
per RAMB18 (36/18/9/4/2/1 bits wide at 512/1K/2K/4K/8K/16K words) or 257 per RAMB36 (twice the
width). `storage()` evaluates that rule; a one-word memory (depth 2) becomes registers. The
resource features are per storage kind, so the fit is linear within each kind; the calibration
points cover all three and `test_stream_fifo` re-synthesises points to check the rule.

Timing: a word written into an empty FIFO can be taken 2 cycles later, so a burst of N words
takes L + (N-1)*II cycles from the first accepted to the last delivered word (inclusive) with
L = 3 and II = 1 (II = 2 for depth 2: the single memory word must drain first).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from amaranth import Module, Shape, unsigned
from amaranth.lib import fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from fanns.hdl.modules import separate
from fanns.pe.base import PE

LUTRAM_COST, BRAM18_COST, BRAM36_COST = 16, 129, 257
LUTS_PER_LUTRAM = 8  # RAM32M16 and RAM64M8 are 8 LUTs each


# Simple-dual-port aspect ratios: (words, RAMB18 width, RAMB36 width).
BRAM_ASPECTS = ((512, 36, 72), (1024, 18, 36), (2048, 9, 18), (4096, 4, 9), (8192, 2, 4), (16384, 1, 2))


def bram_widths(words: int) -> tuple[int, int]:
    """Widest simple-dual-port configuration (RAMB18, RAMB36) that holds `words` words."""
    return next((w18, w36) for limit, w18, w36 in BRAM_ASPECTS if words <= limit)


def memory_mapping(width: int, words: int) -> dict[str, float]:
    """How yosys maps a `width` x `words` simple-dual-port memory: kind and primitive counts."""
    if words <= 1:
        return {"kind": "registers", "lutram": 0, "bram18": 0}
    per = 14 if words <= 32 else 7
    lutram = math.ceil(width / per) * math.ceil(words / 64)
    w18, w36 = bram_widths(words)
    n18, n36 = math.ceil(width / w18), math.ceil(width / w36)
    bram18 = n18 if n18 * BRAM18_COST <= n36 * BRAM36_COST else 2 * n36
    bram_cost = min(n18 * BRAM18_COST, n36 * BRAM36_COST)
    kind = "lutram" if LUTRAM_COST * lutram < bram_cost else "bram"
    return {"kind": kind, "lutram": lutram, "bram18": bram18}


@dataclass(frozen=True)
class StreamFifo(PE):
    width: int = 64
    depth: int = 512

    name: ClassVar[str] = "stream_fifo"
    summary: ClassVar[str] = "valid/ready FIFO (registers, LUT RAM or block RAM by size), one word per cycle"
    timing_formula: ClassVar[str] = "L = 3; II = 1 (2 if depth = 2)"
    hls_header: ClassVar[str] = ""
    testbench: ClassVar[str] = "tb_stream_fifo"
    calibration_points: ClassVar[tuple] = (
        {"width": 128, "depth": 512},
        {"width": 32, "depth": 2},
        {"width": 512, "depth": 2},
        {"width": 32, "depth": 16},
        {"width": 64, "depth": 64},
        {"width": 512, "depth": 32},
        {"width": 8, "depth": 256},
        {"width": 512, "depth": 512},
        {"width": 32, "depth": 2048},
    )

    def validate(self) -> None:
        self.require(1 <= self.width <= 4096, f"width={self.width} out of range 1..4096")
        self.require(
            2 <= self.depth <= 16385, f"depth={self.depth} out of range 2..16385", "a FIFO holds at least 2 words"
        )

    # -- reference model ------------------------------------------------------------------------
    def transfer(self, items: np.ndarray) -> np.ndarray:
        """A FIFO delivers what it accepted, in order, truncated to `width` bits."""
        mask = (1 << self.width) - 1
        return np.array([int(v) & mask for v in items], dtype=object)

    # -- timing ---------------------------------------------------------------------------------
    def latency(self) -> int:
        return 3

    def ii(self) -> int:
        return 2 if self.depth == 2 else 1

    # -- resources ------------------------------------------------------------------------------
    def storage(self) -> dict[str, float]:
        """Kind ("registers", "lutram", "bram") and primitive counts of the storage memory."""
        return memory_mapping(self.width, self.depth - 1)

    def resource_features(self) -> dict[str, float]:
        return fifo_features(self.width, self.depth)

    # -- RTL ------------------------------------------------------------------------------------
    def component(self) -> wiring.Component:
        return StreamFifoComponent(self.width, self.depth)


def fifo_features(width: int, depth: int, prefix: str = "") -> dict[str, float]:
    """Resource features of a `SyncFIFOBuffered` of this size (reused by PEs that contain FIFOs)."""
    m = memory_mapping(width, depth - 1)
    ptr = math.ceil(math.log2(depth))
    feats = {"ptr_bits": ptr}
    if m["kind"] == "registers":
        feats["reg_bits"] = width
    elif m["kind"] == "lutram":
        feats |= {
            "lutram_prims": m["lutram"],
            "lutram_width": width,
            "lutram_mux_bits": width * (math.ceil((depth - 1) / 64) - 1),
        }
    else:
        feats |= {"bram18": m["bram18"]}
    return {prefix + k: float(v) for k, v in feats.items()}


class StreamFifoComponent(wiring.Component):
    """`i` -> FIFO -> `o` for any payload shape (see the module docstring)."""

    def __init__(self, shape, depth: int):
        self.shape, self.depth = shape, depth
        super().__init__({"i": In(stream.Signature(shape)), "o": Out(stream.Signature(shape))})

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = f = fifo.SyncFIFOBuffered(width=Shape.cast(self.shape).width, depth=self.depth)
        m.d.comb += [
            f.w_data.eq(self.i.payload),
            f.w_en.eq(self.i.valid),
            self.i.ready.eq(f.w_rdy),
            self.o.payload.eq(f.r_data),
            self.o.valid.eq(f.r_rdy),
            f.r_en.eq(self.o.ready),
        ]
        return m


def stream_fifo(shape, depth: int) -> wiring.Component:
    """A `StreamFifoComponent` as a part of a larger design: one module per (width, depth) while
    the design is converted (`fanns.hdl.modules`), whatever the payload's layout (the FIFO stores
    its bits)."""
    width = Shape.cast(shape).width
    component = StreamFifoComponent(shape, depth)
    return separate(
        component, ("stream_fifo", width, depth), "stream_fifo", lambda: StreamFifoComponent(unsigned(width), depth)
    )
