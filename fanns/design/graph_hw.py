"""The hardware view of a graph design: sizes, stream layouts and the register map of one QPP.

Why one module: the Amaranth components of the query processing pipeline
(`fanns.arch.graph.units`, `fanns.arch.graph.core`, `fanns.arch.graph.top`), the HLS
generator, the host and the DSE's resource inventory all derive their widths, FIFO depths,
AXI masters and registers from a `GraphDesign` here, so they cannot disagree.

Token kinds on the dispatch path (docs/graph_architecture.md, "The QPP"): the controller sends
CAND (fetch this candidate's neighbour list), ENTRY (check the entry node itself), GROUP_END and
QUERY_END; the dispatcher hands each BFC unit CHECK / ENTRY / GROUP_END / QUERY_END tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from amaranth.lib import data
from amaranth.utils import ceil_log2

from fanns.design.graph import GraphDesign
from fanns.hdl.regmap import RegMap, RegMapBuilder, kernel_control_block
from fanns.numerics import ID_BITS
from fanns.pe.axi_reader import AxiReader
from fanns.pe.axi_writer import AxiWriter
from fanns.pe.bloom import Bloom
from fanns.pe.l2dist import L2Dist
from fanns.pe.systolic_queue import SystolicQueue

ADDR_BITS = 64
LEN_BITS = 32
CSR_ADDR_BITS = 12
PAD_ID = (1 << ID_BITS) - 1
KIND_CAND, KIND_ENTRY, KIND_GROUP_END, KIND_QUERY_END = 0, 1, 2, 3
KIND_CHECK = KIND_CAND  # a checked id, on a unit's token stream
STATUS_BAD_PARAMS, STATUS_AXI_ERROR = 0, 1
UNIT_FIFO_DEPTH = 16
"""Depth of each BFC unit's token FIFO and of its Bloom-bypass (order) FIFO."""


def pow2_at_least(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, n))))


def token_layout() -> data.StructLayout:
    return data.StructLayout({"kind": 2, "id": ID_BITS})


def unit_out_layout(key_bits: int) -> data.StructLayout:
    """A BFC unit's output: a new node's key (`group_end` 0) or its group-end marker (1)."""
    return data.StructLayout({"key": key_bits, "entry": 1, "group_end": 1})


@dataclass(frozen=True)
class QppHw:
    """Derived hardware parameters of one QPP of `design` (see the module docstring)."""

    design: GraphDesign

    # -- graph and datapath -------------------------------------------------------------------------
    @property
    def units(self) -> int:
        return self.design.bfc_units

    @property
    def channels(self) -> int:
        return self.design.channels

    @property
    def d(self) -> int:
        return self.design.graph.d

    @property
    def elem_bytes(self) -> int:
        return self.design.graph.elem_bytes

    @property
    def port_bits(self) -> int:
        return self.design.memory.port_bits

    @property
    def port_bytes(self) -> int:
        return self.port_bits // 8

    @property
    def ids_per_beat(self) -> int:
        return self.port_bytes // 4

    @property
    def row_bytes(self) -> int:
        return self.design.adjacency_row_bytes

    @property
    def row_beats(self) -> int:
        return self.row_bytes // self.port_bytes

    @property
    def vector_bytes(self) -> int:
        """Bytes one vector fetch reads (the d elements; its row is padded to 64 bytes)."""
        return self.d * self.elem_bytes

    @property
    def vector_beats(self) -> int:
        return -(-self.vector_bytes // self.port_bytes)

    @property
    def key_bits(self) -> int:
        return self.design.key_bits

    @property
    def rkey_bits(self) -> int:
        """Result-queue keys carry one more bit: 1 for a real key, 0 for the blocked slots that
        shorten the queue to the run-time l (docs/graph_architecture.md)."""
        return self.key_bits + 1

    @cached_property
    def l2dist(self) -> L2Dist:
        return L2Dist(d=self.d, w=self.design.lanes, vec_bits=8 * self.elem_bytes, signed=self.design.graph.signed)

    @cached_property
    def bloom(self) -> Bloom:
        return self.design.bloom.pe()

    @cached_property
    def result_queue(self) -> SystolicQueue:
        return SystolicQueue(s=self.design.queues.l_max, key_bits=self.rkey_bits)

    @cached_property
    def cand_queue(self) -> SystolicQueue:
        return SystolicQueue(s=self.design.queues.cand, key_bits=self.key_bits)

    # -- AXI masters --------------------------------------------------------------------------------
    def _reader(self, beats: int, outstanding: int) -> AxiReader:
        return AxiReader(self.port_bits, ADDR_BITS, pow2_at_least(beats), outstanding, LEN_BITS)

    @cached_property
    def list_reader(self) -> AxiReader:
        return self._reader(self.row_beats, self.design.memory.outstanding)

    @cached_property
    def vector_reader(self) -> AxiReader:
        return self._reader(self.vector_beats, self.design.memory.outstanding)

    @cached_property
    def query_reader(self) -> AxiReader:
        return self._reader(self.vector_beats, 2)

    @cached_property
    def result_writer(self) -> AxiWriter:
        return AxiWriter(self.port_bits, ADDR_BITS, pow2_at_least(self.result_row_beats), 4, LEN_BITS)

    @property
    def result_row_beats(self) -> int:
        return self.design.result_row_bytes // self.port_bytes

    # -- FIFO depths ----------------------------------------------------------------------------------
    @property
    def cmd_depth(self) -> int:
        """Controller -> dispatcher tokens: every group in flight (mc candidates and its end)
        plus the entry and query-end tokens fit, so the controller never waits on the dispatcher
        (which may wait, through the units, on the controller's inserter)."""
        lim = self.design.limits
        return pow2_at_least(lim.mg_max * (lim.mc_max + 1) + 4)

    @property
    def pending_depth(self) -> int:
        """Per unit: nodes between the vector fetch and the distance result, with their markers."""
        return pow2_at_least(2 * self.design.memory.outstanding + 8)

    @property
    def out_depth(self) -> int:
        """Per unit: keys and markers waiting for the inserter. As deep as the pending FIFO, so the
        inserter's pace (a kept key every two cycles, none before the group's sync) does not
        stall the distance PE while the nodes in flight fit — the cycle model assumes it never
        does (it stalled with 4 entries: the model was 10 % fast at mg = 8, mc = 4)."""
        return self.pending_depth

    # -- registers --------------------------------------------------------------------------------------
    @cached_property
    def regmap(self) -> RegMap:
        """The Xilinx RTL-kernel layout (docs/graph_architecture.md, "Register map"): the ap_ctrl_hs
        block at 0x00-0x0C, the kernel arguments from 0x10 in the HLS face's argument order (the
        pointers query, result, then adjacency and vectors of each graph channel; then the 32-bit
        scalars nq, nodes, entry, l, k, mg, mc), so one XRT host calls either face; then the status,
        cycle counter and constant registers, which are no kernel arguments."""
        d, q, lim, rt = self.design, self.design.queues, self.design.limits, self.design.runtime
        b = RegMapBuilder("falcon_qpp", CSR_ADDR_BITS, "One Falcon query processing pipeline with DST control.")
        b.registers = list(kernel_control_block())
        b.add("query_addr", 64, "RW", description=f"query buffer: nq rows of {d.query_row_bytes} bytes", align=8)
        b.add("result_addr", 64, "RW", description=f"result buffer: nq rows of {d.result_row_bytes} bytes", align=8)
        for c in range(self.channels):
            b.add(f"adj_addr{c}", 64, "RW", description=f"adjacency image of graph channel {c}", align=8)
            b.add(f"vec_addr{c}", 64, "RW", description=f"vector image of graph channel {c}", align=8)
        b.add("nq", 32, "RW", description="queries in this run")
        b.add("nodes", 32, "RW", d.graph.n, "nodes of the graph (the entry must be below)")
        b.add("entry", 32, "RW", d.graph.entry, "entry node")
        b.add("l", 32, "RW", rt.l, f"result queue size l (2..{q.l_max})")
        b.add("k", 32, "RW", rt.k, f"results per query k (1..min(l, {q.k_max}))")
        b.add("mg", 32, "RW", rt.mg, f"DST: candidate groups in flight (1..{lim.mg_max})")
        b.add("mc", 32, "RW", rt.mc, f"DST: candidates per group (1..{lim.mc_max})")
        b.add("status", 2, "RO", description="bit 0: bad parameters (the run did nothing); bit 1: AXI error response")
        b.add("cycles", 64, "RO", description="clock cycles of the last run (ap_start to ap_done)", align=8)
        for name, value, what in (
            ("max_l", q.l_max, "result queue capacity"),
            ("cand_size", q.cand, "candidate queue capacity"),
            ("max_k", q.k_max, "largest k"),
            ("max_mg", lim.mg_max, "largest mg"),
            ("max_mc", lim.mc_max, "largest mc"),
            ("dim", self.d, "vector dimension"),
            ("max_degree", d.graph.max_degree, "maximum degree"),
            ("bfc_units", self.units, "BFC units"),
            ("graph_channels", self.channels, "graph memory channels"),
        ):
            b.add(name, 32, "RO", description=f"{what} ({value})")
        return b.build()

    def pointer_ports(self) -> dict[str, str]:
        """Every base-address register (a kernel's pointer argument) -> the AXI master that reads or
        writes its buffer: queries and results on `m_axi_io`, adjacency images on `m_axi_list`, vector
        images on `m_axi_vec0` (every BFC unit's `m_axi_vec<u>` reads them; kernel.xml names one)."""
        out = {}
        for reg in self.regmap.kernel_args():
            if reg.width == 64:
                head = reg.name.rstrip("0123456789")
                out[reg.name] = {"adj_addr": "m_axi_list", "vec_addr": "m_axi_vec0"}.get(head, "m_axi_io")
        return out

    def info_values(self) -> dict[str, int]:
        """The constant read-only registers."""
        d = self.design
        return {
            "max_l": d.queues.l_max,
            "cand_size": d.queues.cand,
            "max_k": d.queues.k_max,
            "max_mg": d.limits.mg_max,
            "max_mc": d.limits.mc_max,
            "dim": self.d,
            "max_degree": d.graph.max_degree,
            "bfc_units": self.units,
            "graph_channels": self.channels,
        }


def across_addr_bits(pipelines: int) -> int:
    """Address bits of the control port of `pipelines` QPPs, one register window each."""
    return CSR_ADDR_BITS + max(1, ceil_log2(pipelines))
