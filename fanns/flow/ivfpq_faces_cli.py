"""`fanns generate-hls DESIGN.yaml --index EXPLORE_DIR --out PROJECT`: the Vitis HLS project of a
design (`fanns.codegen.ivfpq.hls`), optionally checked at once by C simulation (`--csim`).

`fanns generate-rtl DESIGN.yaml --index EXPLORE_DIR --out PROJECT`: the Amaranth-generated Verilog
of the design with its register map and memory images (`fanns.codegen.ivfpq.rtl`), optionally checked
at once by RTL simulation (`--sim`, as `fanns sim PROJECT --backend rtl`)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from rich.console import Console

from fanns.checks import PLATFORM, arg_int, arg_name
from fanns.codegen.ivfpq.hls import generate_hls
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.datasets.cache import cache_root
from fanns.flow.ivfpq_inputs import load_inputs
from fanns.flow.sim_cli import rtl_report
from fanns.images.ivfpq import image_summary
from fanns.index.recall import recall_at
from fanns.numerics import split_keys
from fanns.sim.ivfpq.csim import HlsCsim


def csim_check(
    project: Path,
    queries: np.ndarray,
    groundtruth: np.ndarray,
    expected_keys: np.ndarray,
    build_dir: Path | None = None,
) -> dict:
    """Run the project's kernel in C simulation on `queries`: mismatching queries against the
    reference model's keys, and R@K against the exact neighbours."""

    with HlsCsim(project, build_dir) as sim:
        keys = sim.search_keys(queries)
    _, ids = split_keys(keys)
    return {
        "queries": int(keys.shape[0]),
        "mismatches": int((keys != expected_keys).any(1).sum()),
        "recall": recall_at(ids.astype(np.int64), groundtruth, keys.shape[1]),
    }


def _cmd(args: argparse.Namespace) -> int:

    console = Console()
    inputs = load_inputs(Path(args.design), Path(args.index), args.dataset, args.queries)
    out = Path(args.out)
    project = generate_hls(inputs.design, inputs.data, inputs.test, out, platform=args.platform, force=args.force)
    d = inputs.design
    console.print(
        f"wrote {out}: {d.index.factory}, nprobe {d.nprobe}, K {d.k} on {d.board} ({len(project.files)} files)",
        highlight=False,
    )
    for name, (lines, size) in project.code_sizes().items():
        console.print(f"  {name:22s} {lines:6d} lines {size:10,d} bytes", highlight=False)
    console.print(
        "memory images:\n" + "\n".join("  " + line for line in image_summary(project.images).splitlines()),
        highlight=False,
    )
    if args.csim:
        expected = np.fromfile(out / "data" / "reference_keys.bin", dtype="<u8").reshape(-1, d.k)
        res = csim_check(out, inputs.test.queries, inputs.test.groundtruth, expected)
        hw = inputs.hw_recall()
        console.print(
            f"C simulation: {res['queries']} queries, {res['mismatches']} differ from the reference model; "
            f"R@{d.k} = {res['recall']:.6f}"
            + (f" (explorer's hardware recall on the same queries {hw:.6f})" if hw is not None else ""),
            highlight=False,
        )
        if res["mismatches"]:
            return 1
    else:
        console.print(f"check it: make -C {out} csim", highlight=False)
    return 0


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
    p.set_defaults(func=_cmd)
    register_rtl(sub)


def _cmd_rtl(args: argparse.Namespace) -> int:

    console = Console()
    inputs = load_inputs(Path(args.design), Path(args.index), args.dataset, args.queries)
    out = Path(args.out)
    project = generate_rtl(inputs.design, inputs.data, inputs.test, out, force=args.force)
    d, hw = inputs.design, project.hw
    console.print(
        f"wrote {out}: {d.index.factory}, nprobe {d.nprobe}, K {d.k} on {d.board} ({len(project.files)} files)",
        highlight=False,
    )
    console.print(
        f"  rtl/fanns_ivfpq.v      {project.files['rtl/fanns_ivfpq.v']:12,d} bytes (top module fanns_ivfpq)",
        highlight=False,
    )
    console.print(
        f"  rtl/regmap.md, rtl/regmap.json: {len(hw.regmap.registers)} registers; rtl/ports.json: "
        f"m_axi_io + {hw.channels} PQ-code port(s)",
        highlight=False,
    )
    console.print(
        "memory images:\n" + "\n".join("  " + line for line in image_summary(project.images).splitlines()),
        highlight=False,
    )
    if args.sim:
        return rtl_report(out, cache_root() / "sim-builds", None, 0, 100, 0.0, console)
    console.print(f"check it: fanns sim {out} --backend rtl", highlight=False)
    return 0


def register_rtl(sub: argparse._SubParsersAction) -> None:
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
    p.set_defaults(func=_cmd_rtl)
