"""The options of `fanns boards` (`fanns.boards` runs it)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "boards",
        help="list the FPGA boards and their key figures",
        description="List the board files (boards/*.yaml) with usable resources, memory, clock and platform. "
        "Give a board name or a board file to see its per-SLR resources and sources.",
    )
    p.add_argument("board", nargs="?", help="a board name (e.g. u55c) or the path of a board YAML file")
    p.set_defaults(func="fanns.boards:boards_command")
