"""The graph-search (Falcon / DST) design description: `design.yaml` of kind "graph".

One `GraphDesign` is everything the graph generators (HLS kernel, Amaranth RTL) need to build a
query processing pipeline (QPP) of docs/graph_architecture.md, and everything the host needs to
run it: the board and clock, the graph in the unified format (kind, size, degree, entry node,
number format, where the image lives), the hardware sizes fixed at build time (BFC units per QPP,
queue capacities, Bloom filter, the maxima of the run-time DST parameters, memory channels) and
the run-time defaults the DSE chose (result queue size l, k, mg, mc). `pipelines` QPPs serve
queries in parallel (across-query mode: one kernel compute unit per QPP); `bfc_units` BFC units
serve one query inside a QPP (intra-query mode). `to_dict` / `from_dict` round-trip exactly and
`from_dict` validates with errors naming the offending key, like `fanns.design.ivfpq.IvfPqDesign`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from fanns.boards import Board
from fanns.checks import NAME
from fanns.choices import GRAPH_KINDS
from fanns.design.base import MAX_UNITS, DesignFile, check_choice, check_int, fail, from_mapping, goal_text, read_goal
from fanns.errors import FannsError
from fanns.index.goals import RecallGoal
from fanns.index.graph import WORD_BYTES, GraphImage
from fanns.numerics import ID_BITS, GraphFormat
from fanns.pe.bloom import Bloom

SCHEMA_VERSION = 1
MODES = ("intra", "across")
RESULT_STATS = ("cycles", "hops", "checks", "visited", "groups")
"""Per-query statistics the QPP writes after its k_max result keys (uint32 each, 32 bytes)."""
STATS_BYTES = 32


def _power_of_two(where: str, value: int) -> None:
    if value & (value - 1):
        fail(where, f"must be a power of two, got {value}", hint="use 1, 2, 4, 8, ...")


MAX_KEY_BITS = 64
"""Widest selection key (distance, id) the systolic queues take (`fanns.pe.systolic_queue`); found by
the design fuzz: a 16-bit graph of d = 12 (68-bit keys) was accepted and crashed code generation."""


@dataclass(frozen=True)
class GraphRef:
    """The graph the accelerator serves; `path` (the saved `GraphImage`) is relative to the design file."""

    kind: str
    n: int
    d: int
    max_degree: int
    entry: int
    vec_bits: int
    signed: bool
    scale: float
    path: str | None = None

    def validate(self) -> None:
        check_choice("graph.kind", self.kind, GRAPH_KINDS)
        check_int("graph.n", self.n, 2)
        check_int("graph.d", self.d, 1)
        check_int("graph.max_degree", self.max_degree, 1)
        check_int("graph.entry", self.entry, 0)
        check_int("graph.vec_bits", self.vec_bits, 2)
        if self.vec_bits > 16:
            fail("graph.vec_bits", f"{self.vec_bits} bits: the graph image stores at most 16-bit elements")
        if self.entry >= self.n:
            fail("graph.entry", f"node {self.entry} is outside the graph of {self.n} nodes")
        if self.n >= (1 << ID_BITS) - 1:
            fail("graph.n", f"{self.n} nodes do not fit {ID_BITS}-bit ids")
        key_bits = self.fmt.dist_bits + ID_BITS
        if key_bits > MAX_KEY_BITS:
            fail(
                "graph.vec_bits",
                f"{self.vec_bits}-bit elements of d={self.d} give {self.fmt.dist_bits}-bit distances: with "
                f"{ID_BITS}-bit ids a selection key of {key_bits} bits, and the queues hold at most {MAX_KEY_BITS}",
                hint="build the graph with fewer vector bits (8 fits every d up to 2^16)",
            )
        if not isinstance(self.signed, bool):
            fail("graph.signed", "must be true or false")
        if not (isinstance(self.scale, (int, float)) and 0 < self.scale < float("inf")):
            fail("graph.scale", f"must be a positive number, got {self.scale!r}")

    @property
    def fmt(self) -> GraphFormat:
        return GraphFormat(d=self.d, scale=float(self.scale), vec_bits=self.vec_bits, signed=self.signed)

    @property
    def elem_bytes(self) -> int:
        return 1 if self.vec_bits <= 8 else 2


@dataclass(frozen=True)
class Queues:
    """Build-time queue capacities: the result queue holds up to `l_max` keys (the run-time l is at
    most that), the candidate queue `cand` keys (at least l_max: then it loses nothing), and at
    most `k_max` results are returned per query."""

    l_max: int
    cand: int
    k_max: int

    def validate(self) -> None:
        check_int("queues.l_max", self.l_max, 2)
        check_int("queues.cand", self.cand, 1)
        check_int("queues.k_max", self.k_max, 1)
        if self.cand < self.l_max:
            fail(
                "queues.cand",
                f"{self.cand} is below l_max={self.l_max}",
                hint="a candidate queue shorter than l may lose candidates",
            )
        if self.k_max > self.l_max:
            fail("queues.k_max", f"{self.k_max} exceeds l_max={self.l_max}")
        if self.l_max > 4096 or self.cand > 4096:
            fail("queues", "queue capacities above 4096 are not supported")


@dataclass(frozen=True)
class BloomSpec:
    """The visited filter of every BFC unit (`fanns.pe.bloom.Bloom`)."""

    h: int
    b: int
    w: int = 64
    seed: int = 0

    def validate(self) -> None:
        for key in ("h", "b", "w", "seed"):
            check_int(f"bloom.{key}", getattr(self, key), 0)
        try:
            self.pe()
        except FannsError as exc:
            fail("bloom", exc.message, exc.hint)

    def pe(self) -> Bloom:
        return Bloom(h=self.h, b=self.b, w=self.w, seed=self.seed)


@dataclass(frozen=True)
class Runtime:
    """Run-time parameters (registers / kernel arguments): the defaults the DSE chose."""

    l: int
    k: int
    mg: int
    mc: int


@dataclass(frozen=True)
class Limits:
    """Largest run-time mg and mc the hardware accepts (its FIFOs are sized for them)."""

    mg_max: int
    mc_max: int

    def validate(self) -> None:
        check_int("limits.mg_max", self.mg_max, 1)
        check_int("limits.mc_max", self.mc_max, 1)
        if self.mg_max > 64 or self.mc_max > 64:
            fail("limits", "mg_max and mc_max are at most 64")


@dataclass(frozen=True)
class GraphMemory:
    """Memory of the graph: the board memory group `kind`, the channels holding the graph image
    (node i in channels[i % len(channels)]), the channel of the host I/O buffers, the data-bus
    width of every port and the read requests each fetch engine keeps in flight."""

    kind: str
    channels: tuple[int, ...]
    io_channel: int
    port_bits: int
    outstanding: int

    def validate(self) -> None:
        if not isinstance(self.kind, str) or not NAME.match(self.kind):
            fail("memory.kind", f"is {self.kind!r}: must name a memory group of the board (e.g. ddr4, hbm)")
        if not self.channels:
            fail("memory.channels", "needs at least one channel")
        for i, c in enumerate(self.channels):
            check_int(f"memory.channels[{i}]", c, 0)
        if len(set(self.channels)) != len(self.channels):
            fail("memory.channels", "a channel is listed twice")
        _power_of_two("memory.channels (count)", len(self.channels))
        check_int("memory.io_channel", self.io_channel, 0)
        check_int("memory.port_bits", self.port_bits, 64)
        if self.port_bits not in (64, 128, 256, 512):
            fail("memory.port_bits", f"{self.port_bits}", hint="use 64, 128, 256 or 512")
        check_int("memory.outstanding", self.outstanding, 1)
        if self.outstanding > 64:
            fail("memory.outstanding", f"{self.outstanding} exceeds 64 requests in flight")


@dataclass(frozen=True)
class GraphDesign(DesignFile):
    """A graph-search accelerator (see the module docstring)."""

    VERSION = SCHEMA_VERSION
    KIND = "graph"
    DESCRIPTION = "a graph design"

    board: str
    clock_mhz: float
    util: float
    graph: GraphRef
    mode: str
    pipelines: int
    bfc_units: int
    queues: Queues
    bloom: BloomSpec
    limits: Limits
    runtime: Runtime
    memory: GraphMemory
    goal: RecallGoal | None = None
    prediction: dict = field(default_factory=dict)
    board_file: dict | None = None

    # -- derived ----------------------------------------------------------------------------------
    @property
    def fmt(self) -> GraphFormat:
        return self.graph.fmt

    @property
    def dist_bits(self) -> int:
        return self.fmt.dist_bits

    @property
    def key_bits(self) -> int:
        """Width of a selection key ``dist << 32 | id``."""
        return self.dist_bits + ID_BITS

    @property
    def channels(self) -> int:
        return len(self.memory.channels)

    @property
    def port_bytes(self) -> int:
        return self.memory.port_bits // 8

    @property
    def adjacency_row_bytes(self) -> int:
        return WORD_BYTES * -(-4 * (1 + self.graph.max_degree) // WORD_BYTES)

    @property
    def vector_row_bytes(self) -> int:
        return WORD_BYTES * -(-self.graph.d * self.graph.elem_bytes // WORD_BYTES)

    @property
    def query_row_bytes(self) -> int:
        """Bytes per query in the host's query buffer: d elements padded to whole 64-byte words."""
        return self.vector_row_bytes

    @property
    def result_row_bytes(self) -> int:
        """Bytes per query in the result buffer: k_max uint64 keys, then the statistics."""
        return WORD_BYTES * -(-(8 * self.queues.k_max + STATS_BYTES) // WORD_BYTES)

    @property
    def lanes(self) -> int:
        """Elements per word of the distance PE: the largest divisor of d that fits one bus beat
        (the rule of `fanns.model.graph.qpp.QppConfig.l2dist`), so a vector of d/lanes words
        takes as many cycles as its beats take to arrive."""
        per_beat = self.port_bytes // self.graph.elem_bytes
        return max(w for w in range(1, min(per_beat, self.graph.d) + 1) if self.graph.d % w == 0)

    # -- validation ----------------------------------------------------------------------------------
    def validate(self) -> None:
        self.check_target()
        self.graph.validate()
        check_choice("mode", self.mode, MODES)
        check_int("pipelines", self.pipelines, 1, MAX_UNITS)
        check_int("bfc_units", self.bfc_units, 1, MAX_UNITS)
        _power_of_two("bfc_units", self.bfc_units)
        if self.mode == "across" and self.bfc_units != 1:
            fail("bfc_units", f"is {self.bfc_units}; an across-query design has one BFC unit per pipeline")
        if self.mode == "intra" and self.pipelines != 1:
            fail("pipelines", f"is {self.pipelines}; an intra-query design has one pipeline")
        self.queues.validate()
        self.bloom.validate()
        self.limits.validate()
        self.memory.validate()
        rt = self.runtime
        for key in ("l", "k", "mg", "mc"):
            check_int(f"runtime.{key}", getattr(rt, key), 1)
        if not 2 <= rt.l <= self.queues.l_max:
            fail("runtime.l", f"{rt.l} is outside 2..l_max={self.queues.l_max}")
        if not rt.k <= min(rt.l, self.queues.k_max):
            fail("runtime.k", f"{rt.k} exceeds l={rt.l} or k_max={self.queues.k_max}")
        if rt.mg > self.limits.mg_max or rt.mc > self.limits.mc_max:
            fail("runtime", f"mg={rt.mg}, mc={rt.mc} exceed the limits ({self.limits.mg_max}, {self.limits.mc_max})")
        self.target_board()  # the board exists and has every channel the design names

    def check_runtime(self, rt: Runtime, what: str) -> Runtime:
        """`rt` if the hardware supports it (l, k within the queues, mg, mc within the limits),
        else a FannsError naming `what` (where the values came from) and the ranges."""
        q, lim = self.queues, self.limits
        if not (
            2 <= rt.l <= q.l_max
            and 1 <= rt.k <= min(rt.l, q.k_max)
            and 1 <= rt.mg <= lim.mg_max
            and 1 <= rt.mc <= lim.mc_max
        ):
            raise FannsError(
                f"{what} {rt.l},{rt.k},{rt.mg},{rt.mc} is outside what the hardware supports",
                hint=f"l in 2..{q.l_max}, k in 1..min(l, {q.k_max}), mg in 1..{lim.mg_max}, mc in 1..{lim.mc_max}",
            )
        return rt

    def check_board(self, board: Board) -> None:
        counts = {m.kind: m.count for m in board.memory}
        mem = self.memory
        if mem.kind not in counts:
            fail("memory.kind", f"{mem.kind!r} is not a memory of board {board.name}", hint=", ".join(counts))
        for c in (*mem.channels, mem.io_channel):
            if c >= counts[mem.kind]:
                fail("memory.channels", f"channel {c} of {counts[mem.kind]} {mem.kind} channels of board {board.name}")

    # -- (de)serialisation --------------------------------------------------------------------------
    KEYS = (
        "version",
        "kind",
        "board",
        "board_file",
        "clock_mhz",
        "util",
        "goal",
        "graph",
        "mode",
        "pipelines",
        "bfc_units",
        "queues",
        "bloom",
        "limits",
        "runtime",
        "memory",
        "prediction",
    )

    def to_dict(self) -> dict:
        mem = dataclasses.asdict(self.memory)
        mem["channels"] = list(self.memory.channels)
        return {
            "version": SCHEMA_VERSION,
            "kind": "graph",
            "board": self.board,
            "clock_mhz": self.clock_mhz,
            "util": self.util,
            "goal": goal_text(self.goal),
            "graph": dataclasses.asdict(self.graph),
            "mode": self.mode,
            "pipelines": self.pipelines,
            "bfc_units": self.bfc_units,
            "queues": dataclasses.asdict(self.queues),
            "bloom": dataclasses.asdict(self.bloom),
            "limits": dataclasses.asdict(self.limits),
            "runtime": dataclasses.asdict(self.runtime),
            "memory": mem,
            "prediction": self.prediction,
            **({} if self.board_file is None else {"board_file": self.board_file}),
        }

    @classmethod
    def from_dict(cls, data: Any) -> GraphDesign:
        cls.check_document(data)
        mem = from_mapping(GraphMemory, "memory", data["memory"])
        if not isinstance(mem.channels, (list, tuple)):
            fail("memory.channels", "must be a list of channel numbers")
        design = cls(
            board=data["board"],
            clock_mhz=data["clock_mhz"],
            util=data["util"],
            graph=from_mapping(GraphRef, "graph", data["graph"], optional=("path",)),
            mode=data["mode"],
            pipelines=data["pipelines"],
            bfc_units=data["bfc_units"],
            queues=from_mapping(Queues, "queues", data["queues"]),
            bloom=from_mapping(BloomSpec, "bloom", data["bloom"], optional=("w", "seed")),
            limits=from_mapping(Limits, "limits", data["limits"]),
            runtime=from_mapping(Runtime, "runtime", data["runtime"]),
            memory=dataclasses.replace(mem, channels=tuple(mem.channels)),
            goal=read_goal(data.get("goal")),
            prediction=data.get("prediction") or {},
            board_file=data.get("board_file"),
        )
        design.validate()
        return design


def graph_ref(graph: GraphImage, path: str | None = None) -> GraphRef:
    """The design's reference to `graph` (its shape and number format), stored at `path`."""
    fmt = graph.fmt
    return GraphRef(
        kind=graph.kind,
        n=graph.n,
        d=fmt.d,
        max_degree=graph.max_degree,
        entry=graph.entry,
        vec_bits=fmt.vec_bits,
        signed=fmt.signed,
        scale=float(fmt.scale),
        path=path,
    )
