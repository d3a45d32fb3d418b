"""AXI master throughput: simulated words per cycle against the timing model, over memory latency.

For each read-master configuration and memory latency this streams a list of transfers (PQ-code
lists of random sizes, back to back) through the RTL under Verilator against cocotbext-axi's
AxiRam with that latency, and prints simulated cycles, words per cycle, the model's cycles
(`AxiReader.transfer_cycles`) and the model error; then the same for the write master. The
DSE turns memory channels into cycles with this model.

    PYTHONPATH=. python benchmarks/axi_throughput.py
    PYTHONPATH=. python benchmarks/axi_throughput.py --latencies 2 64 128 256 --transfers 40
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from fanns.pe.axi_reader import AxiReader
from fanns.pe.axi_writer import AxiWriter
from fanns.tools.verilator import RtlSim

READERS = [
    AxiReader(data_width=512, max_burst=64, outstanding=4),
    AxiReader(data_width=512, max_burst=16, outstanding=8),
    AxiReader(data_width=256, max_burst=64, outstanding=2),
]
WRITERS = [
    AxiWriter(data_width=512, max_burst=64, outstanding=4),
    AxiWriter(data_width=256, max_burst=16, outstanding=2),
]


def transfers(pe, count: int, seed: int) -> list[list[int]]:
    """Back-to-back lists of 1..200 words at word-aligned, increasing addresses."""
    rng = np.random.default_rng(seed)
    out, addr = [], 0
    for n in rng.integers(1, 200, count):
        out.append([addr, int(n) * pe.beat_bytes])
        addr += (int(n) + int(rng.integers(0, 8))) * pe.beat_bytes
    return out


def run(pe, latencies: list[int], count: int, build: Path) -> None:
    sim = RtlSim.from_component(
        pe.component(), pe.name, build / f"{pe.name}_{pe.data_width}_{pe.max_burst}_{pe.outstanding}"
    )
    case = "words_and_bursts_match_reference" if pe.name == "axi_reader" else "memory_matches_reference"
    for latency in latencies:
        cmds = transfers(pe, count, seed=latency)
        mem = 1 << max(16, (cmds[-1][0] + cmds[-1][1]).bit_length())
        out = sim.run(
            pe.testbench,
            {"pe": pe.params(), "mem_bytes": mem, "seed": 1, "latency": latency, "commands": cmds},
            testcase=case,
        )
        words = sum(n // pe.beat_bytes for _, n in cmds)
        t0 = out["cmd_times"][0]
        simulated = out["done_times"][-1] - t0 + 1
        model = pe.transfer_cycles([tuple(c) for c in cmds], latency)[-1] + 1
        print(
            f"{pe.name:10s} {pe.data_width:4d}b burst {pe.burst_beats:3d} outst {pe.outstanding:2d} | "
            f"latency {latency:4d} | {words:6d} words in {simulated:7d} cycles = {words / simulated:.3f} "
            f"words/cycle | model {model:7d} ({100 * (model - simulated) / simulated:+.2f}%) | "
            f"mismatches {out.get('mismatches', out.get('byte_mismatches'))}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--latencies", type=int, nargs="+", default=[2, 50, 100, 200, 400], help="memory latencies in cycles"
    )
    parser.add_argument("--transfers", type=int, default=60, help="transfers per run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fanns_axi_bench_") as tmp:
        for pe in READERS + WRITERS:
            run(pe, args.latencies, args.transfers, Path(tmp))


if __name__ == "__main__":
    main()
