"""The design-space sweep behind `fanns sweep`: every board x every recall goal, and the trade-off
curves around them.

Why it is more than a loop over `fanns dse`: a user choosing a board and a goal wants to see what
the goal costs — how recall grows with nprobe per index (float and hardware-faithful), how much
throughput each board gives at each recall level against the CPU measured here, and where the
resources of the chosen designs go. So besides the DSE of each (board, goal) — run through
`fanns.model.ivfpq.dse` exactly as `fanns dse` runs it — the sweep asks the same DSE for the best design
of every (index, nprobe) on a grid around the goals (`points`), and measures faiss-cpu's QPS at
the same points. Results are plain dictionaries, ready for JSON, CSV and the HTML report; all are
deterministic except the measured CPU figures.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import faiss

from fanns.boards import Board, Clock, load_board
from fanns.checks import parse_graph_kinds
from fanns.datasets.dataset import Dataset
from fanns.errors import FannsError
from fanns.explore.graph import load_or_build, prepare_vectors, run_graph_explore
from fanns.explore.graph_choice import design_for_goal, point_text
from fanns.index.goals import RecallGoal, goal_entry
from fanns.index.ivfpq import host_vectors
from fanns.model.cpu_baseline import basis_text, cpu_basis, cpu_qps, undisturbed
from fanns.model.ivfpq import dse, timing
from fanns.model.ivfpq.rag.schema import RagSpec
from fanns.model.ivfpq.report import outcome_record
from fanns.model.ivfpq.workload import Workload, workloads_from_explore
from fanns.progress import status, track
from fanns.report import beyond, rag
from fanns.report.curves import IndexCurves, index_curves
from fanns.resources import KINDS
from fanns.tools.parallel import map_jobs

GRAPH_OBJECTIVE, GRAPH_SEED = "latency", 0
"""`fanns generate --graph`'s default objective and query-split seed: the report's graph designs
are the ones it builds by default."""


@dataclass(frozen=True)
class SweepSettings:
    boards: tuple[str, ...]
    goals: tuple[RecallGoal, ...]
    clock_mhz: float | None = None  # None: each board's sourced default, lowered to a design's RTL estimate
    util: float = 0.6
    top: int = 3
    hw_queries: int | None = None  # None: every query the exploration used
    max_nprobe: int = 64
    cpu_seconds: float = 0.2
    slo: dse.Slo | None = None  # keep only designs meeting this tail-latency objective
    load_qps: float | None = None  # Poisson arrival rate for the latency percentiles (None: alone)
    cluster: str | None = None  # scheduler address of an existing Dask/Ray cluster for the DSE jobs
    rag: RagSpec | None = None  # a RAG description: the report's RAG section (`fanns.report.rag`)


def load_boards(names: tuple[str, ...]) -> list[Board]:
    """The boards, validated up front (an unknown name fails before any work starts)."""
    boards = [load_board(n) for n in names]
    seen = [b.name for b in boards]
    if len(set(seen)) != len(seen):
        raise FannsError(f"a board is listed twice: {', '.join(seen)}")
    return boards


def dse_grid(c: IndexCurves, goal: RecallGoal) -> list[int]:
    """nprobe values at which the sweep asks the DSE for an index's best design: the powers of
    two of the curve grid and the goal's own nprobe."""
    grid = {p for p in c.grid if p & (p - 1) == 0}
    r = goal_entry(c.record["goals"], goal) or {}
    if r.get("reached"):
        grid.add(r["nprobe"])
    return sorted(grid)


def workload(c: IndexCurves, nprobe: int, goal: RecallGoal) -> Workload:
    """The index at `nprobe` with the measured probes of every sample query."""
    sizes = c.list_sizes
    rec = c.record
    return Workload(
        index=rec["index"],
        n=int(sizes.sum()),
        nlist=rec["nlist"],
        m=rec["m"],
        opq=rec["opq"],
        nprobe=nprobe,
        k=goal.k,
        fmt=c.fmt,
        list_sizes=sizes,
        probed=sizes[c.probes[:, :nprobe]],
        goal=goal,
        recall=c.float_curve(goal.name)[nprobe - 1],
        hw_recall=c.hw[goal.name][c.grid.index(nprobe)],
    )


def pareto_front(points: list[dict], x: str = "recall", y: str = "qps") -> list[dict]:
    """Points no other point beats on both `x` and `y` (higher is better), by increasing x."""
    front, best = [], -1.0
    for p in sorted(points, key=lambda p: (-p[x], -p[y], p.get("index", ""), p.get("nprobe", 0))):
        if p[y] > best:
            front.append(p)
            best = p[y]
    return front[::-1]


def mark_pareto(points: list[dict]) -> None:
    """Set `pareto` on every point: whether it is on the front of its (board, goal)."""
    groups: dict[tuple, list[dict]] = {}
    for p in points:
        p["pareto"] = False
        groups.setdefault((p.get("board", "cpu"), p["goal"]), []).append(p)
    for pts in groups.values():
        for p in pareto_front(pts):
            p["pareto"] = True


def _design_summary(rec: dict | None) -> dict | None:
    if rec is None:
        return None
    keys = (
        "index",
        "nprobe",
        "k",
        "recall",
        "hw_recall",
        "hw_recall_interval",
        "qps",
        "bottleneck",
        "latency_us",
        "cycles_per_query",
        "utilisation_with_shell",
    )
    # the QPS a reader compares: with prefetch for a design whose lists are in host memory (host_mix.RANK_RULE)
    return {k: rec[k] for k in keys} | {"qps": rec["rank_qps"], "lists": rec["lists"]}


@dataclass(frozen=True)
class _GoalDse:
    """One (board, goal) DSE of the sweep, as `fanns dse` runs it: a job that may run on a cluster."""

    workloads: list[Workload]
    board: Board
    goal: str
    clock: Clock | None
    util: float
    top: int
    unreachable: list
    slo: dse.Slo | None
    load_qps: float | None


def _run_goal_dse(job: _GoalDse) -> dse.Outcome:
    return timing.run(
        job.workloads,
        job.board,
        job.goal,
        job.clock,
        job.util,
        job.top,
        job.unreachable,
        slo=job.slo,
        load_qps=job.load_qps,
        tiers=True,
    )


@dataclass(frozen=True)
class _PointDse:
    """The best design at one (board, index, nprobe, K) of the trade-off grid: a job."""

    workload: Workload
    board: Board
    goal: str
    clock: Clock | None
    util: float


def _best_point(job: _PointDse) -> dict:
    outcome = timing.run([job.workload], job.board, job.goal, job.clock, job.util, 1)
    best = outcome.best
    return {
        "qps": round(best.rank_qps, 1) if best else None,  # lists in host memory: with prefetch (host_mix)
        "clock_mhz": outcome.clock_mhz if best else None,
        "bottleneck": best.bottleneck if best else None,
        "lut": round(best.resources.lut) if best else None,
    }


class Sweep:
    """Runs the sweep of one explored dataset (see the module docstring)."""

    def __init__(
        self,
        ds: Dataset,
        folder: Path,
        explore: dict,
        settings: SweepSettings,
        graph_args: argparse.Namespace | None = None,
    ):
        self.ds, self.folder, self.explore, self.s = ds, Path(folder), explore, settings
        self.graph_args = graph_args
        self.boards = load_boards(settings.boards)
        self.queries_used = int(explore["dataset"]["queries_used"])
        self.index_names = [rec["index"] for rec in explore["indexes"]]  # a larger exploration's: the grid asked
        self.curves: list[IndexCurves] = []
        self._fpga: dict[tuple, dict] = {}
        self._cpu: dict[tuple, dict] = {}
        self._cpu_latency: dict[tuple, dict] = {}  # (index, nprobe, k) -> `beyond.cpu_latency`
        self._outcomes: dict[tuple[str, str], dse.Outcome] = {}

    def clock(self, board: Board) -> Clock | None:
        """The user's --clock for every board, or None: each board's default, checked against
        the RTL estimate of each design (`fanns.model.ivfpq.timing.run`)."""
        return None if self.s.clock_mhz is None else Clock.user(self.s.clock_mhz)

    # -- steps ------------------------------------------------------------------------------------
    def measure_curves(self) -> None:
        hw_n = self.s.hw_queries or self.queries_used
        goals = list(self.s.goals)
        for rec in track(self.explore["indexes"], "hardware-faithful recall curves"):
            self.curves.append(
                index_curves(self.ds, self.folder, rec, goals, self.queries_used, hw_n, self.s.max_nprobe)
            )

    def _map(self, fn, jobs: list, label: str) -> list:
        """[fn(job) for job in jobs]: here, or on the cluster of `--cluster` (same results)."""
        if self.s.cluster is None:
            return [fn(job) for job in track(jobs, label)]
        return map_jobs(fn, jobs, cluster=self.s.cluster, label=f"{label} (cluster {self.s.cluster})")

    def goal_designs(self) -> list[dict]:
        """The DSE of every (board, goal), as `fanns dse` writes it (dse.json's record)."""
        pairs = [(board, goal) for board in self.boards for goal in self.s.goals]
        jobs = []
        for board, goal in pairs:
            workloads, unreachable = workloads_from_explore(self.folder, goal, self.index_names)
            jobs.append(
                _GoalDse(
                    workloads,
                    board,
                    goal.text,
                    self.clock(board),
                    self.s.util,
                    self.s.top,
                    unreachable,
                    self.s.slo,
                    self.s.load_qps,
                )
            )
        out = []
        for (board, goal), outcome in zip(pairs, self._map(_run_goal_dse, jobs, "DSE per board and goal")):
            self._outcomes[board.name, goal.text] = outcome
            out.append({"board": board.name, "goal": goal.text, "dse": outcome_record(outcome)})
        return out

    def fpga_points(self) -> list[dict]:
        """Predicted QPS of the best design of every (board, goal's K, index, nprobe) on the grid;
        recall is the hardware-faithful recall at that nprobe."""
        grid = [(b, g, c, p) for b in self.boards for g in self.s.goals for c in self.curves for p in dse_grid(c, g)]
        todo: dict[tuple, _PointDse] = {}
        for board, goal, c, p in grid:
            key = (board.name, c.name, p, goal.k)
            if key not in self._fpga and key not in todo:
                todo[key] = _PointDse(workload(c, p, goal), board, goal.text, self.clock(board), self.s.util)
        self._fpga.update(zip(todo, self._map(_best_point, list(todo.values()), "DSE per index and nprobe")))
        out = []
        for board, goal, c, p in grid:
            pt = self._fpga[board.name, c.name, p, goal.k]
            if pt["qps"] is None:
                continue
            out.append(
                {
                    "board": board.name,
                    "goal": goal.text,
                    "index": c.name,
                    "nprobe": p,
                    "k": goal.k,
                    "recall": c.hw[goal.name][c.grid.index(p)],
                    **pt,
                }
            )
        return out

    def cpu_points(self) -> tuple[list[dict], dict]:
        """faiss-cpu's measured QPS at the same (index, nprobe, K) points, on one thread (thread CPU
        clock) and on all cores (wall clock); each point's `qps` is the figure a ratio divides by
        (`cpu_basis`: the all-cores median, or on a loaded machine the one-thread one scaled to
        the cores). Recall is faiss's."""

        queries = host_vectors(self.ds.queries[: self.queries_used], self.ds.metric)
        out = []
        jobs = [(g, c) for g in self.s.goals for c in self.curves]
        for goal, c in track(jobs, "CPU baseline (faiss, 1 thread and all cores)"):
            for p in dse_grid(c, goal):
                key = (c.name, p, goal.k)
                if key not in self._cpu:
                    self._cpu[key] = {
                        "1": cpu_qps(c.index, queries, p, goal.k, self.s.cpu_seconds, threads=1),
                        "all": cpu_qps(c.index, queries, p, goal.k, self.s.cpu_seconds),
                    }
                basis = cpu_basis(self._cpu[key])
                out.append(
                    {
                        "goal": goal.text,
                        "index": c.name,
                        "nprobe": p,
                        "k": goal.k,
                        "recall": c.float_curve(goal.name)[p - 1],
                        "qps": basis["qps"],
                        "basis": {**basis, "text": basis_text(basis)},
                        "spread": self._cpu[key]["all"],
                        "one_thread": self._cpu[key]["1"],
                    }
                )
        return out, {
            "threads": faiss.omp_get_max_threads(),
            "queries": int(queries.shape[0]),
            "min_seconds": self.s.cpu_seconds,
            "statistic": (
                "median of the measurement windows (spread: quartiles and range), 1 thread on its CPU clock and all "
                "cores on the wall clock; qps: the all-cores median, or on a loaded machine the cores x the "
                "1-thread one"
            ),
        }

    def beyond(self, summary: list[dict]) -> list[dict]:
        """Latency, skew, tiers and scale-out of every (board, goal)'s best design
        (`fanns.report.beyond`), the CPU's latency measured at the goal's best CPU point."""

        out = []
        for s in track(summary, "latency, skew, tiers and scale-out"):
            cpu = self.cpu_latency(s["cpu"])
            entry = beyond.record(self._outcomes[s["board"], s["goal"]], self.ds.d, cpu)
            if entry is not None:
                out.append({"board": s["board"], "goal": s["goal"], **entry, "summary": beyond.summary_row(entry)})
        return out

    def cpu_latency(self, point: dict | None) -> dict | None:
        """The CPU's per-query latency at a CPU point (`beyond.cpu_latency`), measured once."""
        if point is None:
            return None
        key = (point["index"], point["nprobe"], point["k"])
        if key not in self._cpu_latency:
            queries = host_vectors(self.ds.queries[: self.queries_used], self.ds.metric)
            index = next(x.index for x in self.curves if x.name == point["index"])
            self._cpu_latency[key] = beyond.cpu_latency(index, queries, point["nprobe"], point["k"], point["index"])
        return self._cpu_latency[key]

    def rag(self, summary: list[dict]) -> list[dict]:
        """The RAG section (`fanns.report.rag`): per goal, the description's pipeline with the CPU
        and every board's best design as retrieval hardware."""
        spec = self.s.rag
        if spec is None:
            return []
        out = []
        for goal in track(self.s.goals, "RAG pipeline per goal"):
            entries = [s for s in summary if s["goal"] == goal.text]
            boards = [(s["board"], self._outcomes[s["board"], goal.text].best) for s in entries]
            boards = [(b, p) for b, p in boards if p is not None]
            point = entries[0]["cpu"] if entries else None
            cpu = None
            if point is not None:
                record = next(c.record for c in self.curves if c.name == point["index"])
                cpu = {
                    **point,
                    "nlist": record["nlist"],
                    "m": record["m"],
                    "qps_one_thread": point["one_thread"]["qps"],
                    "samples_us": self.cpu_latency(point)["samples_us"],
                }
            units = rag.goal_units(spec, int(self.explore["dataset"]["n"]), boards, cpu)
            out.append(rag.goal_section(spec, goal.text, units))
        return out

    def graphs(self) -> list[dict]:
        """The DST (mg, mc) sweep of each graph kind (`fanns explore --graph`), when asked for."""
        if self.graph_args is None or not self.graph_args.graph:
            return []

        out = self.folder / "graphs"
        run_graph_explore(argparse.Namespace(**{**vars(self.graph_args), "out": str(out)}))
        extra = {"k": self.graph_args.k, "board": self.graph_args.board}
        return [
            {**json.loads((out / f"graph_{kind}.json").read_text()), **extra, "designs": self.graph_designs(kind)}
            for kind in parse_graph_kinds(self.graph_args.graph)
        ]

    def graph_designs(self, kind: str) -> list[dict]:
        """Per board and R@k goal of the sweep, the graph design `fanns generate --graph` builds
        (`design_for_goal` at its default objective and seed, on the same queries: the recall
        promise of `fanns.explore.graph_promise`) with its selection bound and its recall on the
        held-out queries, or why none is promised. 1-R@k goals have no graph design."""
        a = self.graph_args
        goals = [g for g in self.s.goals if g.truth == g.k]
        if not goals:
            return []
        graph = load_or_build(self.ds, kind, a.max_degree, a.ef_construction, a.vec_bits)
        queries = prepare_vectors(self.ds)[1][: min(a.graph_queries or self.ds.nq, self.ds.nq)]
        out = []
        for board, goal in track([(b, g) for b in self.boards for g in goals], f"{kind} graph designs"):
            got = design_for_goal(
                graph, self.ds, queries, board, goal, GRAPH_OBJECTIVE, self.clock(board), self.s.util, GRAPH_SEED
            )
            chosen, best = got.chosen, got.chosen.result.best
            rec = {"board": board.name, "goal": goal.text, "clock_mhz": chosen.clock.mhz}
            if best is None:
                rec["explain"] = chosen.no_fit(board, goal).args[0]
            else:
                rec |= {
                    "design": point_text(best, chosen.space),
                    "mode": best.mode,
                    "latency_us": best.latency_us,
                    "qps": best.qps,
                    "recall_selection": best.recall,
                    "recall_bound": got.recall_record(GRAPH_SEED)["selection_bound"],
                    "recall_held_out": got.recall,
                    "held_out_interval": list(got.interval),
                    "raised_from": (got.recall_record(GRAPH_SEED).get("raised_from") or {}).get("text"),
                }
            out.append(rec)
        return out

    # -- the whole sweep --------------------------------------------------------------------------
    def run(self) -> dict:
        status(
            f"sweep of {self.ds.name}: {len(self.boards)} board(s) x {len(self.s.goals)} goal(s), "
            f"{len(self.explore['indexes'])} index(es)"
        )
        self.measure_curves()
        designs = self.goal_designs()
        fpga = self.fpga_points()
        cpu, cpu_setup = self.cpu_points()
        summary = []
        for d in designs:
            goal = next(g for g in self.s.goals if g.text == d["goal"])
            best = d["dse"]["best"]
            ok = [p for p in cpu if p["goal"] == goal.text and p["recall"] >= goal.target - 1e-12]
            # chosen by one thread's undisturbed figure: other load does not move it, so points
            # measured at different moments compare fairly
            cpu_best = max(ok, key=lambda p: (undisturbed(p["one_thread"]), p["recall"]), default=None)
            summary.append(
                {
                    "board": d["board"],
                    "goal": d["goal"],
                    "design": _design_summary(best),
                    "clock": d["dse"]["clock"],
                    "rtl_timing": _timing_summary(d["dse"]["rtl_timing"]),
                    "cpu": cpu_best,
                    "cpu_same": _cpu_same(cpu, goal.text, best),
                    "speedup": round(best["rank_qps"] / cpu_best["qps"], 2) if best and cpu_best else None,
                    "explain": d["dse"]["explain"],
                }
            )
        order = {g.text: i for i, g in enumerate(self.s.goals)}
        names = [b.name for b in self.boards]
        summary.sort(key=lambda s: (order[s["goal"]], names.index(s["board"])))
        for group in (fpga, cpu):
            mark_pareto(group)
        return {
            "dataset": self.explore["dataset"],
            "settings": {
                "boards": [b.name for b in self.boards],
                "goals": [g.text for g in self.s.goals],
                "clock_mhz": {b.name: (self.clock(b) or b.clock).mhz for b in self.boards},
                "clock": {b.name: (self.clock(b) or b.clock).to_dict() for b in self.boards},
                "util": self.s.util,
                "top": self.s.top,
                "explore": self.explore["settings"],
                "max_nprobe": self.s.max_nprobe,
                "slo": None if self.s.slo is None else self.s.slo.text(),
                "load_qps": self.s.load_qps,
                "rag": None if self.s.rag is None else self.s.rag.name,
            },
            "boards": {b.name: _board_record(b) for b in self.boards},
            "curves": [c.to_dict() for c in self.curves],
            "designs": designs,
            "summary": summary,
            "fpga_points": fpga,
            "cpu_points": cpu,
            "cpu_setup": cpu_setup,
            "beyond": self.beyond(summary),
            "rag": self.rag(summary),
            "graphs": self.graphs(),
        }


def _timing_summary(rec: dict | None) -> dict | None:
    """The RTL estimate as the summary shows it: the clock and what limits it."""
    if not rec or rec["limit"] is None:
        return None
    lim = rec["limit"]
    return {
        "fmax_mhz": rec["fmax_mhz"],
        "family": rec["family"],
        "limit": f"{lim['kind']} {lim['label']}: {lim['detail']}",
    }


def _cpu_same(cpu: list[dict], goal: str, best: dict | None) -> dict | None:
    """The CPU point at the FPGA design's own index and nprobe (None without a design or point)."""
    if not best:
        return None
    same = [p for p in cpu if p["goal"] == goal and p["index"] == best["index"] and p["nprobe"] == best["nprobe"]]
    return same[0] if same else None


def _board_record(board: Board) -> dict:
    dev = board.device_total
    shell = sum((v for v in board.shell.values()), start=type(dev)())
    return {
        "description": board.description,
        "part": board.part,
        "clock_mhz": board.clock_mhz,
        "clock_source": board.clock_source,
        "device": {k: round(v, 1) for k, v in zip(KINDS, dev.as_tuple())},
        "shell": {k: round(v, 1) for k, v in zip(KINDS, shell.as_tuple())},
        "memory": [m.describe() for m in board.memory],
    }
