"""The IVF-PQ accelerator's control and I/O glue, as the resource model prices it.

Why a module of its own: besides its PEs, the top level (`fanns.arch.ivfpq.top`) holds the
register file of the RTL kernel, the beat splitters that route the I/O reader's words to the ROM
images and the query, the query fork and regroups of the front, BuildLUT's query buffer and
probe dispatcher, and the controller (parameters, addresses, counters, the load and run state
machine). Whole designs synthesised with yosys showed them missing from the inventory (LUT
-8.6 %, FF -9.8 % on `benchmarks/rtl_resources.py`'s tiny design). Each is priced here from a
calibrated PE where one exists (`AxilCsr` on the kernel's own register map, `BeatSplitter`,
`Broadcast`, `Regroup`, `StreamFifo`) and otherwise by its register bits, counted from the RTL.

The DSE sums its stage groups' resources separately (`fanns.model.ivfpq.options`), so every
piece is priced in one group from that group's configuration alone:

* the register file: the part every design has in infra, each `opq_addr` / `pq<c>_addr` /
  `hot<c>_addr` register (the calibrated fit is linear in words and bits, so the parts add up
  to the whole map's estimate exactly) in the group that needs it;
* one I/O beat splitter per section width a group's sections need (OPQ: matrix and query;
  IVFDist: centroids, and the query without OPQ; BuildLUT: codebook and centroid copy); the RTL
  shares one splitter between groups whose widths coincide, which this counts twice;
* the regroups that carry the query to IVFDist and BuildLUT in the consuming group, as from the
  query's narrowest source (one lane, the DSE's usual OPQ/IVFDist width): exact without OPQ
  for IVFDist (a wire), an estimate otherwise;
* controller registers in the group they serve (`CONTROL_LUT_PER_BIT`, `CONTROL_FF_PER_BIT`);
* the step-wise mode (docs/stepwise.md), which every design has: its registers (`mode`,
  `cells_addr`, `seeds_addr`), the controller's list addresses, the Front's step filter
  (`STEP_FILTER_BITS`) and its cell-list FIFO, the cell-list and seed splitters, the seed FIFO
  (`SEED_FIFO_LISTS`) and the seed merge (`seed_merge`, synthesised). The per-query state of a
  step-wise search is kept on the host (its K keys go back as seeds), so no on-chip state grows
  with the queries in flight.
"""

from __future__ import annotations

import math
from functools import cache

from fanns.engines.datapath import bram18_tiles, uram_tiles
from fanns.hdl.regmap import Register, RegMapBuilder, kernel_control_block
from fanns.pe.axil_csr import AxilCsr
from fanns.pe.glue_streams import BeatSplitter, Broadcast, Regroup, select_luts
from fanns.pe.stream_fifo import BRAM_ASPECTS, LUTS_PER_LUTRAM, memory_mapping
from fanns.resources import Resources

CSR_ADDR_BITS = 12
TAG_BITS = 3
"""Routing tag of the I/O reader's words (`fanns.arch.ivfpq.top.TAG_BITS`)."""
MATRIX_BITS = 16
TIER_WORD_BITS = 8
CELL_WORD_BITS = 32
"""A cell id of a step-wise run's cell list (`fanns.arch.ivfpq.hw.CELL_WORD_BITS`)."""
SEED_BITS = 64
"""A seed key as the I/O reader delivers it (`fanns.arch.ivfpq.seed_merge`)."""
COPY_SOURCES = 4
"""Copies a host-memory design's copy engine keeps in flight: the depth of its FIFO of each copy's
source (`fanns.arch.ivfpq.prefetch.CopyEngine`)."""
COPY_OUTSTANDING_BITS = 16
"""A copy engine's count of copies written and not yet answered."""
SEED_FIFO_LISTS = 2
"""A step-wise run's seed FIFO (`fanns.arch.ivfpq.top`) holds two queries' k seeds: the I/O reader
puts a query's seeds in it long before SelK's keys reach the merge, and must not wait there to
read the next queries. Measured (fast harness, `random-k100`, 12 queries, their probed cells as
one step): with no FIFO 3,540 cycles a query, with this one 2,212, as a normal run."""
STEP_FILTER_BITS = 8 + 1 + 32 + 1
"""The Front's step filter (`fanns.arch.ivfpq.front`): credits, hold flag, held cell, flush flag."""
SEED_MERGE_LUT_PER_KEY_BIT = 2.0
"""The seed merge's LUTs per key bit (the head compare and the key select), synthesised with yosys
(`synth_xilinx -family xcup` of `SeedMerge(key_bits, K)`): 100, 96 and 122 LUTs for (48, 10),
(48, 100) and (60, 1000); its flip-flops are its counter and two flags."""
WATCHED_STREAMS = 13
"""Stage-boundary streams whose state the `streams` register shows (`fanns.arch.ivfpq.hw`)."""

CONTROL_FF_PER_BIT = 1.0
"""A counted register bit is one flip-flop (the controller's registers, counted from the RTL)."""
CONTROL_LUT_PER_BIT = 0.0
"""The controller's LUTs per counted bit, fitted on the residual (yosys whole design minus every
other unit) of the calibration designs `tiny` and `small-opq` (`benchmarks/rtl_resources.py
--design tiny --design small-opq` prints the fit): the least-squares value is below zero (-0.52),
clamped to 0. The controller's LUTs are thus not visible beside the other units' estimates, which
yosys's optimisation of the whole design (constant register-file inputs, shared address logic)
brings down by as much. (With FFs fitted too, the value would be -0.61 per bit: the estimates
of the query regroups and splitters that two groups share over-count those designs, whose IVFDist
and BuildLUT lanes are equal; DSE-chosen designs have narrow IVFDist lanes, where they are exact.)"""


def kernel_registers(opq: bool, channels: int, tiered: bool) -> tuple[Register, ...]:
    """The register map of `fanns.arch.ivfpq.hw.IvfPqHw.regmap` without its descriptions: the
    same names, widths, access kinds and layout (tests/model/test_control.py checks it)."""
    b = RegMapBuilder("fanns_ivfpq", CSR_ADDR_BITS)
    b.registers.extend(kernel_control_block())
    regs = [("nq", 32, "RW"), ("nprobe", 32, "RW"), ("k", 32, "RW"), ("mode", 32, "RW")]
    regs += [(f"{name}_addr", 64, "RW") for name in ("query", "result", "centroids", "codebook")]
    if opq:
        regs.append(("opq_addr", 64, "RW"))
    regs += [(f"pq{c}_addr", 64, "RW") for c in range(channels)]
    regs += [("cells_addr", 64, "RW"), ("seeds_addr", 64, "RW")]
    if tiered:
        regs.append(("tiers_addr", 64, "RW"))
        regs += [(f"hot{c}_addr", 64, "RW") for c in range(channels)]
    regs += [("status", 8, "RO")]
    regs += [(name, 64, "RO") for name in ("cycles", "load_cycles", "first_cycles", "last_cycles")]
    regs += [(name, 32, "RO") for name in ("max_nprobe", "max_k", "dim", "cells", "progress")]
    regs += [("streams", 2 * WATCHED_STREAMS, "RO")]
    for name, width, access in regs:
        b.add(name, width, access, align=8 if width > 32 else 4)
    return tuple(b.registers)


def csr_pe(opq: bool, channels: int, tiered: bool) -> AxilCsr:
    return AxilCsr(registers=kernel_registers(opq, channels, tiered), addr_width=CSR_ADDR_BITS)


@cache
def csr_parts(opq: bool, channels: int, tiered: bool, family: str) -> dict[str, Resources]:
    """The register file's estimate split by the group each part serves: `base` (every design),
    `opq` (its address register), `pq` (the PQ-code and tier address registers)."""
    base = csr_pe(False, 0, False).resources(family)
    with_opq = csr_pe(True, 0, False).resources(family)
    with_pq = csr_pe(False, channels, tiered).resources(family)
    return {"base": base, "opq": (with_opq - base) if opq else Resources(), "pq": with_pq - base}


def seed_merge(key_bits: int, k: int) -> Resources:
    """The seed merge before the result filter (`SEED_MERGE_LUT_PER_KEY_BIT`; the key counter and
    two flags)."""
    return Resources(lut=SEED_MERGE_LUT_PER_KEY_BIT * key_bits, ff=bits(k) + 2)


def io_splitter(port_bits: int, word_bits: int) -> BeatSplitter:
    return BeatSplitter(port_bits, word_bits, TAG_BITS)


def query_fork(src_bits: int) -> Broadcast:
    """The fork of the (rotated) query to IVFDist and BuildLUT."""
    return Broadcast(src_bits, 2)


def query_regroup(vec_bits: int, lanes: int) -> Regroup | None:
    """The regroup feeding a stage of `lanes` lanes, from a one-lane source (None: a wire)."""
    return None if lanes == 1 else Regroup(vec_bits, lanes * vec_bits)


@cache
def memory_resources(width: int, depth: int, kind: str) -> Resources:
    """An on-chip memory as yosys maps it: UltraRAM when asked, else LUT RAM or block RAM,
    whichever `memory_mapping` (yosys memory_libmap's costs) finds cheaper; deeper than the
    deepest block-RAM aspect, block RAM."""
    if kind == "uram":
        return Resources(uram=uram_tiles(width, depth))
    if depth <= BRAM_ASPECTS[-1][0] and memory_mapping(width, depth)["kind"] == "lutram":
        prims = memory_mapping(width, depth)["lutram"]
        return Resources(lut=LUTS_PER_LUTRAM * prims + width * (math.ceil(depth / 64) - 1))
    return Resources(bram18=bram18_tiles(width, depth))


def bits(n: int) -> int:
    """Bits of a counter that holds 0..n."""
    return max(1, int(n).bit_length())


def control_bits(group: str, **p: int) -> int:
    """Register bits of the controller logic serving `group` (counted from `fanns.arch.ivfpq`).

    infra: nq, nprobe, k, query/result addresses, the run/total/load cycle counters, reads,
    writes, done responses, flags, the progress counter, the load counter (`load_words`), the
    step-wise cell-list and seed addresses, mode flag and read part;
    front: the probe filter, the step filter and the IVF centroid fill router; lut: the dispatcher and collector
    (probe, word and PE-group counters, the collector's beat counter, bank flags, and with
    `ways` > 1 the codebook fill's word and phase counters); pq: per PQ-code reader its base
    address and its table-sent flag; prefetch (a host-memory design's prefetch command,
    `fanns.arch.ivfpq.prefetch`): the descriptor walker's and the copy engines' registers."""
    if group == "infra":
        step = 2 * 64 + 1 + 2
        return (
            32 + bits(p["nprobe"]) + bits(p["k"]) + 2 * 64 + 3 * 64 + 3 * 32 + 8 + 32 + bits(p["load_words"]) + 3 + step
        )
    if group == "front":
        return bits(p["nprobe"]) + bits(p["pes"]) + 2 * bits(p["words"]) + STEP_FILTER_BITS
    if group == "lut":
        ways = p.get("ways", 1)
        fill = bits(p["words"]) + bits(ways - 1) if ways > 1 else 0
        beat = bits(256 // ways - 1)
        return bits(p["fill_words"]) + 3 * bits(p["words"]) + 3 * bits(p["pes"]) + bits(p["nprobe"]) + beat + fill + 6
    if group == "pq":
        return p["readers"] * 65
    if group == "prefetch":  # the walker's three held words, word count and taken count, the run's
        # sent and prefetch flags, per channel the copy engine's count of unanswered writes
        return 3 * 32 + 2 + 32 + 2 + COPY_OUTSTANDING_BITS * p["channels"]
    raise KeyError(group)


def control(n: int) -> Resources:
    """The controller logic of `n` counted register bits."""
    return Resources(lut=CONTROL_LUT_PER_BIT * n, ff=CONTROL_FF_PER_BIT * n)


def collector_luts(word_bits: int, pes: int) -> int:
    """BuildLUT's collector: a pes:1 select of the LUT words (`select_luts`)."""
    return select_luts(word_bits, pes)
