"""Design-space fuzz of the graph (Falcon / DST) accelerators: random graph designs through the
whole graph flow, the graph half of `fanns.flow.design_fuzz`.

Each draw builds a small synthetic dataset of the drawn dimension (`fanns.datasets.synthetic.clustered`,
d log-uniform, not only powers of two), an HNSW or NSG graph of the drawn degree and vector width
(`fanns.explore.graph.load_or_build`), and then either pins one design of the graph design space
(board, intra-query BFC units or across-query pipelines, channels, queue l, K, (mg, mc), Bloom
filter of h banks) or runs the graph DSE as `fanns generate --graph` does
(`fanns.explore.graph_choice.choose_graph_design`) on a random sub-space of `GraphSpace` and a drawn
recall goal. Both faces are generated as `fanns generate --graph` writes them
(`fanns.flow.graph_project.project_files`) and a few test queries are simulated on each against
the DST reference (`simulate_graph_csim`, `simulate_graph_rtl`). A draw passes when both faces are
bit-exact and the RTL's cycles per query lie within `CYCLE_TOLERANCE` of the cycle model, or when
the DSE finds no design and says why (`fanns.explore.graph_promise`: its selection bound
is asked for, the held-out check is not — the draws check hardware, not recall); a crash fails.

The graph draws are their own sequence (`draw_graph_case(seed)`), so adding them leaves the
IVF-PQ draws of every seed, and a recorded run's `--resume`, unchanged.
"""

from __future__ import annotations

import io
import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console

from fanns.boards import load_board
from fanns.datasets.dataset import Dataset
from fanns.datasets.synthetic import clustered
from fanns.design.graph import GraphDesign
from fanns.explore.graph import load_or_build, prepare_vectors
from fanns.explore.graph_choice import choose_graph_design
from fanns.flow.design_fuzz import SIM_QUERIES as IVF_QUERIES
from fanns.flow.design_fuzz import (
    WORKER_BUILDS,
    FuzzCase,
    FuzzJob,
    FuzzOutcome,
    face_result,
    outcome_from_record,
    run_guarded,
    run_job,
)
from fanns.flow.graph_hls_sim import simulate_graph_csim
from fanns.flow.graph_project import LATENCY, project_files
from fanns.flow.graph_sim import simulate_graph_rtl
from fanns.index.goals import parse_goal
from fanns.model.graph.dse import GraphPoint, GraphSpace, design_for
from fanns.resources import Resources
from fanns.tools.parallel import map_jobs

GRAPH_BOARDS = ("u55c", "u250", "zcu104")
"""Boards of the graph draws: HBM with 256-bit ports, DDR with 512-bit ports, a Zynq with 128-bit ports."""
MAX_D = 2048
"""Largest d of a graph draw (the benchmark's default, the issue's 1..2048; the tiers' tests draw
from a smaller box). The RTL grows with d (each BFC unit's distance PE holds the query as d/lanes
words, lanes the largest divisor of d that fits a beat), yet the costliest draw this box allows
finishes: d = 2039 (prime: one lane, 2039 cycles a distance), 8 BFC units, l = 128, K = 32 on a
U55C, both faces bit-exact and cycles +0.00 % against the model, in 475 s of CPU (265 s of it
Verilator and g++; measured 2026-12-06 on this project's 2-core machine, by `run_graph_case`)."""
MAX_K = 32
BASE_VECTORS = 1000
TEST_QUERIES = 64
"""Queries of a draw's dataset: the DSE chooses on all of them; the faces simulate the first few."""
SIM_QUERIES = 8
"""Test queries simulated per face (at least one per pipeline of an across-query design)."""
SPACE = GraphSpace()
"""The graph DSE's default space: the values a pinned draw and a DSE draw's sub-space take."""


@dataclass(frozen=True)
class GraphFuzzCase:
    """One graph draw: the data and graph, and either a pinned design or a DSE (`dse`) with a goal."""

    seed: int
    board: str
    d: int
    graph: str  # "hnsw" or "nsg"
    degree: int
    vec_bits: int
    k: int
    dse: bool
    goal: str = ""  # a DSE draw's R@k goal
    util: float = 0.6
    mode: str = "intra"  # a pinned draw's design: mode, BFC units, pipelines, channels, l, (mg, mc), Bloom
    units: int = 1
    pipelines: int = 1
    channels: int = 1
    l: int = 16
    mg: int = 1
    mc: int = 1
    bloom_h: int = 3
    bloom_bank_bits: int = 2**14

    @property
    def label(self) -> str:
        shape = f"#{self.seed} graph {self.board} d={self.d} {self.graph.upper()} deg {self.degree} b{self.vec_bits}"
        if self.dse:
            return f"{shape} DSE {self.goal} cap {self.util:g}"
        across = f"{self.pipelines} pipelines" if self.mode == "across" else f"{self.units} BFC units"
        return (
            f"{shape} {self.mode} {across} {self.channels} ch l={self.l} K={self.k} (mg, mc)=({self.mg}, {self.mc}) "
            f"Bloom {self.bloom_h}x{self.bloom_bank_bits}"
        )

    @property
    def folder(self) -> str:
        return f"graph{self.seed}"


def _log_uniform(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def draw_graph_case(seed: int, max_d: int = MAX_D, max_k: int = MAX_K) -> GraphFuzzCase:
    """The graph draw of `seed` (its own random stream, apart from `draw_case`'s): d log-uniform in
    1..max_d, K log-uniform in 1..max_k; half the draws pin a design (units or pipelines, channels
    of the board's first memory group, l in K..128, (mg, mc) and a Bloom filter of 1..4 banks of
    2^7..2^16 bits), half run the DSE on a sub-space for an R@K goal."""
    rng = np.random.default_rng([seed, 50])
    board = str(rng.choice(GRAPH_BOARDS))
    d = _log_uniform(rng, 1, max_d)
    graph = str(rng.choice(("hnsw", "nsg")))
    degree = 2 * int(rng.integers(2, 17))
    vec_bits = 8
    k = _log_uniform(rng, 1, max_k)
    util = round(float(rng.uniform(0.3, 0.9)), 2)
    if rng.random() < 0.5:
        goal = f"R@{k}={rng.uniform(0.05, 0.5):.2f}"
        return GraphFuzzCase(seed, board, d, graph, degree, vec_bits, k, True, goal, util)
    across = bool(rng.random() < 0.4)
    units = 1 if across else int(rng.choice(SPACE.units))
    pipelines = int(rng.choice([p for p in SPACE.pipelines if p > 1][:2])) if across else 1
    channels = int(rng.choice(SPACE.channel_options(load_board(board))))
    mg, mc = SPACE.dst[int(rng.integers(len(SPACE.dst)))]
    return GraphFuzzCase(
        seed,
        board,
        d,
        graph,
        degree,
        vec_bits,
        k,
        False,
        util=util,
        mode="across" if across else "intra",
        units=units,
        pipelines=pipelines,
        channels=channels,
        l=_log_uniform(rng, max(k, 2), 128),
        mg=int(mg),
        mc=int(mc),
        bloom_h=int(rng.integers(1, 5)),
        bloom_bank_bits=2 ** int(rng.integers(7, 17)),
    )


def _subspace(case: GraphFuzzCase) -> GraphSpace:
    """A DSE draw's space: two values of each of the default space's dimensions, drawn."""
    rng = np.random.default_rng([case.seed, 51])

    def pick(values: tuple) -> tuple:
        chosen = rng.choice(len(values), size=min(2, len(values)), replace=False)
        return tuple(values[i] for i in sorted(chosen))

    queue = tuple(q for q in SPACE.queue if q >= case.k) or (max(case.k, 2),)
    return GraphSpace(
        units=pick(SPACE.units),
        pipelines=pick(SPACE.pipelines[:3]),
        queue=pick(queue),
        dst=pick(SPACE.dst),
        bloom_bits=pick(SPACE.bloom_bits),
        k=case.k,
    )


def _dataset(case: GraphFuzzCase, work: Path) -> Dataset:
    base, queries = clustered(BASE_VECTORS, TEST_QUERIES, case.d, seed=case.seed)
    return Dataset(
        name=f"graphfuzz{case.seed}",
        base=base,
        queries=queries,
        metric="l2",
        cache_dir=work / "cache",
        description=f"graph design-space fuzz draw {case.seed}",
    )


def run_graph_case(case: GraphFuzzCase, work: Path, build_root: Path, sim_queries: int = SIM_QUERIES) -> FuzzOutcome:
    """Build, choose or pin, generate and simulate one graph draw (module docstring); never raises
    for what the draw finds — a crash is the outcome "failed" with its step."""
    return run_guarded(case, lambda out: _run(case, Path(work), Path(build_root), sim_queries, out), lambda f: f.face)


def _run(case: GraphFuzzCase, work: Path, build_root: Path, sim_queries: int, out: FuzzOutcome) -> None:
    out.step = "graph"
    ds = _dataset(case, work)
    graph = load_or_build(ds, case.graph, case.degree, 64, case.vec_bits)
    _, queries = prepare_vectors(ds)
    q_fx, gt = graph.fmt.quantize(queries), ds.groundtruth(case.k)
    board = load_board(case.board)
    if case.dse:
        out.step = "DSE"
        goal = parse_goal(case.goal)
        chosen = choose_graph_design(graph, q_fx, gt, board, goal, "latency", None, case.util, _subspace(case))
        if chosen.result.best is None:
            out.status, out.reason = "no design", chosen.no_fit(board, goal).message
            return
        design = chosen.result.design
    else:
        out.step = "design"
        space = GraphSpace(dst=((case.mg, case.mc),), bloom_h=case.bloom_h, k=case.k)
        point = GraphPoint(
            case.mode,
            case.units,
            case.pipelines,
            case.channels,
            case.l,
            case.mg,
            case.mc,
            case.bloom_h * case.bloom_bank_bits,
            0.0,
            0.0,
            0.0,
            Resources(),
            False,
        )
        design = design_for(graph, board, point, space, board.clock.mhz, case.util)
    out.designs.append(graph_design_summary(design))
    out.step = "generate"
    project = work / "project"
    shutil.rmtree(project, ignore_errors=True)
    nq = max(sim_queries, design.pipelines)
    project_files(design, graph, q_fx[:nq], gt[:nq], ("hls", "rtl"), None).write(project)
    console = Console(file=io.StringIO())
    out.step = "C simulation"
    hls = simulate_graph_csim(project / "hls", build_root, nq, 0, None, console)
    out.step = "RTL simulation"
    rtl = simulate_graph_rtl(project / "rtl", build_root, nq, 0, LATENCY, 0.0, None, console)
    out.faces += [face_result(0, "hls", hls), face_result(0, "rtl", rtl)]


def graph_design_summary(design: GraphDesign) -> str:
    """One line naming the design's mode, units, pipelines, channels, queues, (mg, mc) and Bloom filter."""
    rt, q, b = design.runtime, design.queues, design.bloom
    return (
        f"{design.graph.kind.upper()} {design.mode}-query, {design.bfc_units} BFC unit(s) x {design.pipelines} "
        f"pipeline(s), {design.channels} channel(s), l {rt.l} (l_max {q.l_max}), K {rt.k}, (mg, mc) = ({rt.mg}, "
        f"{rt.mc}), Bloom {b.h} x {b.b // b.h} bits, {design.clock_mhz:g} MHz"
    )


def run_any_job(job: FuzzJob) -> FuzzOutcome:
    """`run_job` for an IVF-PQ draw, `run_graph_case` (in the job's folders) for a graph draw."""
    if not isinstance(job.case, GraphFuzzCase):
        return run_job(job)
    builds = Path(job.build_root) if job.build_root else Path(tempfile.gettempdir()) / WORKER_BUILDS
    if job.work is not None:
        shutil.rmtree(job.work, ignore_errors=True)
        return run_graph_case(job.case, Path(job.work), builds, job.sim_queries)
    with tempfile.TemporaryDirectory(prefix=f"fanns-graphfuzz-{job.case.seed}-") as tmp:
        return run_graph_case(job.case, Path(tmp), builds, job.sim_queries)


def run_all_draws(
    cases: list,
    work: Path,
    runners_up: int = 1,
    sim_queries: int | None = None,
    graph_sim_queries: int = SIM_QUERIES,
    workers: int = 1,
    cluster: str | None = None,
) -> list[FuzzOutcome]:
    """`fanns.flow.design_fuzz.run_draws` over IVF-PQ and graph draws alike (a graph draw
    simulates `graph_sim_queries` per face); outcomes in the order of `cases`."""

    def job(c) -> FuzzJob:
        queries = graph_sim_queries if isinstance(c, GraphFuzzCase) else (sim_queries or IVF_QUERIES)
        if cluster is not None:
            return FuzzJob(c, None, None, runners_up, queries)
        return FuzzJob(c, str(Path(work) / c.folder), str(Path(work) / "builds"), runners_up, queries)

    return map_jobs(run_any_job, [job(c) for c in cases], workers=workers, cluster=cluster, label="fuzz draws")


def any_outcome_from_record(record: dict) -> FuzzOutcome:
    """`outcome_from_record` for a recorded IVF-PQ or graph draw (a graph draw's case names its graph)."""
    return outcome_from_record(record, GraphFuzzCase if "graph" in record["case"] else FuzzCase)
