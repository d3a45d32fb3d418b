"""Datapath blocks shared by the arithmetic PEs (l2dist, ivf_dist, build_lut, opq, pq_decode).

Every arithmetic PE is a pipeline with one global enable: all registers advance when the PE's
output register is free (`en = ~o.valid | o.ready`), which gives back-pressure without skid
buffers. The pieces those pipelines have in common are written once here: enabled registers
and delay lines (`Pipe`), lane-wise squared differences and products, and a registered adder
tree. Widths are derived from value bounds, so every register is exactly as wide as the
integers it can hold.
"""

from __future__ import annotations

from collections.abc import Sequence

from amaranth import Module, Shape, Signal, Value, signed, unsigned

from fanns.numerics import bits_for


def tree_depth(n: int) -> int:
    """Registered levels of an adder tree over `n` inputs: ceil(log2 n)."""
    return max(0, (n - 1).bit_length())


def shape_for(lo: int, hi: int) -> Shape:
    """The narrowest shape holding every integer in [lo, hi]."""
    if lo >= 0:
        return unsigned(bits_for(hi))
    return signed(max(bits_for(-lo - 1), bits_for(max(hi, 0))) + 1)


class Pipe:
    """Registers that advance together under one enable (the pipeline's stall control)."""

    def __init__(self, m: Module, en: Value):
        self.m = m
        self.en = en

    def reg(self, value, shape=None, name: str | None = None) -> Signal:
        value = Value.cast(value)
        sig = Signal(value.shape() if shape is None else shape, name=name)
        with self.m.If(self.en):
            self.m.d.sync += sig.eq(value)
        return sig

    def delay(self, value, n: int, name: str = "dly") -> Value:
        value = Value.cast(value)
        for i in range(n):
            value = self.reg(value, name=f"{name}{i}")
        return value


def squared_diffs(
    pipe: Pipe, a: Sequence[Value], b: Sequence[Value], a_range, b_range, name: str = "sq"
) -> list[Signal]:
    """(a_i - b_i)**2 per lane, two registered stages (subtract, square); a_i in a_range, b_i in b_range."""
    lo, hi = a_range[0] - b_range[1], a_range[1] - b_range[0]
    mag = max(abs(lo), abs(hi))
    diffs = [pipe.reg(x - y, shape_for(lo, hi), name=f"{name}_diff{i}") for i, (x, y) in enumerate(zip(a, b))]
    squares = [pipe.reg(dv * dv, unsigned(bits_for(mag * mag)), name=f"{name}_sq{i}") for i, dv in enumerate(diffs)]
    return squares


def products(pipe: Pipe, a: Sequence[Value], b: Sequence[Value], a_range, b_range, name: str = "mul") -> list[Signal]:
    """a_i * b_i per lane, two registered stages (operands, product: a DSP's A/B and M registers)."""
    ends = [x * y for x in a_range for y in b_range]
    lo, hi = min(ends), max(ends)
    ra = [pipe.reg(x, name=f"{name}_a{i}") for i, x in enumerate(a)]
    rb = [pipe.reg(y, name=f"{name}_b{i}") for i, y in enumerate(b)]
    prods = [pipe.reg(x * y, shape_for(lo, hi), name=f"{name}_p{i}") for i, (x, y) in enumerate(zip(ra, rb))]
    return prods


def add_tree(pipe: Pipe, values: Sequence[Value], name: str = "tree") -> Value:
    """Sum of `values` through tree_depth(len(values)) registered levels (pairs, odd one passes)."""
    level = [Value.cast(v) for v in values]
    depth = 0
    while len(level) > 1:
        depth += 1
        nxt = []
        for i in range(0, len(level), 2):
            pair = level[i : i + 2]
            total = pair[0] + pair[1] if len(pair) == 2 else pair[0]
            nxt.append(pipe.reg(total, name=f"{name}{depth}_{i // 2}"))
        level = nxt
    return level[0]


# (depth, width, BRAM18 equivalents) of the simple-dual-port block-RAM shapes of UltraScale+.
_BRAM_SHAPES = (
    (512, 36, 1),
    (1024, 18, 1),
    (2048, 9, 1),
    (4096, 4, 1),
    (8192, 2, 1),
    (16384, 1, 1),
    (512, 72, 2),
    (1024, 36, 2),
    (2048, 18, 2),
    (4096, 9, 2),
    (8192, 4, 2),
    (16384, 2, 2),
    (32768, 1, 2),
)


def bram18_tiles(width: int, depth: int) -> int:
    """BRAM18 equivalents of a width x depth memory built from one block-RAM shape (a resource feature)."""
    return min(-(-width // w) * -(-depth // d) * cost for d, w, cost in _BRAM_SHAPES)


def adder_tree_bits(n: int, leaf_bits: int) -> int:
    """Output bits of the adders of `add_tree` over `n` leaves of `leaf_bits` (a resource feature:
    each adder bit is a LUT on the carry chain and a register)."""
    bits, level, growth = 0, n, 0
    while level > 1:
        growth += 1
        bits += (level // 2) * (leaf_bits + growth)
        level = level // 2 + level % 2
    return bits


def bram_mux_bits(width: int, depth: int) -> int:
    """2:1 multiplexer bits selecting between block RAMs stacked in depth (a resource feature).

    Uses the cheapest shape of `bram18_tiles`, preferring the fewest depth splits among equally
    cheap ones (a memory split over k RAMs in depth reads through a k:1 multiplexer, k-1 2:1 per bit).
    """
    best = bram18_tiles(width, depth)
    return min(
        width * (-(-depth // d) - 1) for d, w, cost in _BRAM_SHAPES if -(-width // w) * -(-depth // d) * cost == best
    )


def uram_mux_bits(width: int, depth: int) -> int:
    """2:1 multiplexer bits selecting between URAM288 blocks stacked in depth (a resource feature)."""
    return width * (-(-depth // 4096) - 1)


def uram_tiles(width: int, depth: int) -> int:
    """URAM288 blocks (4K x 72) of a width x depth memory (a resource feature)."""
    return -(-width // 72) * -(-depth // 4096)


def ram_features(storage: str, width: int, depth: int) -> dict[str, int]:
    """The memory resource features of a width x depth memory in `storage` ("bram" or "uram";
    any other, e.g. streamed data, has no memory): tiles and the read multiplexer of each kind."""
    bram, uram = storage == "bram", storage == "uram"
    return {
        "bram18_tiles": bram18_tiles(width, depth) if bram else 0,
        "uram_tiles": uram_tiles(width, depth) if uram else 0,
        "bram_mux_bits": bram_mux_bits(width, depth) if bram else 0,
        "uram_mux_bits": uram_mux_bits(width, depth) if uram else 0,
    }


def ram_style(storage: str) -> tuple[tuple[str, str], ...]:
    """The yosys memory attribute that places a memory of `storage` in UltraRAM or block RAM."""
    return (("ram_style", "ultra" if storage == "uram" else "block"),)
