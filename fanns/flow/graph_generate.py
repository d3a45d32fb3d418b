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

from fanns.checks import PLATFORM, arg_name
from fanns.codegen.graph.hls import KERNEL, generate_graph_hls
from fanns.codegen.graph.rtl import TOP, compute_units, generate_graph_rtl
from fanns.datasets import load_dataset
from fanns.datasets.cache import cache_root
from fanns.design.graph import GraphDesign
from fanns.errors import FannsError
from fanns.explore.graph import load_or_build, prepare_vectors
from fanns.flow.graph_hls_sim import graph_csim_report
from fanns.flow.graph_sim import graph_rtl_report
from fanns.index.graph import build_graph, graph_format_for
from fanns.model.graph.pinned import pinned_graph_design


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
    options both generators share."""

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
    k = design.runtime.k
    gt = faiss.knn(np.ascontiguousarray(queries, dtype=np.float32), np.ascontiguousarray(base, dtype=np.float32), k)[1]
    return design, graph, graph.fmt.quantize(queries), gt


def _cmd(args: argparse.Namespace) -> int:

    console = Console()
    design, graph, queries_fx, gt = _inputs(args)
    out = Path(args.out)
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
        return graph_rtl_report(out, cache_root() / "sim-builds", None, 0, 100, 0.0, None, console)
    console.print(f"check it: fanns sim {out}", highlight=False)
    return 0


def _written(out: Path, design, graph, files: int) -> str:
    rt = design.runtime
    return (
        f"wrote {out}: {graph.kind} graph of {graph.n} nodes (max degree {graph.max_degree}), "
        f"{design.bfc_units} BFC unit(s), {design.channels} graph channel(s), l_max "
        f"{design.queues.l_max}, run-time l {rt.l}, k {rt.k}, mg {rt.mg}, mc {rt.mc} ({files} files)"
    )


def _cmd_hls(args: argparse.Namespace) -> int:

    console = Console()
    design, graph, queries_fx, gt = _inputs(args)
    out = Path(args.out)
    project = generate_graph_hls(
        design, graph, queries_fx, out, groundtruth=gt, platform=args.platform, force=args.force
    )
    console.print(_written(out, design, graph, len(project.files)), highlight=False)
    console.print(f"  HLS kernel {KERNEL}: src/kernel.cpp {project.files['src/kernel.cpp']:,d} bytes", highlight=False)
    if args.sim:
        return graph_csim_report(out, cache_root() / "sim-builds", None, 0, None, console)
    console.print(f"check it: fanns sim {out} (or `make csim` in it)", highlight=False)
    return 0


def _options(p: argparse.ArgumentParser) -> None:
    """The options both graph generators share: the design (or the choices that pin one) and the test data."""
    p.add_argument("dataset", metavar="DATASET", help="a dataset (e.g. builtin:sift-10k)")
    p.add_argument("--out", required=True, metavar="PROJECT", help="output folder of the project")
    p.add_argument(
        "--design",
        metavar="DESIGN.yaml",
        help="a graph design (from `fanns dse --graph`) instead of the options below; an across-query design of "
        "P pipelines gets P QPPs (RTL: one top level with P register windows; HLS: P compute units)",
    )
    p.add_argument("--graph", choices=("hnsw", "nsg"), default="hnsw", help="graph kind (default hnsw)")
    p.add_argument("--nodes", type=int, help="use the first N base vectors (default: all)")
    p.add_argument("--max-degree", type=int, default=32, help="maximum degree (default 32)")
    p.add_argument("--ef-construction", type=int, default=64, help="HNSW efConstruction (default 64)")
    p.add_argument("--vec-bits", type=int, default=8, help="bits per vector element on the device (default 8)")
    p.add_argument("--board", default="u250", help="board (default u250)")
    p.add_argument("--units", type=int, default=2, help="BFC units (a power of two; default 2)")
    p.add_argument(
        "--pipelines",
        type=int,
        default=1,
        help="QPPs serving different queries (across-query mode when above 1, with --units 1; default 1)",
    )
    p.add_argument(
        "--channels", type=int, help="graph memory channels (default: all of the board's first group, a power of two)"
    )
    p.add_argument("--l-max", type=int, default=64, help="result queue capacity (default 64)")
    p.add_argument("--cand", type=int, help="candidate queue capacity (default: l-max)")
    p.add_argument("--k-max", type=int, default=10, help="largest k (default 10)")
    p.add_argument(
        "--bloom",
        default="3,196608",
        metavar="H,B",
        help="Bloom filter per BFC unit: H hashes, B bits (default 3,196608)",
    )
    p.add_argument(
        "--limits", default="8,4", metavar="MG,MC", help="largest mg and mc the controller supports (default 8,4)"
    )
    p.add_argument(
        "--runtime", metavar="L,K,MG,MC", help="the run-time parameters' defaults (default: l-max, k-max, 1, 1)"
    )
    p.add_argument("--queries", type=int, default=10, help="test queries in the project (default 10)")
    p.add_argument("--force", action="store_true", help="replace PROJECT if it is a generated project")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate-graph-rtl",
        help="generate the Verilog (Amaranth) of a Falcon graph-search pipeline with its memory images",
        description=(
            "Build an HNSW or NSG graph of a dataset's base vectors and emit one Falcon query processing pipeline "
            "(DST controller, BFC units, candidate and result queues) as Verilog with an AXI4-Lite register file "
            "(l, k, mg, mc are run-time registers), AXI4 read masters for neighbour lists and vectors, and a result "
            "write-back master, as a Vitis RTL kernel (ap_ctrl_hs). Writes PROJECT/rtl/ (with kernel.xml and the IP "
            "and .xo packaging scripts), the board's build files (Alveo: connectivity.cfg, Makefile, XRT host; Zynq: "
            "zynq/ block design and Makefile), the graph's memory images, test queries and the DST reference's "
            "results for them."
        ),
    )
    _options(p)
    p.add_argument("--platform", type=arg_name(PLATFORM), help="Vitis platform (default: the board file's)")
    p.add_argument(
        "--sim", action="store_true", help="simulate the RTL on the test queries and compare with the DST reference"
    )
    p.set_defaults(func=_cmd)
    p = sub.add_parser(
        "generate-graph-hls",
        help=(
            "generate a Vitis HLS project of a Falcon graph-search "
            "pipeline (kernel, XRT host, C simulation, memory images)"
        ),
        description=(
            "Build an HNSW or NSG graph of a dataset's base vectors (or take --design) and write one "
            "Falcon query processing pipeline with Delayed-Synchronization Traversal as an HLS C++ "
            "kernel: l, k, mg, mc (and nq, nodes, entry) are s_axilite arguments, queue sizes, Bloom "
            "filters and BFC units compile-time constants, one m_axi bundle per memory channel. Writes "
            "src/, connectivity.cfg, a Makefile (csim, sw_emu, hw_emu, hw), an XRT host, the same "
            "graph images as generate-graph-rtl, test queries and the DST reference's results for them."
        ),
    )
    _options(p)
    p.add_argument("--platform", type=arg_name(PLATFORM), help="Vitis platform (default: the board file's)")
    p.add_argument(
        "--sim",
        action="store_true",
        help="compile the kernel with g++ and check it on the test queries against the DST reference",
    )
    p.set_defaults(func=_cmd_hls)
