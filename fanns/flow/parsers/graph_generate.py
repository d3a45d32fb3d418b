"""The options of `fanns generate-graph-rtl` and `fanns generate-graph-hls` (`fanns.flow.graph_generate`
runs them)."""

from __future__ import annotations

import argparse

from fanns.checks import PLATFORM, arg_name


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
    p.set_defaults(func="fanns.flow.graph_generate:generate_graph_rtl_command")
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
    p.set_defaults(func="fanns.flow.graph_generate:generate_graph_hls_command")
