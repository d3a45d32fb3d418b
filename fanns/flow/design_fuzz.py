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

`benchmarks/design_fuzz.py N` runs N draws (in parallel worker processes, or as jobs on an existing
Dask or Ray cluster: `run_draws`) and prints the table; `tests/flow/test_design_fuzz.py` runs a few
in the fast tier and more in the slow tier.
"""

from __future__ import annotations

import math
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fanns.boards import load_board
from fanns.codegen.ivfpq.hls import TestQueries
from fanns.codegen.ivfpq.project import layout
from fanns.datasets.dataset import Dataset
from fanns.datasets.synthetic import clustered
from fanns.errors import FannsError
from fanns.explore.ivfpq import ExploreConfig, IvfPqExplorer
from fanns.flow.ivfpq_inputs import index_record, load_index
from fanns.flow.ivfpq_project_sim import simulate_csim, simulate_rtl
from fanns.index.goals import parse_goal
from fanns.index.ivfpq import host_vectors
from fanns.model.ivfpq import dse, report
from fanns.model.ivfpq.workload import workloads_from_explore
from fanns.tools.parallel import map_jobs

BOARDS = ("u55c", "u250", "u280", "u50", "zcu104", "zcu102", "kv260", "pynq-z2")
"""Every built-in board (boards/*.yaml)."""

MAX_D = 2048
MAX_K = 1000
MAX_M = 128
"""Largest m drawn: codes up to 1024 bits, several memory beats on every board (m = 48..128 is
what 768-d embeddings use); BuildLUT's LUT FIFO takes m <= 255."""
BASE_VECTORS = 2500
TEST_QUERIES = 64
"""Queries of a draw's dataset: the exploration measures recall on all of them (64 give recall steps of
1/64 for 1-R@k); the faces simulate the first few."""
CYCLE_TOLERANCE = 0.05
"""The RTL's measured steady-state cycles per query may differ from the cycle model's prediction for
the same queries by this fraction (the bound tests/codegen/test_rtl.py holds the pinned designs to)."""


@dataclass(frozen=True)
class FuzzCase:
    """One draw of the design space."""

    seed: int
    board: str
    d: int
    m: int
    nlist: int
    k: int
    goal: str
    clock_mhz: float
    util: float
    opq: bool

    @property
    def label(self) -> str:
        return (
            f"#{self.seed} {self.board} d={self.d} m={self.m} nlist={self.nlist} {self.goal}"
            f"{' OPQ' if self.opq else ''} {self.clock_mhz:g} MHz cap {self.util:g}"
        )


@dataclass
class FaceResult:
    """One simulated face of one generated design (rank 0 is the DSE's choice)."""

    rank: int
    face: str
    ok: bool
    detail: str


@dataclass
class FuzzOutcome:
    """What one draw gave: "ok", "no design" (explained), or "failed" (with the reason)."""

    case: FuzzCase
    status: str
    reason: str = ""
    faces: list[FaceResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status in ("ok", "no design")


def _log_uniform(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def draw_case(seed: int, max_d: int = MAX_D, max_k: int = MAX_K) -> FuzzCase:
    """The draw of `seed`: d log-uniform in 1..max_d, m a divisor of d up to `MAX_M` (faiss's PQ needs
    d % m == 0; codes wider than a memory beat included),
    K log-uniform in 1..max_k, a recall goal low enough for a 2,500-vector synthetic set to reach.
    The fast test tier draws from a smaller box (small d and K build in seconds); the slow tier and
    `benchmarks/design_fuzz.py` from the whole space."""
    rng = np.random.default_rng(seed)
    board = str(rng.choice(BOARDS))
    d = _log_uniform(rng, 1, max_d)
    divisors = [m for m in range(1, min(d, MAX_M) + 1) if d % m == 0]
    m = int(rng.choice(divisors))
    nlist = int(rng.choice([4, 8, 16, 32]))
    k = _log_uniform(rng, 1, max_k)
    goal = f"R@{k}={rng.uniform(0.05, 0.35):.2f}" if rng.random() < 0.5 else f"1-R@{k}={rng.uniform(0.1, 0.5):.2f}"
    clock = float(round(rng.uniform(100, 300)))
    util = round(float(rng.uniform(0.3, 0.9)), 2)
    opq = bool(rng.random() < 0.25 and d >= 2)
    return FuzzCase(seed, board, d, m, nlist, k, goal, clock, util, opq)


def _dataset(case: FuzzCase, work: Path) -> Dataset:
    base, queries = clustered(BASE_VECTORS, TEST_QUERIES, case.d, seed=case.seed)
    return Dataset(
        name=f"fuzz{case.seed}",
        base=base,
        queries=queries,
        metric="l2",
        cache_dir=work / "cache",
        description=f"design-space fuzz draw {case.seed}",
    )


def _face(rank: int, face: str, sim: dict) -> FaceResult:
    ok = sim["mismatched_queries"] == 0
    detail = f"{sim['queries']} queries, {sim['mismatched_queries']} differ"
    if "cycle_error_pct" in sim:
        ok = ok and abs(sim["cycle_error_pct"]) <= 100 * CYCLE_TOLERANCE
        detail += f", cycles {sim['cycle_error_pct']:+.2f}% vs model"
    return FaceResult(rank, face, ok, detail)


SIM_QUERIES = 16
"""Test queries simulated per face. The cycle check compares a steady-state model with the
measured span between the first and the last completion; over a few queries that span is
dominated by the pipeline's buffers filling (draw #2, a BuildLUT-bound design with two LUTs of
buffer before a back end of equal speed: -6.90 % over 4 queries, -0.13 % over 16)."""


def run_case(
    case: FuzzCase, work: Path, build_root: Path, runners_up: int = 1, sim_queries: int = SIM_QUERIES
) -> FuzzOutcome:
    """Explore, DSE, generate and simulate one draw (see the module docstring); never raises for
    what the draw finds — a crash is the outcome "failed" with its traceback's last line."""
    start = time.perf_counter()
    out = FuzzOutcome(case, "ok")
    try:
        _run(case, Path(work), Path(build_root), runners_up, sim_queries, out)
    except FannsError as exc:
        out.status, out.reason = "failed", f"{exc.message}"
    except Exception as exc:  # noqa: BLE001 - the fuzz reports every crash as a finding
        last = traceback.format_exception_only(exc)[-1].strip()
        out.status, out.reason = "failed", f"crash: {last}"
    out.seconds = time.perf_counter() - start
    if out.status == "ok" and not all(f.ok for f in out.faces):
        out.status = "failed"
        out.reason = "; ".join(f"rank {f.rank} {f.face}: {f.detail}" for f in out.faces if not f.ok)
    return out


def _run(case: FuzzCase, work: Path, build_root: Path, runners_up: int, sim_queries: int, out: FuzzOutcome) -> None:
    ds = _dataset(case, work)
    goal = parse_goal(case.goal)
    cfg = ExploreConfig(
        goals=[goal], nlists=[case.nlist], ms=[case.m], opq=(case.opq,), seed=case.seed, qps_min_seconds=0.0
    )
    folder = work / "explore"
    explore = IvfPqExplorer(ds, cfg, folder).run()
    board = load_board(case.board)
    workloads, unreachable = workloads_from_explore(folder, goal)
    outcome = dse.run(workloads, board, goal.text, case.clock_mhz, case.util, 1 + runners_up, unreachable)
    if outcome.best is None:
        out.status = "no design" if outcome.explain else "failed"
        out.reason = " / ".join(outcome.explain) or "the DSE gave no design and no reason"
        return
    for rank, point in enumerate(outcome.top[: 1 + runners_up]):
        sims = verify_point(point, outcome, ds, explore, folder, work / f"design{rank}", build_root, sim_queries)
        out.faces += [_face(rank, face, sim) for face, sim in sims.items()]


def verify_point(
    point: dict,
    outcome: dse.Outcome,
    ds: Dataset,
    explore: dict,
    explore_folder: Path,
    project: Path,
    build_root: Path,
    sim_queries: int,
) -> dict[str, dict]:
    """Generate both faces of one DSE point into `project` (its index from the exploration, the
    dataset's test queries) and simulate `sim_queries` queries on each: {"hls": .., "rtl": ..}, the
    records of `simulate_csim` and `simulate_rtl` (the RTL model built for a few queries' build + run).
    `project` is the caller's work folder: an earlier run's project there is replaced."""
    design = report.to_design(point, outcome, project)
    data = load_index(explore_folder, index_record(explore, explore_folder, design), ds.metric)
    queries = host_vectors(np.asarray(ds.queries), ds.metric)
    test = TestQueries(queries=queries, groundtruth=ds.groundtruth(design.k))
    shutil.rmtree(project, ignore_errors=True)
    layout(design, data, test, ("hls", "rtl")).write(project)
    return {
        "hls": simulate_csim(project / "hls", sim_queries, build_root),
        "rtl": simulate_rtl(project / "rtl", sim_queries, build_root),
    }


@dataclass(frozen=True)
class FuzzJob:
    """One draw as a job for a worker process or a cluster worker (`run_job`). `work` and
    `build_root` are folders on the worker; None: a temporary folder on the worker for the draw
    (removed after it), and a build cache in the worker's temporary directory."""

    case: FuzzCase
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
    `work/draw<seed>` with one build cache `work/builds`; or on the existing Dask or Ray cluster at
    `cluster`, each draw in a temporary folder of the worker that runs it (the workers need not
    share a file system with this machine). Outcomes come back in the order of `cases`."""
    if cluster is None:
        jobs = [
            FuzzJob(c, str(Path(work) / f"draw{c.seed}"), str(Path(work) / "builds"), runners_up, sim_queries)
            for c in cases
        ]
    else:
        jobs = [FuzzJob(c, None, None, runners_up, sim_queries) for c in cases]
    return map_jobs(run_job, jobs, workers=workers, cluster=cluster, label="fuzz draws")


def table(outcomes: list[FuzzOutcome]) -> list[str]:
    """The outcomes as text lines: one per draw, then the count per status."""
    lines = []
    for o in outcomes:
        faces = ", ".join(f"r{f.rank} {f.face} {'ok' if f.ok else 'FAIL'}" for f in o.faces)
        lines.append(f"{o.case.label}: {o.status.upper()} ({o.seconds:.0f} s) {faces} {o.reason}".rstrip())
    counts = {s: sum(o.status == s for o in outcomes) for s in ("ok", "no design", "failed")}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()) + f" of {len(outcomes)} draws")
    return lines
