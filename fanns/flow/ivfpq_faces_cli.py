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

from fanns.codegen.ivfpq.hls import generate_hls
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.datasets.cache import cache_root
from fanns.errors import WHERE
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


def generate_hls_command(args: argparse.Namespace) -> int:
    """`fanns generate-hls` (options: `fanns.flow.parsers.faces`)."""
    console = Console()
    WHERE.note_design(args.design)
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


def generate_rtl_command(args: argparse.Namespace) -> int:
    """`fanns generate-rtl` (options: `fanns.flow.parsers.faces`)."""
    console = Console()
    WHERE.note_design(args.design)
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
