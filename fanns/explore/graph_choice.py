"""The graph design for one (board, recall goal), as `fanns generate --graph`, `fanns dse --graph`
and the sweep report choose it: the graph DSE (`fanns.model.graph.dse.explore_graph`) at the
board's clock, run again at the chosen design's RTL timing estimate when that is lower
(`choose_graph_design`); for generate and the sweep on a seeded selection part of the queries,
with the chosen design's recall measured on the held-out rest (`design_for_goal`). One place, so
the report shows the design the generator builds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fanns.boards import Board, Clock
from fanns.datasets.dataset import Dataset
from fanns.design.graph import GraphDesign
from fanns.errors import FannsError
from fanns.index.goals import RecallGoal
from fanns.index.graph import GraphImage
from fanns.index.holdout import bootstrap_interval, split_queries
from fanns.index.recall import hits
from fanns.model.graph.dse import GraphDseResult, GraphPoint, GraphSpace, explore_graph
from fanns.model.graph.fast import search_batch
from fanns.model.graph.timing import graph_design_timing
from fanns.model.timing import DesignTiming, resolve_clock
from fanns.reference.graph import traversal_config


@dataclass(frozen=True)
class ChosenGraphDesign:
    """The graph DSE's outcome at the clock it settled on (`choose_graph_design`)."""

    result: GraphDseResult
    clock: Clock
    estimate: DesignTiming | None  # the chosen design's RTL timing estimate (None: nothing fits)
    space: GraphSpace

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
            **self.result.to_dict(),
        }

    def no_fit(self, board: Board, goal: RecallGoal, details: Path | None = None) -> FannsError:
        """The error when no evaluated design fits and reaches the goal (`details`: the dse.json written)."""
        best_recall = max((p.recall for p in self.result.points if p.fits), default=0.0)
        return FannsError(
            f"no graph design on {board.name} reaches {goal.text} (best recall that fits: {best_recall:.4f})",
            hint=("" if details is None else f"details in {details}; ") + "try a lower goal or another board",
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
) -> ChosenGraphDesign:
    """The graph DSE on these queries at the board's clock (or `given`), run again at the chosen
    design's RTL timing estimate when that is below the clock (`fanns.model.timing.resolve_clock`);
    shared by `fanns dse --graph` and `fanns generate --graph`."""
    space = space or GraphSpace(k=goal.k)
    clock, estimate = given or board.clock, None
    for _ in range(2):  # again at the RTL estimate when the chosen design's is below the board's clock
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
        )
        estimate = graph_design_timing(result.design, board.family) if result.design is not None else None
        wanted = resolve_clock(board.clock, given, estimate)
        if wanted.mhz >= clock.mhz:
            break
        clock = wanted
    return ChosenGraphDesign(result, clock, estimate, space)


def point_text(b: GraphPoint, space: GraphSpace) -> str:
    """One evaluated design in words: mode, units, channels, l, (mg, mc), Bloom filter, recall,
    latency, QPS and resources."""
    return (
        f"{b.mode}-query, {b.units} BFC unit(s) x {b.pipelines} pipeline(s), "
        f"{b.channels} channel(s), l {b.l}, (mg, mc) = ({b.mg}, {b.mc}), Bloom {space.bloom_h} x "
        f"{b.bloom_bits // space.bloom_h} bits: recall {b.recall:.4f}, latency {b.latency_us:.2f} us, {b.qps:,.0f} "
        f"QPS; LUT {b.resources.lut:,.0f}, BRAM18 {b.resources.bram18:,.0f}, DSP {b.resources.dsp:,.0f}"
    )


def held_out_recall(
    graph: GraphImage, design: GraphDesign, queries_fx: np.ndarray, groundtruth: np.ndarray
) -> tuple[float, tuple[float, float]]:
    """R@k of the design (its run-time l, k, mg, mc, Bloom filter and units) on queries that took
    no part in choosing it, with the 95 % bootstrap interval over those queries."""
    k = design.runtime.k
    found = search_batch(graph, queries_fx, traversal_config(design)).ids
    per_query = hits(found[:, :k], groundtruth[:, :k]) / k
    return float(per_query.mean()), bootstrap_interval(per_query)


@dataclass
class GoalDesign:
    """The graph design chosen for one (board, goal) on the selection queries, and its recall on
    the held-out ones with a 95 % bootstrap interval (None when no design fits)."""

    chosen: ChosenGraphDesign
    select: np.ndarray
    held: np.ndarray
    recall: float | None = None
    interval: tuple[float, float] | None = None


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
    the chosen design's recall on the rest."""
    nq = len(queries)
    q_fx, gt = graph.fmt.quantize(queries), ds.groundtruth(goal.k)[:nq]
    select, held = split_queries(nq, seed)
    chosen = choose_graph_design(graph, q_fx[select], gt[select], board, goal, objective, given, util)
    out = GoalDesign(chosen, select, held)
    if chosen.result.best is not None:
        out.recall, out.interval = held_out_recall(graph, chosen.result.design, q_fx[held], gt[held])
    return out
