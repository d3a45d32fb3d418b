"""`fanns generate`: check the options both kinds of design share, refuse the options of the
other kind, fill in the kind's defaults, and run the IVF-PQ flow (`fanns.flow.ivfpq_generate`)
or, with --graph, the graph flow (`fanns.flow.graph_project`).

Why here: the two flows take most options alike (dataset, goal, board, clock, faces, test and
simulated queries), but an option one kind ignores would otherwise be dropped silently
(`--nlist` on a graph design, `--max-degree` on an IVF-PQ one); this is where the input enters,
so it is checked once, here.
"""

from __future__ import annotations

import argparse

from fanns.errors import FannsError
from fanns.flow.graph_project import generate_graph_command
from fanns.flow.ivfpq_generate import generate_command as generate_ivfpq_command
from fanns.flow.parsers.generate import GRAPH_DEFAULTS, IVFPQ_DEFAULTS

IVFPQ_ONLY = {
    "nlist": "--nlist",
    "m": "--m",
    "opq_mode": "--opq/--no-opq/--both",
    "explore_dir": "--explore-dir",
    "lists_on_disk": "--lists-on-disk",
    "shard_rows": "--shard-rows",
    "top": "--top",
}
"""Options only an IVF-PQ design takes (dest -> flag)."""
GRAPH_ONLY = {
    "max_degree": "--max-degree",
    "ef_construction": "--ef-construction",
    "vec_bits": "--vec-bits",
    "objective": "--objective",
}
"""Options only a graph design (--graph) takes (dest -> flag)."""


def _given(args: argparse.Namespace, options: dict[str, str]) -> list[str]:
    return [flag for dest, flag in options.items() if getattr(args, dest) not in (None, False)]


def check_generate_options(args: argparse.Namespace) -> None:
    """The options both flows share, and none of the other kind's (module docstring)."""
    for flag, value, lo in (("--test-queries", args.test_queries, 2), ("--sim-queries", args.sim_queries, 2)):
        if value < lo:
            raise FannsError(
                f"{flag} {value}: must be at least {lo}",
                hint="the RTL simulation's steady-state interval needs two queries",
            )
    if args.sim_queries > args.test_queries:
        raise FannsError(
            f"--sim-queries {args.sim_queries} is more than --test-queries {args.test_queries}",
            hint="simulate at most the project's test queries",
        )
    if args.clock is not None and args.clock <= 0:
        raise FannsError(f"--clock {args.clock}: must be positive (MHz)")
    if not 0 < args.util <= 1:
        raise FannsError(f"--util {args.util}: must be in (0, 1]", hint="e.g. --util 0.6")
    if args.graph:
        wrong = _given(args, IVFPQ_ONLY)
        if wrong:
            raise FannsError(
                f"{', '.join(wrong)} applies to IVF-PQ designs, not to --graph {args.graph}",
                hint="drop it, or drop --graph for an IVF-PQ design",
            )
    else:
        wrong = _given(args, GRAPH_ONLY)
        if wrong:
            raise FannsError(
                f"{', '.join(wrong)} applies to graph designs only",
                hint="add --graph hnsw (or nsg) for a graph-search design, or drop it",
            )


def generate_command(args: argparse.Namespace) -> int:
    """`fanns generate` (options: `fanns.flow.parsers.generate`)."""
    check_generate_options(args)
    defaults = GRAPH_DEFAULTS if args.graph else IVFPQ_DEFAULTS
    for dest, value in defaults.items():
        if getattr(args, dest) is None:
            setattr(args, dest, value)
    return generate_graph_command(args) if args.graph else generate_ivfpq_command(args)
