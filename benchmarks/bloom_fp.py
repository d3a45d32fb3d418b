"""Bloom filter PE: measured false-positive rate against theory.

For each (h, b, n): insert n distinct random 32-bit ids with the PE's reference model, probe
1,000,000 fresh ids, and print the measured rate next to the exact rate of the partitioned filter,
(1 - (1 - h/b)^n)^h, and the textbook (1 - e^(-h n / b))^h (Falcon 7.3.2.2). Also the clearing cost.

    PYTHONPATH=. python benchmarks/bloom_fp.py [--json PATH]
"""

from __future__ import annotations

import argparse

import numpy as np
from record import command_line, write_result

from fanns.pe.bloom import Bloom

CASES = [
    (1, 2**15, 1000),
    (3, 3 * 2**13, 1000),
    (3, 3 * 2**13, 4000),
    (3, 3 * 2**16, 3000),
    (3, 3 * 2**16, 20000),
    (4, 2**16, 6000),
    (2, 2**14, 2000),
]
PROBES = 1_000_000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    args = ap.parse_args()
    rng = np.random.default_rng(2024)
    rows = []
    print(
        f"{'h':>2} {'b':>8} {'n':>6} {'measured':>12} {'exact':>12} "
        f"{'(1-e^-hn/b)^h':>14} {'meas/exact':>10} {'clear cycles':>12}"
    )
    for h, b, n in CASES:
        pe = Bloom(h=h, b=b, w=64)
        ids = rng.choice(2**32, n + PROBES, replace=False)
        state = pe.new_state()
        pe.test_and_set(state, ids[:n])
        pos = pe.positions(ids[n:])
        measured = float(np.all(state[np.arange(h)[None, :], pos], axis=1).mean())
        exact = pe.false_positive_rate(n)
        rows.append({"h": h, "b": b, "n": n, "measured": measured, "exact": exact})
        print(
            f"{h:>2} {b:>8} {n:>6} {measured:>12.3e} {exact:>12.3e} {pe.false_positive_rate_approx(n):>14.3e} "
            f"{measured / exact if exact else float('nan'):>10.3f} {pe.clear_cycles():>12}"
        )

    figures = {"probes": PROBES, "cases": rows}
    write_result(args.json, "bloom_fp", command_line(), figures)


def readme_row(figures: dict) -> tuple[str, str]:
    """The README figures row of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    ratios = [c["measured"] / c["exact"] for c in figures["cases"]]
    figure = f"Bloom filter false-positive rate vs theory ({len(ratios)} settings, {figures['probes']:,} probes each)"
    return figure, f"measured / exact between {min(ratios):.3f} and {max(ratios):.3f}"


if __name__ == "__main__":
    main()
