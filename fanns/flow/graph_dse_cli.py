"""`fanns dse EXPLORE_DIR --graph KIND`: the graph DSE (`fanns.model.graph.dse`) on a graph
exploration (`fanns explore --graph`): the graph and queries it used, the recall goal, the board;
writes design.yaml (a `GraphDesign`) and dse.json (every evaluated design), as one staged folder
(`fanns.outputs`, the same rule as `fanns dse`). The design is chosen as `fanns generate --graph`
chooses it (`fanns.explore.graph_choice.design_for_goal`: on a seeded selection half of the
queries, promised by the held-out half)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fanns.boards import Clock, load_board
from fanns.checks import check_number
from fanns.datasets.loader import resolve_dataset
from fanns.errors import FannsError
from fanns.explore.graph import load_or_build, prepare_vectors
from fanns.explore.graph_choice import check_graph_goal, design_for_goal, point_text, recall_text
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
    if nq < 2:
        raise FannsError(
            f"--queries {nq}: choosing the design on some queries and confirming its recall on others needs at least 2",
            hint="e.g. --queries 200",
        )
    got = design_for_goal(graph, ds, queries[:nq], board, goal, args.objective, given, args.util, args.seed)
    chosen = got.chosen
    result, clock, estimate, space = chosen.result, chosen.clock, chosen.estimate, chosen.space
    out = Path(args.out)
    with staged_folder(out, args.force, "dse.json", WHAT) as tmp:
        (tmp / "dse.json").write_text(
            json.dumps(
                chosen.record(args.graph, goal, args.objective, board, nq)
                | ({} if result.best is None else {"recall": got.recall_record(args.seed)}),
                indent=1,
                sort_keys=True,
            )
            + "\n"
        )
        if result.best is not None:
            result.design.save(tmp / "design.yaml")
    if result.best is None:
        raise chosen.no_fit(board, goal, out / "dse.json", ds.nq)
    b = result.best
    r = got.recall_record(args.seed)
    console.print(
        f"evaluated {len(result.points)} graph designs on {r['selection_queries']} of {nq} queries", highlight=False
    )
    console.print(f"best for {args.objective}: {point_text(b, space)}", highlight=False)
    console.print(recall_text(r, space.k), highlight=False)
    console.print(f"clock: {clock.describe()}", highlight=False)
    if estimate is not None:
        console.print(estimate.describe(), highlight=False)
    console.print(f"wrote {out / 'design.yaml'}, {out / 'dse.json'}", highlight=False)
    return 0
