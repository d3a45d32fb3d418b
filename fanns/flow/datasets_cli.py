"""`fanns datasets` (list the built-ins) and `fanns datasets info SPEC`."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from fanns.datasets.builtins import list_builtins
from fanns.datasets.loader import load_dataset


def _list(args: argparse.Namespace) -> int:

    table = Table(title="built-in datasets (use as builtin:NAME)")
    for col in ("name", "N", "nq", "d", "dtype", "metric", "description"):
        table.add_column(col)
    for b in list_builtins():
        table.add_row(b.name, f"{b.n:,}", f"{b.nq:,}", str(b.d), b.dtype, b.metric, b.description)
    Console().print(table)
    return 0


def _info(args: argparse.Namespace) -> int:

    ds = load_dataset(args.spec)
    rows = [
        ("name", ds.name),
        ("base vectors (N)", f"{ds.n:,}"),
        ("queries", f"{ds.nq:,}"),
        ("dimension", str(ds.d)),
        ("dtype", str(ds.base.dtype)),
        ("metric", ds.metric),
        ("ground truth", ds.groundtruth_status()),
        ("cache", str(ds.cache_dir)),
    ]
    if ds.description:
        rows.insert(1, ("description", ds.description))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "datasets",
        help="list built-in datasets, or describe a dataset",
        description="Without a subcommand: list the built-in datasets. `info SPEC` describes any dataset spec.",
    )
    p.set_defaults(func=_list)
    ps = p.add_subparsers(dest="datasets_command", metavar="SUBCOMMAND")
    info = ps.add_parser(
        "info",
        help="print N, dimension, dtype, metric and ground-truth status of a dataset",
        description="Describe a dataset: an HDF5 file, a directory of vector files, or builtin:NAME.",
    )
    info.add_argument(
        "spec", metavar="SPEC", help="HDF5 file, directory with base/query(/groundtruth) files, or builtin:NAME"
    )
    info.set_defaults(func=_info)
