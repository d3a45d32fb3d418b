"""What both IVF-PQ generators build: the lane counts of OPQ, IVFDist and BuildLUT.

Lane counts are not limited to divisors of d: the hardware may pad every sub-vector of d/m
elements to `dsub_hw` elements with zeros (`fanns.numerics`, "Padded sub-vectors"), and the
rules below apply to the hardware's d_hw = m * dsub_hw (callers pass d_hw and m). `padded_dsubs`
lists the paddings worth trying: for every power-of-two lane count, the smallest padding that
makes it buildable. The DSE tries each (the model prices the padded beats), so padding is chosen
only where the lanes it enables pay for the zeros they carry.

The DSE enumerates only configurations these rules accept (`fanns.model.ivfpq.options`), and the
RTL generator checks a design with the same rules (`fanns.arch.ivfpq.hw.IvfPqHw.check`), so an
option the DSE emits is one the generators build. The HLS kernel builds any lane count that
divides d (`fanns.codegen.ivfpq.hls.check_design`); the RTL is stricter, so these rules are the RTL's:

* every PE's own rule (`fanns.pe.opq/ivf_dist/build_lut` `validate`): lanes divide d; BuildLUT's
  lanes also divide or are a multiple of the sub-vector length d/m;
* a word of lanes x stored element bits (int16, or int32 beyond 16-bit vectors; the OPQ matrix
  is int16) divides or fills whole I/O beats: the images and the queries arrive through the
  host I/O port and are split into words (or words gathered from beats) by a whole ratio;
* the lanes of OPQ, IVFDist and BuildLUT are multiples of one another: the query is regrouped
  from one stage's words to the next by a whole ratio (`compatible`);
* IVF centroids on chip or streamed (`BUILT_IVF_STORAGES`), BuildLUT centroids on chip or fetched
  from memory (`BUILT_LUT_STORES`) and its codebooks in BRAM or URAM (`BUILT_LUT_CODEBOOKS`), the
  OPQ matrix in BRAM or URAM or streamed (`BUILT_OPQ_STORES`).

PQ codes of any m suit every memory port: a code wider than a beat takes ceil(8m / port_bits)
beats of its own, and narrow codes share a beat up to as many as it holds ids
(`fanns.pe.channel_feeder.codes_per_unit`), so no rule here limits m.
"""

from __future__ import annotations

import math

from fanns.design.ivfpq_stages import stored_elem_bytes
from fanns.errors import FannsError
from fanns.tools.yosys import URAM_FAMILIES

BUILT_IVF_STORAGES = ("bram", "uram", "stream")
"""IVF centroid storages both generators build (streamed: one channel feeds at most as many PEs
as a beat holds words, which `fanns.model.ivfpq.stage_pes.ivf_stream_channels` respects)."""
BUILT_OPQ_STORES = ("bram", "uram", "stream")
"""OPQ matrix stores both generators build: on chip, or streamed per query from a channel of its
own (`fanns.arch.ivfpq.ivf_stream`, the HLS kernel's `read_opq_matrix`)."""
BUILT_LUT_STORES = ("bram", "uram", "memory")
"""BuildLUT centroid stores both generators build: on chip, or each probed cell's centroid fetched
from memory (`fanns.arch.ivfpq.lut_fetch`)."""
BUILT_LUT_CODEBOOKS = ("bram", "uram")
"""BuildLUT codebook stores both generators build: every PE's 256 x d codebook in block RAM or
UltraRAM (where a large d's codebooks exhaust a board's block RAM)."""
MATRIX_BITS = 16
"""Bits of one OPQ matrix element in device memory (int16; `fanns.arch.ivfpq.hw.MATRIX_BITS`)."""
LANE_STAGES = ("opq", "ivf_dist", "build_lut")


def on_family(stores: tuple[str, ...], family: str) -> tuple[str, ...]:
    """The stores of `stores` a device family has: no "uram" on a family without UltraRAM."""
    return stores if family in URAM_FAMILIES else tuple(s for s in stores if s != "uram")


def padded_dsubs(d: int, m: int, max_lanes: int = 64) -> list[int]:
    """Sub-vector lengths in hardware worth trying for d/m (ascending, d/m first): for each lane
    count w = 2, 4, .. max_lanes, the smallest length >= d/m that w divides or divides (BuildLUT)
    and the smallest whose m sub-vectors w divides (IVFDist, OPQ); only lengths below 2·d/m
    (at most half the elements are zeros)."""
    dsub = d // m
    out = {dsub}
    w = 2
    while w <= max_lanes:
        out.add(-(-dsub // w) * w if w <= dsub else next(k for k in range(dsub, w + 1) if w % k == 0))
        step = w // math.gcd(w, m)
        out.add(-(-dsub // step) * step)
        w *= 2
    return sorted(p for p in out if p == dsub or p < 2 * dsub)


def divisors(n: int) -> list[int]:
    """The positive divisors of n, ascending."""
    small = [k for k in range(1, int(n**0.5) + 1) if n % k == 0]
    return sorted(set(small + [n // k for k in small]))


def whole_ratio(a: int, b: int) -> bool:
    """One of a, b is a multiple of the other."""
    return a > 0 and b > 0 and max(a, b) % min(a, b) == 0


def word_bits(stage: str, lanes: int, vec_bits: int) -> list[int]:
    """Bits of the words a stage's lanes take from the I/O port (OPQ: its matrix rows and the query)."""
    elem = lanes * 8 * stored_elem_bytes(vec_bits)
    return [lanes * MATRIX_BITS, elem] if stage == "opq" else [elem]


def lane_problem(stage: str, lanes: int, d: int, m: int, vec_bits: int, io_port_bits: int) -> str | None:
    """Why `lanes` lanes of `stage` cannot be built for this shape, or None when they can."""
    if lanes < 1 or d % lanes:
        return f"{lanes} lanes do not divide d={d}"
    if stage == "build_lut":
        dsub = d // m if m > 0 and d % m == 0 else None
        if dsub is None:
            return f"m={m} does not divide d={d}"
        if dsub % lanes and lanes % dsub:
            return f"{lanes} lanes neither divide nor are a multiple of the sub-vector length d/m={dsub}"
    for bits in word_bits(stage, lanes, vec_bits):
        if not whole_ratio(bits, io_port_bits):
            return f"{bits}-bit words of {lanes} lanes neither divide nor fill {io_port_bits}-bit I/O beats"
    return None


def stage_lanes(stage: str, d: int, m: int, vec_bits: int, io_port_bits: int) -> list[int]:
    """Every lane count of `stage` both generators build for this shape, ascending (never empty
    for OPQ and IVFDist: one lane always fits; BuildLUT needs m to divide d)."""
    return [w for w in divisors(d) if lane_problem(stage, w, d, m, vec_bits, io_port_bits) is None]


def lanes_rule(stage: str, d: int, m: int, vec_bits: int, io_port_bits: int) -> str:
    """The rule `stage_lanes` applies, in words (for "no design fits" reports)."""
    elem = 8 * stored_elem_bytes(vec_bits)
    rule = f"lanes must divide d={d}"
    if stage == "build_lut":
        rule += f" and divide or be a multiple of d/m={d // m if m and d % m == 0 else '?'}"
    return rule + f", and lanes x {elem} bits must divide or fill the {io_port_bits}-bit I/O beat"


def compatible(a: int | None, b: int | None) -> bool:
    """Two stages' lanes the query regroups between (None: the stage is absent)."""
    return a is None or b is None or whole_ratio(a, b)


def design_lane_problems(
    d: int, m: int, vec_bits: int, io_port_bits: int, lanes: dict[str, int | None]
) -> list[tuple[str, str]]:
    """(where, what) of every lane rule a design's `lanes` (stage -> lanes, None: absent) breaks."""
    out = []
    for stage in LANE_STAGES:
        w = lanes.get(stage)
        if w is None:
            continue
        why = lane_problem(stage, w, d, m, vec_bits, io_port_bits)
        if why is not None:
            out.append((f"stages.{stage}.lanes", why))
    for i, a in enumerate(LANE_STAGES):
        for b in LANE_STAGES[i + 1 :]:
            if not compatible(lanes.get(a), lanes.get(b)):
                out.append(
                    (
                        f"stages.{a}.lanes",
                        f"{lanes[a]} and {b} lanes {lanes[b]} are not multiples of one another",
                    )
                )
    return out


def check_design_lanes(d: int, m: int, vec_bits: int, io_port_bits: int, lanes: dict[str, int | None]) -> None:
    """Raise a FannsError naming the first lane rule broken (see the module docstring)."""
    problems = design_lane_problems(d, m, vec_bits, io_port_bits, lanes)
    if problems:
        where, what = problems[0]
        raise FannsError(
            f"{where}: {what}",
            hint="choose lanes from "
            + "; ".join(
                f"{s}: {stage_lanes(s, d, m, vec_bits, io_port_bits)}" for s in LANE_STAGES if lanes.get(s) is not None
            )
            + " (each pair multiples of one another), pad the sub-vectors for others (format.dsub_hw), "
            "or re-run fanns dse",
        )
