"""Held-out check of the resource calibration: synthesise PE configurations that were not fitted
and print measured (yosys) against predicted (calibration table) resources.

The fit errors stored in the table are in-sample; this measures how well the linear models
generalise. Each configuration is one `synth_xilinx -family xcup` run (seconds to minutes).

    python benchmarks/calibration_holdout.py                   # the default set below
    python benchmarks/calibration_holdout.py pq_decode '{"m": 24}'
    python benchmarks/calibration_holdout.py --pe opq --pe hpq   # the default set's rows of these PEs
"""

from __future__ import annotations

import argparse
import json

from fanns.pe import get_pe
from fanns.resources import KINDS
from fanns.tools.yosys import synthesize

HOLDOUT = [
    ("pq_decode", {"m": 24, "lut_bits": 16, "double_buffer": True}),
    ("pq_decode", {"m": 12, "lut_bits": 12, "double_buffer": False}),
    ("pq_decode", {"m": 48, "lut_bits": 10, "double_buffer": True}),
    ("ivf_dist", {"d": 128, "w": 32, "vec_bits": 8, "nlist": 512, "storage": "bram"}),
    ("ivf_dist", {"d": 64, "w": 8, "vec_bits": 12, "nlist": 128, "storage": "stream"}),
    ("ivf_dist", {"d": 96, "w": 16, "vec_bits": 8, "nlist": 2048, "storage": "uram"}),
    ("build_lut", {"d": 96, "m": 12, "w": 24, "vec_bits": 8, "lut_bits": 16}),
    ("build_lut", {"d": 128, "m": 16, "w": 8, "vec_bits": 12, "lut_bits": 16}),
    ("build_lut", {"d": 64, "m": 8, "w": 32, "vec_bits": 8, "lut_bits": 16}),
    ("build_lut", {"d": 192, "m": 24, "w": 8, "vec_bits": 8, "lut_bits": 16, "storage": "uram"}),
    ("opq", {"d": 96, "w": 24, "vec_bits": 8}),
    ("opq", {"d": 64, "w": 8, "vec_bits": 16}),
    ("opq", {"d": 128, "w": 64, "vec_bits": 8}),
    ("opq", {"d": 96, "w": 32, "vec_bits": 12, "storage": "stream"}),
    ("hpq", {"z": 6, "s": 17, "key_bits": 64}),
    ("hpq", {"z": 2, "s": 5, "key_bits": 48}),
    ("hpq", {"z": 12, "s": 2, "key_bits": 64}),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config", nargs="*", metavar="PE PARAMS", help="PE names each followed by its parameters as JSON")
    ap.add_argument("--pe", action="append", default=[], help="run the default set's rows of this PE (repeatable)")
    args = ap.parse_args()
    argv = args.config
    if len(argv) % 2:
        ap.error("give each PE name with its parameters as JSON")
    if args.pe:
        jobs = [(name, params) for name, params in HOLDOUT if name in args.pe]
    else:
        jobs = [(argv[i], json.loads(argv[i + 1])) for i in range(0, len(argv), 2)] if argv else HOLDOUT
    print(f"{'PE':10} {'parameters':60} " + " ".join(f"{k + ' meas/pred':>16}" for k in KINDS))
    worst: dict[str, float] = {}
    for name, params in jobs:
        pe = get_pe(name)(**params)
        measured, _ = synthesize(pe.verilog("top"), "top")
        predicted = pe.resources()
        cols = []
        for kind in KINDS:
            m, p = getattr(measured, kind), getattr(predicted, kind)
            cols.append(f"{m:>7.0f}/{p:<8.0f}")
            err = abs(p - m) / max(m, 1.0)
            worst[f"{name}.{kind}"] = max(worst.get(f"{name}.{kind}", 0.0), err)
        print(f"{name:10} {json.dumps(params):60} " + " ".join(f"{c:>16}" for c in cols), flush=True)
    print("worst relative error per PE and kind (|pred - meas| / max(meas, 1)):")
    for key in sorted(worst):
        print(f"  {key:20} {100 * worst[key]:6.1f}%")


if __name__ == "__main__":
    main()
