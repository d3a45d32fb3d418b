"""`fanns datasets` (list the built-ins) and `fanns datasets info SPEC` (options: `fanns.flow.parsers.datasets`)."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from fanns.datasets.builtins import list_builtins
from fanns.datasets.loader import load_dataset


def datasets_command(args: argparse.Namespace) -> int:
    """`fanns datasets`: the built-in datasets as a table."""
    table = Table(title="built-in datasets (use as builtin:NAME)")
    for col in ("name", "N", "nq", "d", "dtype", "metric", "description"):
        table.add_column(col)
    for b in list_builtins():
        table.add_row(b.name, f"{b.n:,}", f"{b.nq:,}", str(b.d), b.dtype, b.metric, b.description)
    Console().print(table)
    return 0


def datasets_info_command(args: argparse.Namespace) -> int:
    """`fanns datasets info SPEC`: what fanns reads from a dataset."""
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
