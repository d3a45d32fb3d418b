"""`fanns dse EXPLORE_DIR --graph KIND`: the graph DSE (`fanns.model.graph.dse`) on a graph
exploration (`fanns explore --graph`): the graph and queries it used, the recall goal, the board;
writes design.yaml (a `GraphDesign`) and dse.json (every evaluated design), as one staged folder
(`fanns.outputs`, the same rule as `fanns dse`)."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fanns.boards import Board, Clock, load_board
from fanns.checks import check_number
from fanns.datasets.loader import resolve_dataset
from fanns.errors import FannsError
from fanns.explore.graph import load_or_build, prepare_vectors
from fanns.index.goals import RecallGoal
from fanns.index.graph import GraphImage
from fanns.model.graph.dse import GraphDseResult, GraphPoint, GraphSpace, explore_graph
from fanns.model.graph.timing import graph_design_timing
from fanns.model.timing import DesignTiming, resolve_clock
from fanns.outputs import staged_folder, verify_files

WHAT = "DSE result"


def _graph_settings(info: dict, path: Path) -> tuple[int, int, int, int]:
    """(max degree, efConstruction, vector bits, queries) the exploration recorded, checked where
    they enter (the graph is rebuilt from them, so a damaged value must not reach the builder)."""
    try:
        build = info.get("build") or {}
        return (
            int(check_number(info["max_degree"], f"{path}: max_degree", lo=1, hi=1024, integer=True)),
            int(
                check_number(
                    build.get("efConstruction", 64), f"{path}: build.efConstruction", lo=1, hi=1 << 16, integer=True
                )
            ),
            int(
                check_number(
                    info["number_format"]["vec_bits"], f"{path}: number_format.vec_bits", lo=2, hi=16, integer=True
                )
            ),
            int(check_number(info["queries"], f"{path}: queries", lo=1, integer=True)),
        )
    except (KeyError, TypeError, AttributeError):
        raise FannsError(
            f"{path}: incomplete graph exploration record", hint="re-run `fanns explore --graph`"
        ) from None


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


def run_graph_dse(args: argparse.Namespace, console) -> int:

    path = Path(args.explore_dir) / f"graph_{args.graph}.json"
    verify_files(Path(args.explore_dir), [path.name] if path.is_file() else [], "exploration")
    try:
        info = json.loads(path.read_text())
        if not isinstance(info, dict):
            raise ValueError("not a mapping")
    except (OSError, ValueError):
        raise FannsError(
            f"{path} is missing or unreadable",
            hint=f"run `fanns explore DATASET --graph {args.graph} --out {args.explore_dir}` first",
        ) from None
    goal = args.recall
    check_graph_goal(goal)
    if info.get("graph") != args.graph:
        raise FannsError(
            f"{path}: the exploration of graph {info.get('graph')!r:.80}, not {args.graph!r}",
            hint=f"re-run `fanns explore DATASET --graph {args.graph}`",
        )
    degree, efc, vec_bits, explored = _graph_settings(info, path)  # the whole record, before any data is read
    board = load_board(args.board)
    ds, _ = resolve_dataset(info.get("dataset"), args.dataset, f"fanns explore --graph {args.graph}", str(path))
    graph = load_or_build(ds, args.graph, degree, efc, vec_bits)
    nq = min(args.queries or explored, ds.nq)
    _, queries = prepare_vectors(ds)
    given = None if args.clock is None else Clock.user(args.clock)
    chosen = choose_graph_design(
        graph,
        graph.fmt.quantize(queries[:nq]),
        ds.groundtruth(goal.k)[:nq],
        board,
        goal,
        args.objective,
        given,
        args.util,
    )
    result, clock, estimate, space = chosen.result, chosen.clock, chosen.estimate, chosen.space
    out = Path(args.out)
    with staged_folder(out, args.force, "dse.json", WHAT) as tmp:
        (tmp / "dse.json").write_text(
            json.dumps(
                chosen.record(args.graph, goal, args.objective, board, nq),
                indent=1,
                sort_keys=True,
            )
            + "\n"
        )
        if result.best is not None:
            result.design.save(tmp / "design.yaml")
    if result.best is None:
        raise chosen.no_fit(board, goal, out / "dse.json")
    b = result.best
    console.print(f"evaluated {len(result.points)} graph designs on {nq} queries", highlight=False)
    console.print(f"best for {args.objective}: {point_text(b, space)}", highlight=False)
    console.print(f"clock: {clock.describe()}", highlight=False)
    if estimate is not None:
        console.print(estimate.describe(), highlight=False)
    console.print(f"wrote {out / 'design.yaml'}, {out / 'dse.json'}", highlight=False)
    return 0
