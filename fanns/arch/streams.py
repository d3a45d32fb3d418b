"""Stream wiring helpers of the composed accelerators: link two interfaces, free-standing streams,
lane truncation.

The stream glue blocks with hardware of their own (fork, regroup, beat splitter) are PEs in
`fanns.pe.glue_streams`, so the resource model prices them with calibrated fits.
"""

from __future__ import annotations

from amaranth import Cat, Module
from amaranth.lib import stream


def link(m: Module, src, dst) -> None:
    """Drive consumer interface `dst` from producer interface `src` (valid, payload, ready)."""
    m.d.comb += [dst.valid.eq(src.valid), dst.payload.eq(src.payload), src.ready.eq(dst.ready)]


def stream_of(shape) -> stream.Interface:
    """A free-standing stream interface (both ends driven inside one module)."""
    return stream.Signature(shape).create()


def lane_truncate(word, lanes: int, from_bits: int, to_bits: int):
    """`lanes` elements of `from_bits` to `to_bits` each (signed values that fit: keep the low bits)."""
    return Cat(*(word[i * from_bits : i * from_bits + to_bits] for i in range(lanes)))
