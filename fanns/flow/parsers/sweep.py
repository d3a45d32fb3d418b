"""`fanns sweep DATASET --boards B1,B2 --recall R@1=0.3,R@10=0.8 --out REPORT`: a design-space report.

Runs (or reuses) the IVF-PQ exploration of the dataset, the DSE of every board for every recall
goal and the trade-off sweeps around them (`fanns.report.sweep`), optionally the graph (DST)
sweep, and writes REPORT/ atomically: index.html (self-contained: inline CSS, SVG figures),
report.json with all the data, and the tables as CSV files.

This module holds the options; `fanns.flow.sweep_cli` runs the command.
"""

from __future__ import annotations

import argparse

from fanns.checks import arg_graph_kinds
from fanns.flow.parsers.dse import add_slo_options
from fanns.flow.parsers.explore import add_explore_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help=(
            "design-space report: the best accelerator per board "
            "and recall goal, with trade-off plots (HTML, JSON, CSV)"
        ),
        description=__doc__.split("\n\n", 1)[1].rsplit("\n\n", 1)[0],
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
        "--clock", type=float, help="accelerator clock in MHz for every board (default: each board's kernel clock)"
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
        "--graph",
        type=arg_graph_kinds,
        metavar="KINDS",
        help="also sweep DST (mg, mc) on graph indexes: comma-separated hnsw,nsg",
    )
    p.add_argument("--graph-queries", type=int, default=0, help="queries for the graph sweep (default: all)")

    add_explore_options(p)
    p.set_defaults(func="fanns.flow.sweep_cli:sweep_command")
