"""`fanns dse EXPLORE_DIR --graph KIND`: the graph DSE (`fanns.model.graph.dse`) on a graph
exploration (`fanns explore --graph`): the graph and queries it used, the recall goal, the board;
writes design.yaml (a `GraphDesign`) and dse.json (every evaluated design), as one staged folder
(`fanns.outputs`, the same rule as `fanns dse`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fanns.boards import Clock, load_board
from fanns.checks import check_number
from fanns.datasets.loader import resolve_dataset
from fanns.errors import FannsError
from fanns.explore.graph import load_or_build, prepare_vectors
from fanns.model.graph.dse import GraphSpace, explore_graph
from fanns.model.graph.timing import graph_design_timing
from fanns.model.timing import resolve_clock
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
    if goal.truth != goal.k:
        raise FannsError(f"graph designs take an R@k goal, got {goal.text}")
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
    space = GraphSpace(k=goal.k)
    given = None if args.clock is None else Clock.user(args.clock)
    clock, estimate = given or board.clock, None
    for _ in range(2):  # again at the RTL estimate when the chosen design's is below the board's clock
        result = explore_graph(
            graph,
            graph.fmt.quantize(queries[:nq]),
            ds.groundtruth(goal.k)[:nq],
            board,
            goal.target,
            objective=args.objective,
            clock_mhz=clock.mhz,
            util=args.util,
            space=space,
        )
        estimate = graph_design_timing(result.design, board.family) if result.design is not None else None
        wanted = resolve_clock(board.clock, given, estimate)
        if wanted.mhz >= clock.mhz:
            break
        clock = wanted
    out = Path(args.out)
    with staged_folder(out, args.force, "dse.json", WHAT) as tmp:
        (tmp / "dse.json").write_text(
            json.dumps(
                {
                    "kind": "graph",
                    "graph": args.graph,
                    "goal": goal.text,
                    "objective": args.objective,
                    "board": board.name,
                    "queries": nq,
                    "clock": clock.to_dict(),
                    "rtl_timing": None if estimate is None else estimate.to_dict(),
                    **result.to_dict(),
                },
                indent=1,
                sort_keys=True,
            )
            + "\n"
        )
        if result.best is not None:
            result.design.save(tmp / "design.yaml")
    if result.best is None:
        best_recall = max((p.recall for p in result.points if p.fits), default=0.0)
        raise FannsError(
            f"no graph design on {board.name} reaches {goal.text} (best recall that fits: {best_recall:.4f})",
            hint=f"details in {out / 'dse.json'}; try a lower goal or another board",
        )
    b = result.best
    console.print(f"evaluated {len(result.points)} graph designs on {nq} queries", highlight=False)
    console.print(
        f"best for {args.objective}: {b.mode}-query, {b.units} BFC unit(s) x {b.pipelines} pipeline(s), "
        f"{b.channels} channel(s), l {b.l}, (mg, mc) = ({b.mg}, {b.mc}), Bloom {space.bloom_h} x "
        f"{b.bloom_bits // space.bloom_h} bits: recall {b.recall:.4f}, latency {b.latency_us:.2f} us, {b.qps:,.0f} "
        f"QPS; LUT {b.resources.lut:,.0f}, BRAM18 {b.resources.bram18:,.0f}, DSP {b.resources.dsp:,.0f}",
        highlight=False,
    )
    console.print(f"clock: {clock.describe()}", highlight=False)
    if estimate is not None:
        console.print(estimate.describe(), highlight=False)
    console.print(f"wrote {out / 'design.yaml'}, {out / 'dse.json'}", highlight=False)
    return 0
