"""The options of `fanns generate` (`fanns.flow.generate_cli` checks them and runs
`fanns.flow.ivfpq_generate`, or `fanns.flow.graph_project` with --graph).

The options only one kind of design understands default to None here, so that giving one to the
other kind is an error naming it (`fanns.flow.generate_cli`); their defaults are `IVFPQ_DEFAULTS`
and `GRAPH_DEFAULTS`, filled in after that check.
"""

from __future__ import annotations

import argparse

from fanns.checks import PLATFORM, arg_int, arg_name
from fanns.choices import BUILD_DIR_HELP, FACES, GRAPH_KINDS
from fanns.flow.parsers.dse import add_target_options
from fanns.flow.parsers.explore import add_explore_options
from fanns.index.goals import parse_goal

IVFPQ_DEFAULTS = {"opq_mode": "both", "top": 5}
"""The defaults of the options only IVF-PQ designs take that are not None."""
GRAPH_DEFAULTS = {"max_degree": 64, "ef_construction": 64, "vec_bits": 8, "objective": "latency"}
"""The defaults of the options only graph designs take (--graph)."""


def _add_graph_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("graph search (Falcon / DST): with --graph only")
    g.add_argument(
        "--graph",
        choices=GRAPH_KINDS,
        help=(
            "design a graph-search accelerator (Falcon's query processing pipelines with Delayed-Synchronization "
            "Traversal) on the dataset's HNSW or NSG graph instead of an IVF-PQ one: the graph is built (or taken "
            "from the dataset's cache), the graph DSE chooses units or pipelines, channels, l, (mg, mc) and the "
            "Bloom filter on half of the queries (--queries, split by --seed) and the recall is measured on the "
            "other half; both faces go to "
            "hls/ and rtl/, and --sim checks them against the DST reference"
        ),
    )
    g.add_argument(
        "--max-degree",
        type=arg_int(1, 1024),
        help=f"maximum degree of the graph (HNSW base layer 2M; NSG R; default {GRAPH_DEFAULTS['max_degree']})",
    )
    g.add_argument(
        "--ef-construction",
        type=arg_int(1, 1 << 16),
        help=f"HNSW efConstruction (default {GRAPH_DEFAULTS['ef_construction']})",
    )
    g.add_argument(
        "--vec-bits",
        type=arg_int(2, 16),
        help=f"bits per vector element on the device (default {GRAPH_DEFAULTS['vec_bits']})",
    )
    g.add_argument(
        "--objective",
        choices=("latency", "qps"),
        help="minimise the latency of one query or maximise QPS at large batches (default latency)",
    )


def register(sub: argparse._SubParsersAction) -> None:

    p = sub.add_parser(
        "generate",
        help="dataset -> verified accelerator project: explore, DSE, HLS and RTL generation, simulation, report",
        description=(
            "Without --graph: explore IVF-PQ indexes of DATASET (reusing an earlier exploration with the same "
            "data and settings), choose the best design for the recall goal on the board (as `fanns dse`), "
            "generate its Vitis HLS project (hls/) and its Verilog (rtl/) with the memory images and test data "
            "(data/), with --sim check a sample of test queries on every face against the bit-accurate reference "
            "model, and write report/ and a README. With --graph hnsw|nsg: the same for a graph-search (Falcon / "
            "DST) accelerator on the dataset's graph (see --graph). PROJECT appears complete or not at all; an "
            "existing one is replaced only with --force."
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
        help="IVF-PQ: designs listed besides the best in the table and report/dse.json (default 5)",
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
    p.add_argument("--build-dir", help=BUILD_DIR_HELP)
    p.add_argument(
        "--force", action="store_true", help="replace PROJECT if it is a project written by `fanns generate`"
    )
    add_explore_options(p)
    _add_graph_options(p)
    p.set_defaults(opq_mode=None, func="fanns.flow.generate_cli:generate_command")
