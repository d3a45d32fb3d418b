"""`fanns explore DATASET`: find index parameters and measure recall and hardware work.

Runs the IVF-PQ explorer (`fanns.explore.ivfpq`) and the graph explorer (`fanns.explore.graph`)
into one staged output folder (`fanns.outputs`) and prints the IVF-PQ results per goal. What the
command does for a user, and its options, are its help: `fanns.flow.parsers.explore`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import faiss
from rich.console import Console
from rich.table import Table

from fanns.datasets.loader import load_dataset
from fanns.errors import FannsError
from fanns.explore.graph import run_graph_explore
from fanns.explore.ivfpq import WHAT, ExploreConfig, IvfPqExplorer, is_cached_index
from fanns.explore.ivfpq_reuse import lists_settings
from fanns.explore.ivfpq_training import DatasetRef, RemoteTraining
from fanns.index.holdout import unpromised_text
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
        cols = ("index", "nprobe", "selection recall (bound)", "held-out recall (95 % CI)", "hw recall (held-out)")
        for col in (*cols, "codes/query (mean, P99)", "KB/query", "CPU QPS"):
            table.add_column(col)
        for rec in result["indexes"]:
            r = rec["goals"][g.text]
            if r["reached"]:
                c = r["codes_per_query"]
                raised = r.get("raised_from")
                table.add_row(
                    rec["index"],
                    str(r["nprobe"]) + (f" (raised from {raised['nprobe']})" if raised else ""),
                    f"{r['selection_recall']:.3f} ({r['selection_bound']:.3f})",
                    f"{r['recall']:.3f} ({r['recall_interval'][0]:.3f}-{r['recall_interval'][1]:.3f})",
                    f"{r['hw_recall']:.3f}",
                    f"{c['mean']:.0f}, {c['p99']:.0f}",
                    f"{r['bytes_per_query']['mean'] / 1024:.1f}",
                    f"{r['cpu_qps']:.0f}"
                    + (f" ({basis_label(cpu_basis(r['cpu']))})" if "all" in r.get("cpu", {}) else ""),
                )
            else:
                short = f"best {r['best_recall']:.3f} @ {r['best_nprobe']}: not promised"
                table.add_row(rec["index"], "-", short, "-", "-", "-", "-", "-")
        console.print(table)
        for rec in result["indexes"]:
            if not rec["goals"][g.text]["reached"]:
                console.print(f"  {rec['index']}: {unpromised_text(rec['goals'][g.text], g.text)}", highlight=False)
        best = result["best"][g.text]
        if not best["reached"]:
            more, used = best.get("queries_needed"), result["dataset"]["queries_used"]
            console.print(
                f"[bold red]{g.text} cannot be promised[/] from {used} queries: at best {best['best_recall']:.3f} "
                f"({best['index']}); about {more:,} queries would tell (use a larger --queries, or a dataset with "
                "that many), or try a lower goal."
                if more
                else f"[bold red]{g.text} is not reachable[/] with these indexes: the best recall seen is "
                f"{best['best_recall']:.3f} ({best['index']}): "
                + larger_m_text([{"m": r["m"], "opq": r["opq"], "d": ds.d} for r in result["indexes"]]),
                highlight=False,
            )
    split = result["recall_split"]
    console.print(
        f"nprobe promised where the {split['selection_queries']} selection queries' "
        f"{split['promise_level']:.1%} lower confidence bound (training spread {split['training_sd']:g} "
        f"included) and the {split['holdout_queries']} held-out queries reach the goal; held-out recall "
        f"with a {split['interval']}",
        highlight=False,
    )
    console.print(f"wrote {out / 'explore.json'}", highlight=False)


def explore_command(args: argparse.Namespace) -> int:
    """`fanns explore` (options: `fanns.flow.parsers.explore`)."""
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
