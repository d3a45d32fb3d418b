"""What the HLS templates are filled with: one design turned into named PEs, FIFOs, kernel
arguments and on-chip index memories (the templates in `templates/hls/` only lay them out).

Why separate from the templates (hls4ml style): every number of the generated kernel — PE counts
and their template arguments, centroid chunks, probe shares, FIFO depths and why, the memory
channel of every port — is decided here, from the same rules the performance model prices
(`fanns.design.ivfpq_stages`), so the model and the generated machine cannot drift apart; the
templates carry only C++ structure and comments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fanns.boards import HOST_MEMORY, Board
from fanns.codegen.platform import KernelArg, header_closure, vitis_memory
from fanns.design.ivfpq import IvfPqDesign, SelectStage
from fanns.design.ivfpq_stages import ivf_chunks, selector_pe
from fanns.errors import FannsError
from fanns.images.ivfpq import MemoryImages, elem_bytes, ivf_stream_layouts, pq_layouts

KERNEL = "fanns_ivfpq"
SCALARS = {
    "nq": "queries of the run",
    "load": "1: copy the ROM images on chip first",
    "mode": "0: normal search; 1: step-wise (cells from `cells`, top-K seeded from `seeds`; docs/stepwise.md); "
    "2: prefetch (host-memory tier: nq descriptors in `cells`; docs/host_tier.md)",
}
"""The kernel's s_axilite scalar arguments, in order after the pointers (`fanns_ivfpq(..., nq, load, mode)`)."""
STEPWISE_ARGS = ("cells", "seeds")
"""The step-wise mode's host buffers, the last pointer arguments (after the images)."""
BASE_HEADERS = ("ivfpq_kernel.h", "ivf_dist.h", "opq.h")


@dataclass
class Fifo:
    name: str
    type: str
    depth: int
    why: str
    count: int | None = None  # None: one stream; else an array of `count` streams


@dataclass(frozen=True)
class OnchipMemory:
    """A global index array of the kernel: BIND_STORAGE `impl` (bram or uram); `reshape` the
    elements one memory row holds where the array is of plain elements (ARRAY_RESHAPE cyclic on the
    row dimension), else an array of lane words, aggregated to one word per row as in the RTL."""

    name: str
    impl: str
    why: str
    reshape: int | None = None

    @property
    def aggregate(self) -> bool:
        return self.reshape is None


@dataclass
class Context:
    """Everything the templates read (see the module docstring)."""

    values: dict = field(default_factory=dict)
    fifos: list[Fifo] = field(default_factory=list)
    args: list[KernelArg] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {**self.values, "fifos": self.fifos, "args": self.args, "headers": self.headers, "kernel": KERNEL}


def selection_call(st: SelectStage) -> tuple[str, str]:
    """(header, the C++ call of one query) of a selection stage: its PE's own (`PE.hls_call`), the
    PE the model prices and the RTL instantiates (`fanns.design.ivfpq_selectors.SELECTORS`)."""
    pe = selector_pe(st)
    return pe.hls_header, pe.hls_function()


def _fifo_depth(design: IvfPqDesign, need: int) -> int:
    return max(design.fifo_depth, need)


def build_context(design: IvfPqDesign, images: MemoryImages, board: Board, platform: str | None) -> Context:
    """The template context of `design` serving the packed `images` on `board`; `platform` None:
    a Zynq block design (`fanns.codegen.block_design`) connects the memories instead of v++."""
    fmt, st = design.format, design.stages
    d, m, k, nprobe, nlist = fmt.d_hw, fmt.m, design.k, design.nprobe, design.index.nlist  # padded sub-vectors
    eb = elem_bytes(fmt.vec_bits)
    io_bytes = images.io.port_bits // 8
    pq_bytes = st.pq_dist.port_bits // 8
    ctx = Context()
    sel_cells_header, sel_cells_call = selection_call(st.sel_cells)
    sel_k_header, sel_k_call = selection_call(st.sel_k)
    includes = sorted(set(BASE_HEADERS) | {sel_cells_header, sel_k_header})
    ctx.headers = header_closure(includes)
    v = ctx.values
    v.update(
        design=design,
        board=board,
        platform=platform,
        fmt=fmt,
        d=d,
        m=m,
        k=k,
        nprobe=nprobe,
        nlist=nlist,
        eb=eb,
        elem_type="int16_t" if eb == 2 else "int32_t",
        io_bytes=io_bytes,
        pq_bytes=pq_bytes,
        clock_hz=int(round(design.clock_mhz * 1e6)),
        sel_cells_call=sel_cells_call,
        sel_k_call=sel_k_call,
        includes=includes,
        query_beats=images.io.query_beats,
        result_beats=images.io.result_beats,
        cell_beats=images.io.cell_beats(nprobe),
    )

    # -- kernel arguments: host I/O, then the images in manifest order -------------------------
    io_mem, io_ch = images.io_channel
    if platform:  # the v++ flow: every memory must be one connectivity.cfg can name
        for kind in sorted({io_mem, *(img.memory for img in images.images)}):
            vitis_memory(kind)
    ctx.args.append(
        KernelArg("queries", "IoBeat", True, io_mem, io_ch, "queries in: d elements per query, whole beats")
    )
    ctx.args.append(
        KernelArg(
            "results", "IoBeat", False, io_mem, io_ch, "results out: K keys (dist << 32) | id per query, ascending"
        )
    )
    for img in images.images:
        why = {
            "pq_codes": "PQ codes and ids of PQDist PEs {pes}{where}".format(
                pes=img.layout.get("channel_pes"),
                where=" (in host memory; cached lists from pq_cache)" if img.memory == HOST_MEMORY else "",
            ),
            "pq_cache": "the cache region of a PQ channel (host-memory tier), written by the prefetch command",
            "ivf_centroids": "streamed IVF centroids of IVFDist PEs {pes}".format(pes=img.layout.get("channel_pes")),
            "lut_centroids": "BuildLUT's copy of the cell centroids (fetched per probe)",
            "opq_matrix": "the streamed OPQ matrix, read once per query",
            "rom": f"ROM image {img.name}, copied on chip at index load",
        }[img.use]
        beat = "PqBeat" if img.use in ("pq_codes", "pq_cache") else "IoBeat"
        const = img.use != "pq_cache"
        ctx.args.append(KernelArg(img.name, beat, const, img.memory, img.channel, why, img.name, img.use))
    ctx.args.append(
        KernelArg(
            "cells",
            "IoBeat",
            True,
            io_mem,
            io_ch,
            "step-wise cell lists in: nprobe uint32 cell ids per query, whole beats",
        )
    )
    ctx.args.append(
        KernelArg(
            "seeds", "IoBeat", True, io_mem, io_ch, "step-wise seed keys in: K keys per query, the results' layout"
        )
    )
    seen = {}
    for a in ctx.args:
        if a.memory == HOST_MEMORY and board.host is not None and a.channel == 0:
            seen.setdefault(a.bundle, []).append(a.name)
            continue
        if a.channel >= _channels_of(board, a.memory):
            raise FannsError(
                f"kernel argument {a.name} is on {a.memory}[{a.channel}], but "
                f"{board.name} has {_channels_of(board, a.memory)} {a.memory} channels",
                hint="re-run the DSE for this board",
            )
        seen.setdefault(a.bundle, []).append(a.name)
    v["bundles"] = seen
    v["rom_args"] = [a for a in ctx.args if a.use == "rom"]
    v["search_args"] = [a for a in ctx.args if a.use != "rom"]

    # -- Stage OPQ --------------------------------------------------------------------------------
    word = lambda lanes: f"VecWord<T, {lanes}>"  # noqa: E731
    if st.opq is not None:
        w = st.opq.lanes
        ctx.fifos.append(
            Fifo(
                "query_in",
                word(w),
                _fifo_depth(design, 2 * d // w),
                f"query words into OPQ: {d // w} per query; holds two queries so the reader runs one ahead",
            )
        )
        ctx.fifos.append(
            Fifo("opq_out", f"RotWord<T, {w}>", _fifo_depth(design, 2 * d // w), "rotated query words, two queries")
        )
        if st.opq.storage == "stream":
            ctx.fifos.append(
                Fifo("opq_rows", f"MatWord<{w}>", design.fifo_depth, "matrix row words from the image opq_matrix")
            )
    # -- Stage IVFDist -----------------------------------------------------------------------------
    ivf = st.ivf_dist
    chunks = ivf_chunks(nlist, ivf.pes)
    ivf_pes = [
        {"index": i, "id_base": base, "n": n, "last": base + n - 1, "store": None, "stream": None}
        for i, (base, n) in enumerate(chunks)
    ]
    ctx.fifos.append(
        Fifo(
            "ivf_query",
            word(ivf.lanes),
            _fifo_depth(design, 2 * d // ivf.lanes),
            "the query along the IVFDist 1-D array (entry i feeds "
            "PE i; the last entry goes on to BuildLUT); two queries",
            ivf.pes + 1,
        )
    )
    ctx.fifos.append(
        Fifo(
            "ivf_keys",
            "KeyItem",
            design.fifo_depth,
            "one key stream per IVFDist PE into SelCells; the selector takes one key per stream per cycle",
            ivf.pes,
        )
    )
    ivf_channels = []
    if ivf.storage == "stream":
        for c, (_ch, lay) in enumerate(ivf_stream_layouts(design, images.io.port_bits)):
            local = list(lay.channel_pes)
            for q, i in enumerate(local):
                ivf_pes[i]["stream"] = f"ivf_cent_{c}[{q}]"
            ivf_channels.append({"index": c, "pes": local, "chunks": [n for _, n in lay.chunks]})
            ctx.fifos.append(
                Fifo(
                    f"ivf_cent_{c}",
                    word(ivf.lanes),
                    design.fifo_depth,
                    f"centroid words from channel image ivf_centroids_{c} to IVFDist PEs {local}",
                    len(local),
                )
            )
    else:
        for p in ivf_pes:
            p["store"] = f"ivf_store_{p['index']}"
    # -- Stage SelCells and the probe fan-out ---------------------------------------------------------
    pq_chans = pq_layouts(design)
    host_tier = st.pq_dist.host_tier
    ctx.fifos.append(
        Fifo(
            "sel_cells_out",
            "KeyItem",
            _fifo_depth(design, 2 * nprobe),
            "the nprobe selected cells of a query, nearest first; two queries",
        )
    )
    ctx.fifos.append(
        Fifo(
            "probe_cells",
            "uint32_t",
            _fifo_depth(design, 2 * nprobe),
            "cell ids to BuildLUT's dispatcher (entry 0) and every "
            "PQ-code reader; two queries so readers prefetch table entries"
            + (" (host-memory tier: entry 1 to the location table's look-up)" if host_tier else ""),
            2 if host_tier else 1 + len(pq_chans),
        )
    )
    if host_tier:
        ctx.fifos.append(
            Fifo(
                "pq_cells",
                "CachedCell",
                _fifo_depth(design, 2 * nprobe),
                "probed cells with their location table entry (cached, offset) to every PQ-code reader; two queries",
                len(pq_chans),
            )
        )
    # -- Stage BuildLUT ---------------------------------------------------------------------------------
    lut = st.build_lut
    ctx.fifos.append(
        Fifo(
            "lut_probe",
            f"ProbeWord<T, {lut.lanes}>",
            _fifo_depth(design, 2 * d // lut.lanes),
            "probe words {q, c} to BuildLUT PE j (the run's probes k = its group mod the groups); two probes",
            lut.pes,
        )
    )
    ctx.fifos.append(
        Fifo(
            "lut_out",
            f"LutOut<{m}>",
            design.fifo_depth,
            "LUT words (256 / lut_words per probe) from each BuildLUT PE; the collector drains them in probe order",
            lut.pes,
        )
    )
    ways = st.pq_dist.lut_words
    lut_list = [{"index": j, "group": j // ways, "phase": j % ways} for j in range(lut.pes)]
    # -- Stage PQDist ----------------------------------------------------------------------------------
    pq = st.pq_dist
    ctx.fifos.append(
        Fifo(
            "pq_lut",
            f"LutWord<{m}, {ways}>",
            design.fifo_depth,
            "LUT beats of lut_words words along the PQDist 1-D array (entry p feeds PE p, which forwards to p + 1)",
            pq.pes,
        )
    )
    channels = []
    pq_pes = []
    for c, (ch, lay) in enumerate(pq_chans):
        local = list(lay.channel_pes)
        channels.append(
            {
                "index": c,
                "image": f"pq_codes_{c}",
                "cache": f"pq_cache_{c}",
                "pes": local,
                "memory": ch.memory,
                "channel": ch.channel,
            }
        )
        for q, p in enumerate(local):
            pq_pes.append({"index": p, "channel": c, "local": q, "last": p == pq.pes - 1})
        ctx.fifos.append(
            Fifo(
                f"pq_tasks_{c}",
                "ListTask",
                _fifo_depth(design, 2 * nprobe),
                f"per probed list, items and last flag to the unpackers of PEs {local}",
                len(local),
            )
        )
        ctx.fifos.append(
            Fifo(
                f"pq_beats_{c}",
                "PqBeat",
                design.fifo_depth,
                f"code and id beats of channel pq_codes_{c} dealt to PEs {local} (schedule of memimage.PqLayout)",
                len(local),
            )
        )
    ctx.fifos.append(
        Fifo(
            "pq_items", f"CodeItem<{m}>", design.fifo_depth, "code items {codes, id, flags} into each PQDist PE", pq.pes
        )
    )
    ctx.fifos.append(
        Fifo(
            "pq_keys",
            "KeyItem",
            design.fifo_depth,
            "one key stream per PQDist PE into SelK; the selector takes one key per stream per cycle",
            pq.pes,
        )
    )
    ctx.fifos.append(
        Fifo("sel_k_out", "KeyItem", _fifo_depth(design, 2 * k), "the K results of a query, ascending; two queries")
    )
    ctx.fifos.append(
        Fifo(
            "merged_out",
            "KeyItem",
            _fifo_depth(design, 2 * k),
            "the K results after the seed merge (mode 1; mode 0: SelK's), ascending; two queries",
        )
    )
    v.update(
        ivf=ivf,
        ivf_pes=ivf_pes,
        ivf_channels=ivf_channels,
        lut=lut,
        lut_pes=lut_list,
        lut_words=ways,
        lut_groups=lut.pes // ways,
        lut_rows=256 // ways,
        pq=pq,
        pq_channels=channels,
        pq_pes=pq_pes,
        opq=st.opq,
        sel_cells=st.sel_cells,
        sel_k=st.sel_k,
        onchip={"centroids": ivf.storage != "stream" or lut.centroids != "memory"},
        memories=onchip_memories(design, ivf_pes),
        host_tier=host_tier,
        cache_beats=None if host_tier is None else host_tier.cache_beats(st.pq_dist.channels, st.pq_dist.port_bits),
        pq_codes_args=[a for a in ctx.args if a.use == "pq_codes"],
        pq_cache_args=[a for a in ctx.args if a.use == "pq_cache"],
    )
    return ctx


def onchip_memories(design: IvfPqDesign, ivf_pes: list[dict]) -> list[OnchipMemory]:
    """The on-chip index arrays of the kernel with the memory the design (and the resource model)
    gives each. Why: without the pragmas Vitis picks the memory itself (URAM stores land in BRAM,
    and the codebook and OPQ rows are read a lane word per cycle from an array of single elements)."""
    st = design.stages
    lut_lanes = st.build_lut.lanes
    row = f"a row of {lut_lanes} elements per cycle"
    out = [
        OnchipMemory(f"codebook_store_{j}", st.build_lut.codebook, f"BuildLUT PE {j}'s codebook: {row}", lut_lanes)
        for j in range(st.build_lut.pes)
    ]
    if st.opq is not None and st.opq.storage != "stream":
        why = f"OPQ matrix: {st.opq.lanes} elements of a row per cycle"
        out.append(OnchipMemory("opq_store", st.opq.storage, why, st.opq.lanes))
    for p in ivf_pes:
        if p["store"]:
            why = f"IVFDist PE {p['index']}'s centroids, one {st.ivf_dist.lanes}-lane word per row"
            out.append(OnchipMemory(p["store"], st.ivf_dist.storage, why))
    if st.build_lut.centroids != "memory":
        why = f"BuildLUT's copy of the centroids, one {lut_lanes}-lane word per row"
        out.append(OnchipMemory("lut_store", st.build_lut.centroids, why))
    return out


def _channels_of(board: Board, kind: str) -> int:
    return sum(g.count for g in board.memory if g.kind == kind)
