"""The register map of the IVF-PQ RTL core (`fanns.arch.ivfpq.hw.IvfPqHw.regmap`): the Xilinx
RTL-kernel control block, the kernel arguments (scalars, then 64-bit buffer addresses) and the
status and counter registers. Kept apart from `IvfPqHw`, whose properties it reads, so that each
module stays short; the host driver, the register document and the hardware all render it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fanns.hdl.regmap import RegMap, RegMapBuilder, kernel_control_block

if TYPE_CHECKING:
    from fanns.arch.ivfpq.hw import IvfPqHw

CSR_ADDR_BITS = 12
WATCHED_STREAMS = (
    "query",
    "lut_query",
    "cells",
    "lut_cells",
    "fetch_cells",
    "luts",
    "cmd",
    "desc",
    "beats",
    "items",
    "keys",
    "results",
    "writes",
)
"""The stage-boundary streams of `fanns.arch.ivfpq.top` whose state the `streams` register shows,
so a stuck run can be located from the host (a simulation watchdog, or a driver on a board)."""


def ivfpq_regmap(hw: IvfPqHw) -> RegMap:
    """The register map of an `IvfPqHw` (`IvfPqHw.regmap`)."""
    b = RegMapBuilder(
        "fanns_ivfpq",
        CSR_ADDR_BITS,
        description=(
            f"IVF-PQ accelerator: d={hw.d}, nlist={hw.nlist}, m={hw.m}, nprobe <= {hw.nprobe}, "
            f"k <= {hw.k}, {hw.channels} PQ-code channel(s). The first run after reset loads the index "
            "images on chip (`loaded` tells); every run then searches `nq` queries from `query_addr` and "
            "writes k uint64 keys `(dist << 32) | id` per query to `result_addr` (memory layouts: "
            "`fanns.images.ivfpq`, manifest.json). All addresses must be aligned to the memory beat "
            f"({hw.io_beat_bytes} bytes for I/O, {hw.pq_beat_bytes} for PQ codes)."
        ),
    )
    # Xilinx RTL-kernel layout (docs/ivfpq_architecture.md, "Register map"): the ap_ctrl_hs block
    # at 0x00-0x0C, the kernel arguments from 0x10 (scalars, then 64-bit pointers on 8-byte
    # boundaries), then the status and counter registers, which are no kernel arguments.
    b.registers.extend(kernel_control_block())
    regs = [
        ("nq", 32, "RW", 0, "number of queries of the next run"),
        ("nprobe", 32, "RW", hw.nprobe, f"cells probed per query, 1..{hw.nprobe}"),
        ("k", 32, "RW", hw.k, f"results per query, 1..{hw.k}"),
        (
            "mode",
            32,
            "RW",
            0,
            "0: normal search; any other value: a step-wise run (docs/stepwise.md): each query scans the "
            "cells of its list at `cells_addr` instead of its nearest ones and merges its k seed keys at "
            "`seeds_addr` into its result"
            + (
                "; in this host-memory design 2 is the prefetch command instead (docs/host_tier.md): `nq` "
                "descriptors of four uint32 (cell, op, at, source) at `cells_addr`"
                if hw.host_tier
                else ""
            ),
        ),
        (
            "query_addr",
            64,
            "RW",
            0,
            f"queries: {hw.query_stride} bytes each (d quantised elements, then padding)",
        ),
        ("result_addr", 64, "RW", 0, f"results: {hw.result_stride} bytes per query (k uint64 keys, ascending)"),
    ]
    if {"ivf", "lutc"} & set(hw.sections()):  # not when IVF streams and BuildLUT fetches them
        regs.append(("centroids_addr", 64, "RW", 0, "ROM image `centroids` (read at load)"))
    regs.append(("codebook_addr", 64, "RW", 0, "ROM image `codebook` (read at load)"))
    if hw.opq_stream_layout is not None:
        regs.append(("opq_addr", 64, "RW", 0, "image `opq_matrix` (the streamed OPQ matrix, read once per query)"))
    elif hw.stages.opq is not None:
        regs.append(("opq_addr", 64, "RW", 0, "ROM image `opq_matrix` (read at load)"))
    regs += [
        (
            f"pq{c}_addr",
            64,
            "RW",
            0,
            f"image `pq_codes_{c}` (PQDist PEs {hw.channel_pes(c)}); {hw.table_note('pq', c)}",
        )
        for c in range(hw.channels)
    ]
    regs += [
        (
            f"ivf{c}_addr",
            64,
            "RW",
            0,
            f"image `ivf_centroids_{c}` (streamed IVF centroids of IVFDist PEs "
            f"{list(lay.channel_pes)}, read once per query)",
        )
        for c, lay in enumerate(hw.ivf_stream_layouts)
    ]
    if hw.lut_fetched:
        regs.append(("lutc_addr", 64, "RW", 0, "image `lut_centroids` (BuildLUT's centroids, one cell read per probe)"))
    regs += [
        (
            "cells_addr",
            64,
            "RW",
            0,
            f"step-wise cell lists: {hw.cell_stride} bytes per query ({hw.nprobe} uint32 cell ids, "
            "0xFFFFFFFF for none, then padding; read only when `mode` is set)",
        ),
        (
            "seeds_addr",
            64,
            "RW",
            0,
            f"step-wise seed keys: {hw.result_stride} bytes per query (k uint64 keys, ascending, in the "
            "result layout; read only when `mode` is set)",
        ),
    ]
    if hw.tiered:
        regs.append(("tiers_addr", 64, "RW", 0, "ROM image `list_tiers` (the list->tier table, read at load)"))
        regs += [
            (
                f"hot{c}_addr",
                64,
                "RW",
                0,
                f"image `pq_hot_{c}` (fast tier, PQDist PEs {hw.channel_pes(c)}); {hw.table_note('hot', c)}",
            )
            for c in range(hw.channels)
        ]
    regs += [
        (
            f"cache{c}_addr",
            64,
            "RW",
            0,
            f"cache region `pq_cache_{c}` (PQDist PEs {hw.channel_pes(c)}): written by prefetch, read for "
            "the cells the location table has",
        )
        for c in range(hw.channels)
        if hw.host_tier
    ]
    regs += [
        (
            "status",
            8,
            "RO",
            0,
            "bit 0 loaded (index on chip), bit 1 bad parameters (run refused), bit 2 AXI error response",
        ),
        ("cycles", 64, "RO", 0, "clock cycles of the last run (ap_start to ap_done)"),
        ("load_cycles", 64, "RO", 0, "cycles of the index load of the first run"),
        ("first_cycles", 64, "RO", 0, "cycles from ap_start to the first query's last result key"),
        ("last_cycles", 64, "RO", 0, "cycles from ap_start to the last query's last result key"),
        ("max_nprobe", 32, "RO", 0, "largest nprobe this accelerator serves (its SelCells length)"),
        ("max_k", 32, "RO", 0, "largest k this accelerator serves (its SelK length)"),
        ("dim", 32, "RO", 0, "vector dimension in hardware (d with padded sub-vectors)"),
        ("cells", 32, "RO", 0, "nlist"),
        (
            "progress",
            32,
            "RO",
            0,
            "cycles since reset in which a stage-boundary stream or a memory port moved a word: a run whose "
            "`progress` stops while `ap_done` stays low is stuck (`streams` tells where)",
        ),
        (
            "streams",
            2 * len(WATCHED_STREAMS),
            "RO",
            0,
            "stage-boundary streams "
            + ", ".join(f"{i}: {name}" for i, name in enumerate(WATCHED_STREAMS))
            + "; bit 2i: stream i holds a word its consumer does not take, bit 2i+1: its consumer waits "
            "for a word (per-channel streams: any channel)",
        ),
    ]
    for name, width, access, reset, desc in regs:
        b.add(name, width, access, reset, desc, align=8 if width > 32 else 4)
    return b.build()
