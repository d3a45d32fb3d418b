"""`fanns dse EXPLORE_DIR --board B --recall R@k=x --out DIR`: the best IVF-PQ accelerator design.

Reads the exploration (`fanns explore`), evaluates every index at its smallest nprobe for the
goal against every combination of stage implementations on the board (`fanns.model.dse`),
writes DIR/dse.json and DIR/design.yaml (`fanns.model.report`) and prints the top designs in
the columns of FANNS Table 6.3.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fanns.errors import FannsError


def _cmd(args: argparse.Namespace) -> int:
    from rich.console import Console

    from fanns.boards import load_board
    from fanns.model import dse, report
    from fanns.model.workload import workloads_from_explore

    if args.graph:
        from fanns.model.graph_cli import run_graph_dse

        return run_graph_dse(args, Console())
    board = load_board(args.board)
    clock = float(args.clock) if args.clock is not None else board.clock_mhz
    workloads, unreachable = workloads_from_explore(Path(args.explore_dir), args.recall)
    if args.queries is not None:
        if args.queries < 1:
            raise FannsError(f"--queries {args.queries}: must be at least 1")
        workloads = [w.with_queries(args.queries) for w in workloads]
    outcome = dse.run(workloads, board, args.recall, clock, args.util, args.top, unreachable)
    paths = report.write(outcome, Path(args.out))
    console = Console(width=None if sys.stdout.isatty() else 200)  # logs keep the whole table
    if outcome.best is None:
        raise FannsError(
            "\n  ".join(outcome.explain),
            hint=f"details in {paths[0]}; try another board, a higher --util, or a lower goal",
        )
    report.print_table(outcome, console)
    best = outcome.best
    cycles = ", ".join(f"{k} {t.interval:,.0f}" for k, t in best.timings.items())
    console.print(f"best: {best.workload.label()}: {best.qps:,.0f} QPS, bottleneck {best.bottleneck}; cycles/query: {cycles}", highlight=False)
    console.print(f"latency of one query: {best.latency_cycles / clock:,.1f} us", highlight=False)
    r = outcome.result
    console.print(
        f"searched {len(workloads)} index(es): {r.evaluated:,} combinations evaluated in {r.seconds:.2f} s "
        f"({r.evaluated / max(r.seconds, 1e-9):,.0f}/s) of a design space of {r.raw:,}; DSE total {outcome.seconds:.1f} s",
        highlight=False,
    )
    for u in outcome.unreachable:
        console.print(f"  {u['index']} cannot reach {args.recall} (best recall {u.get('best_recall')})", highlight=False)
    console.print("wrote " + ", ".join(str(p) for p in paths), highlight=False)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dse",
        help="choose the best IVF-PQ accelerator design (or, with --graph, graph-search design) for a recall goal on a board",
        description=(
            "Evaluate every explored index (at its smallest nprobe for the goal, with its measured probes) "
            "against every combination of stage implementations (PE counts, micro-architectures, on-chip or "
            "off-chip storage, memory channels) that fits the board, and write the best design."
        ),
    )
    p.add_argument("explore_dir", metavar="EXPLORE_DIR", help="output folder of `fanns explore` (holds explore.json)")
    p.add_argument("--board", required=True, help="board name (see `fanns boards`) or path of a board YAML file")
    p.add_argument("--recall", required=True, metavar="R@k=x", help="the recall goal, e.g. R@10=0.8")
    p.add_argument("--clock", type=float, help="accelerator clock in MHz (default: the board's kernel clock)")
    p.add_argument("--util", type=float, default=0.6, help="utilisation cap per resource and SLR, shell included (default 0.6)")
    p.add_argument("--top", type=int, default=5, help="how many designs to list besides the best (default 5)")
    p.add_argument("--queries", type=int, help="use only the first N sample queries of the exploration (default: all)")
    p.add_argument("--out", required=True, help="output folder for dse.json and design.yaml")
    p.add_argument("--graph", choices=("hnsw", "nsg"),
                   help="graph mode: design a Falcon (DST) accelerator for the graph of this kind that EXPLORE_DIR explored")
    p.add_argument("--objective", choices=("latency", "qps"), default="latency",
                   help="graph mode: minimise latency at batch 1 or maximise QPS at large batches (default latency)")
    p.set_defaults(func=_cmd)
