"""`fanns explore DATASET`: find index parameters and measure recall and hardware work.

Graph indexes (`--graph hnsw,nsg`) are explored by `fanns.explore.graph_explore`: graph builds, the
DST (mg, mc) sweep on the Falcon cycle model, the best configuration per parallel mode.
"""
from __future__ import annotations

import argparse

from fanns.errors import FannsError


def _run(args: argparse.Namespace) -> int:
    from fanns.explore.graph_explore import run_graph_explore

    if not args.graph:
        raise FannsError("nothing to explore: give the index family", hint="e.g. fanns explore builtin:sift-10k --graph hnsw,nsg")
    return run_graph_explore(args)


def register(sub: argparse._SubParsersAction) -> None:
    from fanns.explore.graph_explore import add_graph_arguments

    p = sub.add_parser(
        "explore",
        help="build indexes over a parameter grid, measure recall and the work per query",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
    )
    p.add_argument("dataset", metavar="DATASET", help="builtin:NAME, an HDF5 file or a dataset folder (see `fanns datasets`)")
    p.add_argument("--out", default="work/explore", help="output folder (default work/explore)")
    add_graph_arguments(p)
    p.set_defaults(func=_run)
