"""`fanns sweep DATASET --boards B1,B2 --recall R@1=0.3,R@10=0.8 --out REPORT`: a design-space report.

Runs (or reuses) the exploration, the sweep of `fanns.report.sweep` and writes the report folder;
what the command does for a user, and its options, are its help: `fanns.flow.parsers.sweep`.
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
from fanns.explore.ivfpq_reuse import config_from_args, ensure_exploration
from fanns.explore.ivfpq_training import DatasetRef, RemoteTraining
from fanns.flow.dse_cli import parse_slo
from fanns.flow.parsers.explore import add_graph_arguments
from fanns.index.goals import parse_goal
from fanns.model.ivfpq.rag import schema as rag_schema
from fanns.outputs import check_destination, write_folder
from fanns.progress import status
from fanns.report import beyond, figures, html, rag, tables
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

    parser = argparse.ArgumentParser(add_help=False)
    add_graph_arguments(parser)
    ns = parser.parse_args([])
    ns.graph, ns.board, ns.dataset, ns.graph_queries = args.graph, board, args.dataset, args.graph_queries
    return ns


def report_goals(data: dict) -> list[dict]:
    """The report's goals as its figures take them: text, measure name, target and k."""
    return [
        {
            "text": s,
            "measure": s.split("=")[0],
            "target": float(s.split("=")[1]),
            "k": int(s.split("@")[1].split("=")[0]),
        }
        for s in data["settings"]["goals"]
    ]


def build_report(data: dict) -> dict[str, bytes]:
    """Every file of the report folder (relative path -> bytes)."""

    goals = report_goals(data)
    chosen = figures.chosen_points(data["curves"], data["summary"], goals)
    svgs = {
        "recall": figures.recall_figure(data["curves"], goals, chosen),
        "qps": figures.qps_recall_figure(data["fpga_points"], data["cpu_points"], goals, data["settings"]["boards"]),
        "resources": figures.resource_figure(data["designs"], data["boards"], data["settings"]["goals"]),
    }
    graph_svgs = {g["graph"]: figures.graph_figure(g) for g in data["graphs"]}
    beyond_svgs = [beyond.svgs(e) for e in data["beyond"]]
    rag_svgs = [rag.figure(section) for section in data.get("rag", [])]
    files = {
        "index.html": html.render(data, svgs, graph_svgs, beyond_svgs, rag_svgs).encode(),
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


def sweep_command(args: argparse.Namespace) -> int:
    """`fanns sweep` (options: `fanns.flow.parsers.sweep`)."""
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
    rag_spec = rag_schema.load(Path(args.rag)) if args.rag else None
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
        rag=rag_spec,
    )
    data = Sweep(ds, folder, explore, settings, graph_args).run()
    status("rendering the report")
    files = build_report(data)
    write_folder(files, out, args.force, MARKER, "sweep report")
    console = Console(width=None if sys.stdout.isatty() else 200)
    print_summary(data, console)
    console.print(f"wrote {out}/: " + ", ".join(sorted(files)), highlight=False)
    return 0
