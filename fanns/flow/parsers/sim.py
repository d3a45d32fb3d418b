"""The options of `fanns sim` (`fanns.flow.sim_cli` runs it)."""

from __future__ import annotations

import argparse

from fanns.checks import arg_float, arg_int
from fanns.choices import BUILD_DIR_HELP, DEFAULT_RTL_HARNESS, RTL_HARNESSES

MAX_LATENCY = 100_000
"""Memory latency beyond 100k cycles is not a memory model, it is a hang."""

MAX_PAUSE = 0.95
"""Stall probability per cycle: at 1 the channel never moves (the simulation would hang); above
0.95 a query takes thousands of times as long as without stalls."""


def _runtime(text: str) -> tuple[int, int, int, int]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 4:
        raise argparse.ArgumentTypeError(f"{text!r}: expected four integers L,K,MG,MC")
    return values


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sim",
        help="simulate a generated project on its test queries and check it against the reference model",
        description=(
            "Run the test queries of a generated project through its RTL under Verilator (by default the fast "
            "harness: the Verilog compiled with its memories in RTL holding the project's memory images; --harness "
            "cocotb for AXI memory models in Python) or its HLS kernel (g++ C simulation); compare every result key "
            "with the reference model, report recall, and for RTL the measured steady-state cycles per query beside "
            "the performance model's prediction. PROJECT is a face's folder or the folder `fanns generate` writes "
            "(its rtl/ for --backend rtl, its hls/ for csim)."
        ),
    )
    p.add_argument(
        "project",
        metavar="PROJECT",
        help="folder written by `fanns generate` (its rtl/ or hls/ face, by --backend) or by `fanns generate-rtl` "
        "(generate-hls for csim)",
    )
    p.add_argument(
        "--backend",
        choices=("rtl", "csim"),
        help=(
            f"rtl (Verilator, the {DEFAULT_RTL_HARNESS} harness unless --harness says) or csim (g++); default rtl, "
            "csim for a graph HLS project (the only backend it has)"
        ),
    )
    p.add_argument("--queries", type=arg_int(1), help="test queries to simulate (default: all of the project's)")
    p.add_argument("--first", type=arg_int(0), default=0, help="index of the first test query (default 0)")
    p.add_argument(
        "--latency",
        type=arg_int(0, MAX_LATENCY),
        default=100,
        help="rtl: memory read/write latency in cycles (default 100, the model's)",
    )
    p.add_argument(
        "--pause",
        type=arg_float(0, MAX_PAUSE),
        default=0.0,
        help="rtl: probability of a random stall per cycle on every AXI channel (default 0)",
    )
    p.add_argument(
        "--runtime",
        type=_runtime,
        metavar="L,K,MG,MC",
        help="graph projects: run-time parameters l, k, mg, mc to simulate (default: the design's)",
    )
    p.add_argument(
        "--timeout",
        nargs="+",
        metavar="LIMIT",
        help=(
            "rtl: stop a run that makes no progress (no stream or memory beat moves) for LIMIT cycles "
            "(default: 4x the model's longest stage, at least 20,000), and/or that runs longer than a wall "
            "time LIMIT given with s, m or h (default: none); the report names the streams holding and "
            "waiting for words and the memory ports' requests in flight; csim: a wall time only (the C "
            "simulation runs in a child process that is stopped after it)"
        ),
    )
    p.add_argument(
        "--harness",
        choices=RTL_HARNESSES,
        help=(
            "rtl, IVF-PQ: cocotb (AXI memory models in Python, any memory rate) or fast (the project's Verilog "
            "with its memories in RTL, one beat per cycle per port; pauses drawn by an LFSR); "
            f"default {DEFAULT_RTL_HARNESS}"
        ),
    )
    p.add_argument(
        "--trace",
        metavar="FILE.vcd",
        help=(
            "rtl, fast harness: write every signal's waveform to this VCD file (a separate, traced "
            "Verilator build; time 2c+1 is cycle c's rising edge). Large: a design of 38 PEs wrote 750 MB for "
            "9,600 cycles (then with the memory loading, which takes no cycles now); simulate few queries (--queries 2)"
        ),
    )
    p.add_argument("--build-dir", help=BUILD_DIR_HELP)
    p.set_defaults(func="fanns.flow.sim_cli:sim_command")
