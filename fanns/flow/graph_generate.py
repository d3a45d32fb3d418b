"""`fanns generate-graph-rtl DATASET --out PROJECT`: a Falcon query processing pipeline as Verilog,
with the graph's memory images and test data (`fanns.codegen.graph.rtl`); `fanns generate-graph-hls`
(same options, and --platform): the same pipeline as a Vitis HLS project (`fanns.codegen.graph.hls`).
Both optionally simulate at once (`--sim`, as `fanns sim PROJECT`).

The design comes from `--design` (written by `fanns dse --graph`) or is pinned from the options
(`fanns.model.graph.pinned.pinned_graph_design`). A pinned design's graph is built from the
dataset's first `--nodes` base vectors (all by default), so a small project simulates in minutes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import faiss
import numpy as np
from rich.console import Console

from fanns.boards import load_board
from fanns.codegen.graph.hls import KERNEL, generate_graph_hls
from fanns.codegen.graph.rtl import TOP, compute_units, generate_graph_rtl
from fanns.codegen.platform import vitis_platform
from fanns.datasets import load_dataset
from fanns.datasets.cache import cache_root
from fanns.design.graph import GraphDesign
from fanns.errors import WHERE, FannsError
from fanns.explore.graph import load_or_build, prepare_vectors
from fanns.flow.error_context import note_design
from fanns.flow.graph_hls_sim import graph_csim_report
from fanns.flow.graph_sim import graph_rtl_report
from fanns.index.graph import build_graph, graph_format_for
from fanns.model.graph.pinned import pinned_graph_design
from fanns.progress import step


def _ints(text: str, n: int, what: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if len(values) != n:
        raise FannsError(f"{what} takes {n} comma-separated integers, got {text!r}")
    return values


def _inputs(args: argparse.Namespace):
    """The design, its graph, the quantised test queries and their exact neighbours, from the
    options both generators share (the flow's first step)."""

    step(1, _steps(args), "graph and design", f"graph and design of {args.dataset}")
    if args.design:
        WHERE.note_design(args.design)
    if args.platform:
        board = GraphDesign.load(Path(args.design)).target_board() if args.design else load_board(args.board)
        vitis_platform(board, args.platform)
    ds = load_dataset(args.dataset)
    base, queries = prepare_vectors(ds)
    nodes = args.nodes or len(base)
    if not 2 <= nodes <= len(base):
        raise FannsError(f"--nodes {nodes}: the dataset has {len(base)} base vectors")
    if not 1 <= args.queries <= len(queries):
        raise FannsError(f"--queries {args.queries}: the dataset has {len(queries)} queries")
    base, queries = base[:nodes], queries[: args.queries]
    if args.design:
        design = GraphDesign.load(Path(args.design))
        if args.nodes and args.nodes != design.graph.n:
            raise FannsError(f"--nodes {args.nodes}: the design is for a graph of {design.graph.n} nodes")
        base = base[: design.graph.n]
        graph = (
            load_or_build(ds, design.graph.kind, design.graph.max_degree, args.ef_construction, design.graph.vec_bits)
            if design.graph.n == len(ds.base)
            else build_graph(
                base,
                design.graph.kind,
                max_degree=design.graph.max_degree,
                ef_construction=args.ef_construction,
                fmt=graph_format_for(base, design.graph.vec_bits),
            )
        )
    else:
        graph = build_graph(
            base,
            args.graph,
            max_degree=args.max_degree,
            ef_construction=args.ef_construction,
            fmt=graph_format_for(base, args.vec_bits),
        )
        runtime = _ints(args.runtime, 4, "--runtime") if args.runtime else None
        if args.pipelines < 1:
            raise FannsError(f"--pipelines {args.pipelines} must be at least 1")
        across = args.pipelines > 1
        if across and args.units != 1:
            raise FannsError(
                f"--pipelines {args.pipelines} with --units {args.units}: "
                "an across-query design has one BFC unit per pipeline",
                hint="add --units 1",
            )
        design = pinned_graph_design(
            graph,
            board=args.board,
            mode="across" if across else "intra",
            pipelines=args.pipelines,
            units=args.units,
            l_max=args.l_max,
            cand=args.cand,
            k_max=args.k_max,
            bloom=_ints(args.bloom, 2, "--bloom"),
            limits=_ints(args.limits, 2, "--limits"),
            runtime=runtime,
            channels=args.channels,
        )
        note_design(design)
    k = design.runtime.k
    gt = faiss.knn(np.ascontiguousarray(queries, dtype=np.float32), np.ascontiguousarray(base, dtype=np.float32), k)[1]
    return design, graph, graph.fmt.quantize(queries), gt


def generate_graph_rtl_command(args: argparse.Namespace) -> int:
    """`fanns generate-graph-rtl` (options: `fanns.flow.parsers.graph_generate`)."""
    console = Console()
    design, graph, queries_fx, gt = _inputs(args)
    out = Path(args.out)
    step(2, _steps(args), "code generation", f"code generation: Verilog into {out}")
    project = generate_graph_rtl(
        design, graph, queries_fx, out, groundtruth=gt, platform=args.platform, force=args.force
    )
    console.print(_written(out, design, graph, len(project.files)), highlight=False)
    console.print(
        f"  rtl/{TOP}.v {project.files[f'rtl/{TOP}.v']:,d} bytes (an RTL kernel, {compute_units(design)} compute "
        f"unit(s)) of {len(project.hw.regmap.registers)} registers; the road to the board: {out}/README.md",
        highlight=False,
    )
    if args.sim:
        step(3, 3, "simulation", "simulation of the test queries (Verilator)")
        return graph_rtl_report(out, cache_root() / "sim-builds", None, 0, 100, 0.0, None, console)
    console.print(f"check it: fanns sim {out}", highlight=False)
    return 0


def _steps(args: argparse.Namespace) -> int:
    """The steps of a graph generator's flow: graph and design, code generation (and simulation)."""
    return 3 if args.sim else 2


def _written(out: Path, design, graph, files: int) -> str:
    rt = design.runtime
    return (
        f"wrote {out}: {graph.kind} graph of {graph.n} nodes (max degree {graph.max_degree}), "
        f"{design.bfc_units} BFC unit(s), {design.channels} graph channel(s), l_max "
        f"{design.queues.l_max}, run-time l {rt.l}, k {rt.k}, mg {rt.mg}, mc {rt.mc} ({files} files)"
    )


def generate_graph_hls_command(args: argparse.Namespace) -> int:
    """`fanns generate-graph-hls` (options: `fanns.flow.parsers.graph_generate`)."""
    console = Console()
    design, graph, queries_fx, gt = _inputs(args)
    out = Path(args.out)
    step(2, _steps(args), "code generation", f"code generation: HLS project into {out}")
    project = generate_graph_hls(
        design, graph, queries_fx, out, groundtruth=gt, platform=args.platform, force=args.force
    )
    console.print(_written(out, design, graph, len(project.files)), highlight=False)
    console.print(f"  HLS kernel {KERNEL}: src/kernel.cpp {project.files['src/kernel.cpp']:,d} bytes", highlight=False)
    if args.sim:
        step(3, 3, "simulation", "simulation of the test queries (g++ C simulation)")
        return graph_csim_report(out, cache_root() / "sim-builds", None, 0, None, console)
    console.print(f"check it: fanns sim {out} (or `make csim` in it)", highlight=False)
    return 0
