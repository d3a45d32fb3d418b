"""The options of `fanns run` (`fanns.flow.run_cli` runs it), shared with the generated
`driver/run_on_board.py` (`fanns.flow.run_cli.board_main`)."""

from __future__ import annotations

import argparse

from fanns.checks import arg_int
from fanns.choices import DRIVER_BACKENDS


def add_options(p: argparse.ArgumentParser, default_backend: str) -> None:
    """The options of `fanns run` and of the board script, which runs on pynq by default."""
    p.add_argument(
        "--backend", choices=DRIVER_BACKENDS, default=default_backend, help=f"where to run (default {default_backend})"
    )
    p.add_argument(
        "--queries", required=True, help="query vectors: .fvecs, .bvecs, .fbin, .npy (dimension of the design)"
    )
    p.add_argument("--k", type=arg_int(1), help="results per query (default: the design's K)")
    p.add_argument(
        "--nprobe",
        type=arg_int(1),
        help="cells probed per query (default: the design's; RTL projects take any 1..nprobe)",
    )
    p.add_argument("--groundtruth", help="exact neighbours (.ivecs, .ibin, .npy) to print R@k")
    p.add_argument(
        "--batch",
        type=arg_int(1),
        help="queries per device run (default: the backend's, at most what the I/O bank holds)",
    )
    p.add_argument(
        "--bitstream",
        help="pynq: the xclbin / .bit (default: the face's build/hw/fanns_ivfpq.xclbin, fanns_falcon_qpp.xclbin "
        "for a graph project, on a Zynq board the .bit its zynq/board_plan.json names)",
    )
    p.add_argument(
        "--face",
        choices=("hls", "rtl"),
        help="the face of a `fanns generate` project to run (default: the backend's: c-sim hls, rtl-sim rtl, "
        "pynq the face whose bitstream was built, model hls)",
    )
    p.add_argument("--build-dir", help="c-sim / rtl-sim: where builds are cached (default: the fanns cache folder)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="search a generated project's accelerator through the host driver (board, RTL/C simulation or model)",
        description=(
            "Open a project written by `fanns generate` (its face by --face or the backend), "
            "`generate-hls`, `generate-rtl`, `generate-graph-hls` or `generate-graph-rtl` with the host driver on "
            "a backend (pynq: a board; rtl-sim: the RTL under Verilator + cocotb, driven by the "
            "driver; c-sim: the HLS kernel compiled by g++; model: the bit-accurate reference model), "
            "load the index, search the queries and print recall, QPS, latency and device cycles."
        ),
    )
    p.add_argument("project", metavar="PROJECT", help="the generated project folder")
    add_options(p, "model")
    p.set_defaults(func="fanns.flow.run_cli:run_command")
