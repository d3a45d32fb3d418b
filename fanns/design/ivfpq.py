"""The IVF-PQ design description (`design.yaml`): what the DSE chose and the generators build.

One `IvfPqDesign` is everything a code generator needs to build the accelerator of
`docs/ivfpq_architecture.md`: the board and clock, the index (factory string and where the
trained index lives, relative to the design file), nprobe and K, the fixed-point format, one
configuration per stage (the same objects the performance/resource model evaluates, so the
model and the generators cannot disagree), the memory channel assignment, the SLR of every PE
group, and the model's prediction for reference. `to_dict` / `from_dict` round-trip exactly and
`from_dict` validates (unknown or missing keys, wrong types, inconsistent stages) with errors
that name the offending key.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from fanns.boards import Board
from fanns.checks import check_name, check_number, check_text
from fanns.design.base import (
    MAX_UNITS,
    DesignFile,
    check_choice,
    check_int,
    entry,
    fail,
    from_mapping,
    goal_text,
    read_goal,
)
from fanns.design.ivfpq_selectors import SELECTORS
from fanns.design.ivfpq_tiers import PqHostTier, PqTiers
from fanns.errors import FannsError
from fanns.index.goals import RecallGoal
from fanns.numerics import IvfPqFormat
from fanns.pe.pq_decode import LUT_WORDS

SCHEMA_VERSION = 1
IVF_STORAGES = ("bram", "uram", "stream")
"""IVF centroids: on chip in block RAM / UltraRAM, or streamed from a memory channel per query."""
LUT_CENTROID_STORES = ("bram", "uram", "memory")
"""BuildLUT's copy of the probed cells' centroids: on chip, or fetched per probe from memory."""
LUT_CODEBOOK_STORES = ("bram", "uram")
"""Every BuildLUT PE's copy of the PQ codebook (256 x d elements): in block RAM or UltraRAM."""
OPQ_MATRIX_STORES = ("bram", "uram", "stream")
"""The OPQ matrix: in block RAM, in UltraRAM (a large d: 4.7 MB at d = 1536), or streamed from a
memory channel per query (where the board's on-chip memory cannot hold it)."""
CHANNEL_USES = ("io", "pq_codes", "pq_hot", "ivf_centroids", "lut_centroids", "opq_matrix")


# -- stages ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OpqStage:
    """Stage OPQ: one `opq` PE with `lanes` multipliers; its matrix in `storage`."""

    lanes: int
    storage: str = "bram"

    @property
    def channels(self) -> int:
        """Memory channels the stage reads: one for a streamed matrix."""
        return 1 if self.storage == "stream" else 0

    def validate(self, where: str = "stages.opq") -> None:
        check_int(f"{where}.lanes", self.lanes, 1, MAX_UNITS)
        check_choice(f"{where}.storage", self.storage, OPQ_MATRIX_STORES)


@dataclass(frozen=True)
class IvfDistStage:
    """Stage IVFDist: `pes` `ivf_dist` PEs of `lanes` lanes; centroid storage; streaming channels."""

    pes: int
    lanes: int
    storage: str
    channels: int = 0

    def validate(self, where: str = "stages.ivf_dist") -> None:
        check_int(f"{where}.pes", self.pes, 1, MAX_UNITS)
        check_int(f"{where}.lanes", self.lanes, 1, MAX_UNITS)
        check_choice(f"{where}.storage", self.storage, IVF_STORAGES)
        check_int(f"{where}.channels", self.channels, 1 if self.storage == "stream" else 0, MAX_UNITS)
        if self.storage != "stream" and self.channels:
            fail(f"{where}.channels", f"is {self.channels} but on-chip centroids use no memory channel")


@dataclass(frozen=True)
class SelectStage:
    """A selection stage (SelCells: s = nprobe; SelK: s = K) over `streams` input streams.

    `arch` names the micro-architecture in `fanns.design.ivfpq_selectors.SELECTORS`; `s1` is its level-1
    queue length (s for the exact HPQ); `params` holds architecture-specific settings (e.g. the
    AHPQ exactness target).
    """

    arch: str
    streams: int
    s: int
    s1: int
    key_bits: int
    params: dict = field(default_factory=dict)

    def validate(self, where: str) -> None:

        stage = where.rsplit(".", 1)[-1]
        check_choice(f"{where}.arch", self.arch, tuple(n for n, sel in SELECTORS.items() if stage in sel.stages))
        check_int(f"{where}.streams", self.streams, 1, MAX_UNITS)
        check_int(f"{where}.s", self.s, 1)
        check_int(f"{where}.s1", self.s1, 1)
        check_int(f"{where}.key_bits", self.key_bits, 1)
        if self.s1 > self.s:
            fail(f"{where}.s1", f"level-1 length {self.s1} exceeds the queue length s={self.s}")
        if not isinstance(self.params, dict):
            fail(f"{where}.params", "must be a mapping")

    def check_pe(self, where: str) -> None:
        """The stage's PE (`SELECTORS`) must accept `params`, and `s1` must be its level-1 length:
        the model, the RTL and the HLS kernel all build that PE, so a different `s1` would be
        ignored by the hardware while the reference model believed it."""
        sel = SELECTORS[self.arch]
        known = tuple(f.name for f in dataclasses.fields(sel.pe) if f.name not in ("z", "s", "key_bits"))
        unknown = sorted(set(self.params) - set(known))
        if unknown:
            names = ", ".join(map(repr, unknown))
            fail(
                f"{where}.params",
                f"{self.arch} has no parameter {names}",
                hint=f"its parameters: {', '.join(known) or 'none'}",
            )
        try:
            pe = sel.make(self.streams, self.s, self.key_bits, **self.params)
        except (TypeError, ValueError) as e:
            fail(f"{where}.params", f"{self.params!r} are not valid for {self.arch} ({e})")
        except FannsError as e:
            fail(where, e.message, hint=e.hint)
        s1 = int(getattr(pe, "s1", self.s))
        if self.s1 != s1:
            fail(
                f"{where}.s1", f"is {self.s1}, but this {self.arch} keeps {s1} keys per level-1 queue", hint=f"s1: {s1}"
            )


@dataclass(frozen=True)
class BuildLutStage:
    """Stage BuildLUT: `pes` `build_lut` PEs; where the probed cells' centroids come from and
    where each PE keeps its codebook."""

    pes: int
    lanes: int
    centroids: str
    channels: int = 0
    codebook: str = "bram"

    def validate(self, where: str = "stages.build_lut") -> None:
        check_int(f"{where}.pes", self.pes, 1, MAX_UNITS)
        check_int(f"{where}.lanes", self.lanes, 1, MAX_UNITS)
        check_choice(f"{where}.centroids", self.centroids, LUT_CENTROID_STORES)
        check_choice(f"{where}.codebook", self.codebook, LUT_CODEBOOK_STORES)
        want = 1 if self.centroids == "memory" else 0
        if self.channels != want:
            fail(f"{where}.channels", f"is {self.channels!r}; centroids {self.centroids!r} use {want} channel(s)")


@dataclass(frozen=True)
class PqDistStage:
    """Stage PQDist: `pes` `pq_decode` PEs fed by `channels` channels of the board memory `memory`;
    with `tiers`, the hot lists come from a second, paired set of channels (`PqTiers`). The PEs
    load `lut_words` LUT words a cycle (`fanns.pe.pq_decode.PqDecode.lut_words`), built by groups
    of that many BuildLUT PEs. With `host_tier` (exclusive with `tiers`) the lists live in host
    memory and the channels hold a prefetched cache (`PqHostTier`)."""

    pes: int
    double_buffer: bool
    memory: str
    channels: int
    port_bits: int
    tiers: PqTiers | None = None
    lut_words: int = 1
    host_tier: PqHostTier | None = None

    def validate(self, where: str = "stages.pq_dist", nlist: int | None = None) -> None:
        if self.tiers is not None:
            if not isinstance(self.tiers, PqTiers):
                fail(f"{where}.tiers", "must be a mapping {memory, channels, hot}")
            self.tiers.validate(f"{where}.tiers", self.channels, nlist)
        if self.host_tier is not None:
            if not isinstance(self.host_tier, PqHostTier):
                fail(f"{where}.host_tier", "must be a mapping {cache_bytes}")
            if self.tiers is not None:
                fail(
                    f"{where}.host_tier",
                    "a design has either a fast tier of hot lists (tiers) or the lists in host memory (host_tier)",
                    hint="remove one of them",
                )
            self.host_tier.validate(f"{where}.host_tier", nlist)
        check_int(f"{where}.pes", self.pes, 1, MAX_UNITS)
        if not isinstance(self.double_buffer, bool):
            fail(f"{where}.double_buffer", "must be true or false")
        if not isinstance(self.memory, str) or not self.memory:
            fail(f"{where}.memory", "must name a memory group of the board (e.g. hbm)")
        check_int(f"{where}.channels", self.channels, 1, MAX_UNITS)
        check_int(f"{where}.port_bits", self.port_bits, 8)
        check_int(f"{where}.lut_words", self.lut_words, 1)
        if self.lut_words not in LUT_WORDS:
            fail(f"{where}.lut_words", f"is {self.lut_words}", hint=f"one of {', '.join(map(str, LUT_WORDS))}")
        if self.channels > self.pes:
            fail(f"{where}.channels", f"{self.channels} channels for {self.pes} PEs", hint="at most one channel per PE")
        if self.host_tier is not None and self.host_tier.cache_beats(self.channels, self.port_bits) < 1:
            fail(
                f"{where}.host_tier.cache_bytes",
                f"{self.host_tier.cache_bytes} bytes leave no whole beat of {self.port_bits} bits on each of "
                f"{self.channels} channels",
                hint=f"at least {self.channels * self.port_bits // 8} bytes",
            )

    def channel_of(self, pe: int) -> int:
        """The channel (0 .. channels-1 within this stage) that feeds PE `pe`: contiguous blocks."""
        return pe * self.channels // self.pes

    def pes_per_channel(self) -> list[int]:
        """PEs per channel (`pes_per_channel`)."""
        return pes_per_channel(self.pes, self.channels)


def pes_per_channel(pes: int, channels: int) -> list[int]:
    """PEs on each of `channels` PQ channels feeding `pes` PEs in contiguous blocks: channel c feeds
    the PEs p with c <= p * channels / pes < c + 1 (`PqDistStage.channel_of`), i.e. p from
    ceil(c * pes / channels) up to ceil((c + 1) * pes / channels). One formula for the design and
    for the models that split PEs before a design exists (`fanns.model.ivfpq.skew.host_tier`)."""
    first = [-(-c * pes // channels) for c in range(channels + 1)]
    return [b - a for a, b in zip(first, first[1:])]


@dataclass(frozen=True)
class Stages:
    opq: OpqStage | None
    ivf_dist: IvfDistStage
    sel_cells: SelectStage
    build_lut: BuildLutStage
    pq_dist: PqDistStage
    sel_k: SelectStage

    NAMES = ("opq", "ivf_dist", "sel_cells", "build_lut", "pq_dist", "sel_k")

    def to_dict(self) -> dict:
        out = {n: (None if getattr(self, n) is None else dataclasses.asdict(getattr(self, n))) for n in self.NAMES}
        pq = out["pq_dist"]
        if self.pq_dist.lut_words == 1:
            pq.pop("lut_words")  # designs of one LUT word a cycle keep the schema they always had
        if self.pq_dist.tiers is None:
            pq.pop("tiers")  # untiered designs keep the schema they always had
        else:
            pq["tiers"] = self.pq_dist.tiers.to_dict()
        if self.pq_dist.host_tier is None:
            pq.pop("host_tier")  # designs with the lists on the card keep the schema they always had
        else:
            pq["host_tier"] = self.pq_dist.host_tier.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Stages:
        if not isinstance(data, dict):
            fail("stages", "must be a mapping")
        unknown = sorted(set(data) - set(cls.NAMES))
        if unknown:
            fail(f"stages.{unknown[0]}", "unknown stage", hint=f"stages: {', '.join(cls.NAMES)}")
        missing = [n for n in cls.NAMES if n not in data]
        if missing:
            fail(f"stages.{missing[0]}", "missing stage (write `opq: null` for no OPQ)")
        return cls(
            opq=None
            if data["opq"] is None
            else from_mapping(OpqStage, "stages.opq", data["opq"], optional=("storage",)),
            ivf_dist=from_mapping(IvfDistStage, "stages.ivf_dist", data["ivf_dist"], optional=("channels",)),
            sel_cells=from_mapping(SelectStage, "stages.sel_cells", data["sel_cells"], optional=("params",)),
            build_lut=from_mapping(
                BuildLutStage, "stages.build_lut", data["build_lut"], optional=("channels", "codebook")
            ),
            pq_dist=_pq_dist(data["pq_dist"]),
            sel_k=from_mapping(SelectStage, "stages.sel_k", data["sel_k"], optional=("params",)),
        )


def _pq_dist(data: Any) -> PqDistStage:
    st = from_mapping(PqDistStage, "stages.pq_dist", data, optional=("tiers", "lut_words", "host_tier"))
    if st.tiers is not None:
        st = dataclasses.replace(st, tiers=PqTiers.from_dict("stages.pq_dist.tiers", st.tiers))
    if st.host_tier is not None:
        st = dataclasses.replace(st, host_tier=PqHostTier.from_dict("stages.pq_dist.host_tier", st.host_tier))
    return st


# -- the index, memory and the whole design --------------------------------------------------------
@dataclass(frozen=True)
class IndexRef:
    """The index the accelerator serves; `path` is relative to the design file (None: synthetic)."""

    factory: str
    n: int
    d: int
    nlist: int
    m: int
    opq: bool
    path: str | None = None


@dataclass(frozen=True)
class ChannelUse:
    """Memory channel `channel` of board memory group `memory` serves `use` (PE indices if any)."""

    memory: str
    channel: int
    use: str
    pes: tuple[int, ...] = ()

    def to_dict(self) -> dict:
        return {"memory": self.memory, "channel": self.channel, "use": self.use, "pes": list(self.pes)}


@dataclass(frozen=True)
class IvfPqDesign(DesignFile):
    """A whole IVF-PQ accelerator (see the module docstring)."""

    VERSION = SCHEMA_VERSION
    KIND = "ivfpq"
    DESCRIPTION = "an ivfpq design"
    KEYS = (
        "board",
        "board_file",
        "clock_mhz",
        "fifo_depth",
        "format",
        "goal",
        "index",
        "k",
        "kind",
        "memory",
        "nprobe",
        "prediction",
        "slr",
        "stages",
        "util",
        "version",
    )

    board: str
    clock_mhz: float
    util: float
    index: IndexRef
    nprobe: int
    k: int
    format: IvfPqFormat
    stages: Stages
    memory: tuple[ChannelUse, ...]
    fifo_depth: int
    slr: dict[str, list[str]]
    goal: RecallGoal | None = None
    prediction: dict = field(default_factory=dict)
    board_file: dict | None = None

    def validate(self) -> None:
        self.check_target()
        idx = self.index
        entry("index.factory", check_name, idx.factory, "the value")
        if idx.path is not None:
            entry("index.path", check_text, idx.path, "the value")
        if not isinstance(idx.opq, bool):
            fail("index.opq", "must be true or false")
        self._validate_format()
        for i, ch in enumerate(self.memory):
            entry(f"memory[{i}].memory", check_name, ch.memory, "the value")
        entry("stages.pq_dist.memory", check_name, self.stages.pq_dist.memory, "the value")
        for name, groups in self.slr.items():
            entry("slr", check_name, name, "the value")
            for g in groups:
                entry(f"slr.{name}", check_text, g, "the value")
        for key in ("n", "d", "nlist", "m"):
            check_int(f"index.{key}", getattr(idx, key), 1)
        if idx.d != self.format.d or idx.m != self.format.m:
            fail("format", f"d={self.format.d}, m={self.format.m} disagree with the index (d={idx.d}, m={idx.m})")
        check_int("nprobe", self.nprobe, 1)
        check_int("k", self.k, 1)
        check_int("fifo_depth", self.fifo_depth, 2, MAX_UNITS * 16)
        if self.nprobe > idx.nlist:
            fail("nprobe", f"{self.nprobe} exceeds nlist={idx.nlist}")
        st = self.stages
        if (st.opq is None) == idx.opq:
            fail("stages.opq", "must be present exactly when the index has an OPQ rotation (index.opq)")
        if st.opq is not None:
            st.opq.validate()
        st.ivf_dist.validate()
        st.build_lut.validate()
        st.pq_dist.validate(nlist=idx.nlist)
        st.sel_cells.validate("stages.sel_cells")
        st.sel_k.validate("stages.sel_k")
        if st.build_lut.pes % st.pq_dist.lut_words:
            fail(
                "stages.build_lut.pes",
                f"{st.build_lut.pes} PEs do not build LUTs in groups of pq_dist.lut_words={st.pq_dist.lut_words}",
                hint=f"use a multiple of {st.pq_dist.lut_words}",
            )
        if st.ivf_dist.pes > idx.nlist:
            fail("stages.ivf_dist.pes", f"{st.ivf_dist.pes} PEs for {idx.nlist} centroids")
        if st.sel_cells.streams != st.ivf_dist.pes or st.sel_cells.s != self.nprobe:
            fail("stages.sel_cells", "needs streams = ivf_dist.pes and s = nprobe")
        if st.sel_k.streams != st.pq_dist.pes or st.sel_k.s != self.k:
            fail("stages.sel_k", "needs streams = pq_dist.pes and s = k")
        if st.sel_cells.key_bits != self.format.ivf_key_bits or st.sel_k.key_bits != self.format.pq_key_bits:
            fail("stages", "selection key widths disagree with the format (ivf_key_bits, pq_key_bits)")
        st.sel_cells.check_pe("stages.sel_cells")
        st.sel_k.check_pe("stages.sel_k")
        self._validate_memory()
        self.target_board()  # the board exists and has every channel the design names

    def _validate_format(self) -> None:
        f = self.format
        entry("format.scale", check_number, f.scale, "the value", lo=0, lo_open=True)
        for key in ("ivf_shift", "lut_shift", "opq_frac_bits"):
            check_int(f"format.{key}", getattr(f, key), 0, 62)
        for key in ("ivf_dist_bits", "lut_bits"):
            check_int(f"format.{key}", getattr(f, key), 1, 62)
        check_int("format.dsub_hw", f.dsub_hw, 0, 4096)

    def check_board(self, board: Board) -> None:
        """The memory groups and channel numbers of the design exist on `board`."""
        counts = {m.kind: m.count for m in board.memory}
        for i, ch in enumerate(self.memory):
            if ch.memory not in counts:
                fail(
                    f"memory[{i}].memory",
                    f"{ch.memory!r} is not a memory of board {board.name}",
                    hint=f"memories: {', '.join(counts)}",
                )
            if ch.channel >= counts[ch.memory]:
                fail(
                    f"memory[{i}].channel",
                    f"channel {ch.channel} of {counts[ch.memory]} {ch.memory} channels of board {board.name}",
                    hint=f"use 0..{counts[ch.memory] - 1}",
                )

    def _validate_memory(self) -> None:
        seen = set()
        uses: dict[str, int] = {}
        for i, ch in enumerate(self.memory):
            check_choice(f"memory[{i}].use", ch.use, CHANNEL_USES)
            check_int(f"memory[{i}].channel", ch.channel, 0)
            if (ch.memory, ch.channel) in seen:
                fail(f"memory[{i}]", f"channel {ch.memory}[{ch.channel}] is assigned twice")
            seen.add((ch.memory, ch.channel))
            uses[ch.use] = uses.get(ch.use, 0) + 1
        st = self.stages
        want = {
            "io": 1,
            "pq_codes": st.pq_dist.channels,
            "pq_hot": 0 if st.pq_dist.tiers is None else st.pq_dist.tiers.channels,
            "ivf_centroids": st.ivf_dist.channels,
            "lut_centroids": st.build_lut.channels,
            "opq_matrix": 0 if st.opq is None else st.opq.channels,
        }
        for use, n in want.items():
            if uses.get(use, 0) != n:
                fail("memory", f"{uses.get(use, 0)} channel(s) for {use}, the stages need {n}")
        for use in ("pq_codes", "pq_hot") if st.pq_dist.tiers is not None else ("pq_codes",):
            chans = [ch for ch in self.memory if ch.use == use]
            covered = sorted(p for ch in chans for p in ch.pes)
            if covered != list(range(st.pq_dist.pes)):
                fail("memory", f"the {use} channels must feed every PQDist PE exactly once")
        if st.pq_dist.tiers is not None:
            cold = [ch.pes for ch in self.memory if ch.use == "pq_codes"]
            hot = [ch.pes for ch in self.memory if ch.use == "pq_hot"]
            if cold != hot:
                fail("memory", "pq_hot channel c must feed the same PQDist PEs as pq_codes channel c")
            if any(ch.memory != st.pq_dist.tiers.memory for ch in self.memory if ch.use == "pq_hot"):
                fail(
                    "memory", f"the pq_hot channels must be in the fast tier's memory group {st.pq_dist.tiers.memory!r}"
                )

    # -- (de)serialisation ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "version": SCHEMA_VERSION,
            "kind": "ivfpq",
            "board": self.board,
            "clock_mhz": self.clock_mhz,
            "util": self.util,
            "goal": goal_text(self.goal),
            "index": dataclasses.asdict(self.index),
            "nprobe": self.nprobe,
            "k": self.k,
            "format": {k: v for k, v in self.format.to_dict().items() if k != "source"},
            "stages": self.stages.to_dict(),
            "memory": [c.to_dict() for c in self.memory],
            "fifo_depth": self.fifo_depth,
            "slr": {k: list(v) for k, v in self.slr.items()},
            "prediction": self.prediction,
            **({} if self.board_file is None else {"board_file": self.board_file}),
        }

    @classmethod
    def from_dict(cls, data: Any) -> IvfPqDesign:
        cls.check_document(data)
        try:
            fmt = IvfPqFormat.from_dict(dict(data["format"]))
        except (TypeError, ValueError) as exc:
            raise FannsError(f"design: format: {exc}") from None
        if not isinstance(data["memory"], list):
            fail("memory", "must be a list of channel assignments")
        memory = []
        for i, ch in enumerate(data["memory"]):
            c = from_mapping(ChannelUse, f"memory[{i}]", ch, optional=("pes",))
            memory.append(dataclasses.replace(c, pes=tuple(c.pes)))
        slr = data["slr"]
        if not isinstance(slr, dict) or not all(isinstance(v, list) for v in slr.values()):
            fail("slr", "must map SLR names to lists of PE groups")
        design = cls(
            board=data["board"],
            clock_mhz=data["clock_mhz"],
            util=data["util"],
            index=from_mapping(IndexRef, "index", data["index"], optional=("path",)),
            nprobe=data["nprobe"],
            k=data["k"],
            format=fmt,
            stages=Stages.from_dict(data["stages"]),
            memory=tuple(memory),
            fifo_depth=data["fifo_depth"],
            slr={str(k): list(v) for k, v in slr.items()},
            goal=read_goal(data.get("goal")),
            prediction=data.get("prediction") or {},
            board_file=data.get("board_file"),
        )
        design.validate()
        return design
