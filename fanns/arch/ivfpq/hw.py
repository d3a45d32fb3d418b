"""What the RTL of one IVF-PQ design is made of: its PEs, widths, memory layout and register map.

`IvfPqHw` turns a validated `design.yaml` (`fanns.design.ivfpq.IvfPqDesign`) plus its board into
every constant the Amaranth top level (`fanns.arch.ivfpq.top`) needs, through the same
functions the performance/resource model uses (`fanns.model.ivfpq.stages`: `opq_pe`, `lut_pe`, ...;
the design's own rules `fanns.design.ivfpq_stages`: `ivf_chunks`, `selector_pe`, ...), so the
generated machine is the one the model priced. It also
owns the register map, because the host driver, the register document and the hardware must
agree on it (`regmap()` renders all three).

Device memory formats are those of docs/ivfpq_architecture.md and of the one packer,
`fanns.images.ivfpq`: its PQ-channel layout (`PqLayout`: list table in the channel's header,
ids just in time before the code units that need them), its I/O layout (`IoLayout`: each query
and each query's results padded to whole beats) and its ROM images, which this RTL reads from
device memory at the first run instead of baking them into the bitstream.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from fanns.arch.ivfpq.regs import CSR_ADDR_BITS as CSR_ADDR_BITS  # re-exported
from fanns.arch.ivfpq.regs import WATCHED_STREAMS as WATCHED_STREAMS  # re-exported
from fanns.arch.ivfpq.regs import ivfpq_regmap
from fanns.boards import Board
from fanns.design.ivfpq import IvfPqDesign
from fanns.design.ivfpq_stages import ivf_chunks, selector_pe
from fanns.errors import FannsError
from fanns.hdl.regmap import Register, RegMap
from fanns.images import ivfpq as ivfpq_images
from fanns.model.ivfpq import buildable
from fanns.model.ivfpq import stages as stage_model
from fanns.numerics import ID_BITS
from fanns.pe.channel_feeder import ChannelFeeder
from fanns.pe.fetcher import Fetcher
from fanns.pe.result_filter import ResultFilter

ADDR_BITS = stage_model.ADDR_BITS
MATRIX_BITS = buildable.MATRIX_BITS
"""Bits of one OPQ matrix element in device memory (int16)."""
TABLE_RECORD_BITS = 32 * ivfpq_images.TABLE_WORDS
"""List-table record: start_beat, beats, share_items, count as four uint32."""
RESULT_BITS = 8 * ivfpq_images.KEY_BYTES
"""One result key in device memory (uint64)."""
LEN_BITS = 32
"""Byte length of every read/write command."""

IMAGE_REGISTERS = {
    "centroids": "centroids_addr",
    "codebook": "codebook_addr",
    "opq_matrix": "opq_addr",
    "list_tiers": "tiers_addr",
    "lut_centroids": "lutc_addr",
}
"""ROM image (and BuildLUT's fetched centroids, read on `m_axi_lutc`; a streamed OPQ matrix, read on
`m_axi_opq`) -> the register holding its device address (`IvfPqHw.image_register`)."""

SECTIONS = ("opq", "ivf", "codebook", "lutc", "tiers", "query", "cells", "seeds")
"""Destinations of the host I/O reader: the ROM images loaded on chip once (`tiers`: the
list->tier table of a tiered design), then the queries, and in a step-wise run (`mode` 1,
docs/stepwise.md) each query's cell list and seed keys."""
CELL_WORD_BITS = 32
"""One cell id of a step-wise run's cell list (uint32, `0xFFFFFFFF` names no cell)."""
STREAM_PORTS = ("pq", "hot", "cache", "ivf", "lutc", "opq")
"""Heads of the read-only masters `m_axi_<head><c>`, one per memory channel of PQ codes, hot-tier
PQ codes and streamed IVF centroids (`m_axi_cache<c>`, a host-memory design's cache region of
channel c, also writes), `m_axi_lutc` for BuildLUT's fetched centroids and `m_axi_opq`
for a streamed OPQ matrix (the other buffers are on `m_axi_io`)."""
TIER_WORD_BITS = 8
"""One entry of the list->tier table in device memory (uint8 per list, `list_tiers` image)."""


@dataclass(frozen=True)
class IvfPqHw:
    """The RTL view of one design (see the module docstring)."""

    design: IvfPqDesign
    ctx: stage_model.Context
    io_port_bits: int

    @classmethod
    def from_design(cls, design: IvfPqDesign, board: Board) -> IvfPqHw:
        if design.board != board.name:
            raise FannsError(f"the design is for board {design.board!r}, not {board.name!r}")
        ctx = stage_model.design_context(design, board)
        hw = cls(design, ctx, board.memory[0].port_bits)
        hw.check()
        return hw

    # -- what the RTL generator supports ---------------------------------------------------------
    def check(self) -> None:
        st = self.design.stages
        if st.ivf_dist.storage == "stream":
            self._check_ivf_stream()
        pq = st.pq_dist
        for name, bits in (("io", self.io_port_bits), ("pq", pq.port_bits)):
            if bits < 64 or bits & (bits - 1):
                raise FannsError(
                    f"{name} memory port of {bits} bits", hint="the RTL needs a power-of-two port of at least 64 bits"
                )
        lanes = {"opq": None if st.opq is None else st.opq.lanes}
        lanes |= {"ivf_dist": st.ivf_dist.lanes, "build_lut": st.build_lut.lanes}
        buildable.check_design_lanes(self.d, self.m, self.vec_bits, self.io_port_bits, lanes)
        for name in self.sections() + ["query"]:
            bits = self.section_word_bits(name)
            if max(bits, self.io_port_bits) % min(bits, self.io_port_bits):
                raise FannsError(
                    f"{name}: {bits}-bit words do not divide or fill {self.io_port_bits}-bit beats",
                    hint="use power-of-two lanes",
                )

    def _check_ivf_stream(self) -> None:
        """A streamed-centroid channel hands each of its PEs a word per cycle from one beat per
        cycle (`fanns.arch.ivfpq.ivf_stream`): at most as many PEs as a beat holds words, and a
        word wider than a beat serves one PE."""
        for c, layout in enumerate(self.ivf_stream_layouts):
            word, pes = layout.lanes * self.elem_bits, len(layout.channel_pes)
            room = max(1, layout.port_bits // word)
            if pes > room or max(word, layout.port_bits) % min(word, layout.port_bits):
                raise FannsError(
                    f"streamed IVF centroids: channel {c} feeds {pes} IVFDist PEs of {word}-bit words "
                    f"from {layout.port_bits}-bit beats, which serve at most {room}",
                    hint="raise stages.ivf_dist.channels (and the ivf_centroids memory channels) "
                    f"to at least {-(-self.stages.ivf_dist.pes // room)}",
                )

    # -- shortcuts -------------------------------------------------------------------------------
    @property
    def fmt(self):
        return self.design.format

    @property
    def stages(self):
        return self.design.stages

    @property
    def d(self) -> int:
        """Elements per vector in hardware (sub-vectors padded to `format.dsub_hw`)."""
        return self.fmt.d_hw

    @property
    def m(self) -> int:
        return self.fmt.m

    @property
    def nlist(self) -> int:
        return self.design.index.nlist

    @property
    def nprobe(self) -> int:
        return self.design.nprobe

    @property
    def k(self) -> int:
        return self.design.k

    @property
    def vec_bits(self) -> int:
        return self.fmt.vec_bits

    @property
    def elem_bits(self) -> int:
        """Bits of one stored vector element (int16, or int32 beyond 16-bit vectors)."""
        return 8 * ivfpq_images.elem_bytes(self.vec_bits)

    @property
    def src_lanes(self) -> int:
        """Lanes of the query as it enters the pipeline (OPQ's, else IVFDist's)."""
        st = self.stages
        return st.opq.lanes if st.opq is not None else st.ivf_dist.lanes

    def pq_layout(self, c: int) -> ivfpq_images.PqLayout:
        """The packer's layout of PQ-code channel c (in design.yaml order; the paired fast-tier
        channel of a tiered design has the same layout)."""
        return ivfpq_images.pq_layouts(self.design)[c][1]

    @cached_property
    def ivf_stream_layouts(self) -> list[ivfpq_images.IvfStreamLayout]:
        """The packer's layout of every streamed-centroid channel (none for on-chip centroids)."""
        return [lay for _, lay in ivfpq_images.ivf_stream_layouts(self.design, self.io_port_bits)]

    @property
    def ivf_channels(self) -> int:
        return len(self.ivf_stream_layouts)

    @cached_property
    def opq_stream_layout(self) -> ivfpq_images.IvfStreamLayout | None:
        """The packer's layout of a streamed OPQ matrix (None: on chip, or no OPQ)."""
        found = ivfpq_images.opq_stream_layout(self.design, self.io_port_bits)
        return None if found is None else found[1]

    @property
    def lut_fetched(self) -> bool:
        """BuildLUT reads each probed cell's centroid from memory (`fanns.arch.ivfpq.lut_fetch`)."""
        return self.stages.build_lut.centroids == "memory"

    @property
    def tiered(self) -> bool:
        """Hot lists on a second, paired set of channels (`stages.pq_dist.tiers`)."""
        return self.stages.pq_dist.tiers is not None

    @property
    def host_tier(self) -> bool:
        """Lists in host memory, a prefetched cache region per PQ channel (`stages.pq_dist.host_tier`)."""
        return self.stages.pq_dist.host_tier is not None

    @cached_property
    def io_layout(self) -> ivfpq_images.IoLayout:
        return ivfpq_images.IoLayout.of(self.fmt, self.k, self.io_port_bits)

    @property
    def query_stride(self) -> int:
        """Bytes between consecutive queries in the query buffer."""
        return self.io_layout.query_beats * self.io_beat_bytes

    @property
    def result_stride(self) -> int:
        """Bytes between consecutive queries' results in the result buffer."""
        return self.io_layout.result_beats * self.io_beat_bytes

    @property
    def cell_stride(self) -> int:
        """Bytes between consecutive queries' cell lists (step-wise mode): `nprobe` ids, whole beats."""
        return self.io_layout.cell_beats(self.nprobe) * self.io_beat_bytes

    @property
    def cell_slots(self) -> int:
        """Cell ids a step-wise run reads per query: `nprobe` and the padding of the last beat."""
        return self.cell_stride * 8 // CELL_WORD_BITS

    @property
    def pq_beat_bytes(self) -> int:
        return self.stages.pq_dist.port_bits // 8

    @property
    def io_beat_bytes(self) -> int:
        return self.io_port_bits // 8

    @property
    def channels(self) -> int:
        return self.stages.pq_dist.channels

    def channel_pes(self, c: int) -> list[int]:
        return list(self.pq_layout(c).channel_pes)

    # -- PEs -------------------------------------------------------------------------------------
    @cached_property
    def opq_pe(self):
        return None if self.stages.opq is None else stage_model.opq_pe(self.ctx, self.stages.opq)

    @cached_property
    def ivf_pes(self) -> list:
        st = self.stages.ivf_dist
        return [stage_model.ivf_pe(self.ctx, st, n, base) for base, n in ivf_chunks(self.nlist, st.pes)]

    @cached_property
    def lut_pe(self):
        return stage_model.lut_pe(self.ctx, self.stages.build_lut)

    @cached_property
    def pq_pe(self):
        return stage_model.pq_pe(self.ctx, self.stages.pq_dist)

    @cached_property
    def sel_cells_pe(self):
        return selector_pe(self.stages.sel_cells)

    @cached_property
    def sel_k_pe(self):
        return selector_pe(self.stages.sel_k)

    @cached_property
    def fetcher_pe(self) -> Fetcher:
        pe = stage_model.fetcher_pe(self.ctx, self.stages.pq_dist)
        return replace(pe, len_bits=LEN_BITS, record_bits=TABLE_RECORD_BITS, tier_word_bits=TIER_WORD_BITS)

    def feeder_pe(self, c: int) -> ChannelFeeder:
        return stage_model.feeder_pe(self.ctx, self.stages.pq_dist, len(self.channel_pes(c)))

    @cached_property
    def result_filter_pe(self) -> ResultFilter:
        return stage_model.result_filter_pe(self.ctx)

    # -- loaded sections -------------------------------------------------------------------------
    def sections(self) -> list[str]:
        """ROM images the first run loads on chip through the I/O reader, in load order."""
        out = ["opq"] if self.stages.opq is not None and self.opq_stream_layout is None else []
        if self.stages.ivf_dist.storage != "stream":
            out.append("ivf")
        out.append("codebook")
        if self.stages.build_lut.centroids != "memory":
            out.append("lutc")
        if self.tiered:
            out.append("tiers")
        return out

    def section_bytes(self, name: str) -> int:
        eb = self.elem_bits // 8
        return {
            "opq": self.d * self.d * MATRIX_BITS // 8,
            "ivf": self.nlist * self.d * eb,
            "codebook": stage_model.KSUB * self.d * eb,
            "lutc": self.nlist * self.d * eb,
            "tiers": self.nlist * TIER_WORD_BITS // 8,
        }[name]

    def section_word_bits(self, name: str) -> int:
        """Bits of one word of a section as its consumer takes it (lanes of stored elements)."""
        st = self.stages
        if name == "opq":
            return st.opq.lanes * MATRIX_BITS
        if name == "tiers":
            return TIER_WORD_BITS
        if name in ("cells", "seeds"):
            return CELL_WORD_BITS if name == "cells" else RESULT_BITS
        lanes = {
            "ivf": st.ivf_dist.lanes,
            "codebook": st.build_lut.lanes,
            "lutc": st.build_lut.lanes,
            "query": self.src_lanes,
        }
        return lanes[name] * self.elem_bits

    def section_address_register(self, name: str) -> str:
        """The base-address register a section is read from (BuildLUT's store reloads the IVF centroids)."""
        return {
            "opq": "opq_addr",
            "ivf": "centroids_addr",
            "codebook": "codebook_addr",
            "lutc": "centroids_addr",
            "tiers": "tiers_addr",
        }[name]

    def table_note(self, port: str, c: int) -> str:
        """Whether channel `c`'s list table is read at load or shared with an equal channel's."""
        loader = self.fetcher_pe.loader(self.fetcher_pe.table(c))
        return "its list table is read at load" if loader == c else f"its list table equals {port}{loader}'s"

    def table_bytes(self) -> int:
        """Bytes of a PQ channel's list table (read from the head of its image at load)."""
        return self.nlist * TABLE_RECORD_BITS // 8

    # -- register map ----------------------------------------------------------------------------
    @cached_property
    def regmap(self) -> RegMap:
        return ivfpq_regmap(self)

    def image_register(self, image: str) -> str:
        """The base-address register of a memory image (`fanns.images.ivfpq` names: ROM images,
        `pq_codes_<c>` -> `pq<c>_addr`, `pq_hot_<c>` -> `hot<c>_addr`, `ivf_centroids_<c>` -> `ivf<c>_addr`)."""
        for use, prefix in (("pq_codes_", "pq"), ("pq_hot_", "hot"), ("pq_cache_", "cache"), ("ivf_centroids_", "ivf")):
            if image.startswith(use):
                return f"{prefix}{image.removeprefix(use)}_addr"
        return IMAGE_REGISTERS[image]

    def pointer_ports(self) -> dict[str, str]:
        """Every base-address register (a kernel's pointer argument) -> the AXI master that reads
        or writes the buffer it points to: the I/O buffers and ROM images on `m_axi_io`, each
        PQ-code image on its channel's `m_axi_pq<c>` / `m_axi_hot<c>`, each streamed-centroid image
        on `m_axi_ivf<c>`."""
        out = {}
        for reg in self.regmap.kernel_args():
            if reg.width != 64:
                continue
            head = reg.name.removesuffix("_addr")
            out[reg.name] = f"m_axi_{head}" if head.rstrip("0123456789") in STREAM_PORTS else "m_axi_io"
        return out

    def register(self, name: str) -> Register:
        return self.regmap[name]

    @property
    def key_bits(self) -> int:
        return self.fmt.pq_key_bits

    @property
    def cell_bits(self) -> int:
        return ID_BITS
