"""The six IVF-PQ stages as the model sees them: PE inventories, memory layout, cycles per query.

Why one module: the performance/resource model, the design description and the code generators
must describe the same machine (`docs/ivfpq_architecture.md`). Every stage configuration of
`fanns.design.ivfpq` is turned here into the PEs it instantiates (`*_units`, from the PE builders of
`fanns.model.ivfpq.stage_pes`: the PE library
classes with their parameters, so resources come from the calibrated PE tables, never from
hand-typed numbers) and into its cycles per query (`stage_timings`, in
`fanns.model.ivfpq.stage_timing` and re-exported here: from each PE's own timing methods and the
workload measured by the explorer).

Cycles: `interval` is a stage's mean cycles per query in steady state (queries back to back;
the pipeline overlaps queries, so throughput = clock / max over stages of the mean interval over
the query sample); `latency` is one query alone through the stage, averaged over the sample.
Computation stages count from their first input; selection stages stream alongside their
producer, so they count from the producer's last key (the PE's tail `latency()`).

Constants that are not a PE's own carry their source beside them: the assumed memory latency
(`MEM_LATENCY_CYCLES`), and the architecture choices of docs/ivfpq_architecture.md (FIFO depth,
AXI reader configuration; the lane counts offered are `fanns.model.ivfpq.buildable`'s).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from fanns.design.ivfpq import (
    BuildLutStage,
    ChannelUse,
    IvfDistStage,
    OpqStage,
    PqDistStage,
    SelectStage,
    Stages,
)
from fanns.design.ivfpq_stages import (  # noqa: F401  (the design's stage rules are part of this module's API)
    IVF_BEAT_FIFO_DEPTH,
    Packing,
    ivf_chunks,
    lut_fetch_fifo_depth,
    lut_fifo_depth,
    query_fifo_depth,
    select_stage,
    selector_pe,
    stored_elem_bytes,
)
from fanns.model.ivfpq import control
from fanns.model.ivfpq.memory import (  # noqa: F401  (the memory model is part of this module's API)
    ADDR_BITS,
    LIST_TABLE_BYTES,
    MEM_LATENCY_CYCLES,
    READER_BURST,
    READER_OUTSTANDING,
    Memory,
    PqShares,
    Probes,
    channel_reader,
    index_bytes_per_channel,
    memories,
    pq_channel_bytes,
    pq_shares,
    reader_rate,
)
from fanns.model.ivfpq.stage_pes import (  # noqa: F401  (the stages' PEs are part of this module's API)
    Context,
    design_context,
    feeder_pe,
    fetcher_pe,
    ivf_pe,
    ivf_stream_channels,
    ivf_stream_slowdown,
    library_pe,
    lut_pe,
    opq_pe,
    pq_pe,
    result_filter_pe,
)
from fanns.model.ivfpq.stage_timing import (  # noqa: F401  (the stages' timing is part of this module's API)
    FIFO_DEPTH,
    PqWork,
    StageTiming,
    back_timings,
    channel_cycles,
    front_timings,
    ivf_timing,
    lut_timing,
    opq_timing,
    pq_channel_feed,
    pq_feed_cycles,
    pq_query_cycles,
    pq_timing,
    pq_timing_from_work,
    pq_work,
    sel_cells_timing,
    sel_k_floors_many,
    sel_k_intervals,
    sel_k_intervals_many,
    sel_k_timing,
    selector_latency,
    selk_buffers,
    selk_slack,
    stage_timings,
)
from fanns.numerics import ID_BITS
from fanns.pe.axi_writer import AxiWriter
from fanns.pe.base import PE
from fanns.pe.fetcher import desc_layout
from fanns.pe.glue_streams import BeatSplitter, Broadcast
from fanns.pe.pq_decode import KSUB
from fanns.pe.stream_fifo import StreamFifo
from fanns.pe.stream_pack import StreamPack
from fanns.resources import KINDS, Resources

STAGES = Stages.NAMES
ITEM_FLAGS = 3
"""pad, last_cell, last_query: the flag bits of a pq_decode code item."""
RESULT_BITS = 64
"""One result key in device memory (uint64), as the result packer gathers them."""


@dataclass(frozen=True)
class Unit:
    """`count` identical instances of one PE (or memory block) of a stage: a group the SLR
    assignment may split between instances (`divisible`)."""

    stage: str
    label: str
    count: int
    each: Resources
    pe: PE | None = None
    divisible: bool = True
    bits: int = 0
    """Register bits of controller logic (`fanns.model.ivfpq.control.control_bits`), else 0."""

    @property
    def total(self) -> Resources:
        return self.each * self.count


@cache
def _pe_resources(pe: PE, family: str) -> Resources:
    return pe.resources(family)


def pe_unit(ctx: Context, stage: str, label: str, pe: PE, count: int = 1, divisible: bool = True) -> Unit:
    return Unit(stage, label, count, _pe_resources(pe, ctx.family), pe, divisible)


def fifo_unit(ctx: Context, stage: str, label: str, width: int, count: int = 1, depth: int = FIFO_DEPTH) -> Unit:
    return pe_unit(ctx, stage, label, library_pe(StreamFifo, width=width, depth=depth), count)


# -- units (resources) ----------------------------------------------------------------------------
def infra_units(ctx: Context) -> list[Unit]:
    """Control registers (the part every design has: `fanns.model.ivfpq.control`), the host query
    reader and the result writer (one each), and the glue every design has in the same shape
    (`fanns.arch.ivfpq.top`): the I/O tag FIFO, the fork of the probed cells to BuildLUT and the
    fetcher, the result filter, the result packer and the controller's common registers; the
    step-wise mode's cell-list FIFO of two lists, its cell-list and seed splitters, the seed FIFO
    and the seed merge (`fanns.model.ivfpq.control`)."""
    port = ctx.memories[0].port_bits
    cell_slots = -(-ctx.nprobe * control.CELL_WORD_BITS // port) * port // control.CELL_WORD_BITS
    load_words = ctx.d * ctx.d + 2 * ctx.nlist * ctx.d + KSUB * ctx.d + 2 * ctx.nlist
    csr = control.csr_parts(ctx.opq, 0, False, ctx.family)["base"]
    return [
        Unit("infra", "axil_csr", 1, csr, None, False),
        pe_unit(ctx, "infra", "query_reader", channel_reader(port), divisible=False),
        pe_unit(ctx, "infra", "result_writer", AxiWriter(data_width=port, addr_width=ADDR_BITS), divisible=False),
        pe_unit(ctx, "infra", "io_tags", StreamFifo(width=control.TAG_BITS, depth=8), divisible=False),
        pe_unit(ctx, "infra", "cell_fork", Broadcast(ID_BITS + 2, 2), divisible=False),
        fifo_unit(ctx, "infra", "cell_list_fifo", control.CELL_WORD_BITS + 1, depth=2 * cell_slots),
        *io_splitter_units(ctx, "infra", [control.CELL_WORD_BITS, control.SEED_BITS]),
        fifo_unit(ctx, "infra", "seed_fifo", control.SEED_BITS + 1, depth=control.SEED_FIFO_LISTS * ctx.k),
        Unit("infra", "seed_merge", 1, control.seed_merge(ctx.fmt.pq_key_bits, ctx.k), None, False),
        pe_unit(ctx, "infra", "result_filter", result_filter_pe(ctx), divisible=False),
        pe_unit(ctx, "infra", "result_pack", StreamPack(RESULT_BITS, port // RESULT_BITS), divisible=False),
        control_unit("infra", "infra", nprobe=ctx.nprobe, k=ctx.k, load_words=load_words),
    ]


def control_unit(stage: str, group: str, **params: int) -> Unit:
    """The controller registers serving a stage group (`fanns.model.ivfpq.control`)."""
    n = control.control_bits(group, **params)
    return Unit(stage, "control", 1, control.control(n), None, False, n)


def io_splitter_units(ctx: Context, stage: str, word_bits: list[int]) -> list[Unit]:
    """The I/O reader's beat splitters of a group's sections (one per distinct word width)."""
    port = ctx.memories[0].port_bits
    return [
        pe_unit(ctx, stage, f"io_split{w}", control.io_splitter(port, w), divisible=False)
        for w in sorted(set(word_bits))
    ]


def elem_bits(ctx: Context) -> int:
    """Bits of a vector element in device memory (the I/O reader's sections)."""
    return 8 * stored_elem_bytes(ctx.fmt.vec_bits)


def opq_units(ctx: Context, st: OpqStage | None) -> list[Unit]:
    if st is None:
        return []
    vb = ctx.fmt.vec_bits
    units = [
        fifo_unit(ctx, "opq", "query_fifo", st.lanes * vb + 1),
        pe_unit(ctx, "opq", "opq", opq_pe(ctx, st), divisible=False),
        pe_unit(ctx, "opq", "query_fork", control.query_fork(st.lanes * vb), divisible=False),
        Unit("opq", "axil_csr", 1, control.csr_parts(True, 0, False, ctx.family)["opq"], None, False),
    ]
    if st.storage == "stream":  # its own reader (`fanns.arch.ivfpq.ivf_stream`); only the query from I/O
        reader = pe_unit(ctx, "opq", "matrix_reader", channel_reader(ctx.memories[0].port_bits), divisible=False)
        return [*units, reader, *io_splitter_units(ctx, "opq", [st.lanes * elem_bits(ctx)])]
    return units + io_splitter_units(ctx, "opq", [st.lanes * control.MATRIX_BITS, st.lanes * elem_bits(ctx)])


def ivf_dealer_units(ctx: Context, st: IvfDistStage, port_bits: int) -> list[Unit]:
    """The beat broadcast and per-PE beat FIFOs of every streamed-centroid channel feeding
    several PEs (`fanns.arch.ivfpq.ivf_stream`; PE i on channel i*C // P)."""
    first = [-(-c * st.pes // st.channels) for c in range(st.channels + 1)]  # channel c: PEs first[c] ..
    per = [b - a for a, b in zip(first, first[1:])]
    shared = [n for n in per if n > 1]
    units = [pe_unit(ctx, "ivf_dist", "centroid_fork", Broadcast(port_bits, n), 1) for n in shared]
    if shared:
        fifo = StreamFifo(width=port_bits, depth=IVF_BEAT_FIFO_DEPTH)
        units.append(pe_unit(ctx, "ivf_dist", "centroid_beat_fifo", fifo, sum(shared)))
    return units


def ivf_units(ctx: Context, st: IvfDistStage) -> list[Unit]:
    f = ctx.fmt
    base, extra = divmod(ctx.nlist, st.pes)  # chunk sizes of `ivf_chunks`, counted
    sizes = {n: c for n, c in ((base + 1, extra), (base, st.pes - extra)) if c and n}
    depth = query_fifo_depth(FIFO_DEPTH, ctx.d, st.lanes, ctx.opq)
    units = [fifo_unit(ctx, "ivf_dist", "query_fifo", st.lanes * f.vec_bits + 1, depth=depth)]
    units += [
        pe_unit(ctx, "ivf_dist", f"ivf_dist[{n}]", ivf_pe(ctx, st, n), count)
        for n, count in sorted(sizes.items(), reverse=True)
    ]
    units.append(fifo_unit(ctx, "ivf_dist", "key_fifo", f.ivf_key_bits + 1, st.pes))
    if st.storage == "stream":
        port = ctx.memories[0].port_bits
        units.append(pe_unit(ctx, "ivf_dist", "centroid_reader", channel_reader(port), st.channels))
        units += ivf_dealer_units(ctx, st, port)
    if ctx.opq:  # the rotated query regrouped to IVFDist's lanes
        regroup = control.query_regroup(f.vec_bits, st.lanes)
        units += [] if regroup is None else [pe_unit(ctx, "ivf_dist", "query_regroup", regroup, divisible=False)]
    else:  # the query enters in IVFDist's lanes: the fork and its I/O words are this group's
        units.append(pe_unit(ctx, "ivf_dist", "query_fork", control.query_fork(st.lanes * f.vec_bits), divisible=False))
    words = ctx.d // st.lanes
    sections = (["ivf"] if st.storage != "stream" else []) + ([] if ctx.opq else ["query"])
    units += io_splitter_units(ctx, "ivf_dist", [st.lanes * elem_bits(ctx) for _ in sections])
    units.append(
        control_unit("ivf_dist", "front", nprobe=ctx.nprobe, pes=st.pes, words=-(-ctx.nlist // st.pes) * words)
    )
    return units


def select_units(ctx: Context, stage: str, st: SelectStage) -> list[Unit]:
    """A selection PE, split per input stream for the SLR assignment (its total is the PE's)."""
    pe = selector_pe(st)
    res = _pe_resources(pe, ctx.family)
    units = [Unit(stage, st.arch, st.streams, res * (1.0 / st.streams), pe)]
    out_width = (ID_BITS if stage == "sel_cells" else st.key_bits) + 1
    units.append(fifo_unit(ctx, stage, "out_fifo", out_width))
    return units


def lut_centroid_store(ctx: Context, st: BuildLutStage) -> Resources:
    """On-chip copy of all cell centroids for BuildLUT: lanes x vec_bits wide, nlist x d/lanes deep,
    in UltraRAM when asked, else in LUT RAM or block RAM as yosys maps it (`control.memory_resources`)."""
    width, depth = st.lanes * ctx.fmt.vec_bits, ctx.nlist * (ctx.d // st.lanes)
    return control.memory_resources(width, depth, st.centroids)


def lut_units(ctx: Context, st: BuildLutStage) -> list[Unit]:
    f = ctx.fmt
    words, wb = ctx.d // st.lanes, st.lanes * f.vec_bits
    glue = Resources(lut=control.collector_luts(ctx.lut_words * f.m * f.lut_bits, ctx.lut_groups(st)))
    glue += control.memory_resources(wb, 2 * words, "bram")  # the two-bank query buffer
    regroup = control.query_regroup(f.vec_bits, st.lanes)
    units = [
        fifo_unit(ctx, "build_lut", "query_fifo", wb + 1, depth=query_fifo_depth(FIFO_DEPTH, ctx.d, st.lanes, ctx.opq)),
        pe_unit(ctx, "build_lut", "build_lut", lut_pe(ctx, st), st.pes),
        pe_unit(
            ctx,
            "build_lut",
            "lut_fifo",
            StreamFifo(width=f.m * f.lut_bits + 1, depth=lut_fifo_depth(ctx.lut_words)),
            st.pes,
        ),
        Unit("build_lut", "dispatch_collect", 1, glue, None, False),
        control_unit(
            "build_lut",
            "lut",
            fill_words=ctx.nlist * words,
            words=words,
            pes=ctx.lut_groups(st),
            nprobe=ctx.nprobe,
            ways=ctx.lut_words,
        ),
    ]
    if regroup is not None:
        units.append(pe_unit(ctx, "build_lut", "query_regroup", regroup, divisible=False))
    units += io_splitter_units(ctx, "build_lut", [st.lanes * elem_bits(ctx)])  # codebook (and centroid copy)
    if st.centroids == "memory":  # `fanns.arch.ivfpq.lut_fetch`: reader, cell fork and FIFO, word FIFO
        word_fifo = StreamFifo(width=wb, depth=lut_fetch_fifo_depth(words))
        units += [
            pe_unit(ctx, "build_lut", "centroid_reader", channel_reader(ctx.memories[0].port_bits), divisible=False),
            pe_unit(ctx, "build_lut", "centroid_fork", Broadcast(ID_BITS + 2, 2), divisible=False),
            fifo_unit(ctx, "build_lut", "centroid_cell_fifo", ID_BITS + 2),
            pe_unit(ctx, "build_lut", "centroid_word_fifo", word_fifo, divisible=False),
        ]
    else:
        units.append(Unit("build_lut", f"centroid_store_{st.centroids}", 1, lut_centroid_store(ctx, st), None, False))
    return units


def pq_units(ctx: Context, st: PqDistStage) -> list[Unit]:
    f = ctx.fmt
    return [
        pe_unit(ctx, "pq_dist", "code_reader", channel_reader(st.port_bits), st.channels),
        fifo_unit(ctx, "pq_dist", "item_fifo", 8 * f.m + ID_BITS + ITEM_FLAGS, st.pes),
        fifo_unit(ctx, "pq_dist", "lut_chain_fifo", st.lut_words * f.m * f.lut_bits + 1, st.pes),
        pe_unit(ctx, "pq_dist", "pq_decode", pq_pe(ctx, st), st.pes),
        fifo_unit(ctx, "pq_dist", "key_fifo", f.pq_key_bits + 1, st.pes),
    ] + pq_glue_units(ctx, st)


@cache
def _desc_bits() -> int:
    return desc_layout().size


def pq_glue_units(ctx: Context, st: PqDistStage) -> list[Unit]:
    """The list fetcher, per PQ-code reader its command FIFO, per shared list table its loader's
    beat splitter, per channel its descriptor FIFO and feeder (`fanns.arch.ivfpq.top._channels`)."""
    fetcher = fetcher_pe(ctx, st)
    per_channel = st.pes_per_channel()
    tiers = 2 if st.tiers is not None else 1
    two = st.tiers is not None or st.host_tier is not None  # a second reader per channel
    csr = control.csr_parts(False, st.channels, two, ctx.family)["pq"]
    tier_table = [] if st.tiers is None else io_splitter_units(ctx, "pq_dist", [control.TIER_WORD_BITS])
    return (
        tier_table
        + [
            Unit("pq_dist", "axil_csr", 1, csr, None, False),
            control_unit("pq_dist", "pq", readers=st.channels * (2 if two else 1)),
            pe_unit(ctx, "pq_dist", "fetcher", fetcher, divisible=False),
            fifo_unit(ctx, "pq_dist", "desc_fifo", _desc_bits(), st.channels),
            fifo_unit(ctx, "pq_dist", "cmd_fifo", fetcher.addr_bits + fetcher.len_bits, fetcher.readers),
            pe_unit(
                ctx,
                "pq_dist",
                "table_split",
                library_pe(BeatSplitter, beat_bits=st.port_bits, word_bits=fetcher.record_bits),
                fetcher.tables * tiers,
            ),
        ]
        + [
            pe_unit(ctx, "pq_dist", f"feeder[{n}]", feeder_pe(ctx, st, n), per_channel.count(n))
            for n in sorted(set(per_channel), reverse=True)
        ]
        + (host_tier_units(ctx, st) if st.host_tier is not None else [])
    )


def host_tier_units(ctx: Context, st: PqDistStage) -> list[Unit]:
    """A host-memory design's cache ports and prefetch command (`fanns.arch.ivfpq.prefetch`): per
    channel the cache region's reader and writer and the copy engine's FIFO of copy sources, and
    the walker's and copy engines' registers. Its host readers are the `code_reader`s."""
    return [
        pe_unit(ctx, "pq_dist", "cache_reader", channel_reader(st.port_bits), st.channels),
        pe_unit(ctx, "pq_dist", "cache_writer", AxiWriter(data_width=st.port_bits, addr_width=ADDR_BITS), st.channels),
        fifo_unit(ctx, "pq_dist", "copy_sources", 1, st.channels, depth=control.COPY_SOURCES),
        control_unit("pq_dist", "prefetch", channels=st.channels),
    ]


def design_units(ctx: Context, stages: Stages) -> list[Unit]:
    """Every unit of the accelerator, in pipeline order (the SLR assignment walks this order)."""
    return (
        infra_units(ctx)
        + opq_units(ctx, stages.opq)
        + ivf_units(ctx, stages.ivf_dist)
        + select_units(ctx, "sel_cells", stages.sel_cells)
        + lut_units(ctx, stages.build_lut)
        + pq_units(ctx, stages.pq_dist)
        + select_units(ctx, "sel_k", stages.sel_k)
    )


def total_resources(units: list[Unit]) -> Resources:
    """The sum of the units' totals, in their order: `Resources.total([u.total for u in units])`
    (the same float operations, in plain floats: the DSE sums many inventories)."""
    acc = [0.0] * len(KINDS)
    for u in units:
        for i, v in enumerate(u.each.as_tuple()):
            acc[i] += v * u.count
    return Resources(*acc)


def memory_plan(ctx: Context, stages: Stages) -> tuple[ChannelUse, ...]:
    """Channel assignment: group 0 channel 0 holds the host I/O buffers; the PQ codes take the
    next channels of their group (PE p on the pq channel p * C // P), then a tiered design's fast
    channels (`pq_hot`, paired with them) the next of the fast group; streamed IVF centroids,
    BuildLUT's centroid copy and a streamed OPQ matrix follow in group 0."""
    nxt = {m.kind: 0 for m in ctx.memories}
    first = ctx.memories[0].kind

    def take(kind: str) -> int:
        ch = nxt[kind]
        nxt[kind] += 1
        return ch

    out = [ChannelUse(first, take(first), "io")]
    pq = stages.pq_dist
    for c in range(pq.channels):
        pes = tuple(p for p in range(pq.pes) if pq.channel_of(p) == c)
        out.append(ChannelUse(pq.memory, take(pq.memory), "pq_codes", pes))
    if pq.tiers is not None:  # the fast tier's channels, paired with the PQ channels above
        nxt.setdefault(pq.tiers.memory, 0)
        for c in range(pq.tiers.channels):
            pes = tuple(p for p in range(pq.pes) if pq.channel_of(p) == c)
            out.append(ChannelUse(pq.tiers.memory, take(pq.tiers.memory), "pq_hot", pes))
    out += [ChannelUse(first, take(first), "ivf_centroids") for _ in range(stages.ivf_dist.channels)]
    out += [ChannelUse(first, take(first), "lut_centroids") for _ in range(stages.build_lut.channels)]
    out += [ChannelUse(first, take(first), "opq_matrix") for _ in range(stages.opq.channels if stages.opq else 0)]
    return tuple(out)
