"""The options of `fanns generate-hls` and `fanns generate-rtl` (`fanns.flow.ivfpq_faces_cli` runs them)."""

from __future__ import annotations

import argparse

from fanns.checks import PLATFORM, arg_int, arg_name


def _add_inputs(p: argparse.ArgumentParser) -> None:
    """The arguments both generators read their inputs from (`fanns.flow.ivfpq_inputs.load_inputs`)."""
    p.add_argument("design", metavar="DESIGN.yaml", help="the design (written by `fanns dse`)")
    p.add_argument(
        "--index",
        required=True,
        metavar="EXPLORE_DIR",
        help="the exploration folder holding the design's trained index",
    )
    p.add_argument("--out", required=True, metavar="PROJECT", help="output folder of the project")
    p.add_argument("--dataset", help="the explored dataset (default: the built-in named in explore.json)")
    p.add_argument(
        "--queries", type=arg_int(1), help="test queries in the project (default: as many as the exploration used)"
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate-hls",
        help="generate the Vitis HLS project (kernel, hosts, build files, memory images) of an IVF-PQ design",
        description=(
            "Render an IVF-PQ design (design.yaml from `fanns dse`) into a Vitis project: the HLS C++ kernel with "
            "the design's PEs and FIFOs, connectivity.cfg, a Makefile (csim, sw_emu, hw_emu, hw), an XRT host, "
            "the device memory images of the trained index and test queries with their exact neighbours."
        ),
    )
    _add_inputs(p)
    p.add_argument("--platform", type=arg_name(PLATFORM), help="Vitis platform (default: the board file's)")
    p.add_argument("--force", action="store_true", help="replace PROJECT if it is a generated project")
    p.add_argument(
        "--csim",
        action="store_true",
        help="run the generated kernel in C simulation on the test queries and compare with the reference model",
    )
    p.set_defaults(func="fanns.flow.ivfpq_faces_cli:generate_hls_command")
    _register_rtl(sub)


def _register_rtl(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate-rtl",
        help="generate the Verilog (Amaranth) of an IVF-PQ design with its register map and memory images",
        description=(
            "Compose the PEs of an IVF-PQ design (design.yaml from `fanns dse`) into one accelerator and emit it as "
            "Verilog: an AXI4-Lite control/status slave, an AXI4 master on the host I/O channel and one AXI4 read "
            "master per PQ-code channel. Writes PROJECT/rtl/ (Verilog, register map as Markdown and JSON, port map), "
            "the memory images of the trained index and test queries with their exact neighbours and reference keys."
        ),
    )
    _add_inputs(p)
    p.add_argument("--force", action="store_true", help="replace PROJECT if it is a generated project")
    p.add_argument(
        "--sim",
        action="store_true",
        help=(
            "simulate the generated RTL on the test queries under Verilator (the fast harness: the Verilog with its "
            "memories in RTL, compiled) and compare with the reference model"
        ),
    )
    p.set_defaults(func="fanns.flow.ivfpq_faces_cli:generate_rtl_command")
