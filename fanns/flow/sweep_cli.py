"""`fanns sweep DATASET --boards B1,B2 --recall R@1=0.3,R@10=0.8 --out REPORT`: a design-space report.

Runs (or reuses) the IVF-PQ exploration of the dataset, the DSE of every board for every recall
goal and the trade-off sweeps around them (`fanns.report.sweep`), optionally the graph (DST)
sweep, and writes REPORT/ atomically: index.html (self-contained: inline CSS, SVG figures),
report.json with all the data, and the tables as CSV files.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from fanns.datasets.loader import load_dataset
from fanns.errors import FannsError
from fanns.explore.graph import add_graph_arguments, parse_kinds
from fanns.explore.ivfpq_reuse import add_explore_options, config_from_args, ensure_exploration
from fanns.explore.ivfpq_training import DatasetRef, RemoteTraining
from fanns.flow.dse_cli import add_slo_options, parse_slo
from fanns.index.goals import parse_goal
from fanns.outputs import check_destination, write_folder
from fanns.progress import status
from fanns.report import beyond, figures, html, tables
from fanns.report.html import cell
from fanns.report.sweep import Sweep, SweepSettings, load_boards
from fanns.report.tables import summary_table
from fanns.tools.parallel import check_cluster

MARKER = "report.json"


def split_list(values: list[str] | None) -> list[str]:
    """Flatten repeated and comma-separated option values, keeping order and dropping repeats."""
    out: list[str] = []
    for v in values or []:
        for item in v.split(","):
            item = item.strip()
            if item and item not in out:
                out.append(item)
    return out


def parse_goals(values: list[str] | None):

    texts = split_list(values)
    if not texts:
        raise FannsError("no recall goal given", hint="add --recall R@10=0.8 (comma-separated or repeated)")
    goals = []
    for g in (parse_goal(t) for t in texts):
        if g not in goals:
            goals.append(g)
    return goals


def graph_namespace(args: argparse.Namespace, board: str) -> argparse.Namespace | None:
    """The `fanns explore --graph` options at their defaults, for the kinds and board of the sweep."""
    if not args.graph:
        return None

    parse_kinds(args.graph)  # fail early on a bad kind
    parser = argparse.ArgumentParser(add_help=False)
    add_graph_arguments(parser)
    ns = parser.parse_args([])
    ns.graph, ns.board, ns.dataset, ns.graph_queries = args.graph, board, args.dataset, args.graph_queries
    return ns


def build_report(data: dict) -> dict[str, bytes]:
    """Every file of the report folder (relative path -> bytes)."""

    goals = [
        {
            "text": s,
            "measure": s.split("=")[0],
            "target": float(s.split("=")[1]),
            "k": int(s.split("@")[1].split("=")[0]),
        }
        for s in data["settings"]["goals"]
    ]
    svgs = {
        "recall": figures.recall_figure(data["curves"], goals),
        "qps": figures.qps_recall_figure(data["fpga_points"], data["cpu_points"], goals, data["settings"]["boards"]),
        "resources": figures.resource_figure(data["designs"], data["boards"], data["settings"]["goals"]),
    }
    graph_svgs = {g["graph"]: figures.graph_figure(g) for g in data["graphs"]}
    beyond_svgs = [beyond.svgs(e) for e in data["beyond"]]
    files = {
        "index.html": html.render(data, svgs, graph_svgs, beyond_svgs).encode(),
        MARKER: (json.dumps(data, indent=1, sort_keys=True) + "\n").encode(),
    }
    for name, make in tables.CSV_FILES.items():
        files[name] = tables.csv_text(make(data)).encode()
    return files


def print_summary(data: dict, console) -> None:

    cols, rows = summary_table(data)
    table = Table(title=f"{data['dataset']['name']}: best design per board and goal")
    for c in cols:
        table.add_column(c)
    for r in rows:
        table.add_row(*(cell(c, v) for c, v in zip(cols, r)))
    console.print(table)


def _cmd(args: argparse.Namespace) -> int:

    out = Path(args.out)
    check_destination(out, args.force, MARKER, "sweep report")
    goals = parse_goals(args.recall)
    boards = split_list(args.boards)
    if not boards:
        raise FannsError("no board given", hint="e.g. --boards u55c,u250 (see `fanns boards`)")
    load_boards(tuple(boards))
    for flag, value, lo in (
        ("--max-nprobe", args.max_nprobe, 1),
        ("--hw-queries", args.hw_queries, 1),
        ("--top", args.top, 1),
    ):
        if value is not None and value < lo:
            raise FannsError(f"{flag} {value}: must be at least {lo}")
    if args.clock is not None and args.clock <= 0:
        raise FannsError(f"--clock {args.clock}: must be positive (MHz)")

    if args.cluster is not None:
        check_cluster(args.cluster)
    slo = parse_slo(args)
    graph_args = graph_namespace(args, boards[0])
    ds = load_dataset(args.dataset)
    cfg = config_from_args(args, goals)
    remote = RemoteTraining(args.cluster, DatasetRef.of(args.dataset, ds)) if args.cluster else None
    folder, explore, _ = ensure_exploration(ds, cfg, Path(args.explore_dir) if args.explore_dir else None, remote)
    settings = SweepSettings(
        boards=tuple(boards),
        goals=tuple(goals),
        clock_mhz=args.clock,
        util=args.util,
        top=args.top,
        hw_queries=args.hw_queries,
        max_nprobe=args.max_nprobe,
        slo=slo,
        load_qps=args.load,
        cluster=args.cluster,
    )
    data = Sweep(ds, folder, explore, settings, graph_args).run()
    status("rendering the report")
    files = build_report(data)
    write_folder(files, out, args.force, MARKER, "sweep report")
    console = Console(width=None if sys.stdout.isatty() else 200)
    print_summary(data, console)
    console.print(f"wrote {out}/: " + ", ".join(sorted(files)), highlight=False)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help=(
            "design-space report: the best accelerator per board "
            "and recall goal, with trade-off plots (HTML, JSON, CSV)"
        ),
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "dataset", metavar="DATASET", help="builtin:NAME, an HDF5 file or a dataset folder (see `fanns datasets`)"
    )
    p.add_argument(
        "--boards",
        action="append",
        required=True,
        metavar="B1,B2",
        help="boards to design for: comma-separated and/or repeated (see `fanns boards`)",
    )
    p.add_argument(
        "--recall",
        action="append",
        metavar="R@k=x,...",
        help="recall goals: comma-separated and/or repeated, R@k=x (k-recall@k) or 1-R@k=x (1-recall@k)",
    )
    p.add_argument("--out", required=True, metavar="REPORT", help="output folder of the report")
    p.add_argument("--force", action="store_true", help="replace REPORT if it is an earlier sweep report")
    p.add_argument(
        "--clock",
        type=float,
        help="accelerator clock in MHz for every board (default: each board's sourced clock, `fanns boards`, "
        "lowered to a design's RTL timing estimate when that is below it)",
    )
    p.add_argument(
        "--util", type=float, default=0.6, help="utilisation cap per resource and SLR, shell included (default 0.6)"
    )
    p.add_argument(
        "--top", type=int, default=3, help="designs kept per board and goal in report.json and designs.csv (default 3)"
    )
    p.add_argument(
        "--hw-queries",
        type=int,
        help="queries for the hardware-faithful recall curves (default: all the exploration used)",
    )
    p.add_argument(
        "--max-nprobe", type=int, default=64, help="largest nprobe of the curves beyond the goals' own (default 64)"
    )
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help=(
            "run the index training (when an exploration runs) and the DSE jobs on an existing cluster: "
            "tcp://HOST:PORT of a Dask scheduler (`dask scheduler`; "
            "needs the distributed package) or ray://HOST:PORT (default: in this process)"
        ),
    )
    add_slo_options(p)
    p.add_argument(
        "--graph", metavar="KINDS", help="also sweep DST (mg, mc) on graph indexes: comma-separated hnsw,nsg"
    )
    p.add_argument("--graph-queries", type=int, default=0, help="queries for the graph sweep (default: all)")

    add_explore_options(p)
    p.set_defaults(func=_cmd)
