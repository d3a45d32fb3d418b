"""Simulation speed of PE testbenches under cocotb + Verilator: simulated clock cycles per second.

Builds each PE once, runs its cocotb testbench without bubbles or back-pressure, and reads the
simulated time and the wall time of the test from cocotb's results file. The wall time includes
the testbench's Python work (stimulus, reference model, checking), which is what a user of
`fanns sim` waits for.

    PYTHONPATH=. python benchmarks/sim_speed.py
    PYTHONPATH=. python benchmarks/sim_speed.py --scale 4     # four times the work per run
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from fanns.pe.pq_decode import PqDecode
from fanns.pe.systolic_pq import SystolicPQ
from fanns.tools.verilator import RtlSim

PERIOD_NS = 10  # fanns_tb.PERIOD_NS


def cases(scale: int) -> list[tuple[str, object, dict]]:
    pq = PqDecode(m=16, lut_bits=16, double_buffer=True)
    queue = SystolicPQ(s=10, key_bits=64)
    return [
        (
            "pq_decode m=16 (double-buffered)",
            pq,
            {
                "pe": pq.params(),
                "queries": 4 * scale,
                "max_cells": 4,
                "max_codes": 1000,
                "bubble": 0.0,
                "backpressure": 0.0,
                "seed": 1,
            },
        ),
        (
            "systolic_pq s=10",
            queue,
            {
                "pe": queue.params(),
                "queries": 10 * scale,
                "max_items": 1000,
                "bubble": 0.0,
                "backpressure": 0.0,
                "seed": 1,
            },
        ),
    ]


def measure(sim: RtlSim, tb: str, params: dict) -> tuple[float, float]:
    """(simulated cycles, wall seconds of the test) of one testbench run."""
    sim.run(tb, params)
    xml = sim.build_dir / f"results_{tb}_{os.getpid()}.xml"
    case = ET.parse(xml).getroot().find(".//testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    return float(props["sim_time_duration"]) / PERIOD_NS, float(case.get("time"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=1, help="multiply the work per run (default 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fanns_simspeed_") as tmp:
        print(f"{'PE':36} {'build s':>8} {'cycles':>10} {'wall s':>8} {'cycles/s':>10}")
        for label, pe, params in cases(args.scale):
            t0 = time.perf_counter()
            sim = RtlSim.from_component(pe.component(), pe.name, Path(tmp) / pe.name)
            sim.build()
            build = time.perf_counter() - t0
            cycles, wall = measure(sim, pe.testbench, params)
            print(f"{label:36} {build:8.1f} {cycles:10.0f} {wall:8.2f} {cycles / wall:10.0f}")


if __name__ == "__main__":
    main()
