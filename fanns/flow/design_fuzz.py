"""Design-space fuzz: random (board, dataset shape, goal, clock, cap) draws through the whole flow.

Why: the designs the tests pin are the ones the developers thought of; the designs users get are
the ones the DSE picks for their boards and goals. Each draw here builds a synthetic dataset of the
drawn dimension (`fanns.datasets.synthetic.clustered`), explores one real faiss index at the drawn
nlist and m, runs the DSE exactly as `fanns generate` does, and for the chosen design and its
runners-up generates both faces and simulates a few test queries on each: the HLS face in g++ C
simulation, the RTL face under Verilator (fast harness). A draw passes when every face generates,
finishes, equals the reference model bit for bit and (RTL) lands within `CYCLE_TOLERANCE` of the
cycle model; a draw for which the DSE finds no design passes only when its explanation names the
cause (`Outcome.explain`: an empty option group, a resource, an unreachable goal), never on a crash.

A corner draw (`draw_corner_case`) builds, instead of the DSE's choice, one corner of the option
space for the drawn workload (`fanns.model.ivfpq.corners`: the most IVFDist PEs and SelCells
streams, the most PQDist PEs and SelK streams, each selection architecture at its most and fewest
streams, the widest lanes, the most BuildLUT PEs, the most memory channels, W = 8 LUT words with
the most channels, the widest OPQ): the designs the DSE may emit but a few sample workloads never
pick. Its nlist is drawn up to 1024, so IVFDist arrays of hundreds of PEs are drawn. A host draw
(`draw_host_case`) runs on its board with the memory shrunk below the index, so the DSE's choice
keeps the lists in host memory (docs/host_tier.md); its faces are checked as any other's (the RTL's
cycles with a cold cache, the board file's host link metered over its PQ channels). The draws
themselves are `fanns.flow.fuzz_draws`.

`benchmarks/design_fuzz.py N` runs N draws (in parallel worker processes, or as jobs on an existing
Dask or Ray cluster: `run_draws`) and prints the table; `tests/flow/test_design_fuzz.py` runs a few
in the fast tier and more in the slow tier.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.project import layout
from fanns.datasets.dataset import Dataset
from fanns.datasets.synthetic import clustered
from fanns.design.ivfpq import IvfPqDesign
from fanns.errors import FannsError
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.flow.fuzz_draws import CORNER_NLISTS as CORNER_NLISTS  # re-exported: the draws are imported from here
from fanns.flow.fuzz_draws import MAX_D as MAX_D
from fanns.flow.fuzz_draws import MAX_K as MAX_K
from fanns.flow.fuzz_draws import FuzzCase, base_vectors, case_board
from fanns.flow.fuzz_draws import draw_case as draw_case
from fanns.flow.fuzz_draws import draw_corner_case as draw_corner_case
from fanns.flow.ivfpq_inputs import index_record, load_index
from fanns.flow.ivfpq_project_sim import (
    simulate_csim,
    simulate_csim_steps,
    simulate_model_steps,
    simulate_rtl,
    simulate_rtl_steps,
)
from fanns.index.goals import parse_goal
from fanns.index.ivfpq import host_vectors
from fanns.model.ivfpq import dse, report
from fanns.model.ivfpq.budget import Budget
from fanns.model.ivfpq.corners import corner_point
from fanns.model.ivfpq.no_fit import unreachable_text
from fanns.model.ivfpq.workload import workloads_from_explore
from fanns.tools.parallel import map_jobs

TEST_QUERIES = 200
"""Queries of a draw's dataset: the exploration chooses nprobe on half of them and checks it on the
other half (the recall promise, `fanns.index.holdout`: 32 selection queries of 64 left most goals
unpromised for want of queries); the faces simulate the first few."""
CYCLE_TOLERANCE = 0.05
"""The RTL's measured steady-state cycles per query may differ from the cycle model's prediction for
the same queries by this fraction (the bound tests/codegen/test_rtl.py holds the pinned designs to)."""


@dataclass
class FaceResult:
    """One simulated face of one generated design (rank 0 is the DSE's choice): its queries, those
    whose keys differ from the reference model's, and (RTL) the measured and the modelled steady-state
    cycles per query."""

    rank: int
    face: str
    ok: bool
    detail: str
    queries: int = 0
    mismatched: int = 0
    cycles: float | None = None
    predicted: float | None = None
    cycle_error_pct: float | None = None


@dataclass
class FuzzOutcome:
    """What one draw gave: "ok", "no design" (explained), or "failed" (with the reason)."""

    case: Any  # a `FuzzCase`, or a graph draw (`fanns.flow.graph_fuzz.GraphFuzzCase`)
    status: str
    reason: str = ""
    faces: list[FaceResult] = field(default_factory=list)
    seconds: float = 0.0
    designs: list[str] = field(default_factory=list)  # per rank: `design_summary`
    step: str = ""  # the step running (a crash's), e.g. "rank 0 generate"

    @property
    def passed(self) -> bool:
        return self.status in ("ok", "no design")


def _dataset(case: FuzzCase, work: Path) -> Dataset:
    base, queries = clustered(base_vectors(case), TEST_QUERIES, case.d, seed=case.seed)
    return Dataset(
        name=f"fuzz{case.seed}",
        base=base,
        queries=queries,
        metric="l2",
        cache_dir=work / "cache",
        description=f"design-space fuzz draw {case.seed}",
    )


def face_result(rank: int, face: str, sim: dict) -> FaceResult:
    """One face's simulation record judged: bit-exact and (RTL) within `CYCLE_TOLERANCE` of the model."""
    ok = sim["mismatched_queries"] == 0
    detail = f"{sim['queries']} queries, {sim['mismatched_queries']} differ"
    if "calls" in sim:
        detail += f" in {sim['calls']} step-wise calls" + (f" (first: {sim['first_mismatch']})" if not ok else "")
    out = FaceResult(rank, face, ok, detail, sim["queries"], sim["mismatched_queries"])
    if "cycle_error_pct" in sim:
        out.ok = ok and abs(sim["cycle_error_pct"]) <= 100 * CYCLE_TOLERANCE
        out.detail += f", cycles {sim['cycle_error_pct']:+.2f}% vs model"
        out.cycles, out.predicted = sim["cycles_per_query"], sim["predicted_cycles_per_query"]
        out.cycle_error_pct = sim["cycle_error_pct"]
    return out


def design_summary(design: IvfPqDesign) -> str:
    """One line naming every stage's PEs, lanes, selection architectures and channels."""
    st = design.stages
    ivf, lut, pq = st.ivf_dist, st.build_lut, st.pq_dist
    opq = f"OPQ x{st.opq.lanes} {st.opq.storage}, " if st.opq is not None else ""
    return (
        f"{design.index.factory} nprobe {design.nprobe} K {design.k}: {opq}"
        f"IVFDist {ivf.pes} x{ivf.lanes} {ivf.storage}, SelCells {st.sel_cells.arch}/{st.sel_cells.streams}, "
        f"BuildLUT {lut.pes} x{lut.lanes} {lut.centroids}, "
        f"PQDist {pq.pes} on {pq.channels} {pq.memory} W={pq.lut_words}, "
        f"SelK {st.sel_k.arch}/{st.sel_k.streams}"
    )


SIM_QUERIES = 16
"""Test queries simulated per face. The cycle check compares a steady-state model with the
measured span between the first and the last completion; over a few queries that span is
dominated by the pipeline's buffers filling (draw #2, a BuildLUT-bound design with two LUTs of
buffer before a back end of equal speed: -6.90 % over 4 queries, -0.13 % over 16)."""


def run_case(
    case: FuzzCase,
    work: Path,
    build_root: Path,
    runners_up: int = 1,
    sim_queries: int = SIM_QUERIES,
    dataset: Dataset | None = None,
) -> FuzzOutcome:
    """Explore, DSE, generate and simulate one draw (see the module docstring); never raises for
    what the draw finds — a crash is the outcome "failed" with its traceback's last line.
    `dataset`: a set of the case's d to use instead of the draw's synthetic one (a real set put
    through the same checks, e.g. benchmarks/stepwise_sets.py)."""
    return run_guarded(
        case,
        lambda out: _run(case, Path(work), Path(build_root), runners_up, sim_queries, out, dataset),
        lambda f: f"rank {f.rank} {f.face}",
    )


def run_guarded(case: Any, body: Callable[[FuzzOutcome], None], face_label: Callable[[FaceResult], str]) -> FuzzOutcome:
    """`body(out)` on a fresh outcome of `case`, timed; an error or crash becomes "failed" with
    the step it happened in, and a face that is not bit-exact fails the draw (`face_label` names
    it in the reason). Every kind of draw (IVF-PQ, graph) is judged by this one rule."""
    start = time.perf_counter()
    out = FuzzOutcome(case, "ok")
    try:
        body(out)
    except FannsError as exc:
        out.status, out.reason = "failed", f"{out.step}: {exc.message}"
    except Exception as exc:  # noqa: BLE001 - the fuzz reports every crash as a finding
        last = traceback.format_exception_only(exc)[-1].strip()
        out.status, out.reason = "failed", f"crash in {out.step}: {last}"
    out.seconds = time.perf_counter() - start
    if out.status == "ok" and not all(f.ok for f in out.faces):
        out.status = "failed"
        out.reason = "; ".join(f"{face_label(f)}: {f.detail}" for f in out.faces if not f.ok)
    return out


def _run(
    case: FuzzCase,
    work: Path,
    build_root: Path,
    runners_up: int,
    sim_queries: int,
    out: FuzzOutcome,
    dataset: Dataset | None = None,
) -> None:
    out.step = "explore"
    ds = dataset or _dataset(case, work)
    goal = parse_goal(case.goal)
    cfg = ExploreConfig(
        goals=[goal], nlists=[case.nlist], ms=[case.m], opq=(case.opq,), seed=case.seed, qps_min_seconds=0.0
    )
    folder = work / "explore"
    explore = IvfPqExplorer(ds, cfg, folder).run()
    board = case_board(case, work)
    workloads, unreachable = workloads_from_explore(folder, goal)
    out.step = "corner" if case.corner else "DSE"
    if case.corner:
        outcome = _corner(case, workloads, unreachable, board, goal.text)
    else:
        outcome = dse.run(workloads, board, goal.text, case.clock_mhz, case.util, 1 + runners_up, unreachable)
    if outcome.best is None:
        out.status = "no design" if outcome.explain else "failed"
        out.reason = " / ".join(outcome.explain) or "the DSE gave no design and no reason"
        return
    for rank, point in enumerate(outcome.top[: 1 + runners_up]):
        out.designs.append(design_summary(report.to_design(point, outcome, None)))

        def step(name: str, rank: int = rank) -> None:
            out.step = f"rank {rank} {name}"

        sims = verify_point(point, outcome, ds, explore, folder, work / f"design{rank}", build_root, sim_queries, step)
        out.faces += [face_result(rank, face, sim) for face, sim in sims.items()]


def _corner(case: FuzzCase, workloads: list, unreachable: list[dict], board, goal: str) -> dse.Outcome:
    """An outcome whose one design is the corner `case.corner` of the draw's workload (the
    exploration's one index at its nprobe for the goal), or that says why there is none."""
    budget = Budget.from_board(board, case.util)
    outcome = dse.Outcome(goal, board, budget, case.clock_mhz, workloads, unreachable, [], [], None)
    if not workloads:
        outcome.explain = unreachable_text(goal, unreachable)
        return outcome
    point = corner_point(case.corner, workloads[0], board, case.clock_mhz, case.util)
    if point is None:
        outcome.explain = [f"no {case.corner} option of {workloads[0].label()} fits beside the cheapest others"]
    else:
        outcome.top = [point]
    return outcome


def verify_point(
    point: dse.DesignPoint,
    outcome: dse.Outcome,
    ds: Dataset,
    explore: dict,
    explore_folder: Path,
    project: Path,
    build_root: Path,
    sim_queries: int,
    step: Callable[[str], None] = lambda name: None,
) -> dict[str, dict]:
    """Generate both faces of one DSE point into `project` (its index from the exploration, the
    dataset's test queries) and simulate `sim_queries` queries on each: {"model-steps": .., "hls": ..,
    "hls-steps": .., "rtl": .., "rtl-steps": ..}, the records of `simulate_csim`, `simulate_rtl` (the
    RTL model built for a few queries' build + run) and the step-wise mode on the driver's model
    backend and both faces (`simulate_model_steps`, `simulate_csim_steps`, `simulate_rtl_steps`).
    `project` is the caller's work folder: an earlier run's project there is replaced. `step` is
    told the name of each step as it starts (a crash is then reported with its step)."""
    step("generate")
    design = report.to_design(point, outcome, project)
    data = load_index(explore_folder, index_record(explore, explore_folder, design), ds.metric)
    queries = host_vectors(np.asarray(ds.queries), ds.metric)
    test = TestQueries(queries=queries, groundtruth=ds.groundtruth(design.k))
    shutil.rmtree(project, ignore_errors=True)
    layout(design, data, test, ("hls", "rtl")).write(project)
    step("C simulation")
    hls = simulate_csim(project / "hls", sim_queries, build_root)
    step("step-wise search on the driver's model backend")
    model_steps = simulate_model_steps(project / "hls", data, test.queries, sim_queries)
    step("step-wise C simulation")
    steps = simulate_csim_steps(project / "hls", data, sim_queries, build_root)
    step("RTL simulation")
    rtl = simulate_rtl(project / "rtl", sim_queries, build_root)
    step("step-wise RTL simulation")
    rtl_steps = simulate_rtl_steps(project / "rtl", data, sim_queries, build_root)
    return {"model-steps": model_steps, "hls": hls, "hls-steps": steps, "rtl": rtl, "rtl-steps": rtl_steps}


@dataclass(frozen=True)
class FuzzJob:
    """One draw as a job for a worker process or a cluster worker (`run_job`). `work` and
    `build_root` are folders on the worker; None: a temporary folder on the worker for the draw
    (removed after it), and a build cache in the worker's temporary directory."""

    case: Any  # a `FuzzCase`, or a graph draw (`fanns.flow.graph_fuzz.run_any_job`)
    work: str | None
    build_root: str | None
    runners_up: int
    sim_queries: int


WORKER_BUILDS = "fanns-fuzz-builds"
"""The build cache of a draw run on a cluster worker, in the worker's temporary directory: the
compiled simulators are kept by content, so the worker's next draws reuse them."""


def run_job(job: FuzzJob) -> FuzzOutcome:
    """`run_case` of one job, in the folders it names (see `FuzzJob`); a named work folder is
    emptied first, so a draw never reuses a stale exploration."""
    builds = Path(job.build_root) if job.build_root else Path(tempfile.gettempdir()) / WORKER_BUILDS
    if job.work is not None:
        shutil.rmtree(job.work, ignore_errors=True)
        return run_case(job.case, Path(job.work), builds, job.runners_up, job.sim_queries)
    with tempfile.TemporaryDirectory(prefix=f"fanns-fuzz-{job.case.seed}-") as tmp:
        return run_case(job.case, Path(tmp), builds, job.runners_up, job.sim_queries)


def run_draws(
    cases: list[FuzzCase],
    work: Path,
    runners_up: int = 1,
    sim_queries: int = SIM_QUERIES,
    workers: int = 1,
    cluster: str | None = None,
) -> list[FuzzOutcome]:
    """Every draw of `cases`, as independent jobs: here in `workers` processes, each draw in
    `work/<case.folder>` (draw<seed>, corner<seed> or host<seed>) with one build cache `work/builds`; or on
    the existing Dask or Ray cluster at `cluster`, each draw in a temporary folder of the worker
    that runs it (the workers need not share a file system with this machine). Outcomes come back
    in the order of `cases`."""
    if cluster is None:
        jobs = [
            FuzzJob(c, str(Path(work) / c.folder), str(Path(work) / "builds"), runners_up, sim_queries) for c in cases
        ]
    else:
        jobs = [FuzzJob(c, None, None, runners_up, sim_queries) for c in cases]
    return map_jobs(run_job, jobs, workers=workers, cluster=cluster, label="fuzz draws")


def records(outcomes: list[FuzzOutcome]) -> list[dict]:
    """The outcomes as JSON-ready records: the draw, its status and reason, each generated design,
    and each face's queries, mismatches and (RTL) cycles per query measured and modelled."""
    return [
        {
            "case": dataclasses.asdict(o.case),
            "status": o.status,
            "reason": o.reason,
            "seconds": round(o.seconds, 1),
            "designs": o.designs,
            "faces": [dataclasses.asdict(f) for f in o.faces],
        }
        for o in outcomes
    ]


def outcome_from_record(record: dict, case_type: type = FuzzCase) -> FuzzOutcome:
    """The outcome a record of `records` holds (a recorded run read back, to continue it); `case_type`:
    the class of its draw (`fanns.flow.graph_fuzz.GraphFuzzCase` for a graph draw)."""
    return FuzzOutcome(
        case_type(**record["case"]),
        record["status"],
        record["reason"],
        [FaceResult(**f) for f in record["faces"]],
        record["seconds"],
        list(record["designs"]),
    )


def table(outcomes: list[FuzzOutcome]) -> list[str]:
    """The outcomes as text lines: one per draw, then the count per status."""
    lines = []
    for o in outcomes:
        faces = "; ".join(f"r{f.rank} {f.face} {'ok' if f.ok else 'FAIL'} ({f.detail})" for f in o.faces)
        lines.append(f"{o.case.label}: {o.status.upper()} ({o.seconds:.0f} s) {faces} {o.reason}".rstrip())
    counts = {s: sum(o.status == s for o in outcomes) for s in ("ok", "no design", "failed")}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()) + f" of {len(outcomes)} draws")
    return lines
