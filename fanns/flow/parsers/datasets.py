"""The options of `fanns datasets` and `fanns datasets info` (`fanns.flow.datasets_cli` runs them)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "datasets",
        help="list built-in datasets, or describe a dataset",
        description="Without a subcommand: list the built-in datasets. `info SPEC` describes any dataset spec.",
    )
    p.set_defaults(func="fanns.flow.datasets_cli:datasets_command")
    ps = p.add_subparsers(dest="datasets_command", metavar="SUBCOMMAND")
    info = ps.add_parser(
        "info",
        help="print N, dimension, dtype, metric and ground-truth status of a dataset",
        description="Describe a dataset: an HDF5 file, a directory of vector files, or builtin:NAME.",
    )
    info.add_argument(
        "spec", metavar="SPEC", help="HDF5 file, directory with base/query(/groundtruth) files, or builtin:NAME"
    )
    info.set_defaults(func="fanns.flow.datasets_cli:datasets_info_command")
