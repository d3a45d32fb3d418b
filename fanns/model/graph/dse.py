"""Design-space exploration of graph-search (Falcon / DST) accelerators.

Why: the number of BFC units or pipelines, the queue size, the Bloom filter and the memory
channels trade recall, latency, throughput and resources against each other, and the best
(mg, mc) depends on all of them. The DSE evaluates every combination of a small space on the
dataset's own queries:

* recall and the traversal of each query from the compiled DST reference (`fanns.model.graph.fast`,
  tested equal to `fanns.index.graph_traversal`) with the candidate's Bloom filter per BFC unit;
* cycles per query from the cycle model of the generated QPP (`fanns.model.graph.qpp`,
  checked cycle-exact against the RTL for one QPP) with the board's memory: every fetch engine
  (of all QPPs) gets a channel's beats at the rate the others leave it
  (`fanns.model.graph.across`, checked against the RTL of 2 and 4 QPPs), and throughput
  never exceeds the chosen channels' bandwidth over a query's beats;
* resources from the PE library's calibrated tables (`PE.resources`): per BFC unit the Bloom PE,
  the l2dist PE and its vector read master; per QPP the two systolic queues, the list, query and
  result masters; across P > 1 QPPs the control-port split (`fanns.pe.axil_split`). The
  controller, dispatcher and FIFOs between PEs are not in the tables and not counted (a few
  thousand LUTs per QPP: the utilisation cap leaves room for them).

Modes: intra-query (one QPP with U BFC units; latency at batch 1 = its latency, QPS = one query
after the other) and across-query (P QPPs of one unit each; QPS = P x the QPP's rate, each query
still takes one QPP's latency). Objectives: `latency` (lowest mean latency of one query) or
`qps` (highest throughput at large batches), among the designs that reach the recall goal and fit
the board's resources under the utilisation cap. Ties go to fewer LUTs, then fewer units.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from fanns.boards import Board
from fanns.design.graph import BloomSpec, GraphDesign, GraphMemory, Limits, Queues, Runtime, graph_ref
from fanns.design.graph_hw import CSR_ADDR_BITS, QppHw, across_addr_bits
from fanns.errors import FannsError
from fanns.index.goals import RecallGoal
from fanns.index.graph import GraphImage
from fanns.index.graph_traversal import TraversalConfig
from fanns.index.recall import hits
from fanns.model.graph.across import shared_search_batch
from fanns.model.graph.qpp import MemorySystem, QppConfig
from fanns.pe.axil_split import AxilSplit
from fanns.pe.bloom import Bloom
from fanns.resources import Resources

OBJECTIVES = ("latency", "qps")


def memory_plan(board: Board, channels: int | None = None, outstanding: int = 64) -> GraphMemory:
    """The graph's channels: the first `channels` of the board's first memory group (default: the
    largest power of two available); the host I/O buffers share channel 0."""
    mem = board.memory[0]
    if channels is None:
        channels = 1 << (mem.count.bit_length() - 1)
    if not 1 <= channels <= mem.count:
        raise FannsError(f"{channels} graph channels: {board.name} has {mem.count} {mem.kind} channels")
    return GraphMemory(
        kind=mem.kind, channels=tuple(range(channels)), io_channel=0, port_bits=mem.port_bits, outstanding=outstanding
    )


@dataclass(frozen=True)
class GraphSpace:
    """The combinations the DSE tries."""

    units: tuple[int, ...] = (1, 2, 4, 8)  # intra-query: BFC units of the one QPP
    pipelines: tuple[int, ...] = (1, 2, 4, 8, 16)  # across-query: QPPs of one unit
    queue: tuple[int, ...] = (32, 64, 128)  # l = l_max = candidate queue size
    dst: tuple[tuple[int, int], ...] = ((1, 1), (2, 1), (4, 1), (2, 2), (4, 2), (8, 2), (4, 4), (8, 4))
    bloom_bits: tuple[int, ...] = (3 * 2**14, 3 * 2**17)  # b of a 3-hash filter per unit
    bloom_h: int = 3
    channels: tuple[int, ...] | None = None  # default: powers of two up to the board's first group
    k: int = 10

    def traversal(self, units: int, l: int, bloom_bits: int, mg: int, mc: int) -> TraversalConfig:
        """The DST reference's settings of one point of this space (what its recall depends on)."""
        bloom = Bloom(h=self.bloom_h, b=bloom_bits, w=64)
        return TraversalConfig(l=l, k=self.k, mg=mg, mc=mc, cand_size=l, bloom=bloom, bfc_units=units)

    def channel_options(self, board: Board) -> tuple[int, ...]:
        count = board.memory[0].count
        return self.channels or tuple(1 << i for i in range(count.bit_length()) if 1 << i <= count)


@dataclass
class GraphPoint:
    """One evaluated design."""

    mode: str
    units: int
    pipelines: int
    channels: int
    l: int
    mg: int
    mc: int
    bloom_bits: int
    recall: float
    latency_us: float
    qps: float
    resources: Resources
    fits: bool
    recall_sd: float = 0.0  # per-query standard deviation of R@k over the DSE's queries
    queries: int = 0  # the queries the recall was measured on

    def to_dict(self) -> dict:
        d = {k: v for k, v in vars(self).items() if k != "resources"}
        return d | {"resources": {k: round(v, 1) for k, v in self.resources.to_dict().items()}}


@dataclass
class GraphDseResult:
    best: GraphPoint | None
    design: GraphDesign | None
    points: list[GraphPoint] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "best": self.best.to_dict() if self.best else None,
            "evaluated": len(self.points),
            "points": [p.to_dict() for p in self.points],
        }


def design_for(
    graph: GraphImage,
    board: Board,
    p: GraphPoint,
    space: GraphSpace,
    clock_mhz: float,
    util: float,
    goal: RecallGoal | None = None,
) -> GraphDesign:

    limits = (max(mg for mg, _ in space.dst), max(mc for _, mc in space.dst))
    design = GraphDesign(
        board=board.name,
        board_file=None if board.builtin else board.spec,
        clock_mhz=float(clock_mhz),
        util=util,
        graph=graph_ref(graph),
        mode=p.mode,
        pipelines=p.pipelines,
        bfc_units=p.units,
        queues=Queues(l_max=p.l, cand=p.l, k_max=space.k),
        bloom=BloomSpec(h=space.bloom_h, b=p.bloom_bits),
        limits=Limits(*limits),
        runtime=Runtime(l=p.l, k=space.k, mg=p.mg, mc=p.mc),
        memory=memory_plan(board, p.channels),
        goal=goal,
    )
    design.validate()
    return design


def design_resources(design: GraphDesign, family: str) -> Resources:
    """The calibrated PEs of the design (module docstring: what is not counted)."""

    hw = QppHw(design)
    unit = Resources.total(
        [hw.bloom.resources(family), hw.l2dist.resources(family), hw.vector_reader.resources(family)]
    )
    qpp = Resources.total(
        [
            unit * hw.units,
            hw.result_queue.resources(family),
            hw.cand_queue.resources(family),
            hw.list_reader.resources(family),
            hw.query_reader.resources(family),
            hw.result_writer.resources(family),
        ]
    )
    if design.pipelines == 1:
        return qpp
    split = AxilSplit(design.pipelines, across_addr_bits(design.pipelines), CSR_ADDR_BITS)
    return qpp * design.pipelines + split.resources(family)


def ranked(points: list[GraphPoint], objective: str) -> Iterator[GraphPoint]:
    """The points that fit, best for `objective` first (ties: fewer LUTs, then fewer units)."""
    sign = 1 if objective == "latency" else -1
    yield from sorted(
        (p for p in points if p.fits),
        key=lambda p: (
            sign * (p.latency_us if objective == "latency" else p.qps),
            p.resources.lut,
            p.units * p.pipelines,
        ),
    )


def explore_graph(
    graph: GraphImage,
    queries_fx: np.ndarray,
    groundtruth: np.ndarray,
    board: Board,
    recall_goal: float,
    objective: str = "latency",
    clock_mhz: float | None = None,
    util: float = 0.6,
    latency_cycles: int | None = None,
    space: GraphSpace = GraphSpace(),
    threads: int = 2,
    accept: Callable[[GraphPoint], bool] | None = None,
) -> GraphDseResult:
    """Evaluate `space` on the queries and return the best design for `objective` (module
    docstring): the first fitting point in `ranked` order that `accept` takes (default: its mean
    recall reaches the goal; `fanns.explore.graph_promise` asks for a confidence bound and the
    held-out queries, and is asked in this order, best first, so it measures only what it must)."""

    if objective not in OBJECTIVES:
        raise FannsError(f"objective {objective!r}", hint=f"choose one of {', '.join(OBJECTIVES)}")
    if not 0 < recall_goal <= 1:
        raise FannsError(f"recall goal {recall_goal} must be in (0, 1]")
    clock = float(clock_mhz or board.clock_mhz)
    budget = board.budget(util)
    mem0 = MemorySystem.from_board(board, freq_mhz=clock, latency_cycles=latency_cycles)
    capacity = mem0.bytes_per_cycle() / mem0.channels / mem0.port_bytes  # beats per cycle of one channel
    template = GraphPoint(
        "intra", 1, 1, 1, space.queue[0], 1, 1, space.bloom_bits[0], 0.0, 0.0, 0.0, Resources(), False
    )
    points: list[GraphPoint] = []
    sizes: dict[tuple, Resources] = {}  # resources do not depend on (mg, mc)
    shapes = [("intra", u, 1) for u in space.units] + [("across", 1, p) for p in space.pipelines if p > 1]
    for (mode, units, pipes), l, bits, (mg, mc) in itertools.product(shapes, space.queue, space.bloom_bits, space.dst):
        if l < space.k:
            continue
        cfg = space.traversal(units, l, bits, mg, mc)
        chans = space.channel_options(board)
        qpps = [
            QppConfig(
                d=graph.fmt.d,
                elem_bytes=graph.elem_bytes,
                l=l,
                k=space.k,
                cand_size=l,
                bfc_units=units,
                bloom=cfg.bloom,
                memory=replace(mem0, channels=c),
                l_max=l,
                max_degree=graph.max_degree,
            )
            for c in chans
        ]
        batch, beats = shared_search_batch(graph, queries_fx, cfg, qpps, [pipes] * len(qpps), capacity, threads)
        per_query = hits(batch.ids[:, : space.k], groundtruth[:, : space.k]) / space.k
        recall = float(per_query.mean())
        recall_sd = float(per_query.std(ddof=1)) if per_query.size > 1 else 0.0
        for j, c in enumerate(chans):
            occupancy = float(batch.occupancy[:, j].mean())
            roof = c * capacity * clock * 1e6 / beats[j]  # the channels' beats per second over a query's beats
            p = replace(
                template,
                mode=mode,
                units=units,
                pipelines=pipes,
                channels=c,
                l=l,
                mg=mg,
                mc=mc,
                bloom_bits=bits,
                recall=recall,
                recall_sd=recall_sd,
                queries=int(per_query.size),
                latency_us=float(batch.latency[:, j].mean()) / clock,
                qps=min(pipes * clock * 1e6 / occupancy, roof),
            )
            key = (units, pipes, l, bits, c)
            if key not in sizes:
                sizes[key] = design_resources(design_for(graph, board, p, space, clock, util), board.family)
            res = sizes[key]
            p.resources, p.fits = res, res.fits(budget)
            points.append(p)
    accept = accept or (lambda p: p.recall >= recall_goal)
    best = next((p for p in ranked(points, objective) if accept(p)), None)
    if best is None:
        return GraphDseResult(None, None, points)
    design = design_for(graph, board, best, space, clock, util, goal=RecallGoal(space.k, recall_goal))
    design = replace(
        design,
        prediction={
            "recall": round(best.recall, 6),
            "latency_us": round(best.latency_us, 3),
            "qps": round(best.qps, 1),
            "objective": objective,
            "resources": {k: math.ceil(v) for k, v in best.resources.to_dict().items()},
        },
    )
    return GraphDseResult(best, design, points)
