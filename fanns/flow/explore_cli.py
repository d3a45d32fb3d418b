"""`fanns explore DATASET`: find index parameters and measure recall and hardware work.

IVF-PQ indexes (`--recall R@k=x`) are explored by `fanns.explore.ivfpq`: train IVF{nlist},PQ{m}
(and OPQ{m},IVF{nlist},PQ{m}) indexes, find the smallest nprobe per recall goal, measure the
hardware-faithful recall, the codes scanned per query and faiss-cpu's QPS (OUT/explore.json).
Graph indexes (`--graph hnsw,nsg`) are explored by `fanns.explore.graph`: graph builds, the
DST (mg, mc) sweep on the Falcon cycle model, the best configuration per parallel mode.

OUT is written as one staged folder (`fanns.outputs`): it appears whole or not at all, and an
earlier exploration in it is replaced only with --force (reusing its trained indexes); files in
it that fanns did not write are kept, and one fanns wrote but that was edited since blocks it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import faiss
from rich.console import Console
from rich.table import Table

from fanns.checks import arg_int
from fanns.datasets.loader import load_dataset
from fanns.errors import FannsError
from fanns.explore.graph import add_graph_arguments, run_graph_explore
from fanns.explore.ivfpq import WHAT, ExploreConfig, IvfPqExplorer, is_cached_index
from fanns.explore.ivfpq_reuse import add_index_grid_options, add_lists_options, lists_settings
from fanns.explore.ivfpq_training import DatasetRef, RemoteTraining
from fanns.index.goals import parse_goal
from fanns.model.cpu_baseline import basis_label, cpu_basis
from fanns.model.ivfpq.no_fit import larger_m_text
from fanns.outputs import check_destination, staged_folder
from fanns.tools.parallel import check_cluster


def _int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise FannsError(f"expected comma-separated integers, got {text!r}", hint="e.g. --nlist 256,1024") from None
    if not values or min(values) < 1:
        raise FannsError(f"expected positive integers, got {text!r}")
    return values


def _ivfpq_explorer(args: argparse.Namespace) -> IvfPqExplorer:
    """The explorer of the IVF-PQ options (dataset loaded, inputs checked, ground truth ready)."""
    goals = sorted(set(args.recall))
    if args.faiss_threads:
        faiss.omp_set_num_threads(args.faiss_threads)
    ds = load_dataset(args.dataset)
    cfg = ExploreConfig(
        goals=goals,
        nlists=_int_list(args.nlist) if args.nlist else None,
        ms=_int_list(args.m) if args.m else None,
        opq={"both": (False, True), "opq": (True,), "no-opq": (False,)}[args.opq_mode],
        train_size=args.train_size,
        max_queries=args.queries,
        seed=args.seed,
        vec_bits=args.pq_vec_bits,
        lut_bits=args.pq_lut_bits,
        **lists_settings(args),
    )
    remote = RemoteTraining(args.cluster, DatasetRef.of(args.dataset, ds)) if args.cluster else None
    return IvfPqExplorer(ds, cfg, Path(args.out), force=args.force, remote=remote)


def _cpu_cell(r: dict) -> str:
    """The CPU figure a ratio divides by, with its basis when the measurements say it."""
    cpu = r.get("cpu") or {}
    return f"{r['cpu_qps']:.0f}" + (f" ({basis_label(cpu_basis(cpu))})" if "all" in cpu else "")


def _print_ivfpq(explorer: IvfPqExplorer, result: dict, out: Path) -> None:
    ds, goals = explorer.ds, explorer.cfg.goals
    console = Console()
    for g in goals:
        table = Table(title=f"{ds.name}: {g.text}")
        cols = ("index", "nprobe", "selection recall", "held-out recall (95 % CI)", "hw recall (held-out)")
        for col in (*cols, "codes/query (mean, P99)", "KB/query", "CPU QPS"):
            table.add_column(col)
        for rec in result["indexes"]:
            r = rec["goals"][g.text]
            if r["reached"]:
                c = r["codes_per_query"]
                table.add_row(
                    rec["index"],
                    str(r["nprobe"]),
                    f"{r['selection_recall']:.3f}",
                    f"{r['recall']:.3f} ({r['recall_interval'][0]:.3f}-{r['recall_interval'][1]:.3f})",
                    f"{r['hw_recall']:.3f}",
                    f"{c['mean']:.0f}, {c['p99']:.0f}",
                    f"{r['bytes_per_query']['mean'] / 1024:.1f}",
                    f"{r['cpu_qps']:.0f}"
                    + (f" ({basis_label(cpu_basis(r['cpu']))})" if "all" in r.get("cpu", {}) else ""),
                )
            else:
                table.add_row(
                    rec["index"], "-", f"best {r['best_recall']:.3f} @ {r['best_nprobe']}", "-", "-", "-", "-", "-"
                )
        console.print(table)
        best = result["best"][g.text]
        if not best["reached"]:
            console.print(
                f"[bold red]{g.text} is not reachable[/] with these indexes: the best recall seen is "
                f"{best['best_recall']:.3f} ({best['index']}): "
                + larger_m_text([{"m": r["m"], "opq": r["opq"], "d": ds.d} for r in result["indexes"]]),
                highlight=False,
            )
    split = result["recall_split"]
    console.print(
        f"nprobe chosen on {split['selection_queries']} selection queries at goal + {split['margin']:g} "
        f"(training variance); recall promised on {split['holdout_queries']} held-out queries, {split['interval']}",
        highlight=False,
    )
    console.print(f"wrote {out / 'explore.json'}", highlight=False)


def _run(args: argparse.Namespace) -> int:
    if not args.graph and not args.recall:
        raise FannsError(
            "nothing to explore: give recall goals (IVF-PQ) or graph kinds",
            hint="e.g. fanns explore builtin:sift-10k --recall R@10=0.6, or --graph hnsw,nsg",
        )
    out = Path(args.out)
    check_destination(out, args.force, None, WHAT)
    if args.cluster is not None:
        check_cluster(args.cluster)
    explorer = _ivfpq_explorer(args) if args.recall else None
    with staged_folder(out, args.force, None, WHAT, carry=is_cached_index) as tmp:
        result = explorer.run_into(tmp) if explorer is not None else None
        code = run_graph_explore(args, tmp) if args.graph else 0
    if explorer is not None:
        _print_ivfpq(explorer, result, out)
    return code


def _add_ivfpq_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("IVF-PQ search (FANNS)")
    g.add_argument(
        "--recall",
        action="append",
        type=parse_goal,
        metavar="R@k=x",
        help=(
            "recall goal, repeatable: R@k=x (k-recall@k, e.g. R@10=0.8) or 1-R@k=x "
            "(1-recall@k: the true nearest neighbour in the top k, e.g. 1-R@10=0.8)"
        ),
    )
    add_index_grid_options(p, g)
    g.add_argument("--queries", type=arg_int(1), help="use only the first N queries (default: all)")
    g.add_argument("--train-size", type=arg_int(1), help="training sample size (default: 64 per cell, 10,000..65,536)")
    g.add_argument(
        "--seed", type=arg_int(0, 2**31 - 1), default=0, help="seed of the training sample and k-means (default: 0)"
    )
    g.add_argument(
        "--pq-vec-bits",
        type=arg_int(2, 24),
        default=16,
        help="fixed-point width of vectors in the IVF-PQ datapath (default: 16)",
    )
    g.add_argument(
        "--pq-lut-bits",
        type=arg_int(1, 32),
        default=16,
        help="width of distance-LUT entries in the IVF-PQ datapath (default: 16)",
    )
    g.add_argument(
        "--faiss-threads",
        type=arg_int(1, 4096),
        help="faiss threads for training, sweeps and CPU QPS (default: all cores)",
    )
    add_lists_options(g)
    g.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help=(
            "train the indexes on an existing cluster: tcp://HOST:PORT of a Dask scheduler (`dask scheduler`; "
            "needs the distributed package) or ray://HOST:PORT. Workers open the dataset themselves: a built-in "
            "is built in their own cache, a file must be at the same path (a shared file system). The recall "
            "sweeps and CPU QPS run here (default: train here)"
        ),
    )


def register(sub: argparse._SubParsersAction) -> None:

    p = sub.add_parser(
        "explore",
        help="build indexes over a parameter grid, measure recall and the work per query",
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "dataset", metavar="DATASET", help="builtin:NAME, an HDF5 file or a dataset folder (see `fanns datasets`)"
    )
    p.add_argument(
        "--out",
        default="work/explore",
        help="output folder (default work/explore), written atomically; see --force",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace OUT if it is an earlier exploration written by fanns (its trained indexes are reused)",
    )
    _add_ivfpq_arguments(p)
    add_graph_arguments(p)
    p.set_defaults(func=_run)
