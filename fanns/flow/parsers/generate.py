"""The options of `fanns generate` (`fanns.flow.ivfpq_generate` runs it)."""

from __future__ import annotations

import argparse

from fanns.checks import PLATFORM, arg_int, arg_name
from fanns.choices import FACES
from fanns.flow.parsers.dse import add_target_options
from fanns.flow.parsers.explore import add_explore_options
from fanns.index.goals import parse_goal


def register(sub: argparse._SubParsersAction) -> None:

    p = sub.add_parser(
        "generate",
        help="dataset -> verified accelerator project: explore, DSE, HLS and RTL generation, simulation, report",
        description=(
            "Explore IVF-PQ indexes of DATASET (reusing an earlier exploration with the same data and settings), "
            "choose the best design for the recall goal on the board (as `fanns dse`), generate its Vitis HLS "
            "project (hls/) and its Verilog (rtl/) with the memory images and test data (data/), with --sim check "
            "a sample of test queries on every face against the bit-accurate reference model, and write report/ "
            "and a README. PROJECT appears complete or not at all; an existing one is replaced only with --force."
        ),
    )
    p.add_argument(
        "dataset", metavar="DATASET", help="builtin:NAME, an HDF5 file or a dataset folder (see `fanns datasets`)"
    )
    p.add_argument(
        "--recall",
        required=True,
        type=parse_goal,
        metavar="R@k=x",
        help="the recall goal: R@k=x (k-recall@k) or 1-R@k=x (1-recall@k)",
    )
    p.add_argument("--board", required=True, help="board name (see `fanns boards`) or path of a board YAML file")
    p.add_argument("--out", required=True, metavar="PROJECT", help="output folder of the project (written atomically)")
    p.add_argument(
        "--backend",
        default=",".join(FACES),
        metavar="hls,rtl",
        help="faces to generate: hls, rtl or both (default hls,rtl)",
    )
    add_target_options(p)
    p.add_argument(
        "--top",
        type=arg_int(0, 1000),
        default=5,
        help="designs listed besides the best in the table and report/dse.json (default 5)",
    )
    p.add_argument(
        "--platform",
        type=arg_name(PLATFORM),
        help="Vitis platform of the HLS face and the RTL kernel (default: the board file's)",
    )
    p.add_argument(
        "--test-queries",
        type=arg_int(1, 1_000_000),
        default=100,
        help="test queries (with exact neighbours) in the project (default 100)",
    )
    p.add_argument(
        "--sim",
        action="store_true",
        help="simulate a sample of the test queries on every face before the project is written",
    )
    p.add_argument(
        "--sim-queries", type=arg_int(2, 1_000_000), default=16, help="test queries simulated with --sim (default 16)"
    )
    p.add_argument("--build-dir", help="where simulator builds are cached (default: the fanns cache folder)")
    p.add_argument(
        "--force", action="store_true", help="replace PROJECT if it is a project written by `fanns generate`"
    )
    add_explore_options(p)
    p.set_defaults(func="fanns.flow.ivfpq_generate:generate_command")
