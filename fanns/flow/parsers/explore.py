"""`fanns explore DATASET`: find index parameters and measure recall and hardware work.

IVF-PQ indexes (`--recall R@k=x`) are explored by `fanns.explore.ivfpq`: train IVF{nlist},PQ{m}
(and OPQ{m},IVF{nlist},PQ{m}) indexes, find the smallest nprobe per recall goal, measure the
hardware-faithful recall, the codes scanned per query and faiss-cpu's QPS (OUT/explore.json).
Graph indexes (`--graph hnsw,nsg`) are explored by `fanns.explore.graph`: graph builds, the
DST (mg, mc) sweep on the Falcon cycle model, the best configuration per parallel mode.

OUT is written as one staged folder (`fanns.outputs`): it appears whole or not at all, and an
earlier exploration in it is replaced only with --force (reusing its trained indexes); files in
it that fanns did not write are kept, and one fanns wrote but that was edited since blocks it.

This module holds the options (`fanns.flow.explore_cli` runs the command): the index grid and
lists options and the exploration options `fanns generate` and `fanns sweep` share, and the
graph options `fanns sweep` reads its defaults from.
"""

from __future__ import annotations

import argparse

from fanns.checks import arg_float, arg_graph_kinds, arg_int
from fanns.choices import ASSUMED_LATENCY_CYCLES, DEFAULT_SHARD_ROWS
from fanns.index.goals import parse_goal


def add_index_grid_options(parser: argparse.ArgumentParser, group: argparse._ArgumentGroup) -> None:
    """The --nlist/--m/OPQ options that pick the index grid, shared by explore and the reuse-aware commands."""
    group.add_argument("--nlist", help="comma-separated numbers of IVF cells (default: powers of two around sqrt(N))")
    group.add_argument(
        "--m",
        help=(
            "comma-separated numbers of PQ sub-quantizers (default: 16, or the largest divisor of d below it; "
            "from 256-d on also the largest divisor of d up to min(d/8, 128), e.g. 16,48 at 384-d)"
        ),
    )
    mode = group.add_mutually_exclusive_group()
    mode.add_argument(
        "--opq", dest="opq_mode", action="store_const", const="opq", help="only indexes with an OPQ rotation"
    )
    mode.add_argument(
        "--no-opq", dest="opq_mode", action="store_const", const="no-opq", help="only indexes without OPQ"
    )
    mode.add_argument(
        "--both", dest="opq_mode", action="store_const", const="both", help="with and without OPQ (default)"
    )
    parser.set_defaults(opq_mode="both")


def add_lists_options(group: argparse._ArgumentGroup) -> None:
    """--lists-on-disk and --shard-rows (`lists_settings` reads them), shared by explore and the
    commands that explore on the way."""
    group.add_argument(
        "--lists-on-disk",
        action="store_true",
        help=(
            "keep each index's inverted lists (every base vector's code and id) in a file beside it, faiss's "
            "on-disk lists, filled shard by shard: RAM holds one shard's lists, not the whole index's "
            "(for sets of 100M+ vectors; docs/scale.md). Searches read the file memory-mapped"
        ),
    )
    group.add_argument(
        "--shard-rows",
        type=arg_int(1),
        help=(
            "with --lists-on-disk: base vectors added in RAM before they go to the file "
            f"(default: {DEFAULT_SHARD_ROWS:,})"
        ),
    )


def add_explore_options(parser: argparse.ArgumentParser) -> None:
    """The exploration options shared by the commands that run an exploration on the way."""
    g = parser.add_argument_group("exploration (reused when an earlier one matches)")
    g.add_argument(
        "--explore-dir",
        metavar="DIR",
        help="exploration folder to reuse or fill (default: one per dataset in its cache folder)",
    )
    add_index_grid_options(parser, g)
    g.add_argument("--queries", type=int, help="use only the first N queries of the dataset (default: all)")
    g.add_argument("--seed", type=int, default=0, help="seed of the training sample and k-means (default 0)")
    add_lists_options(g)


def add_graph_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("graph search (Falcon / DST)")
    g.add_argument(
        "--graph", type=arg_graph_kinds, metavar="KINDS", help="explore graph indexes: comma-separated hnsw,nsg"
    )
    g.add_argument(
        "--max-degree",
        type=arg_int(1, 1024),
        default=64,
        help="maximum degree of the graphs (HNSW base layer 2M; NSG R); default 64 as Falcon",
    )
    g.add_argument("--ef-construction", type=arg_int(1, 1 << 16), default=64, help="HNSW efConstruction (default 64)")
    g.add_argument(
        "--vec-bits", type=arg_int(2, 16), default=8, help="bits per vector element on the device (default 8)"
    )
    g.add_argument(
        "--queue",
        type=arg_int(2, 4096),
        default=64,
        help="result queue size l = candidate queue size (default 64, Falcon 7.5.1)",
    )
    g.add_argument("--k", type=arg_int(1, 4096), default=10, help="neighbours returned; recall is R@k (default 10)")
    g.add_argument("--mg", default="1,2,3,4,5,6,7,8", help="candidate groups in flight to sweep (default 1..8)")
    g.add_argument("--mc", default="1,2,3,4", help="candidates per group to sweep (default 1..4)")
    g.add_argument(
        "--grow-to",
        type=arg_int(0, 64),
        default=16,
        help=(
            "while a mode's best (mg, mc) lies on the grid's far edge, sweep one step further, up to this "
            "(default 16; 0: exactly the grid given)"
        ),
    )
    g.add_argument(
        "--bloom",
        default="3,196608",
        metavar="H,B",
        help=(
            "Bloom filter: H hash units, B bits (B/H a power of two), "
            "or 'exact' for an exact visited set (default 3,196608)"
        ),
    )
    g.add_argument(
        "--bfc-units",
        type=arg_int(1, 1024),
        default=4,
        help="BFC units of the intra-query pipeline (default 4, Falcon 7.5.4.2)",
    )
    g.add_argument(
        "--pipelines", type=arg_int(1, 1024), default=4, help="query pipelines of the across-query design (default 4)"
    )
    g.add_argument(
        "--board", default="u250", help="board whose memory and clock the cycle model uses (default u250, Falcon's)"
    )
    g.add_argument(
        "--freq-mhz",
        type=arg_float(0, 10_000, lo_open=True),
        help="accelerator clock for the model (default: the board's kernel clock)",
    )
    g.add_argument(
        "--mem-latency",
        type=int,
        help=(
            "memory latency in cycles at the design clock (default: the board file's published idle row-miss "
            f"latency, converted to the clock; {ASSUMED_LATENCY_CYCLES}, an assumption, where the board has none)"
        ),
    )
    g.add_argument("--graph-queries", type=arg_int(0), default=0, help="use only the first N queries (default: all)")
    g.add_argument("--threads", type=arg_int(1, 1024), default=2, help="threads of the compiled traversal (default 2)")


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
        description=__doc__.split("\n\n", 1)[1].rsplit("\n\n", 1)[0],
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
    p.set_defaults(func="fanns.flow.explore_cli:explore_command")
