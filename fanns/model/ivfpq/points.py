"""The DSE's results: a complete design with its predicted performance and cost (`DesignPoint`),
a tail-latency objective (`Slo`), and what the DSE found for one goal on one board (`Outcome`).

Why apart from `fanns.model.ivfpq.dse`: the report, the flows and the fuzz read these results
without running a DSE; the search that makes them is `dse.run`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fanns.boards import Board, Clock
from fanns.design.ivfpq import Stages
from fanns.errors import FannsError
from fanns.model.ivfpq import latency as latency_model
from fanns.model.ivfpq import sequence as sequence_model
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.budget import Budget
from fanns.model.ivfpq.search import Result
from fanns.model.ivfpq.workload import Workload
from fanns.model.timing import DesignTiming
from fanns.resources import Resources


@dataclass
class DesignPoint:
    """One complete design with its predicted performance and cost."""

    workload: Workload
    ctx: stage_model.Context
    stages: Stages
    timings: dict[str, stage_model.StageTiming]
    units: list[stage_model.Unit]
    resources: Resources
    channels: dict[str, int]
    slr: dict[str, list[list]]
    clock_mhz: float
    latency: dict[str, latency_model.LatencyProfile] = field(
        default_factory=dict
    )  # "alone", and "load" at the SLO's rate
    steady: float | None = None  # `settle`: cycles per query with the finite buffers
    host_tier: dict | None = None
    """A host-memory candidate (its index does not fit the board's memory): its lists in host memory
    and its HBM cache (`fanns.model.ivfpq.host_cache.choice`); None: the lists on the card."""

    @property
    def stage_cycles(self) -> float:
        """The stage model's cycles per query: the slowest stage's mean interval, what the
        vectorised search ranks by; a lower bound of `cycles`."""
        return max(t.interval for t in self.timings.values())

    @property
    def cycles(self) -> float:
        """Cycles per query: the steady state with the finite buffers between the stages once
        `settle` has run (every design the DSE ranks at the top), else the stage model's."""
        return self.stage_cycles if self.steady is None else self.steady

    def settle(self, sequences: dict | None = None) -> DesignPoint:
        """Evaluate the steady state with the finite buffers (`fanns.model.ivfpq.sequence`);
        `sequences` caches the sequence model per (workload, BuildLUT, PQDist, SelK): designs
        that differ only in front of BuildLUT share it (and the workload's probes)."""
        if self.steady is None:
            cache = {} if sequences is None else sequences
            probes_key = (id(self.workload), "probes")
            if probes_key not in cache:
                cache[probes_key] = stage_model.Probes.of(self.workload.probed)
            probes = cache[probes_key]
            key = (id(self.workload), repr((self.stages.build_lut, self.stages.pq_dist, self.stages.sel_k)))
            if key not in cache:
                cache[key] = sequence_model.steady_sequence(self.ctx, self.stages, probes)
            self.steady = sequence_model.steady_interval(
                self.ctx, self.stages, probes, self.timings, sequence=cache[key]
            )
        return self

    @property
    def qps(self) -> float:
        return self.clock_mhz * 1e6 / self.cycles

    @property
    def bottleneck(self) -> str:
        return max(self.timings, key=lambda s: (self.timings[s].interval, -stage_model.STAGES.index(s)))

    @property
    def latency_cycles(self) -> float:
        return sum(t.latency for t in self.timings.values())

    @property
    def latency_us(self) -> float:
        """The one-query latency the records and tables report: the sum of the stages' latencies
        (`latency_cycles`); for a host-memory candidate (`host_tier`) plus what its lists' place
        adds to a query alone once the LLM ends: the prefetch model's mean latency with prefetch less
        its mean with every list in HBM (the prefetch's wait and the misses' reads over the link).
        Never the in-HBM figure alone, which such a design cannot reach."""
        base = self.latency_cycles / self.clock_mhz
        if not self.host_tier:
            return base
        c = self.host_tier
        return base + c["with_prefetch"]["latency_mean_us"] - c["all_in_memory"]["latency_mean_us"]

    def stage_resources(self, stage: str) -> Resources:
        return Resources.total([u.total for u in self.units if u.stage == stage])

    def sort_key(self) -> tuple:
        return (self.cycles, self.resources.lut, sum(self.channels.values()))

    @property
    def rank_qps(self) -> float:
        """The QPS the DSE ranks candidates of either kind by: a host-memory candidate's with
        prefetch for the LLM time its cache was sized for (`host_tier`), never its in-HBM `qps`
        (a figure it cannot reach: its lists cross the host link); a candidate with its lists on
        the card, `qps`."""
        return float(self.host_tier["with_prefetch"]["qps"]) if self.host_tier else self.qps

    def rank_key(self) -> tuple:
        """`sort_key` by `rank_qps`: how candidates of both kinds are ranked against each other."""
        return (-self.rank_qps, self.resources.lut, sum(self.channels.values()))

    def bound_key(self) -> tuple:
        """`sort_key` with the stage model's bound for the cycles (cheap; never above it)."""
        return (self.stage_cycles, self.resources.lut, sum(self.channels.values()))


@dataclass(frozen=True)
class Slo:
    """A tail-latency objective: the `percentile` (95 or 99) of per-query latency at most
    `limit_us`, with queries alone (`load_qps` None) or under Poisson arrivals at `load_qps`."""

    percentile: int
    limit_us: float
    load_qps: float | None = None

    def __post_init__(self) -> None:
        if self.percentile not in latency_model.PERCENTILES:
            raise FannsError(
                f"SLO percentile P{self.percentile} is not modelled",
                hint=f"one of {', '.join(f'P{p}' for p in latency_model.PERCENTILES)}",
            )
        if not self.limit_us > 0:
            raise FannsError(f"SLO limit {self.limit_us} us must be positive")
        if self.load_qps is not None and not self.load_qps > 0:
            raise FannsError(f"load {self.load_qps} QPS must be positive")

    def text(self) -> str:
        at = f"at {self.load_qps:,.0f} QPS (Poisson)" if self.load_qps else "with queries alone (batch 1)"
        return f"P{self.percentile} <= {self.limit_us:,.1f} us {at}"

    def observed(self, p: DesignPoint) -> float:
        return p.latency["load" if self.load_qps else "alone"].get(self.percentile)

    def met(self, p: DesignPoint) -> bool:
        return self.observed(p) <= self.limit_us


def annotate_latency(p: DesignPoint, load_qps: float | None, seed: int = 0) -> DesignPoint:
    """Attach the per-query latency percentiles (`fanns.model.ivfpq.latency`) alone and at `load_qps`."""
    times = latency_model.query_times(p.ctx, p.stages, stage_model.Probes.of(p.workload.probed), timings=p.timings)
    p.latency = {"alone": latency_model.alone(times)}
    if load_qps:
        p.latency["load"] = latency_model.poisson(times, load_qps, seed=seed)
    return p


@dataclass
class Outcome:
    """What the DSE found for one goal on one board."""

    goal: str
    board: Board
    budget: Budget
    clock_mhz: float
    workloads: list[Workload]
    unreachable: list[dict]
    top: list[DesignPoint]
    pareto: list[DesignPoint]
    result: Result | None
    explain: list[str] = field(default_factory=list)
    option_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0
    slo: Slo | None = None
    load_qps: float | None = None
    slo_rejected: int = 0  # designs of the searched pool that fit but miss the SLO
    tiers: dict[int, dict] = field(default_factory=dict)  # top design rank -> `fanns.model.ivfpq.skew.tier_choices`
    clock: Clock | None = None
    """The clock `clock_mhz` is, with where it came from (`fanns.model.ivfpq.timing.run`; None: given bare)."""
    timing: DesignTiming | None = None
    """The best design's RTL timing estimate (`fanns.model.ivfpq.timing`), when computed."""
    kind_best: dict[str, DesignPoint] = field(default_factory=dict)
    """The best candidate of each kind that has one: "card" (lists in the board's memory) and "host"
    (an index larger than the board's memory, lists in host memory; `fanns.model.ivfpq.host_mix`)."""
    refused: list[str] = field(default_factory=list)
    """Why indexes larger than the board's memory got no design when the board file has no `host` link
    (`fanns.model.ivfpq.host_mix.refusals`; the stage options refuse them)."""

    @property
    def best(self) -> DesignPoint | None:
        return self.top[0] if self.top else None

    @property
    def host_tier(self) -> dict | None:
        """The best design's host-memory tier when it keeps its lists in host memory (`DesignPoint.host_tier`)."""
        return self.best.host_tier if self.best is not None else None
