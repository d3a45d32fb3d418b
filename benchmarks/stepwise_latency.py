"""Step-wise search (docs/stepwise.md): latency to the first partial result vs the full result in
steps vs the normal one-shot search, per sample query alone, from the latency model
(`fanns.model.ivfpq.steps`), including the host link per step (the board's `host` figures).

A design given by its design.yaml is priced on its measured probes when its exploration is
where its index path says, else on synthetic probes (`fanns.model.ivfpq.rag.fpga`); without one,
a pinned design on a random index (64 lists of very different sizes) with its reference probes.

    PYTHONPATH=. python benchmarks/stepwise_latency.py [--design DESIGN.yaml] [--cells 1 2 4]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from fanns.design.ivfpq import IvfPqDesign
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.pinned import pinned_design
from fanns.model.ivfpq.rag.fpga import design_file, measured_probes, synthetic_probes
from fanns.model.ivfpq.steps import step_latency
from fanns.reference.ivfpq import IvfPqReference


def pinned_case() -> tuple[IvfPqDesign, np.ndarray, str]:
    data = random_index(nlist=64, n=40_000, d=32, m=8, empty=2, seed=3)
    design = pinned_design(data, random_format(32, 8), nprobe=16, k=10, ivf=(4, 16, "bram"), pq=(8, 4))
    ref = IvfPqReference(data, design.format)
    queries = np.random.default_rng(5).standard_normal((200, 32)).astype(np.float32)
    cells = ref.probe(ref.prepare(queries), design.nprobe)
    return design, data.list_sizes[cells], "pinned design, random index (64 lists), 200 random queries"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--design", help="a design.yaml (default: the pinned design of the docstring)")
    ap.add_argument("--cells", type=int, nargs="+", help="cells per step (default: 1, 2, 4, ... up to nprobe)")
    args = ap.parse_args()
    if args.design:
        path = design_file(Path(args.design))
        design = IvfPqDesign.load(path)
        _, probed, source = measured_probes(design, path) or synthetic_probes(design, design.index.n)
    else:
        design, probed, source = pinned_case()
    board = design.target_board()
    ctx = stage_model.design_context(design, board)
    host = board.host
    print(f"{design.index.factory} nprobe {design.nprobe} K {design.k} on {board.name} at {design.clock_mhz:g} MHz")
    print(f"probes: {source}")
    print(
        "host link: "
        + (f"{host.latency_us:g} us + bytes at {host.bandwidth_gbps:g} GB/s per transfer" if host else "none")
    )
    cells = args.cells or [c for c in (1, 2, 4, 8, 16, 32, 64) if c <= design.nprobe]
    for face, what in (
        ("hls", "HLS kernel (nprobe slots per run)"),
        ("rtl", "RTL core (a run probes the step's cells only)"),
    ):
        print(f"\n{what}")
        print("cells/step  steps   first p50 / p95 us   full p50 / p95 us   normal p50 / p95 us")
        for c in cells:
            lat = step_latency(ctx, design.stages, probed, c, host, face)
            p = lat.percentiles((50, 95))
            print(
                f"{c:10d} {lat.step_us.shape[0]:6d}   {p['first'][50]:8.2f} / {p['first'][95]:8.2f}"
                f"   {p['full'][50]:8.2f} / {p['full'][95]:8.2f}   {p['normal'][50]:8.2f} / {p['normal'][95]:8.2f}"
            )


if __name__ == "__main__":
    main()
