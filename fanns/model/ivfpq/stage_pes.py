"""The model's fixed context of one (index, nprobe, K) on one board, and the PE each stage
configuration instantiates.

Why apart from `fanns.model.ivfpq.stages`: the PE builders are the one place a stage option
becomes library PEs with their parameters; the resource units and the cycle model of `stages`
are both built from them, and the RTL asks for the same PEs. The rules that need no model
context (`selector_pe`, `ivf_chunks`, ...) are the design's: `fanns.design.ivfpq_stages`.
`stages` re-exports these names as part of its API.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from fanns.boards import Board
from fanns.design.ivfpq import BuildLutStage, IvfDistStage, IvfPqDesign, OpqStage, PqDistStage
from fanns.design.ivfpq_stages import stored_elem_bytes
from fanns.model.ivfpq.memory import ADDR_BITS, LIST_TABLE_BYTES, Memory, memories
from fanns.numerics import IvfPqFormat
from fanns.pe.base import PE
from fanns.pe.build_lut import BuildLut
from fanns.pe.channel_feeder import ChannelFeeder
from fanns.pe.fetcher import Fetcher, shared_tables
from fanns.pe.ivf_dist import IvfDist
from fanns.pe.opq import MATRIX_BITS, Opq
from fanns.pe.pq_decode import KSUB, PqDecode
from fanns.pe.result_filter import ResultFilter


# -- the model's view of one (index, nprobe, K) on one board --------------------------------------
@dataclass(frozen=True)
class Context:
    """What is fixed while the stage options vary: formats, algorithm parameters, clock, memory.

    `memories[0]` (the board's first memory group) also carries the host I/O buffers and any
    streamed or fetched centroids; PQ codes may use any group.
    """

    fmt: IvfPqFormat
    n: int
    nlist: int
    nprobe: int
    k: int
    opq: bool
    clock_mhz: float
    memories: tuple[Memory, ...]
    family: str = "xcup"
    lut_words: int = 1
    """LUT words a cycle into the PQDist PEs (`PqDistStage.lut_words`): BuildLUT builds each LUT
    in groups of this many PEs, PE r of a group the rows j = r mod lut_words."""

    def memory(self, kind: str) -> Memory:
        for mem in self.memories:
            if mem.kind == kind:
                return mem
        raise KeyError(kind)

    @property
    def d(self) -> int:
        """Elements per vector in hardware (sub-vectors padded to `fmt.dsub_hw`)."""
        return self.fmt.d_hw

    @property
    def m(self) -> int:
        return self.fmt.m

    def lut_groups(self, st: BuildLutStage) -> int:
        """BuildLUT PEs that each deliver whole LUTs: groups of `lut_words` PEs."""
        return st.pes // self.lut_words


def design_context(design: IvfPqDesign, board: Board) -> Context:
    """The context a written design was chosen in, rebuilt from the design and its board."""
    return Context(
        fmt=design.format,
        n=design.index.n,
        nlist=design.index.nlist,
        nprobe=design.nprobe,
        k=design.k,
        opq=design.index.opq,
        clock_mhz=design.clock_mhz,
        memories=memories(board, design.clock_mhz),
        family=board.family,
        lut_words=design.stages.pq_dist.lut_words,
    )


# -- per-stage PEs --------------------------------------------------------------------------------
@cache
def library_pe(cls: type[PE], **params) -> PE:
    """The PE `cls(**params)`, built once per parameters: the DSE prices the same PEs for thousands
    of stage options, and every build validates its parameters (PEs are immutable values)."""
    return cls(**params)


def opq_pe(ctx: Context, st: OpqStage) -> Opq:
    return Opq(d=ctx.d, w=st.lanes, vec_bits=ctx.fmt.vec_bits, frac_bits=ctx.fmt.opq_frac_bits, storage=st.storage)


def ivf_pe(ctx: Context, st: IvfDistStage, centroids: int, id_base: int = 0) -> IvfDist:
    f = ctx.fmt
    return IvfDist(
        d=f.d_hw,
        w=st.lanes,
        vec_bits=f.vec_bits,
        nlist=centroids,
        ivf_shift=f.ivf_shift,
        ivf_dist_bits=f.ivf_dist_bits,
        storage=st.storage,
        id_base=id_base,
    )


def ivf_stream_channels(ctx: Context, pes: int, lanes: int) -> tuple[int, float]:
    """(channels, slowdown) of streamed centroids: a channel feeds as many PEs as it sustains at
    one centroid word (lanes x vec_bits) per cycle each; a PE wider than a channel is slowed."""
    mem = ctx.memories[0]
    word_bits = lanes * 8 * stored_elem_bytes(ctx.fmt.vec_bits)
    per_channel = math.floor(mem.port_bits * mem.beats_per_cycle / word_bits)
    if per_channel >= 1:
        return -(-pes // per_channel), 1.0
    return pes, word_bits / (mem.port_bits * mem.beats_per_cycle)


def ivf_stream_slowdown(ctx: Context, st: IvfDistStage) -> float:
    """How much slower than one word per cycle the busiest streamed-centroid channel of `st` feeds
    each of its PEs (PE i on channel i*C // P, `fanns.images.ivfpq.ivf_stream_layouts`): its PEs'
    words per cycle against the beats it delivers. With the channels `ivf_stream_channels` chooses
    this is its slowdown; a design with fewer channels is priced by what they deliver."""
    word_bits = st.lanes * 8 * stored_elem_bytes(ctx.fmt.vec_bits)
    busiest = -(-st.pes // max(1, st.channels))
    return channel_shortfall(ctx, busiest * word_bits)


def opq_stream_slowdown(ctx: Context, st: OpqStage) -> float:
    """How much slower than one row word (lanes x 16 bits) a cycle a streamed OPQ matrix arrives."""
    return channel_shortfall(ctx, st.lanes * MATRIX_BITS)


def channel_shortfall(ctx: Context, bits: float) -> float:
    """How much slower than `bits` a cycle one channel of the first memory group delivers them
    (1 where it keeps up): the slowdown of a PE fed from a streamed channel."""
    mem = ctx.memories[0]
    return max(1.0, bits / (mem.port_bits * mem.beats_per_cycle))


def lut_pe(ctx: Context, st: BuildLutStage) -> BuildLut:
    f = ctx.fmt
    return BuildLut(
        d=f.d_hw,
        m=f.m,
        w=st.lanes,
        vec_bits=f.vec_bits,
        lut_shift=f.lut_shift,
        lut_bits=f.lut_bits,
        storage=st.codebook,
        rows=KSUB // ctx.lut_words,
    )


def pq_pe(ctx: Context, st: PqDistStage) -> PqDecode:
    return library_pe(
        PqDecode, m=ctx.m, lut_bits=ctx.fmt.lut_bits, double_buffer=st.double_buffer, lut_words=st.lut_words
    )


def fetcher_pe(ctx: Context, st: PqDistStage) -> Fetcher:
    return library_pe(
        Fetcher,
        nlist=ctx.nlist,
        channels=st.channels,
        table_of=shared_tables(st.pes_per_channel()),
        beat_bytes=st.port_bits // 8,
        tiered=st.tiers is not None,
        cached=st.host_tier is not None,
        addr_bits=ADDR_BITS,
        record_bits=8 * LIST_TABLE_BYTES,
    )


def feeder_pe(ctx: Context, st: PqDistStage, pes: int) -> ChannelFeeder:
    """The feeder of a PQ-code channel serving `pes` pq_decode PEs."""
    two = st.tiers is not None or st.host_tier is not None  # a cached design's second reader: its cache region
    return library_pe(ChannelFeeder, m=ctx.m, port_bits=st.port_bits, pes=pes, tiered=two)


def result_filter_pe(ctx: Context) -> ResultFilter:
    return ResultFilter(key_bits=ctx.fmt.pq_key_bits, max_k=ctx.k)
