"""The graph explorer behind `fanns explore DATASET --graph hnsw,nsg`: build the graphs, sweep DST.

For each graph kind it builds (or loads from the dataset's cache) the graph in the unified format,
runs the (mg, mc) sweep of `fanns.explore.graph_sweep` in both parallel modes on the board's
memory system, and writes `graph_<kind>.json` (every cell, the best configurations, the Bloom vs
exact-visited-set recall) and `graph_<kind>.txt` (the Fig. 7.9 tables) to the output folder.

`run_graph_explore(args)` runs the options `fanns.flow.parsers.explore.add_graph_arguments` adds
to a parser: the `explore` command has both, so IVF-PQ and graph exploration share one command.
"""

from __future__ import annotations

import argparse
import json
import zipfile
from pathlib import Path

import numpy as np

from fanns.boards import load_board
from fanns.checks import parse_graph_kinds
from fanns.datasets import load_dataset, normalize_rows
from fanns.datasets.dataset import as_float32
from fanns.errors import FannsError
from fanns.explore.graph_sweep import MODES, SweepSetup, format_tables, sweep
from fanns.index.graph import GraphImage, build_graph, graph_format_for
from fanns.model.graph.qpp import MemorySystem
from fanns.outputs import atomic_path
from fanns.pe.bloom import Bloom
from fanns.progress import progress_bar, status


def _int_list(text: str, what: str) -> tuple[int, ...]:
    try:
        values = tuple(sorted({int(v) for v in text.split(",") if v.strip()}))
    except ValueError:
        raise FannsError(
            f"{what} must be a comma-separated list of integers, got {text!r}", hint=f"e.g. --{what} 1,2,4"
        ) from None
    if not values:
        raise FannsError(f"{what} is empty", hint=f"e.g. --{what} 1,2,4")
    if values[0] < 1 or values[-1] > 64:
        raise FannsError(f"--{what} {text}: values must lie in 1..64", hint=f"e.g. --{what} 1,2,4")
    return values


def prepare_vectors(ds) -> tuple[np.ndarray, np.ndarray]:
    """Host float vectors for graph search: L2 as is; angular and ip data are normalised."""

    if ds.metric == "l2":
        return as_float32(ds.base), as_float32(ds.queries)
    return normalize_rows(ds.base), normalize_rows(ds.queries)


def graph_cache_path(ds, kind: str, max_degree: int, ef_construction: int, vec_bits: int) -> Path:
    """Where `load_or_build` keeps the graph of `ds` built with these parameters."""
    tag = f"efc{ef_construction}-" if kind == "hnsw" else ""
    return Path(ds.cache_dir) / "graphs" / f"{kind}-deg{max_degree}-{tag}b{vec_bits}-{ds.content_hash()[:16]}.npz"


def load_or_build(ds, kind: str, max_degree: int, ef_construction: int, vec_bits: int) -> GraphImage:
    """The graph of `ds`, cached in the dataset's cache folder under its construction parameters."""
    path = graph_cache_path(ds, kind, max_degree, ef_construction, vec_bits)
    if path.is_file():
        try:
            return GraphImage.load(path)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            status(f"{path} is unreadable; building the graph again")
    base, _ = prepare_vectors(ds)
    graph = build_graph(
        base, kind, max_degree=max_degree, ef_construction=ef_construction, fmt=graph_format_for(base, vec_bits)
    )
    with atomic_path(path) as tmp, open(tmp, "wb") as f:  # published whole, under a name of its own
        graph.save(f)
    return graph


def setup_from_args(args: argparse.Namespace) -> SweepSetup:

    if args.bloom.strip().lower() == "exact":
        bloom = None
    else:
        try:
            h, b = (int(v) for v in args.bloom.split(","))
        except ValueError:
            raise FannsError(
                f"--bloom must be H,B or 'exact', got {args.bloom!r}", hint="e.g. --bloom 3,196608"
            ) from None
        bloom = Bloom(h=h, b=b, w=64)
    if args.queue < args.k:
        raise FannsError(
            f"--queue {args.queue} is smaller than --k {args.k}", hint="the result queue must hold k results"
        )
    memory = MemorySystem.from_board(load_board(args.board), freq_mhz=args.freq_mhz, latency_cycles=args.mem_latency)
    return SweepSetup(
        k=args.k,
        l=args.queue,
        cand_size=args.queue,
        bloom=bloom,
        bfc_units=args.bfc_units,
        pipelines=args.pipelines,
        memory=memory,
        mg=_int_list(args.mg, "mg"),
        mc=_int_list(args.mc, "mc"),
        threads=args.threads,
        grow_to=args.grow_to,
    )


def run_graph_explore(args: argparse.Namespace, out: Path | None = None) -> int:
    """Explore the graph kinds of `args.graph` on `args.dataset`, write results into `out` (a
    staging folder the caller publishes; default `args.out`)."""

    kinds = parse_graph_kinds(args.graph)
    setup = setup_from_args(args)
    ds = load_dataset(args.dataset)
    nq = args.graph_queries or ds.nq
    gt = ds.groundtruth(setup.k)[:nq]
    _, queries = prepare_vectors(ds)
    out = Path(args.out if out is None else out)
    out.mkdir(parents=True, exist_ok=True)
    for kind in kinds:
        status(f"building {kind} graph of {ds.name} ({ds.n} vectors, max degree {args.max_degree}) ...")
        graph = load_or_build(ds, kind, args.max_degree, args.ef_construction, args.vec_bits)
        q_fx = graph.fmt.quantize(queries[:nq])
        with progress_bar() as bar:
            task = bar.add_task(f"DST sweep {kind}", total=None)
            result = sweep(
                graph,
                q_fx,
                gt,
                setup,
                progress=lambda done, total, task=task: bar.update(task, completed=done, total=total),
            )
        title = f"{ds.name} {kind.upper()}"
        report = {
            "dataset": {**ds.summary(), "content_hash": ds.content_hash()},
            "graph": kind,
            "nodes": graph.n,
            "max_degree": graph.max_degree,
            "entry": graph.entry,
            "build": graph.build,
            "number_format": {"vec_bits": graph.fmt.vec_bits, "signed": graph.fmt.signed, "scale": graph.fmt.scale},
            "queries": nq,
            "memory": vars(setup.memory),
            "bloom": vars(setup.bloom) if setup.bloom else "exact",
            "bfc_units": setup.bfc_units,
            "pipelines": setup.pipelines,
            **result.to_dict(),
        }
        (out / f"graph_{kind}.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
        text = format_tables(result, title)
        (out / f"graph_{kind}.txt").write_text(text + "\n")
        print(text)
        bloom_gap = {m: result.cells[m, 1, 1].recall - result.exact_bfs_recall[m] for m in MODES}
        print(
            f"{title} — BFS recall, Bloom filter minus exact visited set: "
            + ", ".join(f"{m} {v:+.4f}" for m, v in bloom_gap.items())
            + "\n"
        )
    return 0
