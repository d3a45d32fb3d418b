"""The graph design for one (board, recall goal), as `fanns generate --graph`, `fanns dse --graph`
and the sweep report choose it: the graph DSE (`fanns.model.graph.dse.explore_graph`) at the
board's clock, run again at the chosen design's RTL timing estimate when that is lower
(`choose_graph_design`), on a seeded selection part of the queries, with the recall promise of
`fanns.explore.graph_promise` (the selection queries' lower confidence bound and the held-out
rest must both reach the goal) and the chosen design's held-out recall with its interval
(`design_for_goal`). One place, so the report shows the design the generator builds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fanns.boards import Board, Clock
from fanns.datasets.dataset import Dataset
from fanns.errors import FannsError
from fanns.explore.graph_promise import GraphPromise, held_out_search, traversal_key
from fanns.index.goals import RecallGoal
from fanns.index.graph import GraphImage
from fanns.index.holdout import PROMISE_LEVEL, bootstrap_interval, split_queries
from fanns.model.graph.dse import GraphDseResult, GraphPoint, GraphSpace, explore_graph
from fanns.model.graph.timing import graph_design_timing
from fanns.model.timing import DesignTiming, resolve_clock


@dataclass(frozen=True)
class ChosenGraphDesign:
    """The graph DSE's outcome at the clock it settled on (`choose_graph_design`)."""

    result: GraphDseResult
    clock: Clock
    estimate: DesignTiming | None  # the chosen design's RTL timing estimate (None: nothing fits)
    space: GraphSpace
    promise: GraphPromise

    def record(self, kind: str, goal: RecallGoal, objective: str, board: Board, queries: int) -> dict:
        """dse.json: the inputs, the clock and every evaluated design."""
        return {
            "kind": "graph",
            "graph": kind,
            "goal": goal.text,
            "objective": objective,
            "board": board.name,
            "queries": queries,
            "clock": self.clock.to_dict(),
            "rtl_timing": None if self.estimate is None else self.estimate.to_dict(),
            "promise": self.promise.record(),
            **self.result.to_dict(),
        }

    def no_fit(
        self, board: Board, goal: RecallGoal, details: Path | None = None, dataset_queries: int | None = None
    ) -> FannsError:
        """The error when no evaluated design fits and is promised the goal, with the reason
        (`GraphPromise.text`; `details`: the dse.json written; `dataset_queries`: how many queries
        the dataset has, for the hint to more of them)."""
        why = self.promise.text(goal.text, self.space)
        more = "--queries" if dataset_queries is None else f"--queries, up to the dataset's {dataset_queries:,}"
        fix = {
            "resources": "try another board or a larger --util",
            "below": "try a lower goal, a larger --max-degree or more vector bits (--vec-bits)",
            "training": "try a lower goal, a larger --max-degree or more vector bits (--vec-bits)",
            "queries": f"use more queries ({more}) or a lower goal",
            "held-out": f"use more queries ({more}), another --seed, or a lower goal",
        }[self.promise.reason or "below"]
        return FannsError(
            f"no graph design on {board.name} can be promised {goal.text}: {why}",
            hint=("" if details is None else f"details in {details}; ") + fix,
        )


def check_graph_goal(goal: RecallGoal) -> None:
    """A graph design's goal is R@k (k results against the k nearest)."""
    if goal.truth != goal.k:
        raise FannsError(f"graph designs take an R@k goal, got {goal.text}", hint=f"e.g. --recall R@{goal.k}=0.9")


def choose_graph_design(
    graph: GraphImage,
    queries_fx: np.ndarray,
    groundtruth: np.ndarray,
    board: Board,
    goal: RecallGoal,
    objective: str,
    given: Clock | None,
    util: float,
    space: GraphSpace | None = None,
    held: tuple[np.ndarray, np.ndarray] | None = None,
) -> ChosenGraphDesign:
    """The graph DSE on these (selection) queries at the board's clock (or `given`), run again at
    the chosen design's RTL timing estimate when that is below the clock
    (`fanns.model.timing.resolve_clock`), choosing the best design the recall promise takes
    (`fanns.explore.graph_promise`) with the held-out queries and their ground truth `held`
    (None: the selection bound alone decides — the design fuzz, which checks hardware, not recall)."""
    space = space or GraphSpace(k=goal.k)
    clock, estimate = given or board.clock, None
    promise = GraphPromise(goal.target, None if held is None else held_out_search(graph, *held, space))
    for _ in range(2):  # again at the RTL estimate when the chosen design's is below the board's clock
        promise.restart()
        result = explore_graph(
            graph,
            queries_fx,
            groundtruth,
            board,
            goal.target,
            objective=objective,
            clock_mhz=clock.mhz,
            util=util,
            space=space,
            accept=promise.accept,
        )
        estimate = graph_design_timing(result.design, board.family) if result.design is not None else None
        wanted = resolve_clock(board.clock, given, estimate)
        if wanted.mhz >= clock.mhz:
            break
        clock = wanted
    if result.best is None:
        promise.settle(result.points)
    return ChosenGraphDesign(result, clock, estimate, space, promise)


def point_text(b: GraphPoint, space: GraphSpace) -> str:
    """One evaluated design in words: mode, units, channels, l, (mg, mc), Bloom filter, recall,
    latency, QPS and resources."""
    return (
        f"{b.mode}-query, {b.units} BFC unit(s) x {b.pipelines} pipeline(s), "
        f"{b.channels} channel(s), l {b.l}, (mg, mc) = ({b.mg}, {b.mc}), Bloom {space.bloom_h} x "
        f"{b.bloom_bits // space.bloom_h} bits: recall {b.recall:.4f}, latency {b.latency_us:.2f} us, {b.qps:,.0f} "
        f"QPS; LUT {b.resources.lut:,.0f}, BRAM18 {b.resources.bram18:,.0f}, DSP {b.resources.dsp:,.0f}"
    )


@dataclass
class GoalDesign:
    """The graph design chosen for one (board, goal) on the selection queries and promised by the
    held-out ones (`choose_graph_design`), and its recall there with a 95 % bootstrap interval
    (None when no design is promised)."""

    chosen: ChosenGraphDesign
    select: np.ndarray
    held: np.ndarray
    recall: float | None = None
    interval: tuple[float, float] | None = None

    def recall_record(self, seed: int) -> dict:
        """summary.json's recall: the selection recall and its lower bound, the held-out recall
        with its interval, and the design the bound alone had chosen when the held-out queries
        raised it."""
        b, pr = self.chosen.result.best, self.chosen.promise
        out = {
            "selection": round(b.recall, 6),
            "selection_bound": round(pr.bound(b), 6),
            "selection_queries": int(len(self.select)),
            "held_out": round(self.recall, 6),
            "held_out_interval": [round(v, 6) for v in self.interval],
            "held_out_queries": int(len(self.held)),
            "seed": seed,
            "promise_level": PROMISE_LEVEL,
        }
        s = pr.selected
        if s is not None and traversal_key(s) != traversal_key(b):
            out["raised_from"] = {
                "text": point_text(s, self.chosen.space),
                "selection": round(s.recall, 6),
                "selection_bound": round(pr.bound(s), 6),
                "held_out": round(float(pr.held(s).mean()), 6),
            }
        return out


def design_for_goal(
    graph: GraphImage,
    ds: Dataset,
    queries: np.ndarray,
    board: Board,
    goal: RecallGoal,
    objective: str,
    given: Clock | None,
    util: float,
    seed: int,
) -> GoalDesign:
    """`choose_graph_design` on a seeded selection part of `queries` (the dataset's first rows),
    promised by the rest, and the chosen design's recall there with its bootstrap interval."""
    nq = len(queries)
    q_fx, gt = graph.fmt.quantize(queries), ds.groundtruth(goal.k)[:nq]
    select, held = split_queries(nq, seed)
    chosen = choose_graph_design(
        graph, q_fx[select], gt[select], board, goal, objective, given, util, held=(q_fx[held], gt[held])
    )
    out = GoalDesign(chosen, select, held)
    if chosen.result.best is not None:
        per_query = chosen.promise.held(chosen.result.best)
        out.recall, out.interval = float(per_query.mean()), bootstrap_interval(per_query)
    return out


def recall_text(r: dict, k: int) -> str:
    """`GoalDesign.recall_record` in words: the held-out recall with its interval, the selection
    recall with its lower bound, and the design the held-out queries raised the choice from."""
    lo, hi = r["held_out_interval"]
    text = (
        f"recall R@{k}: {r['held_out']:.3f} (95 % CI {lo:.3f}-{hi:.3f}, bootstrap over queries) on the "
        f"{r['held_out_queries']} held-out queries; {r['selection']:.3f} on the {r['selection_queries']} queries the "
        f"DSE chose on, {PROMISE_LEVEL:.1%} lower bound {r['selection_bound']:.3f} with the graph-build spread "
        "(DST reference, the design's Bloom filter and units)"
    )
    raised = r.get("raised_from")
    if raised:
        text += (
            f"; raised from {raised['text']} (selection bound {raised['selection_bound']:.3f}), whose held-out "
            f"recall {raised['held_out']:.3f} stayed below the goal"
        )
    return text
