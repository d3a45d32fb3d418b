"""Pinned IVF-PQ designs: an `IvfPqDesign` from explicit stage choices instead of the DSE.

Why: tests, examples and users who want one particular machine (e.g. to reproduce a published
configuration, or to exercise irregular PE counts) need a valid design.yaml without running the
search. The stage objects, selection PEs and channel plan come from the same code the DSE uses
(`fanns.model.ivfpq.stages.select_stage`, `fanns.model.ivfpq.stages.memory_plan`), so a pinned design is exactly
what the DSE would have written for the same choices.
"""

from __future__ import annotations

from fanns.boards import load_board
from fanns.design.ivfpq import (
    BuildLutStage,
    IndexRef,
    IvfDistStage,
    IvfPqDesign,
    OpqStage,
    PqDistStage,
    PqHostTier,
    PqTiers,
    Stages,
)
from fanns.design.ivfpq_selectors import SELECTORS
from fanns.index.ivfpq import IvfPqIndexData, factory_string
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.stages import memory_plan
from fanns.numerics import IvfPqFormat


def pinned_design(
    data: IvfPqIndexData,
    fmt: IvfPqFormat,
    *,
    board: str = "u55c",
    nprobe: int,
    k: int,
    ivf: tuple[int, int, str] = (2, 16, "bram"),
    lut: tuple[int, int, str] = (2, 16, "bram"),
    pq: tuple[int, int] = (4, 2),
    opq_lanes: int = 16,
    opq_storage: str = "bram",
    lut_codebook: str = "bram",
    double_buffer: bool = True,
    sel_cells: str = "hpq",
    sel_k: str = "hpq",
    sel_params: dict | None = None,
    clock_mhz: float | None = None,
    index_path: str | None = None,
    tiers: tuple[str, list[int]] | None = None,
    lut_words: int = 1,
    host_cache_bytes: int | None = None,
    host_pinned: tuple[int, ...] = (),
) -> IvfPqDesign:
    """A validated design: `ivf` = (PEs, lanes, storage), `lut` = (PEs, lanes, centroid store),
    `pq` = (PEs, channels of the board's first memory group); `opq_storage` the OPQ matrix's
    memory (bram, uram, or stream: read per query on a channel of its own); `lut_codebook` the
    memory of every BuildLUT PE's codebook (bram or uram); `sel_params` maps a selection
    architecture to its parameters (default: the first set the DSE offers, e.g. AHPQ's target);
    `tiers` = (fast memory group, hot list ids) places those lists on paired fast channels;
    `lut_words` the LUT words a cycle PQDist loads (BuildLUT's PEs a multiple of it);
    `host_cache_bytes` keeps the lists in host memory with an HBM cache of that size (`PqHostTier`),
    the lists `host_pinned` in it for good."""
    b = load_board(board)
    clock = float(clock_mhz if clock_mhz is not None else b.clock_mhz)
    opq = data.opq_matrix is not None
    mems = stage_model.memories(b, clock)
    ctx = stage_model.Context(
        fmt=fmt,
        n=data.ntotal,
        nlist=data.nlist,
        nprobe=nprobe,
        k=k,
        opq=opq,
        clock_mhz=clock,
        memories=mems,
        family=b.family,
        lut_words=lut_words,
    )
    ivf_pes, ivf_lanes, ivf_store = ivf
    ivf_channels = stage_model.ivf_stream_channels(ctx, ivf_pes, ivf_lanes)[0] if ivf_store == "stream" else 0
    lut_pes, lut_lanes, lut_store = lut
    pq_pes, pq_channels = pq

    def params(arch: str) -> dict:
        if sel_params and arch in sel_params:
            return dict(sel_params[arch])
        return dict(SELECTORS[arch].params[0]) if arch in SELECTORS else {}

    stages = Stages(
        opq=OpqStage(opq_lanes, opq_storage) if opq else None,
        ivf_dist=IvfDistStage(ivf_pes, ivf_lanes, ivf_store, ivf_channels),
        sel_cells=stage_model.select_stage(sel_cells, ivf_pes, nprobe, fmt.ivf_key_bits, params(sel_cells)),
        build_lut=BuildLutStage(lut_pes, lut_lanes, lut_store, 1 if lut_store == "memory" else 0, lut_codebook),
        pq_dist=PqDistStage(
            pq_pes,
            double_buffer,
            mems[0].kind,
            pq_channels,
            mems[0].port_bits,
            None if tiers is None else PqTiers(tiers[0], pq_channels, tuple(sorted(int(i) for i in tiers[1]))),
            lut_words,
            None if host_cache_bytes is None else PqHostTier(host_cache_bytes, tuple(host_pinned)),
        ),
        sel_k=stage_model.select_stage(sel_k, pq_pes, k, fmt.pq_key_bits, params(sel_k)),
    )

    design = IvfPqDesign(
        board=b.name,
        board_file=None if b.builtin else b.spec,
        clock_mhz=clock,
        util=0.6,
        index=IndexRef(
            factory_string(data.nlist, data.m, opq), data.ntotal, data.d, data.nlist, data.m, opq, index_path
        ),
        nprobe=nprobe,
        k=k,
        format=fmt,
        stages=stages,
        memory=memory_plan(ctx, stages),
        fifo_depth=stage_model.FIFO_DEPTH,
        slr={},
        goal=None,
    )
    design.validate()
    return design
